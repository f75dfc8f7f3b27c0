// Members' payout methods (docs/payouts.md "Members' methods"). SEAM (being written): the signatures below
// are the contract other modules use.

/**
 * Stripe Connect's account.updated, verified and queued by the rail webhook intake: the members whose
 * connected account it is become ready or not, and their collecting payouts due or open again.
 */
export async function applyStripeAccountUpdates(
  accountId: string,
  updates: readonly { destination: string; ready: boolean }[],
): Promise<void> {
  void accountId;
  void updates;
  throw new Error('applyStripeAccountUpdates: not implemented yet');
}
