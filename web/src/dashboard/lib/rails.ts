// The payout rails as the Payouts pages use them: the rails' names, a batch's and a payout's rail fields,
// the calls a rail batch needs (create, reconcile, resend, its payouts by batch), and a payout's rail
// status in words (docs/payouts.md; docs/dashboard.md "Payout rails").
import { api } from '../api';
import { cursorOf, idempotencyKey, unwrap, type Schemas } from '../../api/client';
import type { Member, Payout } from '../../api/types';

export type RailKind = 'paypal' | 'stripe' | 'wise';
export const RAIL_KINDS: readonly RailKind[] = ['paypal', 'stripe', 'wise'];
/** The short names of the buttons ("Pay with Stripe") and of the batch list's Rail column. */
export const RAIL_NAMES: Record<RailKind | 'file', string> = { paypal: 'PayPal', stripe: 'Stripe', wise: 'Wise', file: 'File' };

export const isRail = (value: unknown): value is RailKind => RAIL_KINDS.includes(value as RailKind);

/** A batch: `rail`, `failure_reason`, `rail_batch_id`; `status` may be `failed` (every payout failed at once). */
export type RailBatch = Schemas['PayoutBatch'];

/** A payout: `rail` (null until batched) and the rail's own status word (`rail_status`). */
export type RailPayout = Payout;

/** A member's payout method and whether a rail batch would pay them now (and why not). */
export type MethodFields = Pick<Member, 'payout_method' | 'payout_method_ready' | 'payout_method_reason'>;

export const railOf = (batch: RailBatch): RailKind | null => (isRail(batch.rail) ? batch.rail : null);

/** POST /v1/payout-batches/ {rail, currency}: the due payouts of the currency whose member is ready on the rail. */
export function createRailBatch(rail: RailKind, currency: string): Promise<RailBatch> {
  return unwrap(api.POST('/v1/payout-batches/', { params: { header: { 'Idempotency-Key': idempotencyKey() } }, body: { rail, currency } }));
}

/** POST /v1/payout-batches/{id}/reconcile/: the worker reads the batch from its rail (202). */
export function reconcileBatch(id: string): Promise<unknown> {
  return unwrap(
    api.POST('/v1/payout-batches/{id}/reconcile/', { params: { path: { id }, header: { 'Idempotency-Key': idempotencyKey() } } }),
  );
}

/** POST /v1/payouts/{id}/resend/: an unclaimed PayPal payout is sent again (202, queued). */
export function resendPayout(id: string): Promise<unknown> {
  return unwrap(api.POST('/v1/payouts/{id}/resend/', { params: { path: { id }, header: { 'Idempotency-Key': idempotencyKey() } } }));
}

/** Every payout of a batch (GET /v1/payouts/?batch_id=…), page after page. */
export async function batchPayouts(batchId: string): Promise<RailPayout[]> {
  const all: RailPayout[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const result = await unwrap(api.GET('/v1/payouts/', { params: { query: { batch_id: batchId, page_size: 100, cursor } } }));
    all.push(...result.results);
    const next = cursorOf(result.next);
    if (!next) break;
    cursor = next;
  }
  return all;
}

/** An unclaimed PayPal payout: paid to an address with no PayPal account yet; it waits for the recipient. */
export const isUnclaimed = (p: RailPayout): boolean => p.status === 'processing' && p.rail_status === 'UNCLAIMED';

/** Still on its way at the rail (the batch page polls while one is); an unclaimed payout waits on its recipient. */
export const inFlight = (p: RailPayout): boolean => p.status === 'processing' && !isUnclaimed(p);

/** A rail payout's state in words. */
export function railOutcomeWords(p: RailPayout): string {
  const rail = isRail(p.rail) ? RAIL_NAMES[p.rail] : 'the rail';
  if (p.status === 'paid') return `Paid by ${rail}.`;
  if (p.status === 'failed') return p.failure_reason ? `Failed: ${p.failure_reason}` : `${rail} could not pay it.`;
  if (p.status === 'canceled') return 'Canceled.';
  if (isUnclaimed(p)) {
    return 'Unclaimed: the address has no PayPal account yet. PayPal emailed the recipient and returns the money if it is not claimed within 30 days.';
  }
  if (p.status === 'processing') return p.rail_status ? `Sent; ${rail} is processing it.` : `Being sent to ${rail}.`;
  return '';
}
