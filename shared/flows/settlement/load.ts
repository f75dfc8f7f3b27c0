// Settlement, step 1 of 4 (docs/rewards.md "How an evaluation runs"): everything one reward evaluation
// decides from, read once. Two round trips: the referral (GetItem), then its subscription's payments and
// refunds (one Query of the payments partition) beside the referring member (GetItem). Every later step
// works on this snapshot; the writes are conditioned on it, so a concurrent change makes them fail and the
// evaluation starts again from a fresh load.
import type { RefundRecord } from '../../domain/clawbacks';
import type { Member, Payment, Referral } from '../../domain/models';
import { toMember } from '../../store/members';
import { getItem } from '../../store/ops';
import { toReferral } from '../../store/referrals';
import { listPaymentsAndRefunds, unreportedOf, type Unreported } from '../../store/refunds';
import { keys } from '../../store/table';

export interface Settlement {
  accountId: string;
  /** Converted, with its subscription. */
  referral: Referral & { subscription: NonNullable<Referral['subscription']> };
  /** The referring member; null once deleted (its stats are then not written). */
  member: Member | null;
  payments: Payment[];
  refunds: RefundRecord[];
  /** The payments and refunds not in the report buckets yet (recorded before the conversion). */
  unreported: Unreported[];
  /** The payments partition as read (for the report of what is unreported, when it is too long for one transaction). */
  paymentItems: Record<string, unknown>[];
}

/** The snapshot of a referral's settlement; null when it is deleted or not converted (nothing to do). */
export async function loadSettlement(accountId: string, referralId: string): Promise<Settlement | null> {
  const referral = toReferral(await getItem(keys.referral(accountId, referralId)));
  if (!referral || referral.converted_at === null || !referral.subscription) return null;
  const subscription = referral.subscription;
  const [{ payments, refunds, items }, memberItem] = await Promise.all([
    listPaymentsAndRefunds(accountId, subscription.id),
    getItem(keys.member(accountId, referral.member_id)),
  ]);
  return {
    accountId,
    referral: { ...referral, subscription },
    member: toMember(memberItem),
    payments,
    refunds,
    unreported: unreportedOf(items),
    paymentItems: items,
  };
}
