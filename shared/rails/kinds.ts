// The payout rails' kinds as plain data, for the modules that must name them without loading the rails'
// definitions (shared/rails/registry.ts imports every rail's webhook code): the batch flow, the body and
// response schemas. A rail joins here as well as in the registry; test/unit/rail-kinds.test.ts checks that
// the two agree.
import { RAIL_KINDS, type RailKind } from '../domain/rail-kinds';

export { RAIL_KINDS };

/** How a batch pays: a file the operator uploads, or a rail (docs/payouts.md "Paying through a rail"). */
export type BatchRail = 'file' | RailKind;
export const BATCH_RAILS: readonly BatchRail[] = ['file', ...RAIL_KINDS];

/** As the rails' definitions name them. */
export const RAIL_NAMES: Record<RailKind, string> = { paypal: 'PayPal Payouts', stripe: 'Stripe Connect', wise: 'Wise' };

/** The most payouts one rail batch sends (PayPal takes 15,000 per batch, a Wise batch group 1,000; Stripe is a transfer each). */
export const RAIL_BATCH_LIMITS: Record<RailKind, number> = { paypal: 5000, stripe: 500, wise: 1000 };

/** Rails that pay a member's connected account (`acct_…`) rather than their payout email. */
export const paysConnectedAccount = (kind: BatchRail): boolean => kind === 'stripe';
