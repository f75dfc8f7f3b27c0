// The reward fan-out worker's logic.
//
// evaluate-referral: reads the converted referral and its subscription's payments (and refunds), plans
// the rewards (shared/domain/rewards.ts), writes the new ones with the member's stats in optimistic
// transactions of at most 20 rewards each (exactly one reward per (referral, payment): a concurrent
// evaluation loses the condition, re-reads and finds the reward written; a replay after a crash between
// two chunks plans only the rest), then what refunds take back (shared/flows/settlement/act.ts:
// commission clawbacks, credit reversals), queues the member emails, and applies pending credits.
//
// Credit application on the referrer's attached subscription, through the port (Classic: a one-off
// negative modifier), exactly once:
// 1. a worker claims the reward for 60 s (conditional update; a concurrent worker skips it);
// 2. the adapter looks for the credit by the reward id (a previous attempt may have applied it and
//    crashed before recording it) and applies it only if there is none;
// 3. it records the provider's reference on the reward. A provider failure releases the claim and fails the
//    record, so SQS retries it. Without an attached subscription (or with one in another currency, or
//    deleted) the credit waits; attaching a subscription to the member queues apply-member-credits.
import { queueMemberEmails } from '../email/enqueue';
import { planClawbacks, type CreditReversal } from '../domain/clawbacks';
import { planRewards } from '../domain/rewards';
import { recordClawbacks } from '../store/clawbacks';
import { listPaymentsAndRefunds } from '../store/refunds';
import { ConditionsFailedError, getItem, transact, withRetries } from '../store/ops';
import { ledgerFromReferral, MoneyTxn, type LedgerReward } from '../store/ledger';
import { changeCollecting, collectingTarget } from '../store/payouts';
import { eventItem } from '../store/outbox';
import { ledgerRewardView } from '../domain/views';
import { toReferral } from '../store/referrals';
import { recordRewards, referralsOfMember, RewardRaceError } from '../store/rewards';
import { toMember } from '../store/members';
import type { Referral } from '../domain/models';
import { keys } from '../store/table';
import { applyPendingCredits, pendingCredits, reverseCredits } from './settlement/act';
import { reportMissedPayments } from '../store/reports';
import { lifecycleOf } from '../domain/lifecycle';
import { log } from '../log';
import { countMetric } from '../metrics';


export async function evaluateReferral(accountId: string, referralId: string): Promise<void> {
  const evaluated = await withRetries(
    async () => {
      const current = toReferral(await getItem(keys.referral(accountId, referralId)));
      if (!current || current.converted_at === null || !current.subscription) return null; // deleted or not converted: nothing to do
      const [{ payments, refunds, items }, memberItem] = await Promise.all([listPaymentsAndRefunds(accountId, current.subscription.id), getItem(keys.member(accountId, current.member_id))]);
      const memberExists = toMember(memberItem) !== null;
      const plan = planRewards(current, payments, current.rewards, {
        subscriptionDeleted: current.subscription.status === 'deleted',
        now: Math.floor(Date.now() / 1000),
        refunds,
      });
      // Recorded in chunks (store/rewards.ts), each committed whole; a chunk's rewards are counted once it
      // is committed, and a retry of this closure (a race lost below) plans only what is not stored yet.
      let updated = await recordRewards(accountId, current, plan.rewards, plan.completed, memberExists, (chunk) => {
        for (const type of ['credit', 'commission'] as const) {
          const created = chunk.filter((r) => r.type === type).length;
          if (created > 0) countMetric('RewardsCreated', { RewardType: type }, created);
        }
      });
      if (plan.rewards.length > 0) {
        log('info', 'rewards created', { account_id: accountId, referral_id: referralId, count: plan.rewards.length, payments: plan.rewards.slice(0, 50).map((r) => r.payment_id) });
      }
      const clawbacks = planClawbacks(updated.rewards, payments, refunds);
      updated = await recordClawbacks(accountId, updated, clawbacks.clawbacks, memberExists);
      if (clawbacks.clawbacks.length > 0) {
        log('info', 'clawbacks recorded', { account_id: accountId, referral_id: referralId, refunds: clawbacks.clawbacks.map((c) => c.refund_id) });
      }
      return { referral: updated, reversals: clawbacks.creditReversals, paymentItems: items };
    },
    (err) => err instanceof RewardRaceError,
    8,
  );
  if (!evaluated) return;
  let referral = evaluated.referral;
  if (evaluated.reversals.length > 0) {
    await reverseCredits(accountId, referralId, evaluated.reversals as CreditReversal[]);
    referral = toReferral(await getItem(keys.referral(accountId, referralId))) ?? referral;
  }
  // Its payments recorded before the conversion enter the report buckets now (once each).
  await reportMissedPayments(accountId, evaluated.paymentItems, { memberId: referral.member_id, campaignId: referral.campaign_id });
  // Commissions whose hold is over already (a hold of 0 days) are approved now, not at the next hourly run.
  const now = Math.floor(Date.now() / 1000);
  if (referral.rewards.some((r) => isDue(r, now))) await approveDueNow(accountId, referralId, now);
  // The conversion and reward notices this state calls for (each queued once; see shared/email/enqueue.ts).
  await queueMemberEmails(accountId, referral);
  await applyPendingCredits(accountId, referral);
}

/**
 * Approves the referral's pending commissions whose approval time has come (with their pending
 * clawbacks) into the member's collecting payout, up to APPROVALS_PER_TRANSACTION at a time: one
 * transaction per group moves the rewards' ledger items and referral copies, the payout, the member's
 * stats, the counters and the `reward.approved` events, as flows/lifecycle.ts approveReward does for one
 * (a backlog of hundreds would otherwise rewrite the referral item and the payout once per reward).
 * Conditioned on the states read: a concurrent approval makes the group re-read and skip what it did.
 */
/** A pending commission (not a clawback) whose approval time has come. */
function isDue(r: Referral['rewards'][number], now: number): boolean {
  const life = lifecycleOf(r);
  return r.type === 'commission' && r.reverses === undefined && r.amount > 0 && life.status === 'pending' && life.approves_at !== null && life.approves_at <= now;
}

/** Rewards approved per transaction: each takes 3 items (ledger item, schedule, event) beside the payout's and the counters' (up to 16 per status). */
const APPROVALS_PER_TRANSACTION = 15;

async function approveDueNow(accountId: string, referralId: string, now: number): Promise<void> {
  for (let round = 0; round < 1000; round++) {
    const done = await withRetries(
      async () => {
        const referral = toReferral(await getItem(keys.referral(accountId, referralId)));
        if (!referral) return true;
        const due = referral.rewards.flatMap((r, index) => (isDue(r, now) ? [ledgerFromReferral(referral, index)] : []));
        const first = due[0];
        if (!first) return true;
        const group: LedgerReward[] = [];
        let family: LedgerReward[] = [];
        for (const reward of due) {
          if (reward.currency !== first.currency) continue;
          const clawbacks = referral.rewards.flatMap((c, i) => (c.reverses === reward.id && lifecycleOf(c).status === 'pending' ? [ledgerFromReferral(referral, i)] : []));
          if (group.length > 0 && family.length + 1 + clawbacks.length > APPROVALS_PER_TRANSACTION) break;
          group.push(reward);
          family = [...family, reward, ...clawbacks];
        }
        const target = await collectingTarget(accountId, referral.member_id, first.currency);
        const txn = new MoneyTxn(accountId);
        if (!target.memberExists) txn.memberGone(referral.member_id);
        const payout = changeCollecting(txn, target, { add: family.map((r) => ({ id: r.id, amount: r.amount, created_at: r.created_at })), remove: [] }, now);
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
        log('info', 'rewards approved', { account_id: accountId, referral_id: referralId, payout_id: payout.id, count: group.length, by: 'schedule' });
        return due.length === group.length;
      },
      (err) => err instanceof RewardRaceError,
      8,
    );
    if (done) return;
  }
}

export { applyPendingCredits, CreditHeldError, withCreditLease } from './settlement/act';

/** A subscription was attached to the member: apply the credits that were waiting for one. */
export async function applyMemberCredits(accountId: string, memberId: string): Promise<void> {
  for (const referral of await referralsOfMember(accountId, memberId)) {
    if (pendingCredits(referral).length === 0) continue;
    // The index read is eventually consistent: re-read the referral before acting on it.
    const fresh = toReferral(await getItem(keys.referral(accountId, referral.id)));
    if (fresh) await applyPendingCredits(accountId, fresh);
  }
}
