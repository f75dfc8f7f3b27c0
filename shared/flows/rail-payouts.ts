// Paying through a rail (docs/payouts.md "Paying through a rail"): sending a rail batch and recording what
// the rail says about each payout in the ledger.
//
// - sendRailBatch sends a batch's processing payouts with the batch id and payout ids as the rail's
//   idempotency keys: a repeat (an SQS redelivery, a retry after the rail was down) pays nothing twice.
// - Every outcome (the send's answer, a webhook, a reconciliation) goes through applyRailOutcomes: the first
//   rail status of a payout is recorded with its rail item id, its lookup and the event `payout.sent` in one
//   transaction; then paid -> markPayoutPaid, failed -> markPayoutFailed (processing) or reversePaidPayout
//   (paid: a reversal, refund or return). Each step is conditioned on what it read, so an outcome applied
//   twice changes nothing the second time.
// - A batch is settled (paid, or failed when none of its payouts was paid) by the outcome that leaves none
//   of its payouts processing, and leaves the registry of open rail batches in that transaction.
import { DetailError } from '../domain/errors';
import type { Payout } from '../domain/lifecycle';
import { payoutView } from '../domain/payout-views';
import { log } from '../log';
import type { RailKind } from '../rails/definition';
import { type RailItemOutcome, type RailPayout, RailBatchError } from '../rails/port';
import { railDefinition } from '../rails/registry';
import { tableName } from '../store/client';
import { MoneyTxn } from '../store/ledger';
import { batchGet, ConditionsFailedError, counterUpdate, getItem, lookup, RaceLostError, transact, withRetries } from '../store/ops';
import { eventItem } from '../store/outbox';
import { getPayoutAndClaim, isPayoutId, putPayoutVersion } from '../store/payouts';
import { openRailBatchDelete } from '../store/rail-batches';
import { railConnection } from '../store/rail-connections';
import { payoutOfRailItem, railItemPut } from '../store/rail-items';
import { moneyListKeys, type CounterName, moneyKeys } from '../store/table';
import { toPayout } from '../store/payouts';
import { getBatch, markPayoutFailed, markPayoutPaid, reversePaidPayout, toBatch, type PayoutBatch } from './payouts';

class RecordRaceError extends RaceLostError {}

const now = () => Math.floor(Date.now() / 1000);

/**
 * Records the rail's status word and item id on the payout (when they changed), with the lookup of a new
 * item id, `payout.sent` with the payout's first rail status and `payout.unclaimed` the first time it is
 * UNCLAIMED, in one transaction conditioned on the version read. Returns the payout as it is after.
 */
async function recordRail(accountId: string, kind: RailKind, payoutId: string, outcome: RailItemOutcome): Promise<Payout | null> {
  return withRetries(
    async () => {
      const read = await getPayoutAndClaim(accountId, payoutId);
      if (!read) return null;
      const payout = read.payout;
      const itemId = outcome.railItemId ?? payout.rail_item_id ?? null;
      // An unclaimed payout says so in PayPal's word, whatever the outcome's own.
      const status = outcome.state === 'unclaimed' ? 'UNCLAIMED' : outcome.railStatus || payout.rail_status || null;
      // A claimed payout is mid-transition (its claim's owner finishes it): recorded by a later outcome.
      if (read.claim) return payout;
      if ((payout.rail_item_id ?? null) === itemId && (payout.rail_status ?? null) === status) return payout;
      const next: Payout = { ...payout, rail_status: status, rail_item_id: itemId, updated_at: now(), version: payout.version + 1 };
      const txn = new MoneyTxn(accountId);
      putPayoutVersion(txn, payout, next);
      if (itemId !== null && itemId !== (payout.rail_item_id ?? null))
        txn.push(railItemPut(accountId, kind, itemId, payout.id), `railitem:${itemId}`);
      if ((payout.rail_status ?? null) === null)
        txn.push(eventItem(accountId, 'payout.sent', payout.id, payoutView(next)), `event:sent:${payout.id}`);
      if (outcome.state === 'unclaimed' && payout.rail_status !== 'UNCLAIMED')
        txn.push(eventItem(accountId, 'payout.unclaimed', payout.id, payoutView(next)), `event:unclaimed:${payout.id}`);
      try {
        await transact(txn.build());
      } catch (err) {
        if (err instanceof ConditionsFailedError) throw new RecordRaceError();
        throw err;
      }
      return next;
    },
    (err) => err instanceof RecordRaceError,
    6,
  );
}

/** Applies one outcome; returns the batch it may have settled a payout of, if any. */
async function applyOne(accountId: string, kind: RailKind, outcome: RailItemOutcome): Promise<string | null> {
  let payoutId = outcome.payoutId;
  if (!payoutId) {
    if (!outcome.railItemId) return null;
    payoutId = (await payoutOfRailItem(accountId, kind, outcome.railItemId)) ?? '';
  }
  if (!isPayoutId(payoutId)) {
    log('warn', 'rail outcome names no known payout', { account_id: accountId, rail: kind, rail_item_id: outcome.railItemId });
    return null;
  }
  const read = await getPayoutAndClaim(accountId, payoutId);
  if (!read || read.payout.rail !== kind) {
    log('warn', 'rail outcome for a payout not sent through this rail', { account_id: accountId, rail: kind, payout_id: payoutId });
    return null;
  }
  const stored = read.payout.rail_item_id ?? null;
  if (outcome.railItemId && stored && outcome.railItemId !== stored) {
    // A re-send gave the payout a new item: what the rail says about the old one is stale.
    log('info', 'stale rail outcome ignored', { account_id: accountId, payout_id: payoutId, rail_item_id: outcome.railItemId });
    return null;
  }
  const status = read.payout.status;
  // Only a payout the rail is paying (or paid) takes its outcomes: a failed or canceled one is done.
  if (status !== 'processing' && !(status === 'paid' && outcome.state === 'failed') && !(status === 'paid' && outcome.state === 'paid')) {
    if (outcome.state === 'paid' && status === 'failed')
      log('warn', 'rail says paid for a failed payout: ignored', { account_id: accountId, payout_id: payoutId, rail: kind });
    return null;
  }
  if (status === 'paid' && outcome.state === 'paid') return null;
  const payout = await recordRail(accountId, kind, payoutId, outcome);
  if (!payout) return null;
  const batchId = payout.batch_id;
  try {
    if (outcome.state === 'paid') {
      await markPayoutPaid(accountId, payoutId, { reference: outcome.railItemId ?? payout.rail_item_id ?? batchId });
    } else if (outcome.state === 'failed') {
      const reason = outcome.reason ?? `The rail reported the payout ${outcome.railStatus || 'failed'}.`;
      if (status === 'paid') await reversePaidPayout(accountId, payoutId, reason);
      else await markPayoutFailed(accountId, payoutId, reason);
    }
  } catch (err) {
    // Another transition holds the payout (a claim of the operator's mark-paid or mark-failed): it wins.
    if (err instanceof DetailError && err.status === 409) {
      log('warn', 'rail outcome not applied: the payout is being changed otherwise', {
        account_id: accountId,
        payout_id: payoutId,
        detail: err.message,
      });
      return null;
    }
    throw err;
  }
  return batchId;
}

/** Settles a rail batch once none of its payouts is processing: paid, or failed when none was paid. */
async function settleBatch(accountId: string, batchId: string): Promise<void> {
  const batch = toBatch(await getItem(moneyListKeys.payoutBatch(accountId, batchId)));
  if (!batch || batch.rail === 'file' || batch.status !== 'processing') return;
  const found = await batchGet(batch.payout_ids.map((id) => moneyKeys.payout(accountId, id)));
  const payouts = batch.payout_ids
    .map((id) => toPayout(lookup(found, moneyKeys.payout(accountId, id))))
    .filter((p): p is Payout => p !== null);
  if (payouts.some((p) => p.status === 'processing')) return;
  const paid = payouts.some((p) => p.status === 'paid');
  await closeBatch(accountId, batch, paid ? { status: 'paid' } : { status: 'failed', reason: null });
}

/** The batch's last write: its status, the list's counters, and its leaving the open rail batches. Once. */
async function closeBatch(accountId: string, batch: PayoutBatch, to: { status: 'paid' } | { status: 'failed'; reason: string | null }) {
  const at = now();
  const sets = ['#st = :to'];
  const values: Record<string, unknown> = { ':to': to.status, ':processing': 'processing' };
  if (to.status === 'paid') {
    sets.push('paid_at = :at', '#ref = :ref');
    values[':at'] = at;
    values[':ref'] = batch.rail_batch_id ?? batch.id;
  } else if (to.reason) {
    sets.push('failure_reason = :why');
    values[':why'] = to.reason;
  }
  try {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: moneyListKeys.payoutBatch(accountId, batch.id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: '#st = :processing',
          ExpressionAttributeNames: { '#st': 'status', ...(to.status === 'paid' ? { '#ref': 'reference' } : {}) },
          ExpressionAttributeValues: values,
        },
      },
      counterUpdate(accountId, 'payout_batches#s#processing', -1),
      counterUpdate(accountId, `payout_batches#s#${to.status}` as CounterName, 1),
      openRailBatchDelete(accountId, batch.id),
    ]);
    log('info', `rail batch ${to.status}`, { account_id: accountId, batch_id: batch.id });
  } catch (err) {
    // Settled already (a concurrent outcome or a repeat).
    if (!(err instanceof ConditionsFailedError)) throw err;
  }
}

/**
 * Records what a rail says about payouts (a send's answer, a webhook, a reconciliation): each outcome moves
 * its payout through the ledger (processing -> paid | failed, paid -> failed on a reversal), idempotently; an
 * outcome naming no payout (Wise: a transfer id only) is matched by its rail item id; a stale one is ignored.
 */
export async function applyRailOutcomes(accountId: string, kind: RailKind, outcomes: readonly RailItemOutcome[]): Promise<void> {
  const batches = new Set<string>();
  // One at a time: two outcomes of one payout (a webhook's PENDING then SUCCESS) apply in order.
  for (const outcome of outcomes) {
    const batchId = await applyOne(accountId, kind, outcome);
    if (batchId) batches.add(batchId);
  }
  for (const batchId of batches) await settleBatch(accountId, batchId);
}

/** The note a recipient sees. */
function noteOf(batch: PayoutBatch): string {
  const month = new Date(batch.created_at * 1000).toLocaleString('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' });
  return `Referral commissions ${month}`;
}

/** Every payout of a batch failed at once (a refusal of the whole batch), the batch failed with the words. */
async function failBatch(accountId: string, batch: PayoutBatch, payouts: readonly Payout[], reason: string): Promise<void> {
  for (const p of payouts) {
    if (p.status !== 'processing') continue;
    try {
      await markPayoutFailed(accountId, p.id, reason);
    } catch (err) {
      if (!(err instanceof DetailError && err.status === 409)) throw err;
      log('warn', 'payout of a refused batch not failed: it is being changed otherwise', { account_id: accountId, payout_id: p.id });
    }
  }
  await closeBatch(accountId, batch, { status: 'failed', reason });
}

/** Sends a rail batch through its rail (the payout-rails worker's send-rail-batch). Safe to repeat. */
export async function sendRailBatch(accountId: string, batchId: string): Promise<void> {
  let batch: PayoutBatch;
  try {
    batch = await getBatch(accountId, batchId);
  } catch {
    log('warn', 'send-rail-batch: no such batch', { account_id: accountId, batch_id: batchId });
    return;
  }
  if (batch.rail === 'file' || batch.status !== 'processing') return;
  const kind = batch.rail;
  const found = await batchGet(batch.payout_ids.map((id) => moneyKeys.payout(accountId, id)));
  const payouts = batch.payout_ids
    .map((id) => toPayout(lookup(found, moneyKeys.payout(accountId, id))))
    .filter((p): p is Payout => p !== null);
  // The rail answers a repeat of the same ids with what it has: every payout still processing is sent again.
  const sending = payouts.filter((p) => p.status === 'processing');
  if (sending.length === 0) {
    await settleBatch(accountId, batch.id);
    return;
  }
  const [connection, definition] = [await railConnection(accountId, kind), railDefinition(kind)];
  if (!connection || !definition) {
    await failBatch(accountId, batch, payouts, `The ${definition?.name ?? kind} connection was removed before the batch was sent.`);
    return;
  }
  const note = noteOf(batch);
  const railPayouts: RailPayout[] = sending.map((p) => ({
    id: p.id,
    memberId: p.member_id,
    amount: p.amount,
    currency: p.currency,
    destination: p.rail_destination ?? p.payout_email ?? '',
    note,
  }));
  const adapter = await definition.adapter(connection);
  let result: Awaited<ReturnType<typeof adapter.sendBatch>>;
  try {
    result = await adapter.sendBatch(batch.id, railPayouts);
  } catch (err) {
    if (err instanceof RailBatchError && !err.retryable) {
      log('warn', 'rail refused the batch', { account_id: accountId, batch_id: batch.id, rail: kind, code: err.code });
      await failBatch(accountId, batch, payouts, err.message);
      return;
    }
    // The rail was down or slow: the message is retried with the same ids (nothing is paid twice).
    throw err;
  }
  if (batch.rail_batch_id !== result.railBatchId) {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: moneyListKeys.payoutBatch(accountId, batch.id),
          UpdateExpression: 'SET rail_batch_id = :r',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':r': result.railBatchId },
        },
      },
    ]);
  }
  log('info', 'rail batch sent', { account_id: accountId, batch_id: batch.id, rail: kind, payouts: sending.length });
  // Items the answer does not mention are still recorded as handed over (payout.sent) by their first outcome.
  await applyRailOutcomes(accountId, kind, result.items);
}
