// Referral coupons: the coupon code is set on the referral and a claim item keyed by the code points
// back at the referral, written in ONE transaction; the claim is what coupon attribution reads (a
// GetItem, never a Scan). Deleting the referral deletes the claim (store/referrals.ts).
import { normalizeCouponCode } from '../domain/discounts';
import { tableName } from './client';
import { ConditionsFailedError, getItem, transact } from './ops';
import { keys, moneyKeys } from './table';

export type CouponRecord = 'recorded' | 'referral_gone';

export class CouponCodeTakenError extends Error {
  override readonly name = 'CouponCodeTakenError';
}

export async function recordReferralCoupon(accountId: string, referralId: string, code: string): Promise<CouponRecord> {
  const normalized = normalizeCouponCode(code);
  try {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.referral(accountId, referralId),
          UpdateExpression: 'SET coupon_code = :c',
          // Never a second code on a referral: the same code again is a replay.
          ConditionExpression:
            'attribute_exists(pk) AND (attribute_not_exists(coupon_code) OR attribute_type(coupon_code, :null) OR coupon_code = :c)',
          ExpressionAttributeValues: { ':c': code, ':null': 'NULL' },
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: { ...moneyKeys.couponClaim(accountId, normalized), type: 'Claim', referral_id: referralId, coupon_code: code },
          ConditionExpression: 'attribute_not_exists(pk) OR referral_id = :r',
          ExpressionAttributeValues: { ':r': referralId },
        },
      },
    ]);
    return 'recorded';
  } catch (err) {
    if (!(err instanceof ConditionsFailedError)) throw err;
    if (err.failed(0)) return 'referral_gone';
    throw new CouponCodeTakenError(`coupon code ${code} is claimed by another referral`);
  }
}

/** The referral a coupon code belongs to, or null. */
export async function referralIdByCoupon(accountId: string, code: string): Promise<string | null> {
  // Coupon codes are printable ASCII; anything else is refused before upper-casing could fold it onto one
  // (ß -> SS, ﬁ -> FI).
  if (!/^[\x21-\x7e]+$/.test(code.trim())) return null;
  const normalized = normalizeCouponCode(code);
  if (normalized.length < 5 || normalized.length > 300) return null;
  const claim = await getItem(moneyKeys.couponClaim(accountId, normalized));
  return typeof claim?.referral_id === 'string' ? claim.referral_id : null;
}
