// DELETE /v1/referrals/{id}/ - delete a referral; the user can be referred again
import { apiHandler, noContent } from '../../shared/http/handler';
import { deleteReferralAndRewards } from '../../shared/flows/referral-delete';

export const handler = apiHandler({}, async ({ principal, params }) => {
  await deleteReferralAndRewards(principal.accountId, params.id ?? '');
  return noContent();
});
