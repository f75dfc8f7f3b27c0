// The reward lifecycle and payouts (docs/design/money.md), as pure rules. The store writes what these decide.
//
// Rewards:
// - commission: `pending` (for the referral's hold, `approves_at`) -> `approved` (by the scheduled job, or
//   POST /v1/rewards/{id}/approve/ when the campaign's approval is `manual`) -> `paid` (its payout marked
//   paid). Credit: `pending` -> `applied` (the credit reached the provider).
// - Any unpaid reward can be `voided` (`void_reason`: refunded, fraud, duplicate, manual).
// - `held` (docs/fraud.md "Holds"): a commission a fraud rule holds (`held_by` names its flag), from
//   pending, or approved in a collecting payout (it leaves the payout). Never approved nor in a payout while
//   held; an operator releases it (pending again with the `approves_at` it kept, or approved at once when
//   that time has passed) or voids it. Credits are never held.
// - A clawback (a negative reward that `reverses` another) follows the reward it takes back: it is pending
//   or approved with it and is paid in the same payout, nets against the member's next payout when the
//   reward was paid already, and is voided with it. A refund in full of a reward not paid yet voids both.
// - Member stats: every amount counts in `credit_earned` / `commission_earned` unless voided (voided pairs
//   net to zero, so the refunds of before keep their figures); `commission_pending|approved|held|paid`
//   split the commission amounts by status. A hold or a release changes no earned figure or report bucket.
//
// Payouts: one member's approved commissions in one currency. `open` while collecting (below the minimum,
// no payout email, or not positive), `due` once payable, `processing` once in a batch, then `paid`, or
// `failed` / `canceled` (its rewards return to approved and join the member's next payout).

import type { Lifecycle, ProviderId, Reward, RewardStatus, RewardType } from './models';

// The statuses and the lifecycle fields are part of a reward's record (domain/models.ts), so that the
// records import nothing from the rules; they are exported here too, beside the rules that use them.
export { REWARD_STATUSES, VOID_REASONS, type Lifecycle, type RewardStatus, type VoidReason } from './models';

export const PAYOUT_STATUSES = ['open', 'due', 'processing', 'paid', 'failed', 'canceled'] as const;
export type PayoutStatus = (typeof PAYOUT_STATUSES)[number];

/** Payouts whose rewards may still change (a collecting payout). */
export const COLLECTING: readonly PayoutStatus[] = ['open', 'due'];

export const DAY_SECONDS = 86_400;

/** The lifecycle of a reward just earned. */
export function initialLifecycle(
  type: 'credit' | 'commission',
  createdAt: number,
  terms: { hold_days?: number; approval?: 'auto' | 'manual' },
): Lifecycle {
  const manual = terms.approval === 'manual';
  return {
    status: 'pending',
    approves_at: type === 'commission' && !manual ? createdAt + Math.max(0, terms.hold_days ?? 30) * DAY_SECONDS : null,
    approved_at: null,
    paid_at: null,
    voided_at: null,
    void_reason: null,
    payout_id: null,
  };
}

/**
 * What a reward stored before the lifecycle existed reads as: an applied credit is `applied`; a reversed
 * one `voided`; a commission `approved` (it was earned under the old rules, which had no hold).
 */
export function legacyLifecycle(r: {
  type: 'credit' | 'commission';
  amount: number;
  created_at: number;
  provider_ref?: unknown;
  reversed_at?: number;
}): Lifecycle {
  const base = { approves_at: null, approved_at: null, paid_at: null, voided_at: null, void_reason: null, payout_id: null };
  if (r.type === 'credit') {
    if (r.reversed_at !== undefined) return { ...base, status: 'voided', voided_at: r.reversed_at, void_reason: 'refunded' };
    return { ...base, status: r.provider_ref !== undefined ? 'applied' : 'pending' };
  }
  return { ...base, status: 'approved', approved_at: r.created_at };
}

/** The member stat a commission in this status counts in (none for credits and voided rewards). */
export function commissionStat(
  type: 'credit' | 'commission',
  status: RewardStatus,
): 'commission_pending' | 'commission_approved' | 'commission_held' | 'commission_paid' | null {
  if (type !== 'commission') return null;
  if (status === 'pending') return 'commission_pending';
  if (status === 'approved') return 'commission_approved';
  if (status === 'held') return 'commission_held';
  if (status === 'paid') return 'commission_paid';
  return null;
}

/** The stat of all earned amounts of this type (voided rewards are not counted). */
export function earnedStat(type: 'credit' | 'commission'): 'credit_earned' | 'commission_earned' {
  return type === 'credit' ? 'credit_earned' : 'commission_earned';
}

/** A collecting payout's status: due once positive, at least the minimum, and the member can be paid. */
export function collectingStatus(amount: number, minPayout: number, payoutEmail: string | null): 'open' | 'due' {
  return amount > 0 && amount >= minPayout && payoutEmail !== null && payoutEmail !== '' ? 'due' : 'open';
}

/** Whether a reward in this state may be voided (never once paid, nor while its payout is being paid; a held one is in none). */
export function voidable(status: RewardStatus, payoutStatus: PayoutStatus | null): boolean {
  if (status === 'paid' || status === 'voided') return false;
  return payoutStatus === null || COLLECTING.includes(payoutStatus);
}

export interface LedgerReward extends Lifecycle {
  id: string;
  type: RewardType;
  amount: number;
  currency: string;
  created_at: number;
  payment_id: ProviderId;
  reverses?: string;
  refund_id?: string;
  /** Why a reward is held or what a clawback takes back (as on the referral's copy). */
  note?: string;
  referral_id: string;
  member_id: string;
  campaign_id: string | null;
  /** Its position in the referral's reward list (appends only, so it never moves). */
  index: number;
  version: number;
}

/** The lifecycle fields of a reward inside a referral (older items have none: see legacyLifecycle). */
export function lifecycleOf(r: Reward): Lifecycle {
  const stored = r as Reward & Partial<Lifecycle>;
  if (stored.status === undefined) return legacyLifecycle(r as Parameters<typeof legacyLifecycle>[0]);
  return {
    status: stored.status,
    approves_at: stored.approves_at ?? null,
    approved_at: stored.approved_at ?? null,
    paid_at: stored.paid_at ?? null,
    voided_at: stored.voided_at ?? null,
    void_reason: stored.void_reason ?? null,
    payout_id: stored.payout_id ?? null,
    ...(typeof stored.held_by === 'string' ? { held_by: stored.held_by } : {}),
  };
}

/**
 * Whether a hold may take this reward now (docs/fraud.md "Holds"): a commission that is pending, or
 * approved in a collecting payout. Clawbacks are not taken on their own: they follow the reward they reverse.
 */
export function holdable(r: Pick<LedgerReward, 'type' | 'status' | 'reverses'>, payoutStatus: PayoutStatus | null): boolean {
  if (r.type !== 'commission' || r.reverses !== undefined) return false;
  if (r.status === 'pending') return true;
  return r.status === 'approved' && payoutStatus !== null && COLLECTING.includes(payoutStatus);
}

export interface Payout {
  id: string;
  member_id: string;
  currency: string;
  /** Cents: the sum of its rewards (clawbacks of paid rewards included, so it may be below zero). */
  amount: number;
  reward_ids: string[];
  status: PayoutStatus;
  /** Unix seconds: the earliest and latest creation times of its rewards. */
  period_start: number | null;
  period_end: number | null;
  paid_at: number | null;
  reference: string | null;
  failure_reason: string | null;
  batch_id: string | null;
  /** Where the money goes, copied from the member when a batch takes the payout. */
  payout_email: string | null;
  member_identifier: string | null;
  member_email: string | null;
  member_name: string | null;
  /** How a batch pays it: `file` or a rail's kind (docs/payouts.md "Paying through a rail"); null until batched. */
  rail?: string | null;
  /** The rail's own word for it (`UNCLAIMED`, `SUCCESS`, `outgoing_payment_sent`, ...), null until the rail said one. */
  rail_status?: string | null;
  /** The rail's id of the item (PayPal payout_item_id, Stripe `tr_…`, Wise transfer id), once the rail gave one. */
  rail_item_id?: string | null;
  /** How many times an unclaimed PayPal payout was re-sent (POST /v1/payouts/{id}/resend/); null before the first. */
  resend_attempt?: number | null;
  /** PayPal's batch id of the latest re-send (`pb_…-r<n>`), which the reconciliation reads too. */
  resend_rail_batch_id?: string | null;
  /** The re-send whose item `rail_item_id` names now (equal to `resend_attempt` once that re-send was stored). */
  resend_sent_attempt?: number | null;
  /** Where the rail sends it: the payout email (PayPal, Wise) or the connected account `acct_…` (Stripe). */
  rail_destination?: string | null;
  created_at: number;
  updated_at: number;
  version: number;
}
