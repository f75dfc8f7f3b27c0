// Settlement, step 1 of 4 (docs/rewards.md "How an evaluation runs"): everything one reward evaluation
// decides from, read once. Two round trips: the referral (GetItem), then its subscription's payments and
// refunds (one Query of the payments partition) beside the referring member (GetItem) and, for a referral
// under a fraud rule's hold, its flag (GetItem). Every later step
// works on this snapshot; the writes are conditioned on it, so a concurrent change makes them fail and the
// evaluation starts again from a fresh load.
import type { RefundRecord } from '../../domain/clawbacks';
import type { Member, Payment, Referral } from '../../domain/models';
import { toMember } from '../../store/members';
import { getItem } from '../../store/ops';
import { toReferral } from '../../store/referrals';
import { listPaymentsAndRefunds, unreportedOf, type Unreported } from '../../store/refunds';
import { flagKey, keys } from '../../store/table';

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
  /** The referral's `fraud_hold` as stored (null: none), whatever its flag says: the record is conditioned on it. */
  fraudHold?: string | null;
}

/** The snapshot of a referral's settlement; null when it is deleted or not converted (nothing to do). */
export async function loadSettlement(accountId: string, referralId: string): Promise<Settlement | null> {
  const referral = toReferral(await getItem(keys.referral(accountId, referralId)));
  if (!referral || referral.converted_at === null || !referral.subscription) return null;
  const subscription = referral.subscription;
  const [{ payments, refunds, items }, memberItem, flag] = await Promise.all([
    listPaymentsAndRefunds(accountId, subscription.id),
    getItem(keys.member(accountId, referral.member_id)),
    // Under a fraud rule's hold: its flag, read beside (no extra round trip).
    referral.fraud_hold ? getItem(flagKey(accountId, referral.fraud_hold)) : Promise.resolve(undefined),
  ]);
  // New commissions are created held while the flag is there and open (its release removes `fraud_hold`
  // after; a flag gone or resolved holds nothing more): the plan reads the hold from the referral.
  const { fraud_hold: hold, ...rest } = referral;
  const holding = hold !== undefined && flag !== undefined && (flag.status === undefined || flag.status === 'open');
  return {
    accountId,
    referral: { ...rest, ...(holding ? { fraud_hold: hold } : {}), subscription },
    member: toMember(memberItem),
    payments,
    refunds,
    unreported: unreportedOf(items),
    paymentItems: items,
    fraudHold: hold ?? null,
  };
}
