// A member's payout method (docs/payouts.md "Members' methods"): where their money goes and whether it can
// go there now. A payout is `due` only with a ready method; the batch of a rail takes only the payouts of
// members whose method is that rail and ready.
//
// - `null` (no method chosen): the file rail, paid to the member's payout email (as before the rails).
// - `paypal`, `wise`: paid to the member's payout email; ready when it is set.
// - `stripe`: paid to the member's Stripe Express account (`stripe_account_id`, created from the portal's
//   "Set up payouts"); ready when Stripe reported `payouts_enabled` and an active `transfers` capability
//   (`stripe_ready`, set from Connect's account.updated).
import { ACCOUNT_RAIL, RAIL_KINDS, type RailKind } from './rail-kinds';

export type PayoutMethod = RailKind;
export const PAYOUT_METHODS: readonly PayoutMethod[] = RAIL_KINDS;
export const isPayoutMethod = (v: unknown): v is PayoutMethod => typeof v === 'string' && (PAYOUT_METHODS as readonly string[]).includes(v);

export interface MethodReadiness {
  method: PayoutMethod | null;
  /** The payout email (file, PayPal, Wise) or the connected account `acct_…` (Stripe); null when there is none yet. */
  destination: string | null;
  ready: boolean;
  /** What is missing, in words, when not ready. */
  reason: string | null;
}

export const NO_PAYOUT_EMAIL = 'The member has no payout email.';
export const STRIPE_NOT_STARTED = 'The member has not set up Stripe payouts in the portal yet.';
export const STRIPE_NOT_READY = 'Stripe has not enabled payouts to the member yet: onboarding is unfinished.';

/** The readiness of a stored member item (its `payout_method`, `payout_email`, `stripe_account_id`, `stripe_ready`). */
export function methodReadiness(member: Record<string, unknown> | undefined): MethodReadiness {
  const method = isPayoutMethod(member?.payout_method) ? member.payout_method : null;
  if (method === ACCOUNT_RAIL) {
    const account = typeof member?.stripe_account_id === 'string' && member.stripe_account_id !== '' ? member.stripe_account_id : null;
    if (!account) return { method, destination: null, ready: false, reason: STRIPE_NOT_STARTED };
    const ready = member?.stripe_ready === true;
    return { method, destination: account, ready, reason: ready ? null : STRIPE_NOT_READY };
  }
  const email = typeof member?.payout_email === 'string' && member.payout_email !== '' ? member.payout_email : null;
  return { method, destination: email, ready: email !== null, reason: email ? null : NO_PAYOUT_EMAIL };
}
