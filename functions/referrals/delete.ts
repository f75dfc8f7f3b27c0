// DELETE /v1/referrals/{id}/ - delete a referral; the user can be referred again
import { apiHandler, noContent } from '../../shared/http/handler';
import { deleteReferral } from '../../shared/store/referrals';

export const handler = apiHandler({}, async ({ principal, params }) => {
  await deleteReferral(principal.accountId, params.id ?? '');
  return noContent();
});
