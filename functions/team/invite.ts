// POST /v1/team/ - invite someone by email with a role: they are added to the team and get a login link
// (shared/flows/team.ts).
import { inviteTeamMember } from '../../shared/flows/team';
import { apiHandler, created } from '../../shared/http/handler';
import { inviteBody } from '../../shared/schemas/team';

export const handler = apiHandler({ body: inviteBody, access: 'owner', sessionOnly: true }, async ({ principal, body, baseUrl }) =>
  created(await inviteTeamMember(principal.accountId, body, { baseUrl, email: principal.session?.email ?? '' })),
);
