// Steps the money property tests share (money-property, fraud-holds-property): what a provider's refund of
// a commission does to the ledger, as the subscription sync records it.
import type { LedgerReward } from '../../shared/domain/lifecycle';
import { recordClawbacks } from '../../shared/store/clawbacks';
import { getItem } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { keys } from '../../shared/store/table';

/**
 * Refunds what is left of `target` (a USD commission): all of it, or half (at least a cent), as one
 * clawback with its own refund id. Nothing when it is voided, its referral is gone, or nothing is left.
 */
export async function refundCommission(
  accountId: string,
  target: Pick<LedgerReward, 'id' | 'status' | 'referral_id' | 'amount' | 'payment_id'>,
  part: 'full' | 'half',
  refundId: string,
): Promise<void> {
  if (target.status === 'voided') return;
  const referral = toReferral(await getItem(keys.referral(accountId, target.referral_id)));
  if (!referral) return;
  const taken = -referral.rewards.filter((r) => r.reverses === target.id).reduce((a, r) => a + r.amount, 0);
  const left = target.amount - taken;
  if (left <= 0) return;
  const amount = part === 'full' ? left : Math.max(1, Math.floor(left / 2));
  await recordClawbacks(
    accountId,
    referral,
    [{ type: 'commission', amount: -amount, currency: 'USD', payment_id: target.payment_id, reverses: target.id, refund_id: refundId }],
    true,
  );
}
