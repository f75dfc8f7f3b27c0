// DELETE /v1/team/{id}/ - remove someone from the team and end their sessions (not the last owner).
import { apiHandler, noContent } from '../../shared/http/handler';
import { removeTeamMember } from '../../shared/store/team';

export const handler = apiHandler({ access: 'owner', sessionOnly: true }, async ({ principal, params }) => {
  await removeTeamMember(principal.accountId, params.id ?? '');
  return noContent();
});
