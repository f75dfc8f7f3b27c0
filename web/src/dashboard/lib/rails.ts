// The payout rails as the Payouts pages use them: the rails' names, a batch's and a payout's rail fields,
// the calls a rail batch needs (create, reconcile, resend, its payouts by batch), and a payout's rail
// status in words (docs/payouts.md; docs/dashboard.md "Payout rails").
import { api } from '../api';
import { idempotencyKey, unwrap, type Page, type Schemas } from '../../api/client';
import type { Payout } from '../../api/types';

export type RailKind = 'paypal' | 'stripe' | 'wise';
export const RAIL_KINDS: readonly RailKind[] = ['paypal', 'stripe', 'wise'];
/** The short names of the buttons ("Pay with Stripe") and of the batch list's Rail column. */
export const RAIL_NAMES: Record<RailKind | 'file', string> = { paypal: 'PayPal', stripe: 'Stripe', wise: 'Wise', file: 'File' };

export const isRail = (value: unknown): value is RailKind => RAIL_KINDS.includes(value as RailKind);

/** A batch's rail fields (`rail`, `failure_reason`, `rail_batch_id`; `status` may be `failed`). */
export type RailBatch = Omit<Schemas['PayoutBatch'], 'status' | 'format'> & {
  status: Schemas['PayoutBatch']['status'] | 'failed';
  format: Schemas['PayoutBatch']['format'] | null;
  rail?: RailKind | 'file';
  failure_reason?: string | null;
  rail_batch_id?: string | null;
};

/** A payout's rail fields: `rail` (null until batched) and the rail's own status word. */
export type RailPayout = Payout & { rail?: RailKind | null; rail_status?: string | null };

/** A member's payout method and whether a rail batch would pay them now. */
export interface MethodFields {
  payout_method?: RailKind | null;
  payout_method_ready?: boolean;
  payout_method_reason?: string | null;
}

export const railOf = (batch: RailBatch): RailKind | null => (isRail(batch.rail) ? batch.rail : null);

// The calls below are typed by hand: their fields are the payout-rails contract (docs/payouts.md).
type Call<T> = Promise<{ data?: T; error?: unknown; response: Response }>;
interface UntypedClient {
  GET<T>(path: string, init: { params: { query?: Record<string, unknown>; path?: Record<string, string> } }): Call<T>;
  POST<T>(
    path: string,
    init: { params: { path?: Record<string, string>; header?: Record<string, string> }; body?: Record<string, unknown> },
  ): Call<T>;
}
const client = api as unknown as UntypedClient;

/** POST /v1/payout-batches/ {rail, currency}: the due payouts of the currency whose member is ready on the rail. */
export function createRailBatch(rail: RailKind, currency: string): Promise<RailBatch> {
  return unwrap(
    client.POST<RailBatch>('/v1/payout-batches/', {
      params: { header: { 'Idempotency-Key': idempotencyKey() } },
      body: { rail, currency },
    }),
  );
}

/** POST /v1/payout-batches/{id}/reconcile/: the worker reads the batch from its rail (202). */
export function reconcileBatch(id: string): Promise<{ batch_id: string; queued: boolean }> {
  return unwrap(
    client.POST<{ batch_id: string; queued: boolean }>('/v1/payout-batches/{id}/reconcile/', {
      params: { path: { id }, header: { 'Idempotency-Key': idempotencyKey() } },
    }),
  );
}

/** POST /v1/payouts/{id}/resend/: an unclaimed PayPal payout is sent again (202, queued). */
export function resendPayout(id: string): Promise<RailPayout> {
  return unwrap(
    client.POST<RailPayout>('/v1/payouts/{id}/resend/', { params: { path: { id }, header: { 'Idempotency-Key': idempotencyKey() } } }),
  );
}

/** Every payout of a batch (GET /v1/payouts/?batch_id=…), page after page. */
export async function batchPayouts(batchId: string): Promise<RailPayout[]> {
  const all: RailPayout[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < 50; page++) {
    const result: Page<RailPayout> = await unwrap(
      client.GET<Page<RailPayout>>('/v1/payouts/', { params: { query: { batch_id: batchId, page_size: 100, cursor } } }),
    );
    all.push(...result.results);
    const next = result.next ? new URL(result.next, location.origin).searchParams.get('cursor') : null;
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
