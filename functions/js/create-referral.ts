// POST /js/v1/referrals/ - create a referral with source "js" (publishable key); the API create's rules
// (idempotent on user + code, one referral per user, no self-referral; the coupon of a double-sided
// campaign follows asynchronously). Answers only the referral's id.
import { jsHandler } from '../../shared/http/js';
import { createReferralWithCoupon } from '../../shared/provider/coupons';
import { jsReferralBody } from '../../shared/schemas/js';

export const handler = jsHandler({ body: jsReferralBody }, async ({ principal, body }) => {
  const { referral } = await createReferralWithCoupon(principal.accountId, body, 'js');
  return { status: 200, body: { id: referral.id } };
});
