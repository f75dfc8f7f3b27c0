// DELETE /v1/members/{id}/ - delete a member; their referrals stay, their code/email/identifier are freed
import { apiHandler, noContent } from '../../shared/http/handler';
import { deleteMember } from '../../shared/store/members';

export const handler = apiHandler({}, async ({ principal, params }) => {
  await deleteMember(principal.accountId, params.id ?? '');
  return noContent();
});
