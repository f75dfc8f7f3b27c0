// Reward rules (docs/design/api-contract.md "Rewards", "Campaigns"): which rewards a referral has earned from the
// payments of the subscription it converted to. Pure: the caller loads the referral's terms, the
// subscription's payments and the rewards already stored, and writes whatever this plans (one reward per
// (referral, payment), enforced again by the store).
//
// Rules:
// - No campaign (`reward_type` null): never any reward; the referral is complete at once.
// - Counted payments: status `paid` or `refunded` in the referral's currency (`terms.currency`). Payments
//   in another currency are ignored (there is no FX conversion); `failed` ones are ignored. Order:
//   `paid_at`, then `id`; an id given twice is counted once (its earliest record).
// - Refunds reduce a payment, they do not erase it: its net amount is its amount less what was refunded
//   (the refund records given in `opts.refunds`, or the payment's own `refund_amount`; a refund of type
//   `full`, or a `refunded` record with no amount known, refunds it whole). A payment id with any
//   `refunded` record is refunded even if a `paid` record of it is also given.
// - Threshold: a running total of the counted net amounts; the first counted payment not refunded in
//   full at which the total reaches `reward_threshold` (>=) is the trigger. With threshold 0 that is the
//   first counted payment not refunded in full. A payment refunded in full never earns a reward.
// - credit: exactly one reward over the referral's life, for the trigger payment. When `existing` is
//   non-empty there is nothing more to plan. completed = a reward exists (stored or planned now), or the
//   subscription was deleted before any payment reached the threshold (then with no reward).
// - commission: the period starts at the first counted payment's `paid_at`, whatever its refunds, and ends
//   (exclusive) at `addMonthsUtc(start, commission_months)`; `commission_months` null = the life of the
//   subscription. Every counted payment from the trigger on with `paid_at` < end, not refunded in full,
//   earns one reward (a partial refund is taken back by a clawback: domain/clawbacks.ts), unless `existing`
//   already has its payment id. completed = the subscription is deleted, or (commission_months is set,
//   there is a counted payment, and `now` >= end).
// - Each reward is `reward_amount` in `terms.currency`, or for a percentage commission (`reward_percent`)
//   that share of the payment's amount excluding tax, rounded half up to the cent (to the whole unit in a
//   zero-decimal currency such as JPY: domain/currency.ts; a fixed amount too) (docs/rewards.md); never two
//   rewards for one payment id. A percentage that comes to 0.00 (a free payment) earns no reward.
// - A payment above the sanity limit (domain/money-limits.ts maxPaymentCents) counts like any other, but
//   the reward it earns is `held` for an operator's review.
// - `rewards` lists only the new rewards, in payment order.
import { compareProviderIds, type ProviderId, type Reward } from './models';
import { daysInMonth } from './billing';
import { DEFAULT_REWARD_RULES, rewardAmount, type RewardRule } from './commissions';
import { initialLifecycle } from './lifecycle';
import { maxPaymentCents, paymentAboveMaximum } from './money-limits';

export interface PaymentRecord {
  id: ProviderId;
  /** Cents. */
  amount: number;
  currency: string;
  /** Unix seconds. */
  paid_at: number;
  status: 'paid' | 'failed' | 'refunded';
  /** Cents refunded (the latest refund alert's amount, for a `refunded` record). */
  refund_amount?: number;
  refund_type?: string;
  /** Cents of tax included in `amount` (percentage commissions are computed on amount - tax). */
  tax?: number;
}

/** One refund of a payment (one per refund alert). */
export interface RefundAmount {
  payment_id: ProviderId;
  /** Cents. */
  amount: number;
  refund_type?: string;
}

export interface RewardTerms {
  reward_type: 'credit' | 'commission' | null;
  /** Cents. */
  reward_amount: number;
  /** Cents, in `currency`. */
  reward_threshold: number;
  commission_months: number | null;
  currency: string | null;
  /** Hundredths of a percent of each payment excluding tax: a percentage commission. */
  reward_percent?: number | null;
}

export interface PlannedReward {
  payment_id: ProviderId;
  type: 'credit' | 'commission';
  amount: number;
  currency: string;
  /**
   * Its payment is above the sanity limit (domain/money-limits.ts maxPaymentCents): the reward is held
   * for review (pending, never approved or applied by itself) and this is its note.
   */
  held?: string;
}

export interface RewardPlan {
  /** New rewards only, in payment order. */
  rewards: PlannedReward[];
  completed: boolean;
}

export function planRewards(
  terms: RewardTerms,
  payments: PaymentRecord[],
  existing: { payment_id: ProviderId }[],
  opts: {
    subscriptionDeleted: boolean;
    now: number;
    refunds?: RefundAmount[];
    /** How an amount is computed (shared/domain/commissions.ts); the default: percentage, else fixed. */
    rules?: readonly RewardRule[];
    /** The referring member, for rules that look at it. */
    member?: { conversions: number } | null;
  },
): RewardPlan {
  const type = terms.reward_type;
  if (type === null) return { rewards: [], completed: true };
  const currency = terms.currency;
  const counted = currency === null ? [] : countedPayments(payments, currency, opts.refunds ?? []);
  const trigger = triggerIndex(counted, terms.reward_threshold);
  const rules = opts.rules ?? DEFAULT_REWARD_RULES;
  const reward = (payment: CountedPayment): PlannedReward => ({
    ...(payment.amount > maxPaymentCents(currency as string)
      ? { held: paymentAboveMaximum(payment.id, payment.amount, currency as string) }
      : {}),
    payment_id: payment.id,
    type,
    // Rounded to what the currency can pay (whole yen in JPY: domain/currency.ts) by the rule that computes it.
    amount: rewardAmount(rules, { type, terms, currency: currency as string, payment, member: opts.member ?? null }),
    currency: currency as string,
  });

  if (type === 'credit') {
    if (existing.length > 0) return { rewards: [], completed: true };
    const triggering = trigger === null ? undefined : counted[trigger];
    if (triggering === undefined) return { rewards: [], completed: opts.subscriptionDeleted };
    return { rewards: [reward(triggering)], completed: true };
  }

  // commission
  const first = counted[0];
  const end =
    first === undefined || terms.commission_months === null
      ? Number.POSITIVE_INFINITY
      : addMonthsUtc(first.paid_at, terms.commission_months);
  const rewarded = new Set(existing.map((r) => r.payment_id));
  const rewards: PlannedReward[] = [];
  if (trigger !== null) {
    for (const payment of counted.slice(trigger)) {
      if (payment.paid_at >= end) break;
      if (payment.voided || rewarded.has(payment.id)) continue;
      const planned = reward(payment);
      if (planned.amount <= 0) continue;
      rewarded.add(payment.id);
      rewards.push(planned);
    }
  }
  const periodOver = terms.commission_months !== null && first !== undefined && opts.now >= end;
  return { rewards, completed: opts.subscriptionDeleted || periodOver };
}

type CountedPayment = PaymentRecord & {
  /** Cents: the amount less what was refunded. */
  net: number;
  /** Refunded whole: it never earns a reward (a free payment that was not refunded still may). */
  voided: boolean;
};

/** Paid (or refunded) payments in `currency`, in (paid_at, id) order, each id once, with their net amounts. */
function countedPayments(payments: PaymentRecord[], currency: string, refunds: RefundAmount[]): CountedPayment[] {
  const refundedRecords = payments.filter((p) => p.status === 'refunded');
  const sorted = payments
    .filter((p) => (p.status === 'paid' || p.status === 'refunded') && p.currency === currency)
    .sort((a, b) => a.paid_at - b.paid_at || compareProviderIds(a.id, b.id));
  const seen = new Set<ProviderId>();
  const out: CountedPayment[] = [];
  for (const p of sorted) {
    if (seen.has(p.id)) continue;
    seen.add(p.id);
    const records = refundedRecords.filter((r) => r.id === p.id);
    const mine = refunds.filter((r) => r.payment_id === p.id && r.amount > 0);
    const full = records.some((r) => r.refund_type === 'full') || mine.some((r) => r.refund_type === 'full');
    const known = Math.max(
      mine.reduce((a, r) => a + r.amount, 0),
      ...records.map((r) => r.refund_amount ?? 0),
    );
    // A refunded record that says nothing of its amount counts as refunded whole (the safe side).
    const whole = full || (records.length > 0 && known <= 0) || (known > 0 && known >= p.amount);
    const refunded = whole ? p.amount : known;
    out.push({ ...p, net: p.amount - refunded, voided: whole });
  }
  return out;
}

/** Index of the first payment not refunded whole at which the running net total reaches `threshold`; null when none does. */
function triggerIndex(counted: CountedPayment[], threshold: number): number | null {
  let total = 0;
  for (let i = 0; i < counted.length; i++) {
    const payment = counted[i] as CountedPayment;
    total += payment.net;
    if (!payment.voided && total >= threshold) return i;
  }
  return null;
}

/**
 * `months` calendar months after `unixSeconds`, in UTC, keeping the time of day and clamping the day to
 * the target month's length: Jan 31 + 1 month = Feb 28 (Feb 29 in a leap year). `months` may be 0 or
 * negative; it must be an integer.
 */
export function addMonthsUtc(unixSeconds: number, months: number): number {
  if (!Number.isInteger(months)) throw new RangeError(`months must be an integer, got ${months}`);
  const date = new Date(unixSeconds * 1000);
  if (Number.isNaN(date.getTime())) throw new RangeError(`invalid unix time ${unixSeconds}`);
  const target = date.getUTCFullYear() * 12 + date.getUTCMonth() + months;
  const year = Math.floor(target / 12);
  const month = target - year * 12; // 0..11
  const day = Math.min(date.getUTCDate(), daysInMonth(year, month + 1));
  const result = new Date(
    Date.UTC(2000, month, day, date.getUTCHours(), date.getUTCMinutes(), date.getUTCSeconds(), date.getUTCMilliseconds()),
  );
  result.setUTCFullYear(year, month, day);
  return result.getTime() / 1000;
}

/**
 * The reward as it is stored inside its referral when `planned` is written at `now`: every reward starts
 * pending (domain/lifecycle.ts) and a commission carries its approval time. Held for review (its payment is
 * above the sanity limit): no approval time, so only an operator approves it (or voids it); a credit with a
 * note is never applied (shared/flows/settlement/act.ts); and the member is not told of it (no reward
 * notice is queued).
 *
 * A referral under a fraud rule's hold (`fraud_hold`, docs/fraud.md "Holds"): a new commission is `held` by
 * that flag, keeping the approval time it would have had (a release restores it); credits are never held.
 */
export function newReward(
  planned: PlannedReward,
  id: string,
  now: number,
  terms: { hold_days?: number; approval?: 'auto' | 'manual'; fraud_hold?: string },
): Reward & { email_queued?: true } {
  const fraudHeld = planned.type === 'commission' && typeof terms.fraud_hold === 'string';
  return {
    id,
    type: planned.type,
    amount: planned.amount,
    currency: planned.currency,
    created_at: now,
    payment_id: planned.payment_id,
    ...definedOnly({ ...initialLifecycle(planned.type, now, terms), ...(planned.held !== undefined ? { approves_at: null } : {}) }),
    ...(fraudHeld ? { status: 'held' as const, held_by: terms.fraud_hold } : {}),
    ...(planned.held !== undefined ? { note: planned.held, email_queued: true as const } : {}),
  };
}

/** The non-null fields of `o` (a stored reward carries no null lifecycle fields). */
export function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}
