// Bodies of the money endpoints (docs/design/money.md): void, batches, mark-paid / mark-failed.
import * as v from 'valibot';
import { VOID_REASONS, type VoidReason } from '../domain/lifecycle';
import { REQUIRED, choice, currency, field, text } from './fields';
import { BATCH_RAILS } from '../rails/kinds';

export const voidRewardBody = v.object({ reason: v.optional(choice<VoidReason>(VOID_REASONS), 'manual') }, REQUIRED);

const payoutIds = field<string[]>(
  (value) => {
    if (!Array.isArray(value)) return { ok: false, message: 'Expected a list of items.' };
    if (value.length === 0) return { ok: false, message: 'This list may not be empty.' };
    if (value.length > 5000) return { ok: false, message: 'Ensure this field has no more than 5000 elements.' };
    if (!value.every((id) => typeof id === 'string' && /^po_[0-9a-f]{32}$/.test(id)))
      return { ok: false, message: 'Every item must be a payout id (po_…).' };
    return { ok: true, value: value as string[] };
  },
  { type: 'array', items: { type: 'string', pattern: '^po_[0-9a-f]{32}$' }, minItems: 1, maxItems: 5000 },
);

/**
 * `rail`: `file` (default: a file in `format`, required then) or a connected payout rail (no `format`; the
 * PayoutRails worker sends the batch). docs/payouts.md "Paying through a rail".
 */
export const createPayoutBatchBody = v.object(
  {
    rail: v.optional(choice(BATCH_RAILS), 'file'),
    format: v.optional(choice(['paypal', 'wise', 'csv'] as const)),
    currency,
    payout_ids: v.optional(payoutIds),
  },
  REQUIRED,
);

const unixTime = field<number>(
  (value) => {
    const n = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
    if (typeof n !== 'number' || !Number.isInteger(n)) return { ok: false, message: 'A valid integer is required.' };
    if (n < 946_684_800 || n > 4_102_444_800)
      return { ok: false, message: 'Ensure this is a unix timestamp (seconds) between 2000 and 2100.' };
    return { ok: true, value: n };
  },
  { type: 'integer', description: 'Unix timestamp (seconds); default now.' },
);

export const markPaidBody = v.object({ paid_at: v.optional(unixTime), reference: v.optional(text(200)) }, REQUIRED);
export const markFailedBody = v.object({ reason: text(500) }, REQUIRED);
