// Double-sided campaigns: the discount the referred user gets, as a single-use Paddle coupon created for
// each referral made in such a campaign. Pure rules; the coupon itself is created by the reward worker
// (shared/flows/coupons.ts).
//
// - `referred_discount_type` null (the default) = no discount: the campaign is one-sided.
// - percentage: `referred_discount_amount` is the percent, 0.01 .. 99.99 (Paddle refuses 100 and more).
// - flat: an amount >= 0.01 in the campaign's currency (the currency of the reward it offers; USD when
//   it offers none), which is the coupon's `currency`.
// - `referred_discount_recurring`: whether the discount applies to renewals too (Paddle's `recurring`).
import { createHash } from 'node:crypto';
import type { FieldErrors } from './errors';

export type DiscountType = 'percentage' | 'flat';

export interface DiscountTerms {
  referred_discount_type: DiscountType | null;
  /** Cents (flat) or hundredths of a percent (percentage). */
  referred_discount_amount: number;
  referred_discount_recurring: boolean;
}

/** The discount copied onto a referral at creation (later campaign edits do not change it). */
export interface ReferredDiscount {
  type: DiscountType;
  amount: number;
  recurring: boolean;
  /** Flat discounts only. */
  currency: string | null;
}

export const DISCOUNT_TYPES: readonly DiscountType[] = ['percentage', 'flat'];

/** Errors of a campaign's discount fields taken together (the schema has checked each one alone). */
export function discountErrors(terms: DiscountTerms): FieldErrors {
  if (terms.referred_discount_type === null) return {};
  if (terms.referred_discount_amount < 1) {
    return { referred_discount_amount: ['Ensure this value is greater than or equal to 0.01.'] };
  }
  if (terms.referred_discount_type === 'percentage' && terms.referred_discount_amount >= 100_00) {
    return { referred_discount_amount: ['Ensure this value is less than 100 for a percentage discount.'] };
  }
  return {};
}

/** The discount a referral made in a campaign with these terms carries; null for a one-sided campaign. */
export function referredDiscount(terms: DiscountTerms | null, currency: string): ReferredDiscount | null {
  if (!terms || terms.referred_discount_type === null || terms.referred_discount_amount <= 0) return null;
  return {
    type: terms.referred_discount_type,
    amount: terms.referred_discount_amount,
    recurring: terms.referred_discount_recurring,
    currency: terms.referred_discount_type === 'flat' ? currency : null,
  };
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * The referral's coupon code, derived from its id so that every attempt to create it sends the same
 * code (Paddle's "duplicate code" answer then means "created by an earlier attempt"): `RF` + 12
 * Crockford base-32 characters of SHA-256(referral id), 60 bits, easy to type and to read aloud.
 */
export function couponCodeFor(referralId: string): string {
  const digest = createHash('sha256').update(`refloop-coupon:${referralId}`).digest();
  let bits = 0n;
  for (const byte of digest.subarray(0, 8)) bits = (bits << 8n) | BigInt(byte);
  let code = '';
  for (let i = 0; i < 12; i++) {
    code += CROCKFORD[Number(bits & 31n)];
    bits >>= 5n;
  }
  return `RF${code}`;
}

/** Coupon codes are compared without case (buyers type them). */
export const normalizeCouponCode = (code: string) => code.trim().toUpperCase();
