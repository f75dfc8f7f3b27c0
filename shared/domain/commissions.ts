// Commission terms and amounts (docs/design/money.md "Commission terms").
import type { FieldErrors } from './errors';
import type { CommissionType } from './models';
import { formatInCurrency, minorUnitCents } from './currency';
import { maxRewardCents } from './money-limits';

/** Field errors of a campaign's commission terms (a percentage commission needs 0.01..100). */
export function commissionErrors(terms: { allows_commission: boolean; commission_type: CommissionType; commission_percent: number } & Partial<AmountTerms>): FieldErrors {
  if (terms.commission_percent > 100_00) return { commission_percent: ['Ensure this value is less than or equal to 100.'] };
  if (terms.allows_commission && terms.commission_type === 'percentage' && terms.commission_percent < 1) {
    return { commission_percent: ['Ensure this value is greater than or equal to 0.01 for a percentage commission.'] };
  }
  return amountErrors(terms);
}

interface AmountTerms {
  credit_amount: number;
  credit_currency: string;
  commission_amount: number;
  commission_currency: string;
  min_payout: number;
  referred_discount_type: 'percentage' | 'flat' | null;
  referred_discount_amount: number;
  allows_credit: boolean;
}

/**
 * The campaign's amounts against their currencies: none above what one payout may carry
 * (domain/money-limits.ts), and none with decimals a zero-decimal currency cannot pay (JPY "39.96").
 */
function amountErrors(terms: Partial<AmountTerms>): FieldErrors {
  const errors: FieldErrors = {};
  const check = (field: keyof AmountTerms, cents: number | undefined, currency: string | undefined) => {
    if (cents === undefined || currency === undefined || cents === 0) return;
    const max = maxRewardCents(currency);
    if (cents > max) errors[field] = [`Ensure this value is less than or equal to ${formatInCurrency(max, currency)} (the most one payout in ${currency} may carry).`];
    else if (cents % minorUnitCents(currency) !== 0) errors[field] = [`${currency} has no decimals: use a whole amount such as "${formatInCurrency(cents, currency)}".`];
  };
  check('credit_amount', terms.credit_amount, terms.credit_currency);
  check('commission_amount', terms.commission_amount, terms.commission_currency);
  check('min_payout', terms.min_payout, terms.commission_currency);
  if (terms.referred_discount_type === 'flat') {
    // The coupon's currency: the credit currency when the campaign offers credit, else the commission's.
    check('referred_discount_amount', terms.referred_discount_amount, terms.allows_credit ? terms.credit_currency : terms.commission_currency);
  }
  return errors;
}

/**
 * `percent` hundredths of a percent of `amountCents` (the payment's amount excluding tax), rounded half
 * up to `unitCents` (1: the cent; 100: the whole unit of a zero-decimal currency such as JPY, see
 * domain/currency.ts minorUnitCents). Integer arithmetic only: cents x basis points is exact far beyond
 * any real payment.
 */
export function percentOf(amountCents: number, percent: number, unitCents = 1): number {
  if (amountCents <= 0 || percent <= 0) return 0;
  const per = 10_000 * unitCents;
  return Math.floor((amountCents * percent + per / 2) / per) * unitCents;
}
