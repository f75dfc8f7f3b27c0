// DELETE /v1/referrals/{id}/ with the money side (docs/rewards.md "Deleting a referral"): the referral's
// commissions approved into a collecting payout are voided first (they leave the payout), then the referral
// goes with every reward it holds (store/referrals.ts). A referral whose commission was paid, or is being
// paid, is not deleted: a paid reward is never changed, so the history it belongs to stays (409).
//
// The check and the voids are one decision: every payout that holds some of the referral's commissions
// lets go of all of them in the first transaction, conditioned on that payout's version and on its being
// collecting (the state the check read). A batch or a mark-paid that takes the payout meanwhile makes that
// transaction fail, and the delete reads again and answers 409 with nothing voided. Once it commits, no
// payout counts those rewards any more, so the voids of the rest (later chunks, 20 rewards each, when there
// are many) and the delete can no longer be refused by a payout; a retry after a crash in between finishes
// them (a reward whose payout does not list it is voided without touching the payout).
import { DetailError } from '../domain/errors';
import { COLLECTING, type LedgerReward, type Payout } from '../domain/lifecycle';
import { ledgerRewardView } from '../domain/views';
import { MoneyTxn, toLedgerReward } from '../store/ledger';
import { batchGet, ConditionsFailedError, getItem, lookup, RaceLostError, transact, withRetries } from '../store/ops';
import { eventItem } from '../store/outbox';
import { changeCollecting, collectingTarget, toPayout } from '../store/payouts';
import { deleteReferral, RewardsInPayoutError } from '../store/referrals';
import { keys, moneyKeys } from '../store/table';
import { log } from '../log';

class DeleteRaceError extends RaceLostError {}

/** Rewards voided per transaction (two items each, with the payout, counts, stats and reports). */
const CHUNK = 20;

export async function deleteReferralAndRewards(accountId: string, id: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await deleteReferral(accountId, id);
    } catch (err) {
      if (!(err instanceof RewardsInPayoutError) || attempt >= 4) throw err;
      await voidOutOfPayouts(accountId, id, err.rewardIds);
    }
  }
}

async function commit(txn: MoneyTxn): Promise<void> {
  try {
    await transact(txn.build());
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new DeleteRaceError();
    throw err;
  }
}

/** Voids the referral's commissions that are in a payout, all or none (see the top of this file). */
async function voidOutOfPayouts(accountId: string, referralId: string, rewardIds: string[]): Promise<void> {
  await withRetries(
    async () => {
      const now = Math.floor(Date.now() / 1000);
      const found = await batchGet(rewardIds.map((r) => keys.reward(accountId, r)));
      const rewards = rewardIds
        .map((r) => toLedgerReward(lookup(found, keys.reward(accountId, r))))
        .filter((r): r is LedgerReward => r !== null && r.status !== 'voided');
      if (rewards.length === 0) return;
      const payoutIds = [...new Set(rewards.map((r) => r.payout_id).filter((p): p is string => p !== null))];
      const payoutItems = await batchGet(payoutIds.map((p) => moneyKeys.payout(accountId, p)));
      const payouts = new Map(payoutIds.map((p) => [p, toPayout(lookup(payoutItems, moneyKeys.payout(accountId, p)))] as const));
      const holder = (r: LedgerReward): Payout | null => {
        const p = r.payout_id ? (payouts.get(r.payout_id) ?? null) : null;
        return p?.reward_ids.includes(r.id) ? p : null;
      };
      // The check, on everything at once, before anything is written.
      for (const r of rewards) {
        const p = holder(r);
        if (r.status === 'paid' || (p && !COLLECTING.includes(p.status))) {
          throw new DetailError(
            409,
            `Referral ${referralId} has a commission that was paid or is being paid (${r.id}); a paid reward is never changed, so the referral stays.`,
          );
        }
      }
      // The payouts that hold some: each is the member's collecting payout in its currency (else read again).
      const holding = [...new Set(rewards.map(holder).filter((p): p is Payout => p !== null))];
      const targets = await Promise.all(holding.map((p) => collectingTarget(accountId, p.member_id, p.currency)));
      targets.forEach((t, i) => {
        if (t.payout?.id !== holding[i]!.id || t.payout.version !== holding[i]!.version) throw new DeleteRaceError();
      });
      const memberExists =
        targets.length > 0
          ? targets.every((t) => t.memberExists)
          : (await getItem(keys.member(accountId, rewards[0]!.member_id))) !== undefined;
      for (let i = 0; i < rewards.length; i += CHUNK) {
        const txn = new MoneyTxn(accountId);
        if (!memberExists) txn.memberGone(rewards[0]!.member_id);
        if (i === 0) {
          targets.forEach((t, k) => {
            const mine = rewards.filter((r) => holder(r)?.id === holding[k]!.id);
            changeCollecting(txn, t, { add: [], remove: mine.map((r) => ({ id: r.id, amount: r.amount })) }, now);
          });
        }
        for (const r of rewards.slice(i, i + CHUNK)) {
          const voided = txn.moveReward(r, { status: 'voided', voided_at: now, void_reason: 'manual', payout_id: null, approves_at: null });
          // A clawback is voided with the reward it reverses: the event names the reward.
          if (r.reverses === undefined) txn.push(eventItem(accountId, 'reward.voided', r.id, ledgerRewardView(voided)), `event:${r.id}`);
        }
        await commit(txn);
      }
      log('info', 'referral delete: commissions voided out of their payouts', {
        account_id: accountId,
        referral_id: referralId,
        rewards: rewards.length,
        payouts: holding.length,
      });
    },
    (err) => err instanceof DeleteRaceError,
    8,
  );
}
