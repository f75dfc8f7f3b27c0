// POST /v1/team/ - invite someone by email with a role: they are added to the team and get a login link.
import { apiHandler, created } from '../../shared/http/handler';
import { publish } from '../../shared/queue/publish';
import { inviteBody } from '../../shared/schemas/team';
import { addTeamMember } from '../../shared/store/team';

export const handler = apiHandler({ body: inviteBody, access: 'owner', sessionOnly: true }, async ({ principal, body, baseUrl }) => {
  const member = await addTeamMember(principal.accountId, body.email, body.role);
  await publish('member-emails', { kind: 'login-link', email: member.email, base_url: baseUrl, account_id: principal.accountId, invited_by: principal.session?.email ?? '' });
  return created(member);
});
