// Paying through a rail (docs/payouts.md): sending a rail batch and recording what the rail says about
// each payout in the ledger. SEAM (being written): the signatures below are the contract other modules use.
import type { RailKind } from '../rails/definition';
import type { RailItemOutcome } from '../rails/port';

/**
 * Records what a rail says about payouts (a send's answer, a webhook, a reconciliation): each outcome moves
 * its payout through the ledger (processing -> paid | failed, paid -> failed on a reversal), idempotently; an
 * outcome naming no payout (Wise: a transfer id only) is matched by its rail item id; a stale one is ignored.
 */
export async function applyRailOutcomes(accountId: string, kind: RailKind, outcomes: readonly RailItemOutcome[]): Promise<void> {
  void accountId;
  void kind;
  void outcomes;
  throw new Error('applyRailOutcomes: not implemented yet');
}

/** Sends a rail batch through its rail (the payout-rails worker's send-rail-batch). Safe to repeat. */
export async function sendRailBatch(accountId: string, batchId: string): Promise<void> {
  void accountId;
  void batchId;
  throw new Error('sendRailBatch: not implemented yet');
}
