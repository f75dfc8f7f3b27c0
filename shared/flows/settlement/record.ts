// Settlement, step 3 of 4 (docs/rewards.md "How an evaluation runs"): the plan written in ONE
// transaction (MoneyTxn, shared/store/ledger.ts): the new rewards appended to the referral with their
// ledger items, events, counters, member stats and report buckets; the commission clawbacks with the voids
// and payout moves they cause; the `reported` marks and report deltas of the payments recorded before the
// conversion. The referral write is conditioned on the length of the reward list the plan was made from,
// so a concurrent evaluation makes it fail whole (RewardRaceError) and the caller starts again from a
// fresh load; a replay plans nothing new.
//
// A plan too large for one transaction (DynamoDB allows 100 items) is written as before, in chunks, each
// committed whole and conditioned the same way: rewards by REWARDS_PER_TRANSACTION, then the clawbacks
// planned against the rewards as written by CLAWBACKS_PER_TRANSACTION, then one small transaction per
// unreported payment. So is a plan where a refund takes back part of a reward created by the same plan
// (the clawback then follows the stored reward, as a later evaluation would).
import type { CreditReversal } from '../../domain/clawbacks';
import { planClawbacks } from '../../domain/clawbacks';
import type { Referral, Reward } from '../../domain/models';
import { ledgerRewardView } from '../../domain/views';
import { log } from '../../log';
import { countMetric } from '../../metrics';
import { addClawbacks, CLAWBACKS_PER_TRANSACTION, recordClawbacks } from '../../store/clawbacks';
import { ledgerFromReferral, MoneyTxn, referralCondition, type LedgerReward } from '../../store/ledger';
import { ConditionsFailedError, getItem, transact, withRetries } from '../../store/ops';
import { eventItem } from '../../store/outbox';
import { changeCollecting, collectingTarget } from '../../store/payouts';
import { toReferral } from '../../store/referrals';
import { reportedMark } from '../../store/refunds';
import { reportMissedPayments } from '../../store/reports';
import {
  addNewRewards,
  commitRewards,
  MAX_TRANSACT_ITEMS,
  recordRewards,
  REWARDS_PER_TRANSACTION,
  RewardRaceError,
} from '../../store/rewards';
import { keys } from '../../store/table';
import { lifecycleOf } from '../../domain/lifecycle';
import type { PlannedReward } from '../../domain/rewards';
import type { Settlement } from './load';
import { isDueNow, type SettlementPlan } from './plan';

/** Unreported payments marked in the one transaction; more are reported one transaction each. */
export const REPORTS_PER_TRANSACTION = 10;

export interface Recorded {
  /** The referral as written. */
  referral: Referral;
  /** The credits the refunds call to reverse (shared/flows/settlement/act.ts does it). */
  reversals: CreditReversal[];
}

export async function recordSettlement(s: Settlement, plan: SettlementPlan): Promise<Recorded> {
  const newIds = new Set(plan.rewards.map((r) => r.id));
  const fits =
    plan.rewards.length <= REWARDS_PER_TRANSACTION &&
    plan.clawbacks.length <= CLAWBACKS_PER_TRANSACTION &&
    !plan.clawbacks.some((c) => newIds.has(c.reverses));
  const once = fits ? await recordAtOnce(s, plan) : null;
  if (once) {
    logRecorded(
      s,
      plan.planned,
      plan.clawbacks.map((c) => c.refund_id),
    );
    return once;
  }
  return recordInChunks(s, plan);
}

/** The whole plan in one transaction; null (nothing written) when it needs more items than one allows. */
async function recordAtOnce(s: Settlement, plan: SettlementPlan): Promise<Recorded | null> {
  const { accountId, referral } = s;
  const stored = referral.rewards.length;
  const completedChanges = plan.completed !== referral.rewards_completed;
  const reports = plan.reports.length <= REPORTS_PER_TRANSACTION ? plan.reports : [];
  const txn = new MoneyTxn(accountId);
  if (!s.member) txn.memberGone(referral.member_id);
  const withRewards: Referral = { ...referral, rewards: [...referral.rewards, ...plan.rewards], rewards_completed: plan.completed };
  addNewRewards(txn, withRewards, stored, plan.rewards.length);
  // The clawbacks reverse stored rewards only (recordSettlement), so they are added against `referral`.
  const clawbacks: Reward[] = plan.clawbacks.length > 0 ? await addClawbacks(txn, referral, plan.clawbacks, plan.now) : [];
  const after: Referral = { ...withRewards, rewards: [...withRewards.rewards, ...clawbacks] };
  clawbacks.forEach((_c, i) => {
    txn.addReward(ledgerFromReferral(after, stored + plan.rewards.length + i));
  });
  const appended = [...plan.rewards, ...clawbacks];
  // New rewards are held or not by the referral's `fraud_hold` as read: a hold set meanwhile (the flag's
  // transaction, before it holds the referral's rewards) makes this write fail and the evaluation read again.
  const hold = s.fraudHold ?? null;
  if (plan.rewards.length > 0)
    referralCondition(
      txn,
      referral.id,
      hold === null ? 'attribute_not_exists(fraud_hold)' : 'fraud_hold = :fraudhold',
      hold === null ? {} : { ':fraudhold': hold },
    );
  if (appended.length > 0 || completedChanges) {
    txn.referralAppend(
      referral.id,
      stored,
      appended,
      plan.rewards.length > 0 || completedChanges ? { sets: ['rewards_completed = :done'], values: { ':done': plan.completed } } : {},
    );
  }
  const scopes = { memberId: referral.member_id, campaignId: referral.campaign_id };
  for (const u of reports) {
    txn.push(reportedMark(u.key), 'reported');
    txn.report(u.at, scopes, u.metric, u.amount, u.currency);
  }
  const items = txn.build();
  // One item is kept free for the Idempotency-Key marker that transact() adds inside an API request.
  if (items.length > MAX_TRANSACT_ITEMS - 1) return null;
  if (items.length > 0) await commitRewards(items);
  countCreated(plan.rewards);
  // More payments recorded before the conversion than one transaction takes (a long history): apart.
  if (reports.length < plan.reports.length) await reportApart(s);
  return { referral: after, reversals: plan.creditReversals };
}

/** A plan too large for one transaction: the chunked writes (each whole, each conditioned on the list it extends). */
async function recordInChunks(s: Settlement, plan: SettlementPlan): Promise<Recorded> {
  const { accountId, referral } = s;
  // Recorded in chunks (store/rewards.ts), each committed whole; a chunk's rewards are counted once it
  // is committed, and a retry (a race lost) plans only what is not stored yet.
  let updated = await recordRewards(accountId, referral, plan.planned, plan.completed, s.member !== null, countCreated);
  // Planned again against the rewards as written (their ids are the stored ones).
  const clawbacks = planClawbacks(updated.rewards, s.payments, s.refunds);
  updated = await recordClawbacks(accountId, updated, clawbacks.clawbacks, s.member !== null);
  logRecorded(
    s,
    plan.planned,
    clawbacks.clawbacks.map((c) => c.refund_id),
  );
  if (plan.reports.length > 0) await reportApart(s);
  return { referral: updated, reversals: clawbacks.creditReversals };
}

/** Each unreported payment in a small transaction of its own (store/reports.ts). */
async function reportApart(s: Settlement): Promise<void> {
  await reportMissedPayments(s.accountId, s.paymentItems, { memberId: s.referral.member_id, campaignId: s.referral.campaign_id });
}

function countCreated(created: { type: 'credit' | 'commission' }[]): void {
  for (const type of ['credit', 'commission'] as const) {
    const n = created.filter((r) => r.type === type).length;
    if (n > 0) countMetric('RewardsCreated', { RewardType: type }, n);
  }
}

function logRecorded(s: Settlement, created: PlannedReward[], refunds: string[]): void {
  const context = { account_id: s.accountId, referral_id: s.referral.id };
  if (created.length > 0)
    log('info', 'rewards created', { ...context, count: created.length, payments: created.slice(0, 50).map((r) => r.payment_id) });
  if (refunds.length > 0) log('info', 'clawbacks recorded', { ...context, refunds });
}

/** Rewards approved per transaction: each takes 3 items (ledger item, schedule, event) beside the payout's and the counters' (up to 16 per status). */
const APPROVALS_PER_TRANSACTION = 15;

/**
 * Approves the referral's pending commissions whose approval time has come (with their pending
 * clawbacks) into the member's collecting payout, up to APPROVALS_PER_TRANSACTION at a time: one
 * transaction per group moves the rewards' ledger items and referral copies, the payout, the member's
 * stats, the counters and the `reward.approved` events, as shared/flows/lifecycle.ts approveReward does for one
 * (a backlog of hundreds would otherwise rewrite the referral item and the payout once per reward).
 * Conditioned on the states read: a concurrent approval makes the group re-read and skip what it did.
 * Only a hold of 0 days gets here during an evaluation: its payout must be read first, so it is a
 * transaction of its own after the settlement's. `recorded`: the referral as the evaluation wrote it.
 */
export async function approveDueNow(accountId: string, referralId: string, now: number, recorded?: Referral): Promise<void> {
  // The referral as the evaluation left it serves the first attempt (a stale copy only fails the
  // transaction's conditions, and the retry reads it afresh).
  let snapshot = recorded;
  for (let round = 0; round < 1000; round++) {
    const done = await withRetries(
      async () => {
        const referral = snapshot ?? toReferral(await getItem(keys.referral(accountId, referralId)));
        snapshot = undefined;
        if (!referral) return true;
        const due = referral.rewards.flatMap((r, index) => (isDueNow(r, now) ? [ledgerFromReferral(referral, index)] : []));
        const first = due[0];
        if (!first) return true;
        const group: LedgerReward[] = [];
        let family: LedgerReward[] = [];
        for (const reward of due) {
          if (reward.currency !== first.currency) continue;
          const clawbacks = referral.rewards.flatMap((c, i) =>
            c.reverses === reward.id && lifecycleOf(c).status === 'pending' ? [ledgerFromReferral(referral, i)] : [],
          );
          if (group.length > 0 && family.length + 1 + clawbacks.length > APPROVALS_PER_TRANSACTION) break;
          group.push(reward);
          family = [...family, reward, ...clawbacks];
        }
        const target = await collectingTarget(accountId, referral.member_id, first.currency);
        const txn = new MoneyTxn(accountId);
        if (!target.memberExists) txn.memberGone(referral.member_id);
        const payout = changeCollecting(
          txn,
          target,
          { add: family.map((r) => ({ id: r.id, amount: r.amount, created_at: r.created_at })), remove: [] },
          now,
        );
        for (const r of family) {
          const moved = txn.moveReward(r, { status: 'approved', approved_at: now, payout_id: payout.id });
          if (r.reverses === undefined) txn.push(eventItem(accountId, 'reward.approved', r.id, ledgerRewardView(moved)), `event:${r.id}`);
        }
        try {
          await transact(txn.build());
        } catch (err) {
          if (err instanceof ConditionsFailedError) throw new RewardRaceError();
          throw err;
        }
        log('info', 'rewards approved', {
          account_id: accountId,
          referral_id: referralId,
          payout_id: payout.id,
          count: group.length,
          by: 'schedule',
        });
        return due.length === group.length;
      },
      (err) => err instanceof RewardRaceError,
      8,
    );
    if (done) return;
  }
}
