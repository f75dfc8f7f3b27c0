// Reconciliation of rail batches and re-sends of unclaimed PayPal payouts (docs/payouts.md "Reconciliation",
// "Re-sending an unclaimed payout"). The routes only check and queue (one read, one write at most, one SQS
// send); the payout-rails worker (functions/workers/payout-rails.ts) calls reconcileRailBatch and
// resendRailPayout, which talk to the rail and hand what it says to applyRailOutcomes (./rail-payouts.ts),
// the one writer of rail outcomes into the ledger. Every step is safe to repeat: a message delivered twice,
// or retried after a crash, ends in the same state.
import { DetailError, NotFoundError } from '../domain/errors';
import type { Payout } from '../domain/lifecycle';
import { log } from '../log';
import { publish, publishAll } from '../queue/publish';
import { RAIL_KINDS, type RailKind } from '../domain/rail-kinds';
import { RailBatchError, type PayoutRail, type RailItemOutcome } from '../rails/port';
import { railDefinition } from '../rails/registry';
import { batchGet, getItem, lookup } from '../store/ops';
import { getPayout, isPayoutId, toPayout } from '../store/payouts';
import { countResend, forgetOpenRailBatch, openRailBatches, swapRailItemId } from '../store/rail-batches';
import { railConnection } from '../store/rail-connections';
import { keys, moneyListKeys, moneyKeys } from '../store/table';
import { getBatch, isBatchId, toBatch, type PayoutBatch } from './payouts';
import { applyRailOutcomes, sendRailBatch } from './rail-payouts';

/** What `rail_item_id` holds while its item is being canceled for a re-send: no rail names it. */
const CANCELING = 'canceling:';

const isRail = (rail: string | null | undefined): rail is RailKind => (RAIL_KINDS as readonly string[]).includes(rail ?? '');

/** POST /v1/payout-batches/{id}/reconcile/: one read of the batch, then one message. */
export async function requestReconcile(accountId: string, batchId: string): Promise<{ batch_id: string; queued: true }> {
  const batch = await getBatch(accountId, batchId);
  if (batch.rail === 'file') throw new DetailError(409, 'A file batch has no rail to read back: mark its payouts paid or failed instead.');
  if (batch.status !== 'processing')
    throw new DetailError(409, `The batch is ${batch.status}: only a rail batch still processing can be reconciled.`);
  await publish('payout-rails', { kind: 'reconcile-rail-batch', account_id: accountId, batch_id: batch.id });
  return { batch_id: batch.id, queued: true };
}

/** The adapter of the account's connection to `rail`, or null (with a log line) when it is not connected now. */
async function adapterOf(accountId: string, rail: RailKind, what: Record<string, unknown>): Promise<PayoutRail | null> {
  const definition = railDefinition(rail);
  const connection = definition ? await railConnection(accountId, rail) : null;
  if (!definition || !connection) {
    log('warn', 'payout rail not connected: nothing read', { account_id: accountId, rail, ...what });
    return null;
  }
  return definition.adapter(connection);
}

/**
 * A rail error that sending or reading again later cannot mend (bad credentials, SCA): logged, and the
 * message is done (the hourly run tries again); anything else is thrown, so the queue retries it.
 */
function settledError(err: unknown, what: Record<string, unknown>): boolean {
  if (err instanceof RailBatchError && !err.retryable) {
    log('warn', 'payout rail refused the read', { ...what, code: err.code, reason: err.message });
    return true;
  }
  return false;
}

/** Reads a rail batch back from its rail and applies what it says (the payout-rails worker's reconcile-rail-batch). */
export async function reconcileRailBatch(accountId: string, batchId: string): Promise<void> {
  const batch = isBatchId(batchId) ? toBatch(await getItem(moneyListKeys.payoutBatch(accountId, batchId))) : null;
  const what = { account_id: accountId, batch_id: batchId };
  if (!batch || !isRail(batch.rail)) {
    await forgetOpenRailBatch(accountId, batchId);
    return;
  }
  if (batch.status !== 'processing') {
    // Settled: its last payout's transaction takes it off the registry; this only tidies a leftover.
    await forgetOpenRailBatch(accountId, batchId);
    return;
  }
  if (!batch.rail_batch_id) {
    // Never sent (the send-rail-batch message was lost): sending is safe to repeat.
    await sendRailBatch(accountId, batch.id);
    return;
  }
  const rail = await adapterOf(accountId, batch.rail, what);
  if (!rail) return;
  let outcomes: RailItemOutcome[];
  try {
    outcomes = (await rail.readBatch(batch.id, batch.rail_batch_id, batch.payout_ids)).items;
  } catch (err) {
    if (settledError(err, what)) return;
    throw err;
  }
  if (batch.rail === 'paypal') outcomes.push(...(await resentOutcomes(accountId, batch, rail)));
  await applyRailOutcomes(accountId, batch.rail, outcomes);
}

/** The PayPal items of the batch's re-sent payouts (each in its own `pb_…-r<n>` batch at PayPal). */
async function resentOutcomes(accountId: string, batch: PayoutBatch, rail: PayoutRail): Promise<RailItemOutcome[]> {
  const found = await batchGet(batch.payout_ids.filter(isPayoutId).map((id) => moneyKeys.payout(accountId, id)));
  const out: RailItemOutcome[] = [];
  for (const id of batch.payout_ids) {
    const p = toPayout(lookup(found, moneyKeys.payout(accountId, id)));
    if (p?.status !== 'processing' || !p.resend_sent_attempt || !p.resend_rail_batch_id) continue;
    const read = await rail.readBatch(`${batch.id}-r${p.resend_sent_attempt}`, p.resend_rail_batch_id, [p.id]);
    out.push(...read.items.filter((i) => i.payoutId === p.id));
  }
  return out;
}

/** Whether a payout can be re-sent: processing, PayPal, unclaimed. */
const resendable = (p: Payout) => p.status === 'processing' && p.rail === 'paypal' && p.rail_status === 'UNCLAIMED';

const NOT_RESENDABLE = 'Only a processing PayPal payout whose rail status is UNCLAIMED can be re-sent.';

/** POST /v1/payouts/{id}/resend/: one read, one conditional update, one message. The payout as written. */
export async function requestResend(accountId: string, payoutId: string): Promise<Payout> {
  for (let tries = 0; tries < 3; tries++) {
    const before = await getPayout(accountId, payoutId);
    if (!before) throw new NotFoundError();
    if (!resendable(before)) throw new DetailError(409, NOT_RESENDABLE);
    const after = await countResend(accountId, before);
    if (!after) continue;
    await publish('payout-rails', {
      kind: 'resend-rail-payout',
      account_id: accountId,
      payout_id: after.id,
      attempt: after.resend_attempt ?? 1,
    });
    return after;
  }
  throw new DetailError(409, 'The payout changed meanwhile; read it again.');
}

/**
 * Cancels an unclaimed item at its rail and sends the payout again as `pb_…-r<attempt>` (resend-rail-payout):
 *
 * 1. Skipped unless the payout is still a processing, unclaimed PayPal payout at this `attempt`, and its
 *    member has a payout email.
 * 2. `rail_item_id` becomes `canceling:<old id>` (conditioned on the old id), so the cancel's own event
 *    (a failed outcome naming the old item) is ignored by applyRailOutcomes.
 * 3. The old item is canceled at PayPal. If PayPal refuses (the member claimed it meanwhile, say), the item
 *    is read back: canceled already (a retry of this message) goes on; anything else puts the old id back
 *    and applies what PayPal says, and nothing is re-sent.
 * 4. The payout is sent to the member's current payout email as `pb_…-r<attempt>` (PayPal dedupes on that
 *    id, so a retry gets the same item); the new item's id, the email and PayPal's batch id are stored
 *    with the attempt (conditioned on the marker), and the send's outcomes are applied. A repeat of the
 *    message after that is skipped at step 1.
 */
export async function resendRailPayout(accountId: string, payoutId: string, attempt: number): Promise<void> {
  const what = { account_id: accountId, payout_id: payoutId, attempt };
  const p = await getPayout(accountId, payoutId);
  if (p?.status !== 'processing' || p.rail !== 'paypal' || (p.resend_attempt ?? 0) !== attempt || !p.batch_id || !p.rail_item_id) {
    log('info', 'resend skipped: the payout moved on', what);
    return;
  }
  if (p.resend_sent_attempt === attempt) {
    log('info', 'resend skipped: this re-send was made already', what);
    return;
  }
  const marked = p.rail_item_id.startsWith(CANCELING);
  if (!marked && p.rail_status !== 'UNCLAIMED') {
    log('info', 'resend skipped: the payout is no longer unclaimed', what);
    return;
  }
  const member = await getItem(keys.member(accountId, p.member_id));
  const email = typeof member?.payout_email === 'string' && member.payout_email !== '' ? member.payout_email : null;
  if (!email) {
    log('warn', 'resend skipped: the member has no payout email', what);
    return;
  }
  const batch = toBatch(await getItem(moneyListKeys.payoutBatch(accountId, p.batch_id)));
  if (batch?.rail !== 'paypal' || !batch.rail_batch_id) return;
  const rail = await adapterOf(accountId, 'paypal', what);
  if (!rail) return;

  const oldId = marked ? p.rail_item_id.slice(CANCELING.length) : p.rail_item_id;
  const marker = `${CANCELING}${oldId}`;
  if (!marked && !(await swapRailItemId(accountId, p.id, oldId, marker))) return;

  if (!(await rail.cancelItem(oldId))) {
    // Where the old item is: the batch's own send, or the previous re-send.
    const previous =
      p.resend_sent_attempt && p.resend_rail_batch_id
        ? await rail.readBatch(`${batch.id}-r${p.resend_sent_attempt}`, p.resend_rail_batch_id, [p.id])
        : await rail.readBatch(batch.id, batch.rail_batch_id, [p.id]);
    const old = previous.items.find((i) => i.railItemId === oldId);
    if (old?.railStatus !== 'RETURNED') {
      log('info', 'resend stopped: PayPal would not cancel the unclaimed item', { ...what, rail_status: old?.railStatus ?? null });
      if (await swapRailItemId(accountId, p.id, marker, oldId)) await applyRailOutcomes(accountId, 'paypal', old ? [old] : []);
      return;
    }
  }

  const sent = await rail.sendBatch(`${batch.id}-r${attempt}`, [
    { id: p.id, memberId: p.member_id, amount: p.amount, currency: p.currency, destination: email },
  ]);
  const item = sent.items.find((i) => i.payoutId === p.id);
  if (!item?.railItemId) throw new Error(`PayPal answered the re-send of ${p.id} without its item`);
  const stored = await swapRailItemId(accountId, p.id, marker, item.railItemId, {
    payout_email: email,
    rail_destination: email,
    resend_rail_batch_id: sent.railBatchId,
    resend_sent_attempt: attempt,
  });
  if (stored) await applyRailOutcomes(accountId, 'paypal', [item]);
}

/** A batch younger than this is left to its webhooks (the hourly run reads only older ones). */
export const RECONCILE_AFTER_SECONDS = 10 * 60;

/**
 * The hourly run (functions/workers/payout-reconcile.ts): one Query of the registry of open rail batches,
 * then one reconcile-rail-batch message per batch opened more than 10 minutes ago. The count queued.
 */
export async function queueOpenBatchReconciles(nowSeconds = Math.floor(Date.now() / 1000)): Promise<number> {
  const open = (await openRailBatches()).filter((b) => b.opened_at <= nowSeconds - RECONCILE_AFTER_SECONDS);
  await publishAll(
    'payout-rails',
    open.map((b) => ({ kind: 'reconcile-rail-batch' as const, account_id: b.account_id, batch_id: b.batch_id })),
  );
  return open.length;
}
