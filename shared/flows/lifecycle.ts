// The reward lifecycle (docs/design/money.md): approving and voiding rewards, and the scheduled approval of
// commissions whose hold has ended. Each change is one MoneyTxn (store/ledger.ts): the reward's two
// copies, its clawbacks, the member's stats, the counts, its payout and the webhook event together, or
// nothing. Retried, repeated or concurrent calls change a reward once: the writes are conditioned on the
// state read, and a reward already in the asked state is answered as it is.
//
// A `held` reward (docs/fraud.md "Holds") is never approved (409; the scheduled job passes it by), and may be
// voided: its flag's `held_count` drops by 1 in the void's transaction (store/ledger.ts).
import { DetailError, NotFoundError } from '../domain/errors';
import { COLLECTING, voidable, type LedgerReward, type VoidReason } from '../domain/lifecycle';
import type { Referral } from '../domain/models';
import { ledgerRewardView } from '../domain/views';
import { publishAll } from '../queue/publish';
import type { RewardMessage } from '../queue/queues';
import { ledgerFromReferral, lifecycleOf, MoneyTxn, referralCondition, toLedgerReward } from '../store/ledger';
import { batchGet, ConditionsFailedError, getItem, lookup, queryAll, RaceLostError, transact, withRetries } from '../store/ops';
import { eventItem } from '../store/outbox';
import { changeCollecting, collectingTarget, getPayout } from '../store/payouts';
import { listProviderAccounts } from '../store/provider-accounts';
import { PROVIDER_REF_ATTRIBUTE, toReferral } from '../store/referrals';
import { isEntityId } from '../domain/ids';
import { tableName } from '../store/client';
import { flagKey, keys, moneyKeys, timeKey } from '../store/table';
import { log } from '../log';
import { approveDueNow } from './settlement/record';

class MoneyRaceError extends RaceLostError {}

/** 400: the request cannot apply to this kind of reward. */
const detail = (message: string) => new DetailError(400, message);
/** 409: the reward's state does not allow it (now). */
const conflict = (message: string) => new DetailError(409, message);

async function ledgerOrThrow(accountId: string, id: string): Promise<LedgerReward> {
  if (!isEntityId(id)) throw new NotFoundError();
  const reward = toLedgerReward(await getItem(keys.reward(accountId, id)));
  if (!reward) throw new NotFoundError();
  return reward;
}

/** The clawbacks of `reward` in its referral (as ledger records read from the referral's copies). */
function clawbacksOf(referral: Referral | null, reward: LedgerReward): LedgerReward[] {
  if (!referral) return [];
  return referral.rewards.flatMap((r, i) => (r.reverses === reward.id ? [ledgerFromReferral(referral, i)] : []));
}

async function commit(txn: MoneyTxn): Promise<void> {
  try {
    await transact(txn.build());
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new MoneyRaceError();
    throw err;
  }
}

/**
 * Approves a pending commission and its pending clawbacks into the member's collecting payout.
 * `schedule`: only when its approval time has come (the job); otherwise an operator's approval, which
 * may come before the hold ends.
 */
export async function approveReward(
  accountId: string,
  rewardId: string,
  opts: { schedule?: boolean; now?: number } = {},
): Promise<LedgerReward> {
  return withRetries(
    async () => {
      const now = opts.now ?? Math.floor(Date.now() / 1000);
      const reward = await ledgerOrThrow(accountId, rewardId);
      if (reward.reverses !== undefined) throw detail('A clawback is approved with the reward it reverses.');
      if (reward.type !== 'commission') throw detail('Only commissions are approved; a credit is applied at the payment provider.');
      if (reward.status === 'approved' || reward.status === 'paid') return reward;
      if (reward.status === 'held') {
        if (opts.schedule) return reward; // a scheduled approval passes it by
        throw conflict('This reward is held by a fraud rule: release it first.');
      }
      if (reward.status !== 'pending') throw conflict(`This reward is ${reward.status}: only a pending commission can be approved.`);
      if (opts.schedule && (reward.approves_at === null || reward.approves_at > now)) return reward;

      const [referralItem, target] = await Promise.all([
        getItem(keys.referral(accountId, reward.referral_id)),
        collectingTarget(accountId, reward.member_id, reward.currency),
      ]);
      const referral = toReferral(referralItem);
      const family = [reward, ...clawbacksOf(referral, reward).filter((c) => c.status === 'pending')];
      const txn = new MoneyTxn(accountId);
      if (!referral) txn.referralGone(reward.referral_id);
      if (!target.memberExists) txn.memberGone(reward.member_id);
      const payout = changeCollecting(
        txn,
        target,
        { add: family.map((r) => ({ id: r.id, amount: r.amount, created_at: r.created_at })), remove: [] },
        now,
      );
      let approved = reward;
      for (const r of family) {
        const moved = txn.moveReward(r, { status: 'approved', approved_at: now, payout_id: payout.id });
        if (r.id === reward.id) approved = moved;
      }
      txn.push(eventItem(accountId, 'reward.approved', reward.id, ledgerRewardView(approved)), `event:${reward.id}`);
      await commit(txn);
      log('info', 'reward approved', {
        account_id: accountId,
        reward_id: reward.id,
        payout_id: payout.id,
        by: opts.schedule ? 'schedule' : 'operator',
      });
      return approved;
    },
    (err) => err instanceof MoneyRaceError,
    8,
  );
}

/** Voids an unpaid reward and its clawbacks (docs/design/money.md "Clawbacks"); a paid one, or one whose payout is being paid, answers 400. */
export async function voidReward(
  accountId: string,
  rewardId: string,
  reason: VoidReason,
  opts: { now?: number } = {},
): Promise<LedgerReward> {
  return withRetries(
    async () => {
      const now = opts.now ?? Math.floor(Date.now() / 1000);
      const reward = await ledgerOrThrow(accountId, rewardId);
      if (reward.reverses !== undefined) throw detail('A clawback is voided with the reward it reverses.');
      if (reward.status === 'voided') return reward;
      if (reward.status === 'applied')
        throw detail("This credit is on the member's subscription at the payment provider already; a refund of its payment reverses it.");
      // Everything the void may need, read at once: its payout, its referral (for its clawbacks) and the
      // member's collecting payout it would leave.
      const [payout, referralItem, target, flagGone] = await Promise.all([
        reward.payout_id ? getPayout(accountId, reward.payout_id) : Promise.resolve(null),
        getItem(keys.referral(accountId, reward.referral_id)),
        collectingTarget(accountId, reward.member_id, reward.currency),
        // A held reward's flag loses it from `held_count` (when the flag is still there).
        reward.status === 'held' && reward.held_by ? flagMissing(accountId, reward.held_by) : Promise.resolve(false),
      ]);
      if (!voidable(reward.status, payout?.status ?? null)) {
        throw conflict(
          reward.status === 'paid'
            ? 'A paid reward is never changed; a refund after payment creates a clawback that nets against the next payout.'
            : `Its payout ${payout?.id} is being paid: mark the payout failed first.`,
        );
      }
      const referral = toReferral(referralItem);
      const family = [reward, ...clawbacksOf(referral, reward).filter((c) => c.status !== 'voided')];
      const txn = new MoneyTxn(accountId);
      if (!referral) txn.referralGone(reward.referral_id);
      if (!target.memberExists) txn.memberGone(reward.member_id);
      if (flagGone && reward.held_by) txn.flagGone(reward.held_by);
      const attached = family.filter((r) => r.payout_id !== null);
      if (attached.length > 0 && payout && COLLECTING.includes(payout.status)) {
        if (target.payout?.id !== payout.id) throw new MoneyRaceError();
        changeCollecting(txn, target, { add: [], remove: attached.map((r) => ({ id: r.id, amount: r.amount })) }, now);
      }
      let voided = reward;
      for (const r of family) {
        const moved = txn.moveReward(r, { status: 'voided', voided_at: now, void_reason: reason, payout_id: null, approves_at: null });
        if (r.id === reward.id) voided = moved;
      }
      // A credit not applied yet must not be applied by a worker holding its claim right now.
      if (reward.type === 'credit' && referral) {
        const index = reward.index;
        const stored = referral.rewards[index] as { claim_until?: number; provider_ref?: unknown } | undefined;
        if (stored?.provider_ref !== undefined) throw new MoneyRaceError();
        if (stored?.claim_until !== undefined && stored.claim_until >= now)
          throw conflict('This credit is being applied at the payment provider right now; try again in a minute.');
        // ...and the claim must still be free when the void commits (claimCredit refuses a voided credit).
        referralCondition(
          txn,
          referral.id,
          `attribute_not_exists(#rw[${index}].${PROVIDER_REF_ATTRIBUTE}) AND (attribute_not_exists(#rw[${index}].claim_until) OR #rw[${index}].claim_until < :claimnow)`,
          { ':claimnow': now },
        );
      }
      txn.push(eventItem(accountId, 'reward.voided', reward.id, ledgerRewardView(voided)), `event:${reward.id}`);
      await commit(txn);
      log('info', 'reward voided', { account_id: accountId, reward_id: reward.id, reason });
      return voided;
    },
    (err) => err instanceof MoneyRaceError,
    8,
  );
}

/** Whether fraud flag `flagId` is gone (a held reward's release or void then writes no count on it). */
export async function flagMissing(accountId: string, flagId: string): Promise<boolean> {
  return (await getItem(flagKey(accountId, flagId))) === undefined;
}

/**
 * Approves every commission of an account whose approval time has come: one Query of the approval-due
 * items, one BatchGet of their rewards, then each referral's due commissions together, as an evaluation
 * approves those of a hold of 0 days (settlement/record.ts approveDueNow: a group per transaction). An item
 * whose reward is no longer pending (a stale one: a held reward's, say; the moves delete theirs) is removed.
 */
export async function approveDue(accountId: string, now = Math.floor(Date.now() / 1000)): Promise<{ approved: number; failed: number }> {
  let approved = 0;
  let failed = 0;
  // An hour's approvals of one account: small enough to read at once.
  const items = await queryAll({ partitionValue: moneyKeys.approvalDueCollection(accountId), sk: { below: timeKey(now + 1) } });
  const found = await batchGet(items.map((item) => keys.reward(accountId, String(item.reward_id))));
  const due = new Map<string, number>();
  for (const item of items) {
    const reward = toLedgerReward(lookup(found, keys.reward(accountId, String(item.reward_id))));
    if (reward?.status === 'pending') due.set(reward.referral_id, (due.get(reward.referral_id) ?? 0) + 1);
    else await transact([{ Delete: { TableName: tableName(), Key: { pk: item.pk, sk: item.sk } } }]);
  }
  for (const [referralId, count] of due) {
    try {
      await approveDueNow(accountId, referralId, now);
      approved += count;
    } catch (err) {
      // One referral that cannot be approved never stops the others; the next run tries it again.
      failed += count;
      log('warn', 'scheduled approval failed', {
        account_id: accountId,
        referral_id: referralId,
        error: err instanceof Error ? err.name : 'unknown',
      });
    }
  }
  if (approved + failed > 0) log('info', 'scheduled approvals', { account_id: accountId, approved, failed });
  return { approved, failed };
}

/** The hourly job: one approve-due message per account with a provider (the accounts that have rewards). */
export async function startApprovals(): Promise<{ accounts: number }> {
  let accounts = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await listProviderAccounts(startKey);
    const messages: RewardMessage[] = page.accountIds.map((accountId) => ({ kind: 'approve-due', account_id: accountId }));
    await publishAll('rewards', messages);
    accounts += page.accountIds.length;
    startKey = page.next;
  } while (startKey);
  return { accounts };
}

export { lifecycleOf };
