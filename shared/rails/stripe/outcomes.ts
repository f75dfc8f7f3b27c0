// What a connected account and a transfer stand for in Refloop's words, shared by the adapter
// (./adapter.ts, loaded on first use) and the webhook check (./webhook.ts, in the intake's bundle).
import type { RailItemOutcome, RailReadiness } from '../port';
import type { ConnectedAccount, Transfer } from './wire';

/** Ready when payouts are enabled and the transfers capability is active; else what is missing, in words. */
export function readinessOf(account: ConnectedAccount): RailReadiness {
  const transfers = account.capabilities?.transfers ?? 'inactive';
  if (account.payouts_enabled && transfers === 'active') return { ready: true, reason: null };
  if (!account.details_submitted)
    return { ready: false, reason: "Stripe onboarding is not finished: the member has to complete it from the portal's Set up payouts." };
  const why = account.requirements?.disabled_reason ? ` (Stripe says: ${account.requirements.disabled_reason})` : '';
  if (transfers !== 'active')
    return { ready: false, reason: `Transfers are not active on the member's Stripe account yet (${transfers})${why}.` };
  return { ready: false, reason: `Stripe has not enabled payouts on the member's account yet${why}.` };
}

/** The outcome a transfer stands for. */
export function transferOutcome(transfer: Transfer, payoutId: string): RailItemOutcome {
  const fully = transfer.reversed || (transfer.amount > 0 && transfer.amount_reversed >= transfer.amount);
  if (fully)
    return {
      payoutId,
      state: 'failed',
      railStatus: 'reversed',
      railItemId: transfer.id,
      reason: 'The transfer was reversed on Stripe (the money went back to the platform).',
    };
  if (transfer.amount_reversed > 0)
    return {
      payoutId,
      state: 'paid',
      railStatus: 'partially_reversed',
      railItemId: transfer.id,
      reason: `Part of the transfer was reversed on Stripe (${transfer.amount_reversed} of ${transfer.amount} ${transfer.currency.toUpperCase()}).`,
    };
  return { payoutId, state: 'paid', railStatus: 'paid', railItemId: transfer.id, reason: null };
}
