// Upper bounds on amounts (docs/rewards.md "Bounds"). Amounts are Refloop's hundredths of the currency's
// major unit (domain/currency.ts). A bound is a sanity limit, not a business rule: what exceeds it is
// held for an operator's review, never paid automatically.

import { currencyExponent } from './currency';

/**
 * The most one payout (one row of a payout file) may carry: 1,000,000.00 in a currency with minor units,
 * 100,000,000 in a zero-decimal one (JPY, KRW, IDR, VND, HUF...: ICU shows them without decimals, and
 * their unit is worth roughly a hundredth of a dollar or euro). A referral commission payout above it is
 * a mistake or an attack (a payment reported in the wrong unit, a forged amount), so such a payout is
 * never due nor batched: it stays `open` with the reason in `failure_reason` (store/payouts.ts).
 */
export const MAX_PAYOUT_MAJOR_UNITS = 1_000_000;

export function maxPayoutCents(currency: string): number {
  const base = MAX_PAYOUT_MAJOR_UNITS * 100;
  return currencyExponent(currency) === 0 ? base * 100 : base;
}

/** The reason a held payout shows (its `failure_reason`). */
export function payoutAboveMaximum(currency: string): string {
  const max = maxPayoutCents(currency) / 100;
  return `Held for review: above the maximum of ${max.toLocaleString('en-US')} ${currency} per payout, so it is never batched; void the rewards that are wrong.`;
}

/**
 * The largest single payment a provider may report before Refloop stops trusting it: 10,000,000.00 in a
 * currency with minor units, 10,000,000,000 in a zero-decimal one. Far above any subscription payment,
 * far below a unit mix-up or a forged figure (a test payment of 33.3 billion dollars). A payment above it
 * is still recorded as the provider reported it (nothing is lost), but the reward it earns is held for
 * review: pending, never approved or applied by itself, with the reason in its `note` (domain/rewards.ts).
 */
export const MAX_PAYMENT_MAJOR_UNITS = 10_000_000;

export function maxPaymentCents(currency: string): number {
  const base = MAX_PAYMENT_MAJOR_UNITS * 100;
  return currencyExponent(currency) === 0 ? base * 1000 : base;
}

/** The note of a reward held because its payment is above maxPaymentCents. */
export function paymentAboveMaximum(paymentId: string | number, amountCents: number, currency: string): string {
  const major = (cents: number) => (cents / 100).toLocaleString('en-US', { maximumFractionDigits: 2 });
  return `Held for review: payment ${paymentId} of ${major(amountCents)} ${currency} is above the sanity limit of ${major(maxPaymentCents(currency))} ${currency} per payment, so this reward is not approved or applied by itself; approve it if the payment is real, else void it.`;
}

/**
 * A campaign's fixed amounts (commission, credit, minimum payout) may not exceed what one payout may
 * carry: a reward above it could never be paid.
 */
export const maxRewardCents = maxPayoutCents;
