// Attribution by coupon: a payment alert whose `coupon` is a referral's coupon code (double-sided
// campaigns) names that referral. Looked up through the coupon claim item (one GetItem, no Scan); codes
// compare without case. The seam (shared/flows/attribution.ts) converts it like the endpoint would.
import { referralIdByCoupon } from '../store/coupons';
import type { AttributionSource } from './attribution';

export const couponSource: AttributionSource = async (accountId, alert, fields) => {
  if (alert.alert_name !== 'subscription_payment_succeeded') return null;
  const code = fields.coupon?.trim();
  if (!code) return null;
  const referralId = await referralIdByCoupon(accountId, code);
  return referralId === null ? null : { referralId, source: 'coupon' };
};
