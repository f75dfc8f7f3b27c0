// Paying members (docs/design/money.md "Payouts"): batches of due payouts with their files, and marking payouts paid
// or failed. Money never moves twice:
// - a batch takes each payout with a write conditioned on `due` and the version read, so two concurrent
//   batch creations never share a payout (the loser skips it);
// - marking paid moves the payout's rewards approved -> paid in chunks and the payout itself last: a
//   retry after a crash finishes the rewards left, and a paid payout answers as it is;
// - a failed payout's rewards go back to approved and join the member's collecting payout.
import { DetailError, NotFoundError, ValidationError } from '../domain/errors';
import { payoutSentMessage, queueAffiliateEmails } from '../email/affiliate-enqueue';
import { newEntityId } from '../domain/ids';
import { COLLECTING, type LedgerReward, type Payout } from '../domain/lifecycle';
import { payoutFile, FORMAT_LIMITS, PayoutFileError, type PayoutFileFormat, type PayoutFileRow } from '../domain/payout-files';
import { maxPayoutCents, payoutAboveMaximum } from '../domain/money-limits';
import { isPayoutEmail } from '../domain/payout-email';
import { payoutView } from '../domain/payout-views';
import { ledgerRewardView } from '../domain/views';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../store/client';
import { MoneyTxn, toLedgerReward } from '../store/ledger';
import {
  batchGet,
  ConditionsFailedError,
  counterUpdate,
  getItem,
  lookup,
  queryAll,
  RaceLostError,
  transact,
  withRetries,
} from '../store/ops';
import { eventItem } from '../store/outbox';
import {
  changeCollecting,
  claimPayout,
  collectingTarget,
  getPayoutAndClaim,
  isPayoutId,
  payoutSums,
  putPayoutVersion,
  toPayout,
  type PayoutClaim,
} from '../store/payouts';
import { toMember } from '../store/members';
import { toReferral } from '../store/referrals';
import { keys, moneyKeys, moneyListKeys } from '../store/table';
import { log } from '../log';
import type { RailKind } from '../rails/definition';
import { BATCH_RAILS, paysConnectedAccount, RAIL_BATCH_LIMITS, RAIL_NAMES, type BatchRail } from '../rails/kinds';
import { methodReadiness } from '../domain/payout-methods';
import { REQUIRED } from '../schemas/fields';
import { publish } from '../queue/publish';
import { openRailBatchDelete, openRailBatchPut } from '../store/rail-batches';

class PayoutRaceError extends RaceLostError {}

/** A repeated mark-paid queues the payout-sent email again only for a payout paid this recently. */
const PAYOUT_EMAIL_DAYS = 7;

export { BATCH_RAILS, type BatchRail } from '../rails/kinds';

export interface PayoutBatch {
  id: string;
  rail: BatchRail;
  /** The file's format; null for a rail batch. */
  format: PayoutFileFormat | null;
  currency: string;
  /** `failed`: the rail refused the whole batch, or none of its payouts was paid. */
  status: 'processing' | 'paid' | 'failed';
  payout_ids: string[];
  amount: number;
  created_at: number;
  /** Set when the batch is marked paid: the payment date and the reference given (else the batch id). */
  paid_at?: number | null;
  reference?: string | null;
  /** Why the rail refused the whole batch, in words. */
  failure_reason?: string | null;
  /** The rail's id of the batch once sent. */
  rail_batch_id?: string | null;
}

/** How many due payouts a rail batch looks through for those of its rail's members. */
const RAIL_SCAN_LIMIT = 10_000;

export const isBatchId = (v: string) => /^pb_[0-9a-f]{32}$/.test(v);

export function toBatch(item: Record<string, unknown> | undefined): PayoutBatch | null {
  if (item?.type !== 'PayoutBatch') return null;
  // Batches stored before the rails are file batches.
  const rail = BATCH_RAILS.includes(item.rail as BatchRail) ? (item.rail as BatchRail) : 'file';
  return {
    id: String(item.id),
    rail,
    format: rail === 'file' ? (item.format as PayoutFileFormat) : null,
    currency: String(item.currency),
    status: item.status === 'paid' ? 'paid' : item.status === 'failed' ? 'failed' : 'processing',
    payout_ids: [...((item.payout_ids as string[] | undefined) ?? [])].sort(),
    amount: Number(item.amount ?? 0),
    created_at: Number(item.created_at),
    paid_at: typeof item.paid_at === 'number' ? item.paid_at : null,
    reference: typeof item.reference === 'string' ? item.reference : null,
    failure_reason: typeof item.failure_reason === 'string' ? item.failure_reason : null,
    rail_batch_id: typeof item.rail_batch_id === 'string' ? item.rail_batch_id : null,
  };
}

export async function getBatch(accountId: string, id: string): Promise<PayoutBatch> {
  if (!isBatchId(id)) throw new NotFoundError();
  const batch = toBatch(await getItem(moneyListKeys.payoutBatch(accountId, id)));
  if (!batch) throw new NotFoundError();
  return batch;
}

async function commit(txn: MoneyTxn): Promise<void> {
  try {
    await transact(txn.build());
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new PayoutRaceError();
    throw err;
  }
}

/** Every due payout of an account in `currency`, oldest first, up to `limit` (one Query page per 500). */
async function duePayouts(accountId: string, currency: string, limit: number): Promise<Payout[]> {
  const found: Payout[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: 'gsi2',
        KeyConditionExpression: 'gsi2pk = :pk',
        FilterExpression: 'currency = :c',
        ExpressionAttributeValues: { ':pk': moneyKeys.payoutsByStatus(accountId, 'due'), ':c': currency },
        ScanIndexForward: true,
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    for (const item of out.Items ?? []) {
      const p = toPayout(item);
      if (p && found.length < limit) found.push(p);
    }
    startKey = found.length < limit ? out.LastEvaluatedKey : undefined;
  } while (startKey);
  // The index is eventually consistent: each is read again when it is taken.
  return found;
}

/**
 * Creates a batch of due payouts in one currency (all of them up to the format's row limit, or the ones
 * named) and moves them to `processing`. Payouts another batch took meanwhile are skipped.
 */
export async function createBatch(
  accountId: string,
  input: { rail?: BatchRail | undefined; format?: PayoutFileFormat | undefined; currency: string; payout_ids?: string[] | undefined },
): Promise<PayoutBatch> {
  const rail = input.rail ?? 'file';
  if (rail === 'file' && input.format === undefined) throw ValidationError.field('format', REQUIRED);
  if (rail !== 'file' && input.format !== undefined)
    throw ValidationError.field('format', 'Only a file batch has a format: leave it out for a rail batch.');
  const format = rail === 'file' ? (input.format as PayoutFileFormat) : null;
  let railName = '';
  if (rail !== 'file') {
    // The connection must only exist here: the worker that sends reads (and decrypts) it. Its public item
    // (store/rail-connections.ts railKeys.settings) is read by key, without the rail registry or the
    // secrets, which this function's bundle (and the members' flows that import this module) never loads.
    railName = RAIL_NAMES[rail];
    if (!(await getItem({ pk: `A#${accountId}#RAIL`, sk: rail }))) throw new DetailError(409, `Connect ${railName} in Settings first.`);
  }
  const limit = format !== null ? FORMAT_LIMITS[format] : RAIL_BATCH_LIMITS[rail as RailKind];
  const unit = format !== null ? `A ${format} file` : `A ${railName} batch`;
  let candidates: Payout[];
  // Rail batches: the members' items, read once (whose method is this rail and ready).
  let memberItems: Map<string, Record<string, unknown>> | null = null;
  if (input.payout_ids) {
    const ids = [...new Set(input.payout_ids)];
    if (ids.length > limit) throw new DetailError(400, `${unit} holds at most ${limit} payouts; create several batches.`);
    const found = await batchGet(ids.filter(isPayoutId).map((id) => moneyKeys.payout(accountId, id)));
    candidates = ids
      .map((id) => (isPayoutId(id) ? toPayout(lookup(found, moneyKeys.payout(accountId, id))) : null))
      .filter((p): p is Payout => p !== null);
    const missing = ids.filter((id) => !candidates.some((p) => p.id === id));
    if (missing.length > 0) throw new DetailError(400, `Unknown payout ids: ${missing.slice(0, 5).join(', ')}.`);
    const other = candidates.filter((p) => p.currency !== input.currency);
    if (other.length > 0)
      throw new DetailError(400, `One currency per file: ${other[0]!.id} is in ${other[0]!.currency}, not ${input.currency}.`);
    const notDue = candidates.filter((p) => p.status !== 'due');
    if (notDue.length > 0) throw new DetailError(409, `Only due payouts can be paid: ${notDue[0]!.id} is ${notDue[0]!.status}.`);
    const above = candidates.filter((p) => p.amount > maxPayoutCents(p.currency));
    if (above.length > 0) throw new DetailError(409, `Payout ${above[0]!.id}: ${payoutAboveMaximum(above[0]!.currency)}`);
    if (rail !== 'file') {
      memberItems = await batchGet([...new Set(candidates.map((p) => p.member_id))].map((m) => keys.member(accountId, m)));
      for (const p of candidates) {
        const readiness = methodReadiness(lookup(memberItems, keys.member(accountId, p.member_id)));
        if (readiness.method !== rail)
          throw new DetailError(
            409,
            `Payout ${p.id}: the member's payout method is ${readiness.method ?? 'the payout file (none chosen)'}, not ${rail}; a ${railName} batch pays only members paid through ${railName}.`,
          );
        if (!readiness.ready) throw new DetailError(409, `Payout ${p.id}: ${readiness.reason ?? 'the member cannot be paid yet.'}`);
      }
    }
  } else if (rail !== 'file') {
    // Every due payout in the currency, then those of members paid through this rail (and ready), oldest first.
    const due = await duePayouts(accountId, input.currency, RAIL_SCAN_LIMIT);
    memberItems = await batchGet([...new Set(due.map((p) => p.member_id))].map((m) => keys.member(accountId, m)));
    const items = memberItems;
    candidates = due
      .filter((p) => {
        const readiness = methodReadiness(lookup(items, keys.member(accountId, p.member_id)));
        return readiness.method === rail && readiness.ready;
      })
      .slice(0, limit);
    if (candidates.length === 0) throw new DetailError(409, `No payout is due in ${input.currency} to members paid through ${railName}.`);
  } else {
    candidates = await duePayouts(accountId, input.currency, limit);
  }
  if (candidates.length === 0) throw new DetailError(409, `No payout is due in ${input.currency}.`);

  const now = Math.floor(Date.now() / 1000);
  const batch: PayoutBatch = {
    id: `pb_${newEntityId()}`,
    rail,
    format,
    currency: input.currency,
    status: 'processing',
    payout_ids: [],
    amount: 0,
    created_at: now,
  };
  const members = memberItems ?? (await batchGet([...new Set(candidates.map((p) => p.member_id))].map((m) => keys.member(accountId, m))));
  // The batch exists before it takes anything, and each payout is added to it in the transaction that
  // takes it: whatever happens after, the batch lists exactly the payouts it holds.
  // The list's counters (GET /v1/payout-batches/) move with the batch item, in the same transaction.
  await transact([
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...moneyListKeys.payoutBatch(accountId, batch.id),
          type: 'PayoutBatch',
          ...Object.fromEntries(Object.entries(batch).filter(([, v]) => v !== null)),
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    counterUpdate(accountId, 'payout_batches', 1),
    counterUpdate(accountId, 'payout_batches#s#processing', 1),
    // A rail batch joins the registry of open rail batches (the hourly reconciliation reads it).
    ...(rail !== 'file' ? [openRailBatchPut(accountId, batch.id, rail, now)] : []),
  ]);
  const taken: Payout[] = [];
  const queue = [...candidates];
  // Eight payouts at a time (each its own conditional transaction), in the order they were found.
  const skipped: string[] = [];
  const take = async (payout: Payout): Promise<void> => {
    const memberItem = lookup(members, keys.member(accountId, payout.member_id));
    const member = toMember(memberItem);
    const readiness = methodReadiness(memberItem);
    let railDestination: string | null = null;
    if (rail !== 'file') {
      // Read again at take time: the method could have changed since the candidates were chosen.
      if (!member || readiness.method !== rail || !readiness.ready || readiness.destination === null) {
        log('warn', 'payout skipped: the member is not paid through this rail now', { account_id: accountId, payout_id: payout.id });
        skipped.push(`${payout.id}: ${readiness.reason ?? `the member is not paid through ${railName}`}`);
        return;
      }
      railDestination = readiness.destination;
    }
    // Stripe pays the connected account; its payout email (if any) is only shown.
    const payoutEmail = (memberItem?.payout_email as string | undefined) ?? null;
    if (!member || (!paysConnectedAccount(rail) && !payoutEmail)) {
      log('warn', 'payout skipped: the member has no payout email', { account_id: accountId, payout_id: payout.id });
      skipped.push(`${payout.id}: the member has no payout email`);
      return;
    }
    // Never into a file: an address saved before payout emails were held to a mailbox syntax (one a
    // spreadsheet could run as a formula), or an amount above the maximum per payout (domain/money-limits.ts).
    if (!paysConnectedAccount(rail) && !isPayoutEmail(payoutEmail ?? '')) {
      log('warn', 'payout skipped: the payout email is not a plain mailbox', { account_id: accountId, payout_id: payout.id });
      skipped.push(`${payout.id}: the member's payout email is not a valid mailbox; the member must set it again`);
      return;
    }
    if (payout.amount > maxPayoutCents(payout.currency)) {
      log('warn', 'payout skipped: above the maximum per payout', { account_id: accountId, payout_id: payout.id, amount: payout.amount });
      skipped.push(`${payout.id}: ${payoutAboveMaximum(payout.currency)}`);
      return;
    }
    const name = [member.first_name, member.last_name].filter(Boolean).join(' ') || null;
    const next: Payout = {
      ...payout,
      status: 'processing',
      batch_id: batch.id,
      payout_email: payoutEmail,
      rail,
      rail_status: null,
      rail_item_id: null,
      rail_destination: railDestination,
      member_identifier: member.identifier,
      member_email: member.email,
      member_name: name,
      updated_at: now,
      version: payout.version + 1,
    };
    const txn = new MoneyTxn(accountId);
    putPayoutVersion(txn, payout, next, ['due']);
    payoutSums(txn, payout, next);
    // It leaves collection: the member's next approvals start a new payout.
    txn.push({
      Delete: {
        TableName: tableName(),
        Key: moneyKeys.payoutPointer(accountId, payout.member_id, payout.currency),
        ConditionExpression: 'attribute_not_exists(pk) OR payout_id = :p',
        ExpressionAttributeValues: { ':p': payout.id },
      },
    });
    txn.push({
      Update: {
        TableName: tableName(),
        Key: moneyListKeys.payoutBatch(accountId, batch.id),
        UpdateExpression: 'SET payout_ids = list_append(payout_ids, :p) ADD amount :a',
        ExpressionAttributeValues: { ':p': [payout.id], ':a': payout.amount },
      },
    });
    try {
      await commit(txn);
      taken.push(next);
    } catch (err) {
      if (!(err instanceof PayoutRaceError)) throw err;
      // Taken by another batch, or changed (an approval, a void) since it was read: not in this batch.
      log('info', 'payout skipped: changed since it was read', { account_id: accountId, payout_id: payout.id });
    }
  };
  await Promise.all(
    Array.from({ length: Math.min(8, queue.length) }, async () => {
      for (let p = queue.shift(); p !== undefined; p = queue.shift()) await take(p);
    }),
  );
  // Payout ids are time-ordered: listed in id order wherever a batch is shown (the pool commits in any order).
  taken.sort((a, b) => (a.id < b.id ? -1 : 1));
  if (taken.length === 0) {
    await transact([
      {
        Delete: {
          TableName: tableName(),
          Key: moneyListKeys.payoutBatch(accountId, batch.id),
          ConditionExpression: 'size(payout_ids) = :zero',
          ExpressionAttributeValues: { ':zero': 0 },
        },
      },
      counterUpdate(accountId, 'payout_batches', -1),
      counterUpdate(accountId, 'payout_batches#s#processing', -1),
      ...(rail !== 'file' ? [openRailBatchDelete(accountId, batch.id)] : []),
    ]);
    throw new DetailError(
      409,
      skipped.length > 0
        ? `No payout could be batched in ${input.currency}: ${skipped.slice(0, 3).join('; ')}.`
        : `No payout is due in ${input.currency} (another batch took them).`,
    );
  }
  batch.payout_ids = taken.map((p) => p.id);
  batch.amount = taken.reduce((a, p) => a + p.amount, 0);
  log('info', 'payout batch created', { account_id: accountId, batch_id: batch.id, payouts: taken.length, rail, format: batch.format });
  // The PayoutRails worker sends it (shared/flows/rail-payouts.ts sendRailBatch); a repeat of the message pays nothing twice.
  if (rail !== 'file') await publish('payout-rails', { kind: 'send-rail-batch', account_id: accountId, batch_id: batch.id });
  return batch;
}

/** The batch's file (text/csv) in its format. */
export async function batchFile(accountId: string, id: string): Promise<{ batch: PayoutBatch; csv: string }> {
  const batch = await getBatch(accountId, id);
  const format = batch.format;
  if (batch.rail !== 'file' || format === null)
    throw new DetailError(409, `This batch is paid through ${batch.rail}: it has no file (see its payouts' rail_status).`);
  const found = await batchGet(batch.payout_ids.map((p) => moneyKeys.payout(accountId, p)));
  const rows: PayoutFileRow[] = batch.payout_ids
    .map((p) => toPayout(lookup(found, moneyKeys.payout(accountId, p))))
    .filter((p): p is Payout => p !== null)
    .map((p) => ({
      payout_id: p.id,
      member_id: p.member_id,
      member_identifier: p.member_identifier ?? '',
      member_email: p.member_email ?? '',
      member_name: p.member_name,
      payout_email: p.payout_email ?? '',
      amount: p.amount,
      currency: p.currency,
      reward_count: p.reward_ids.length,
      period_start: p.period_start,
      period_end: p.period_end,
      status: p.status,
      paid_at: p.paid_at,
      reference: p.reference,
    }));
  const month = new Date(batch.created_at * 1000).toLocaleString('en-US', { month: 'short', year: 'numeric', timeZone: 'UTC' });
  try {
    return { batch, csv: payoutFile(format, rows, { note: `Referral commissions ${month}` }) };
  } catch (err) {
    // A batch written before the bounds existed (an amount above the maximum): no file, a clear answer.
    if (err instanceof PayoutFileError) throw new DetailError(409, err.message);
    throw err;
  }
}

const CHUNK = 20;

async function rewardsOf(accountId: string, payout: Payout): Promise<LedgerReward[]> {
  const found = await batchGet(payout.reward_ids.map((id) => keys.reward(accountId, id)));
  return payout.reward_ids
    .map((id) => toLedgerReward(lookup(found, keys.reward(accountId, id))))
    .filter((r): r is LedgerReward => r !== null);
}

async function liveReferrals(accountId: string, rewards: LedgerReward[]): Promise<Set<string>> {
  const found = await batchGet([...new Set(rewards.map((r) => r.referral_id))].map((id) => keys.referral(accountId, id)));
  return new Set([...found.values()].map((item) => toReferral(item)?.id).filter((id): id is string => id !== undefined));
}

/** A transition of more than one chunk of rewards is claimed first (store/payouts.ts PayoutClaim). */
function chunked(payout: Payout, claim: PayoutClaim | null): boolean {
  return claim !== null || payout.reward_ids.length > CHUNK;
}

/**
 * The claim write, beside the reads that do not depend on it. Safe to read the rewards beside it: while a
 * payout is at the version read, only a transition conditioned on that version can move its rewards, and
 * one that commits makes this claim fail (the whole attempt is then retried from a new read).
 */
async function claim(accountId: string, payout: Payout, c: PayoutClaim): Promise<Payout> {
  const txn = new MoneyTxn(accountId);
  const claimed = claimPayout(txn, payout, c, c.at);
  await commit(txn);
  log('info', 'payout claimed', { account_id: accountId, payout_id: payout.id, to: c.to, rewards: payout.reward_ids.length });
  return claimed;
}

const claimedOther = (payout: Payout, c: PayoutClaim) =>
  new DetailError(
    409,
    `Payout ${payout.id} is being marked ${c.to}; repeat that call to finish it. It cannot be marked otherwise meanwhile.`,
  );

/**
 * Marks a payout paid (a due one too: paid outside a batch). Its rewards become `paid` in chunks, the
 * payout last. More than one chunk: the payout is claimed first (one conditional write), so a concurrent
 * mark-failed or cancel answers 409 and a batch cannot take it; repeating the call finishes what a crash
 * left, with the claim's paid_at and reference. A paid payout answers as it is.
 */
/**
 * An operator's mark-paid, mark-failed or cancel of a payout a rail is paying: refused, since the rail's
 * outcome (its webhook, a reconciliation) would then move the same payout again and could pay its rewards twice.
 */
function refuseByHandOnRail(payout: Payout): void {
  if (payout.status !== 'processing' || !payout.rail || payout.rail === 'file') return;
  const rail = RAIL_NAMES[payout.rail as RailKind] ?? payout.rail;
  throw new DetailError(
    409,
    `This payout is being paid through ${rail}: its outcome comes from ${rail}. Check with ${rail} from its batch instead of marking it by hand.`,
  );
}

export async function markPayoutPaid(
  accountId: string,
  payoutId: string,
  opts: { paidAt?: number | undefined; reference?: string | null | undefined; byHand?: boolean } = {},
): Promise<Payout> {
  return withRetries(
    async () => {
      const read = await getPayoutAndClaim(accountId, payoutId);
      if (!read) throw new NotFoundError();
      let payout = read.payout;
      let pending = read.claim;
      if (payout.status === 'paid') {
        // A repeat of the call: queue the payout-sent email again in case the first call's send was lost
        // (sent once per payout whatever the copies); not for payouts paid long ago.
        if ((payout.paid_at ?? 0) >= Math.floor(Date.now() / 1000) - PAYOUT_EMAIL_DAYS * 86400)
          await queueAffiliateEmails([payoutSentMessage(accountId, payout.id, payout.member_id)]);
        return payout;
      }
      if (pending && pending.to !== 'paid') throw claimedOther(payout, pending);
      if (opts.byHand) refuseByHandOnRail(payout);
      if (payout.status !== 'processing' && payout.status !== 'due')
        throw new DetailError(409, `This payout is ${payout.status}: only a due or processing payout can be marked paid.`);
      const now = Math.floor(Date.now() / 1000);
      let claiming: Promise<Payout> | null = null;
      if (!pending && chunked(payout, pending)) {
        pending = { to: 'paid', at: now, paid_at: opts.paidAt ?? now, reference: opts.reference ?? payout.reference };
        claiming = claim(accountId, payout, pending);
      }
      const paidAt = pending?.paid_at ?? opts.paidAt ?? now;
      const reference = pending ? (pending.reference ?? null) : (opts.reference ?? payout.reference);
      const [claimed, memberItem, rewards] = await Promise.all([
        claiming ?? Promise.resolve(payout),
        getItem(keys.member(accountId, payout.member_id)),
        rewardsOf(accountId, payout),
      ]);
      payout = claimed;
      const memberAlive = toMember(memberItem) !== null;
      const open = rewards.filter((r) => r.status === 'approved' && r.payout_id === payout.id);
      const alive = await liveReferrals(accountId, open);
      // Every chunk but the last moves rewards only; the last also moves the payout.
      for (let i = 0; i < open.length || i === 0; i += CHUNK) {
        const chunk = open.slice(i, i + CHUNK);
        const last = i + CHUNK >= open.length;
        const txn = new MoneyTxn(accountId);
        if (!memberAlive) txn.memberGone(payout.member_id);
        for (const r of chunk) {
          if (!alive.has(r.referral_id)) txn.referralGone(r.referral_id);
          const moved = txn.moveReward(r, { status: 'paid', paid_at: paidAt });
          txn.push(eventItem(accountId, 'reward.paid', r.id, ledgerRewardView(moved)), `event:${r.id}`);
        }
        if (last) {
          const next: Payout = { ...payout, status: 'paid', paid_at: paidAt, reference, updated_at: now, version: payout.version + 1 };
          // The claimed payout, or (one chunk) the payout at the version read: the transition in one write.
          putPayoutVersion(txn, payout, next, [payout.status]);
          payoutSums(txn, payout, next);
          if (payout.status === 'due') {
            txn.push({
              Delete: {
                TableName: tableName(),
                Key: moneyKeys.payoutPointer(accountId, payout.member_id, payout.currency),
                ConditionExpression: 'attribute_not_exists(pk) OR payout_id = :p',
                ExpressionAttributeValues: { ':p': payout.id },
              },
            });
          }
          txn.push(eventItem(accountId, 'payout.paid', payout.id, payoutView(next)), `event:${payout.id}`);
          await commit(txn);
          log('info', 'payout paid', { account_id: accountId, payout_id: payout.id, rewards: open.length });
          // The member's payout-sent email (docs/affiliate-emails.md), after the commit.
          await queueAffiliateEmails([payoutSentMessage(accountId, payout.id, payout.member_id)]);
          return next;
        }
        await commit(txn);
      }
      throw new PayoutRaceError();
    },
    (err) => err instanceof PayoutRaceError,
    6,
  );
}

/**
 * Marks a processing payout failed (the provider could not pay it) or canceled (the operator took it out of
 * the batch before paying): its rewards go back to approved, into the member's collecting payout. Claimed
 * first when it moves more than one chunk, as markPayoutPaid.
 */
export async function markPayoutFailed(
  accountId: string,
  payoutId: string,
  reason: string,
  outcome: 'failed' | 'canceled' = 'failed',
  byHand = false,
): Promise<Payout> {
  return withRetries(
    async () => {
      const read = await getPayoutAndClaim(accountId, payoutId);
      if (!read) throw new NotFoundError();
      const payout = read.payout;
      let pending = read.claim;
      if (payout.status === outcome) return payout;
      if (pending && pending.to !== outcome) throw claimedOther(payout, pending);
      // A reversal of a paid payout was claimed: finish it (its rewards are paid, not approved).
      if (pending?.reversal) return reversePaidPayout(accountId, payoutId, pending.reason ?? reason);
      if (byHand) refuseByHandOnRail(payout);
      if (payout.status !== 'processing')
        throw new DetailError(409, `This payout is ${payout.status}: only a processing payout (in a batch) can be marked ${outcome}.`);
      const now = Math.floor(Date.now() / 1000);
      let claiming: Promise<Payout> | null = null;
      if (!pending && chunked(payout, pending)) {
        pending = { to: outcome, at: now, reason };
        claiming = claim(accountId, payout, pending);
      }
      return returnRewards(accountId, payout, claiming, {
        from: 'approved',
        to: outcome,
        why: pending?.reason ?? reason,
        now,
        // A cancel is the operator's own act: only a failure is an event for the app.
        event: outcome === 'failed',
        message: `payout ${outcome}`,
      });
    },
    (err) => err instanceof PayoutRaceError,
    6,
  );
}

/**
 * A paid payout taken back by its rail (a PayPal reversal or refund, a Stripe transfer reversal, a Wise
 * return): the payout becomes `failed` with `reason`, and its paid rewards go back to approved, into the
 * member's collecting payout (due at once when the member is ready). The member's stats, the payout sums,
 * the report buckets of what was paid and the event `payout.failed` move in the same transactions, in
 * chunks like markPayoutPaid (claimed first when there are more than one). A failed payout answers as it is.
 */
export async function reversePaidPayout(accountId: string, payoutId: string, reason: string): Promise<Payout> {
  return withRetries(
    async () => {
      const read = await getPayoutAndClaim(accountId, payoutId);
      if (!read) throw new NotFoundError();
      const payout = read.payout;
      let pending = read.claim;
      if (payout.status === 'failed') return payout;
      if (pending && !(pending.to === 'failed' && pending.reversal)) throw claimedOther(payout, pending);
      if (!pending && payout.status !== 'paid')
        throw new DetailError(409, `This payout is ${payout.status}: only a paid payout can be taken back.`);
      const now = Math.floor(Date.now() / 1000);
      let claiming: Promise<Payout> | null = null;
      if (!pending && chunked(payout, pending)) {
        pending = { to: 'failed', at: now, reason, reversal: true };
        claiming = claim(accountId, payout, pending);
      }
      return returnRewards(accountId, payout, claiming, {
        from: 'paid',
        to: 'failed',
        why: pending?.reason ?? reason,
        now,
        event: true,
        message: 'paid payout taken back',
      });
    },
    (err) => err instanceof PayoutRaceError,
    6,
  );
}

/**
 * The rewards of a payout that did not reach its member go back to the pool: the approved ones of a
 * processing payout (failed, canceled), or the paid ones of a payout its rail took back (they become
 * approved again, and what was reported paid is paid no more). They join the member's collecting payout in
 * chunks; the payout itself moves to `to` in the last chunk's transaction, conditioned on the version read
 * (or the claim), with its sums and, when asked, its payout.failed event. A race lost throws PayoutRaceError.
 */
async function returnRewards(
  accountId: string,
  read: Payout,
  claiming: Promise<Payout> | null,
  o: { from: 'approved' | 'paid'; to: 'failed' | 'canceled'; why: string; now: number; event: boolean; message: string },
): Promise<Payout> {
  const [payout, memberItem, rewards] = await Promise.all([
    claiming ?? Promise.resolve(read),
    getItem(keys.member(accountId, read.member_id)),
    rewardsOf(accountId, read),
  ]);
  const memberAlive = toMember(memberItem) !== null;
  const back = rewards.filter((r) => r.status === o.from && r.payout_id === payout.id);
  // The first chunk's target is read beside the referrals; each later chunk reads it again (it changed).
  const [alive, firstTarget] = await Promise.all([
    liveReferrals(accountId, back),
    collectingTarget(accountId, payout.member_id, payout.currency),
  ]);
  for (let i = 0; i < back.length || i === 0; i += CHUNK) {
    const chunk = back.slice(i, i + CHUNK);
    const last = i + CHUNK >= back.length;
    const txn = new MoneyTxn(accountId);
    if (!memberAlive) txn.memberGone(payout.member_id);
    if (chunk.length > 0) {
      const target = i === 0 ? firstTarget : await collectingTarget(accountId, payout.member_id, payout.currency);
      const into = changeCollecting(
        txn,
        target,
        { add: chunk.map((r) => ({ id: r.id, amount: r.amount, created_at: r.created_at })), remove: [] },
        o.now,
      );
      for (const r of chunk) {
        if (!alive.has(r.referral_id)) txn.referralGone(r.referral_id);
        if (o.from === 'approved') {
          txn.moveReward(r, { payout_id: into.id });
          continue;
        }
        txn.moveReward(r, { status: 'approved', paid_at: null, payout_id: into.id });
        // What was reported paid is paid no more (in the bucket that counted it).
        if (r.type === 'commission')
          txn.report(r.paid_at ?? o.now, { memberId: r.member_id, campaignId: r.campaign_id }, 'commission_paid', -r.amount, r.currency);
      }
    }
    if (last) {
      const next: Payout = { ...payout, status: o.to, failure_reason: o.why, updated_at: o.now, version: payout.version + 1 };
      putPayoutVersion(txn, payout, next, [o.from === 'approved' ? 'processing' : payout.status]);
      payoutSums(txn, payout, next);
      if (o.event) txn.push(eventItem(accountId, 'payout.failed', payout.id, payoutView(next)), `event:${payout.id}`);
      await commit(txn);
      log('info', o.message, { account_id: accountId, payout_id: payout.id, rewards: back.length });
      return next;
    }
    await commit(txn);
  }
  throw new PayoutRaceError();
}

/** Marks every payout of a batch paid (those marked failed stay failed); the batch is then paid. */
export async function markBatchPaid(
  accountId: string,
  batchId: string,
  opts: { paidAt?: number | undefined; reference?: string | null | undefined },
): Promise<PayoutBatch> {
  const batch = await getBatch(accountId, batchId);
  if (batch.rail !== 'file')
    throw new DetailError(
      409,
      `A ${RAIL_NAMES[batch.rail]} batch is settled by its rail: its payouts become paid as the rail reports them.`,
    );
  // Four payouts at a time; one marked failed (or canceled) meanwhile stays so (409, skipped).
  const ids = [...batch.payout_ids];
  await Promise.all(
    Array.from({ length: Math.min(4, ids.length) }, async () => {
      for (let id = ids.shift(); id !== undefined; id = ids.shift()) {
        try {
          await markPayoutPaid(accountId, id, { paidAt: opts.paidAt, reference: opts.reference ?? batch.id });
        } catch (err) {
          if (!(err instanceof DetailError && err.status === 409)) throw err;
        }
      }
    }),
  );
  if (batch.status === 'paid') return batch;
  const paidAt = opts.paidAt ?? Math.floor(Date.now() / 1000);
  const reference = opts.reference ?? batch.id;
  try {
    // Once: conditioned on `processing`, with the list's status counters in the same transaction.
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: moneyListKeys.payoutBatch(accountId, batch.id),
          UpdateExpression: 'SET #st = :paid, paid_at = :at, #ref = :ref',
          ConditionExpression: '#st = :processing',
          ExpressionAttributeNames: { '#st': 'status', '#ref': 'reference' },
          ExpressionAttributeValues: { ':paid': 'paid', ':processing': 'processing', ':at': paidAt, ':ref': reference },
        },
      },
      counterUpdate(accountId, 'payout_batches#s#processing', -1),
      counterUpdate(accountId, 'payout_batches#s#paid', 1),
    ]);
  } catch (err) {
    // A concurrent call marked it paid first: it answers as that call left it.
    if (err instanceof ConditionsFailedError) return getBatch(accountId, batch.id);
    throw err;
  }
  return { ...batch, status: 'paid', paid_at: paidAt, reference };
}

/** A member's payout email changed: their collecting payouts become due or open again at once. */
export async function refreshMemberPayouts(accountId: string, memberId: string): Promise<void> {
  for (const pointer of await queryAll({ partitionValue: moneyListKeys.payoutPointers(accountId, memberId), consistent: true })) {
    await withRetries(
      async () => {
        const target = await collectingTarget(accountId, memberId, String(pointer.sk));
        if (!target.payout || !COLLECTING.includes(target.payout.status)) return;
        const txn = new MoneyTxn(accountId);
        const next = changeCollecting(txn, target, { add: [], remove: [] });
        if (next.status === target.payout.status) return;
        await commit(txn);
      },
      (err) => err instanceof PayoutRaceError,
      6,
    );
  }
}
