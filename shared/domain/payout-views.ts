// The Payout and PayoutBatch objects of the API (docs/design/money.md "Payouts"), and in payout.* webhook events.
import { formatCents } from './money';
import type { Payout } from './lifecycle';

export function payoutView(p: Payout) {
  return {
    id: p.id,
    member_id: p.member_id,
    amount: formatCents(p.amount),
    currency: p.currency,
    status: p.status,
    reward_count: p.reward_ids.length,
    period_start: p.period_start,
    period_end: p.period_end,
    paid_at: p.paid_at,
    reference: p.reference,
    failure_reason: p.failure_reason,
    batch_id: p.batch_id,
    payout_email: p.payout_email,
    rail: p.rail ?? null,
    rail_status: p.rail_status ?? null,
    created_at: p.created_at,
  };
}

/** GET /v1/payouts/{id}/: the payout with the ids of its rewards. */
export function payoutDetailView(p: Payout) {
  return { ...payoutView(p), reward_ids: p.reward_ids };
}

/** The PayoutBatch object of the API. */
export function batchView(
  b: {
    id: string;
    format: string | null;
    rail?: string;
    currency: string;
    status: string;
    payout_ids: string[];
    amount: number;
    created_at: number;
    paid_at?: number | null;
    reference?: string | null;
    failure_reason?: string | null;
    rail_batch_id?: string | null;
  },
  baseUrl: string,
) {
  const rail = b.rail ?? 'file';
  return {
    id: b.id,
    rail,
    // A rail batch has no file: the rail is sent the payouts themselves.
    format: rail === 'file' ? b.format : null,
    currency: b.currency,
    status: b.status,
    payout_ids: b.payout_ids,
    payout_count: b.payout_ids.length,
    amount: formatCents(b.amount),
    file_url: rail === 'file' ? `${baseUrl}/v1/payout-batches/${b.id}/file/` : null,
    created_at: b.created_at,
    paid_at: b.paid_at ?? null,
    reference: b.reference ?? null,
    failure_reason: b.failure_reason ?? null,
    rail_batch_id: b.rail_batch_id ?? null,
  };
}
