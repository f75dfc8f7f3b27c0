// Settlement, step 2 of 4 (docs/rewards.md "How an evaluation runs"): what the loaded snapshot calls
// for, decided without any I/O. The rules themselves live in the domain (shared/domain/rewards.ts: which
// payments earn a reward; shared/domain/clawbacks.ts: what refunds take back; shared/domain/commissions.ts:
// how much a reward is); this puts them together for one referral:
// - the new rewards, as they will be stored (ids and lifecycle included), and whether the referral is complete;
// - the commission clawbacks and the credit reversals its refunds call for (planned against the rewards
//   stored plus the new ones, as if those were written already);
// - the report deltas of its payments and refunds recorded before the conversion.
// Which credits are then applied and which commissions approved at once are read from the referral as
// recorded (creditsToApply, isDueNow), since they include what the record step wrote.
import { planClawbacks, type CreditReversal, type PlannedClawback } from '../../domain/clawbacks';
import { fixedAmount, percentageCommission, type RewardRule } from '../../domain/commissions';
import { lifecycleOf } from '../../domain/lifecycle';
import type { Referral, Reward } from '../../domain/models';
import { newReward, planRewards, type PlannedReward } from '../../domain/rewards';
import type { Unreported } from '../../store/refunds';
import type { StoredReward } from '../../store/rewards';
import type { Settlement } from './load';

/**
 * How a reward's amount is computed, in order: the first rule that applies decides. A new kind of
 * commission is one more function of this shape (test/unit/rewards.test.ts shows a tiered one).
 */
export const REWARD_RULES: readonly RewardRule[] = [percentageCommission, fixedAmount];

export interface SettlementPlan {
  /** Unix seconds the plan was made at (the new rewards' creation time). */
  now: number;
  /** The new rewards as planned (payment order)... */
  planned: PlannedReward[];
  /** ...and as they will be stored in the referral, appended after its rewards. */
  rewards: Reward[];
  /** The referral's `rewards_completed` after this plan. */
  completed: boolean;
  clawbacks: PlannedClawback[];
  creditReversals: CreditReversal[];
  /** Payments and refunds to add to the report buckets (once each). */
  reports: Unreported[];
}

export function planSettlement(s: Settlement, opts: { now: number; newId: () => string; rules?: readonly RewardRule[] }): SettlementPlan {
  const { referral } = s;
  const rewardPlan = planRewards(referral, s.payments, referral.rewards, {
    subscriptionDeleted: referral.subscription.status === 'deleted',
    now: opts.now,
    refunds: s.refunds,
    rules: opts.rules ?? REWARD_RULES,
    member: s.member,
  });
  const rewards = rewardPlan.rewards.map((p) => newReward(p, opts.newId(), opts.now, referral));
  const clawbackPlan = planClawbacks([...referral.rewards, ...rewards], s.payments, s.refunds);
  return {
    now: opts.now,
    planned: rewardPlan.rewards,
    rewards,
    completed: rewardPlan.completed,
    clawbacks: clawbackPlan.clawbacks,
    creditReversals: clawbackPlan.creditReversals,
    reports: s.unreported,
  };
}

/** A pending commission (not a clawback) whose approval time has come: approved now, not at the next hourly run. */
export function isDueNow(r: Reward, now: number): boolean {
  const life = lifecycleOf(r);
  return (
    r.type === 'commission' &&
    r.reverses === undefined &&
    r.amount > 0 &&
    life.status === 'pending' &&
    life.approves_at !== null &&
    life.approves_at <= now
  );
}

/** The referral's credits still to apply at the provider: not applied, not reversed, not held, not voided. */
export function creditsToApply(referral: Referral): { reward: StoredReward; index: number }[] {
  return (referral.rewards as StoredReward[])
    .map((reward, index) => ({ reward, index }))
    .filter(
      ({ reward }) =>
        reward.type === 'credit' &&
        reward.provider_ref === undefined &&
        reward.amount > 0 &&
        reward.reversed_at === undefined &&
        reward.note === undefined &&
        lifecycleOf(reward).status !== 'voided',
    );
}
