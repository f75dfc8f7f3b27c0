// Writing what refunds take back (shared/domain/clawbacks.ts), inside the referral item like every
// reward, each write conditioned on the reward list it was planned from (as store/rewards.ts does), with
// the referring member's stats changed in the same transaction.
import { newEntityId } from '../domain/ids';
import type { CreditReversal, PlannedClawback } from '../domain/clawbacks';
import { formatCents } from '../domain/money';
import type { Referral, Reward } from '../domain/models';
import { COLLECTING, type Payout } from '../domain/lifecycle';
import { ledgerRewardView } from '../domain/views';
import { ledgerFromReferral, lifecycleOf, MoneyTxn } from './ledger';
import { eventItem } from './outbox';
import { changeCollecting, collectingTarget, getPayout, type CollectingTarget } from './payouts';
import { defined } from './rewards';
import { tableName } from './client';
import { ConditionsFailedError, getItem, transact } from './ops';
import { toReferral } from './referrals';
import { RewardRaceError } from './rewards';
import { keys } from './table';

const clawbackNote = (c: PlannedClawback, percent: string) =>
  `Clawback of ${percent} of the reward: payment ${c.payment_id} refunded (refund ${c.refund_id}).`;

/**
 * Appends commission clawbacks, in one transaction with their lifecycle (domain/lifecycle.ts):
 * - the reward was paid (or its payout is being paid): the clawback is approved and nets against the
 *   member's collecting payout;
 * - the refunds now take back the whole of a reward not paid yet: the reward and its clawbacks are voided
 *   (`refunded`) and leave their payout;
 * - a part of a reward not paid yet: the clawback follows the reward (pending with it, or approved in its payout).
 */
export async function recordClawbacks(
  accountId: string,
  referral: Referral,
  planned: PlannedClawback[],
  memberExists: boolean,
): Promise<Referral> {
  // In chunks, like the rewards (store/rewards.ts): a clawback can take up to 5 items (its ledger item and
  // schedule, the voided reward, its schedule and event) besides the payout, member, reports and counters.
  // Each chunk is one transaction conditioned on the reward list it extends; the next chunk starts from
  // the referral as stored (the voids of the previous chunk included), and a replay plans only the rest.
  let current = referral;
  for (let i = 0; i < planned.length; i += CLAWBACKS_PER_TRANSACTION) {
    if (i > 0) {
      // The plan holds only while nobody else appended meanwhile (else re-plan: the caller retries).
      const fresh = toReferral(await getItem(keys.referral(accountId, referral.id)));
      if (!fresh || fresh.rewards.length !== current.rewards.length) throw new RewardRaceError();
      current = fresh;
    }
    current = await recordClawbackChunk(accountId, current, planned.slice(i, i + CLAWBACKS_PER_TRANSACTION), memberExists);
  }
  return current;
}

export const CLAWBACKS_PER_TRANSACTION = 10;

async function recordClawbackChunk(
  accountId: string,
  referral: Referral,
  planned: PlannedClawback[],
  memberExists: boolean,
): Promise<Referral> {
  if (planned.length === 0) return referral;
  const now = Math.floor(Date.now() / 1000);
  const txn = new MoneyTxn(accountId);
  if (!memberExists) txn.memberGone(referral.member_id);
  const added = await addClawbacks(txn, referral, planned, now);
  const after: Referral = { ...referral, rewards: [...referral.rewards, ...added] };
  txn.referralAppend(referral.id, referral.rewards.length, added);
  added.forEach((_r, i) => {
    txn.addReward(ledgerFromReferral(after, referral.rewards.length + i));
  });
  try {
    await transact(txn.build());
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new RewardRaceError();
    throw err;
  }
  return after;
}

/**
 * What `planned` clawbacks of rewards stored in `referral` change, added to `txn`: the voids and payout
 * moves they cause (reading the payouts involved), and their events. Returns the clawbacks to append
 * after `referral.rewards`: the append and their ledger items are the caller's (one referral write).
 */
export async function addClawbacks(txn: MoneyTxn, referral: Referral, planned: PlannedClawback[], now: number): Promise<Reward[]> {
  const accountId = txn.accountId;
  const added: Reward[] = [];
  const all = (): Reward[] => [...referral.rewards, ...added];
  const payouts = new Map<string, Payout | null>();
  const payoutOf = async (id: string | null) => {
    if (id === null) return null;
    if (!payouts.has(id)) payouts.set(id, await getPayout(accountId, id));
    return payouts.get(id) ?? null;
  };
  let target: CollectingTarget | null = null;
  const collecting = async () => (target ??= await collectingTarget(accountId, referral.member_id, referral.currency ?? 'USD'));
  const attach: { id: string; amount: number; created_at: number }[] = [];
  const detach: { id: string; amount: number }[] = [];
  const voided = new Set<string>();
  const voidReward = async (index: number) => {
    const r = all()[index] as Reward;
    const life = lifecycleOf(r);
    if (life.status === 'voided' || voided.has(r.id)) return;
    voided.add(r.id);
    const payout = await payoutOf(life.payout_id);
    if (payout && COLLECTING.includes(payout.status)) {
      if ((await collecting()).payout?.id !== payout.id) throw new RewardRaceError();
      detach.push({ id: r.id, amount: r.amount });
    }
    const ledger = index < referral.rewards.length ? ledgerFromReferral(referral, index) : null;
    const next = { status: 'voided' as const, voided_at: now, void_reason: 'refunded' as const, payout_id: null, approves_at: null };
    if (ledger) {
      txn.moveReward(ledger, next);
      if (r.amount > 0) txn.push(eventItem(accountId, 'reward.voided', r.id, ledgerRewardView({ ...ledger, ...next })), `event:${r.id}`);
    }
  };

  for (const c of planned) {
    const oIndex = all().findIndex((r) => r.id === c.reverses);
    const original = all()[oIndex] as Reward;
    const life = lifecycleOf(original);
    const payout = await payoutOf(life.payout_id);
    const settled = life.status === 'paid' || (payout !== null && !COLLECTING.includes(payout.status));
    const prior = all()
      .map((r, i) => ({ r, i }))
      .filter(({ r }) => r.reverses === original.id);
    const takenBack = -prior.reduce((a, { r }) => a + r.amount, 0) - c.amount;
    const percent = original.amount > 0 ? `${((-c.amount / original.amount) * 100).toFixed(2)}%` : formatCents(-c.amount);
    const claw: Reward = {
      id: newEntityId(),
      type: c.type,
      amount: c.amount,
      currency: c.currency,
      created_at: now,
      payment_id: c.payment_id,
      reverses: c.reverses,
      refund_id: c.refund_id,
      note: clawbackNote(c, percent),
    };
    if (settled) {
      // Paid (or being paid): the money is owed back; it nets against the member's next payout.
      const t = await collecting();
      Object.assign(claw, { status: 'approved', approved_at: now, payout_id: t.payout?.id ?? PENDING_PAYOUT });
      attach.push({ id: claw.id, amount: claw.amount, created_at: now });
    } else if (life.status === 'voided' || takenBack >= original.amount) {
      // Nothing of it was paid and now nothing of it is owed: it and its clawbacks are voided.
      Object.assign(claw, { status: 'voided', voided_at: now, void_reason: 'refunded' });
      await voidReward(oIndex);
      for (const p of prior) await voidReward(p.i);
    } else {
      Object.assign(
        claw,
        // A held reward's clawback is held with it, by the same flag (docs/fraud.md "Holds").
        defined({
          status: life.status,
          approves_at: life.approves_at,
          approved_at: life.approved_at,
          payout_id: life.payout_id,
          held_by: life.status === 'held' ? life.held_by : undefined,
        }),
      );
      if (life.payout_id !== null) {
        if ((await collecting()).payout?.id !== life.payout_id) throw new RewardRaceError();
        attach.push({ id: claw.id, amount: claw.amount, created_at: now });
      }
    }
    added.push(claw);
  }
  if (attach.length > 0 || detach.length > 0) {
    const t = await collecting();
    const payout = changeCollecting(txn, t, { add: attach, remove: detach }, now);
    for (const r of added) if (r.payout_id === PENDING_PAYOUT) r.payout_id = payout.id;
  }
  return added;
}

/** Placeholder for the id of a payout this transaction creates (replaced before the write). */
const PENDING_PAYOUT = 'po_pending';

/**
 * Marks credit reward `index` reversed (its modifier is deleted, or it was never applied) and appends a
 * clawback of the whole credit, both voided (`refunded`): credit_earned loses the credit. One transaction;
 * the appended item is written at index `n` (the list's length), so no two paths of the update overlap.
 */
export async function recordCreditReversal(
  accountId: string,
  referral: Referral,
  index: number,
  reversal: CreditReversal,
  memberExists: boolean,
): Promise<void> {
  const reward = referral.rewards[index] as Reward;
  const now = Math.floor(Date.now() / 1000);
  const n = referral.rewards.length;
  const voided = { status: 'voided' as const, voided_at: now, void_reason: 'refunded' as const };
  const clawback: Reward = {
    id: newEntityId(),
    type: 'credit',
    amount: -reward.amount,
    currency: reward.currency,
    created_at: now,
    payment_id: reward.payment_id,
    reverses: reward.id,
    refund_id: reversal.refund_id,
    note: `Credit reversed: payment ${reward.payment_id} refunded (refund ${reversal.refund_id}) before the credit was billed.`,
    ...voided,
  };
  const txn = new MoneyTxn(accountId);
  if (!memberExists) txn.memberGone(referral.member_id);
  const ledger = ledgerFromReferral(referral, index);
  if (ledger.status !== 'voided') {
    txn.moveReward(ledger, voided);
    txn.push(eventItem(accountId, 'reward.voided', reward.id, ledgerRewardView({ ...ledger, ...voided })), `event:${reward.id}`);
  }
  txn.setEmbedded(referral.id, index, reward.id, { reversed_at: now, refund_id: reversal.refund_id }, ['claim_until']);
  txn.referralAppend(referral.id, n, [clawback]);
  txn.addReward(ledgerFromReferral({ ...referral, rewards: [...referral.rewards, clawback] }, n));
  const items = txn.build();
  // The reward must not have been reversed or noted meanwhile (the referral write's extra conditions).
  const referralWrite = items.find(
    (i) => i.Update?.Key?.sk === referral.id && i.Update.Key.pk === keys.referral(accountId, referral.id).pk,
  )?.Update;
  if (referralWrite) {
    referralWrite.ConditionExpression += ` AND attribute_not_exists(#rw[${index}].reversed_at) AND attribute_not_exists(#rw[${index}].#note)`;
    referralWrite.ExpressionAttributeNames = { ...referralWrite.ExpressionAttributeNames, '#note': 'note' };
  }
  try {
    await transact(items);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new RewardRaceError();
    throw err;
  }
}

/** A credit the provider billed before the refund: it stays, and the reward says so (once). */
export async function recordCreditKept(accountId: string, referral: Referral, index: number, reversal: CreditReversal): Promise<void> {
  const reward = referral.rewards[index] as Reward;
  try {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.referral(accountId, referral.id),
          UpdateExpression: `SET #rw[${index}].#note = :note, #rw[${index}].refund_id = :rf REMOVE #rw[${index}].claim_until`,
          ConditionExpression: `#rw[${index}].#id = :rid AND attribute_not_exists(#rw[${index}].reversed_at) AND attribute_not_exists(#rw[${index}].#note)`,
          ExpressionAttributeNames: { '#rw': 'rewards', '#id': 'id', '#note': 'note' },
          ExpressionAttributeValues: {
            ':note': `Payment ${reward.payment_id} was refunded (refund ${reversal.refund_id}) after this credit was billed on the member's subscription; the credit stays.`,
            ':rf': reversal.refund_id,
            ':rid': reward.id,
          },
        },
      },
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new RewardRaceError();
    throw err;
  }
}
