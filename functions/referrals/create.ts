// POST /v1/referrals/ - create a referral (idempotent on the user + code pair); 200 as specified.
// In a double-sided campaign its coupon is created asynchronously (one SQS send); coupon_code is null until then.
import { apiHandler, ok } from '../../shared/http/handler';
import { referralView } from '../../shared/domain/views';
import { createReferralWithCoupon } from '../../shared/flows/coupons';
import { createReferralBody } from '../../shared/schemas/referral';

// `source` is who made it (the specification's values): `app` from the operator dashboard (a session),
// `api` from the app's backend (a secret key). The body cannot choose it.
export const handler = apiHandler({ body: createReferralBody }, async ({ principal, body }) => {
  const { referral } = await createReferralWithCoupon(principal.accountId, body, principal.session ? 'app' : 'api');
  return ok(referralView(referral));
});
