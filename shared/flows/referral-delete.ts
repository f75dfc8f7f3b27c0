// DELETE /v1/referrals/{id}/ with the money side (MONEY.md): the referral's commissions approved into a
// collecting payout are voided first (they leave the payout), then the referral goes with every reward it
// holds (store/referrals.ts). A referral whose commission was paid, or is being paid, is not deleted: a
// paid reward is never changed, so the history it belongs to stays (409).
import { DetailError } from '../domain/errors';
import { COLLECTING } from '../domain/lifecycle';
import { getPayout } from '../store/payouts';
import { deleteReferral, RewardsInPayoutError } from '../store/referrals';
import { toLedgerReward } from '../store/ledger';
import { getItem } from '../store/ops';
import { keys } from '../store/table';
import { voidReward } from './lifecycle';

export async function deleteReferralAndRewards(accountId: string, id: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await deleteReferral(accountId, id);
    } catch (err) {
      if (!(err instanceof RewardsInPayoutError) || attempt >= 4) throw err;
      for (const rewardId of err.rewardIds) {
        const reward = toLedgerReward(await getItem(keys.reward(accountId, rewardId)));
        if (!reward || reward.status === 'voided') continue;
        const payout = reward.payout_id ? await getPayout(accountId, reward.payout_id) : null;
        if (reward.status === 'paid' || (payout && !COLLECTING.includes(payout.status))) {
          throw new DetailError(409, `Referral ${id} has a commission that was paid or is being paid (${reward.id}); a paid reward is never changed, so the referral stays.`);
        }
        await voidReward(accountId, reward.id, 'manual');
      }
    }
  }
}
