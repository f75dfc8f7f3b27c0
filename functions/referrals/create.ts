// POST /v1/referrals/ - create a referral (idempotent on the user + code pair); 200 as specified
import { apiHandler, ok } from '../../shared/http/handler';
import { referralView } from '../../shared/domain/views';
import { createReferralBody } from '../../shared/schemas/referral';
import { createReferral } from '../../shared/store/referrals';

export const handler = apiHandler({ body: createReferralBody }, async ({ principal, body }) => {
  const { referral } = await createReferral(principal.accountId, body, 'api');
  return ok(referralView(referral));
});
