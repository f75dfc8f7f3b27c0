// Attribution by coupon: an event whose checkout used a referral's coupon code (double-sided campaigns)
// names that referral. Looked up through the coupon claim item (one GetItem, no Scan); codes compare
// without case. The seam (shared/flows/attribution.ts) converts it like the endpoint would.
import { referralIdByCoupon } from '../store/coupons';
import type { AttributionSource } from './attribution';

export const couponSource: AttributionSource = async (accountId, hints) => {
  const code = hints.couponCode?.trim();
  if (!code) return null;
  const referralId = await referralIdByCoupon(accountId, code);
  return referralId === null ? null : { referralId, source: 'coupon' };
};
