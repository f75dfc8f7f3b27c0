// The payout rails' kinds as plain domain data (docs/payouts.md): the member's payout method, the batch's
// rail and the views name them, and the domain imports only the domain. The rails themselves
// (shared/rails/<kind>/, listed in shared/rails/registry.ts) are what a kind means; test/unit/rail-kinds.test.ts
// checks that this list and the registry agree. `stripe` here is Stripe Connect, a rail, not the provider.
export type RailKind = 'paypal' | 'stripe' | 'wise';

export const RAIL_KINDS: readonly RailKind[] = ['paypal', 'stripe', 'wise'];

/**
 * The rail whose payouts go to a member's own connected account (`acct_…`, set up from the portal's "Set up
 * payouts") rather than to their payout email: Stripe Connect's Express accounts.
 */
export const ACCOUNT_RAIL: Extract<RailKind, 'stripe'> = 'stripe';
