// Commission terms and amounts (MONEY.md "Commission terms").
import type { FieldErrors } from './errors';
import type { CommissionType } from './models';

/** Field errors of a campaign's commission terms (a percentage commission needs 0.01..100). */
export function commissionErrors(terms: { allows_commission: boolean; commission_type: CommissionType; commission_percent: number }): FieldErrors {
  if (terms.commission_percent > 100_00) return { commission_percent: ['Ensure this value is less than or equal to 100.'] };
  if (terms.allows_commission && terms.commission_type === 'percentage' && terms.commission_percent < 1) {
    return { commission_percent: ['Ensure this value is greater than or equal to 0.01 for a percentage commission.'] };
  }
  return {};
}

/**
 * `percent` hundredths of a percent of `amountCents` (the payment's amount excluding tax), rounded half
 * up to the cent. Integer arithmetic only: cents x basis points is exact far beyond any real payment.
 */
export function percentOf(amountCents: number, percent: number): number {
  if (amountCents <= 0 || percent <= 0) return 0;
  return Math.floor((amountCents * percent + 5_000) / 10_000);
}
