// Commission terms and amounts (docs/design/money.md "Commission terms").
import type { FieldErrors } from './errors';
import type { CommissionType } from './models';
import { formatInCurrency, minorUnitCents, roundToMinorUnit } from './currency';
import { maxRewardCents } from './money-limits';

/** Field errors of a campaign's commission terms (a percentage commission needs 0.01..100). */
export function commissionErrors(
  terms: { allows_commission: boolean; commission_type: CommissionType; commission_percent: number } & Partial<AmountTerms>,
): FieldErrors {
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
    if (cents > max)
      errors[field] = [
        `Ensure this value is less than or equal to ${formatInCurrency(max, currency)} (the most one payout in ${currency} may carry).`,
      ];
    else if (cents % minorUnitCents(currency) !== 0)
      errors[field] = [`${currency} has no decimals: use a whole amount such as "${formatInCurrency(cents, currency)}".`];
  };
  check('credit_amount', terms.credit_amount, terms.credit_currency);
  check('commission_amount', terms.commission_amount, terms.commission_currency);
  check('min_payout', terms.min_payout, terms.commission_currency);
  if (terms.referred_discount_type === 'flat') {
    // The coupon's currency: the credit currency when the campaign offers credit, else the commission's.
    check(
      'referred_discount_amount',
      terms.referred_discount_amount,
      terms.allows_credit ? terms.credit_currency : terms.commission_currency,
    );
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

/** What a reward rule sees of one payment that earns a reward. */
export interface RewardRuleInput {
  type: 'credit' | 'commission';
  /** The campaign's terms as the referral carries them (shared/domain/rewards.ts RewardTerms). */
  terms: { reward_amount: number; reward_percent?: number | null };
  currency: string;
  /** Cents, tax included; `tax`: the cents of tax in it. */
  payment: { amount: number; tax?: number };
  /** The referring member as loaded with the referral (null when it was deleted or not loaded). */
  member: { conversions: number } | null;
}

/**
 * One way of computing a reward's amount: cents, or null when the rule does not apply (the next rule of
 * the list decides). The list is ordered; shared/flows/settlement/plan.ts holds the one in use.
 */
export type RewardRule = (input: RewardRuleInput) => number | null;

/** A percentage commission: `reward_percent` of the payment excluding tax, rounded half up to what the currency pays. */
export const percentageCommission: RewardRule = ({ type, terms, currency, payment }) =>
  type === 'commission' && terms.reward_percent !== undefined && terms.reward_percent !== null
    ? percentOf(payment.amount - Math.max(0, payment.tax ?? 0), terms.reward_percent, minorUnitCents(currency))
    : null;

/** A fixed amount (a credit, or a fixed commission), rounded to what the currency can pay (whole yen in JPY). */
export const fixedAmount: RewardRule = ({ terms, currency }) => roundToMinorUnit(terms.reward_amount, currency);

/** The rules a reward's amount comes from, first match wins. */
export const DEFAULT_REWARD_RULES: readonly RewardRule[] = [percentageCommission, fixedAmount];

/** The amount the first applicable rule gives (0 when none applies). */
export function rewardAmount(rules: readonly RewardRule[], input: RewardRuleInput): number {
  for (const rule of rules) {
    const amount = rule(input);
    if (amount !== null) return amount;
  }
  return 0;
}
