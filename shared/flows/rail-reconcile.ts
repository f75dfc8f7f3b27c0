// Reconciliation of rail batches and re-sends of unclaimed payouts (docs/payouts.md). SEAM (being written):
// the signatures below are the contract other modules use.

/** Reads a rail batch back from its rail and applies what it says (the payout-rails worker's reconcile-rail-batch). */
export async function reconcileRailBatch(accountId: string, batchId: string): Promise<void> {
  void accountId;
  void batchId;
  throw new Error('reconcileRailBatch: not implemented yet');
}

/** Cancels an unclaimed item at its rail and sends the payout again as `pb_…-r<attempt>` (resend-rail-payout). */
export async function resendRailPayout(accountId: string, payoutId: string, attempt: number): Promise<void> {
  void accountId;
  void payoutId;
  void attempt;
  throw new Error('resendRailPayout: not implemented yet');
}
