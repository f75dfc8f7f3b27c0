// Reward rules (API-CONTRACT "Rewards", "Campaigns"): which rewards a referral has earned from the
// payments of the subscription it converted to. Pure: the caller loads the referral's terms, the
// subscription's payments and the rewards already stored, and writes whatever this plans (one reward per
// (referral, payment), enforced again by the store).
//
// Rules:
// - No campaign (`reward_type` null): never any reward; the referral is complete at once.
// - Counted payments: status `paid` in the referral's currency (`terms.currency`). Payments in another
//   currency are ignored (there is no FX conversion); `failed` ones are ignored; a `refunded` payment is
//   not counted, and a payment id that has any `refunded` record is not counted even if a `paid` record
//   of it is also given. Order: `paid_at`, then `id`; an id given twice is counted once (its earliest
//   record).
// - Threshold: a running total of the counted amounts; the first counted payment at which the total
//   reaches `reward_threshold` (>=) is the trigger. With threshold 0 that is the first counted payment.
// - credit: exactly one reward over the referral's life, for the trigger payment. When `existing` is
//   non-empty there is nothing more to plan. completed = a reward exists (stored or planned now), or the
//   subscription was deleted before any payment reached the threshold (then with no reward).
// - commission: the period starts at the first counted payment's `paid_at` and ends (exclusive) at
//   `addMonthsUtc(start, commission_months)`; `commission_months` null = the life of the subscription.
//   Every counted payment from the trigger on with `paid_at` < end earns one reward, unless `existing`
//   already has its payment id. completed = the subscription is deleted, or (commission_months is set,
//   there is a counted payment, and `now` >= end).
// - Each reward is `reward_amount` in `terms.currency`, and never two rewards for one payment id.
// - `rewards` lists only the new rewards, in payment order.
import { daysInMonth } from './billing';

export interface PaymentRecord {
  id: number;
  /** Cents. */
  amount: number;
  currency: string;
  /** Unix seconds. */
  paid_at: number;
  status: 'paid' | 'failed' | 'refunded';
}

export interface RewardTerms {
  reward_type: 'credit' | 'commission' | null;
  /** Cents. */
  reward_amount: number;
  /** Cents, in `currency`. */
  reward_threshold: number;
  commission_months: number | null;
  currency: string | null;
}

export interface PlannedReward {
  payment_id: number;
  type: 'credit' | 'commission';
  amount: number;
  currency: string;
}

export interface RewardPlan {
  /** New rewards only, in payment order. */
  rewards: PlannedReward[];
  completed: boolean;
}

export function planRewards(
  terms: RewardTerms,
  payments: PaymentRecord[],
  existing: { payment_id: number }[],
  opts: { subscriptionDeleted: boolean; now: number },
): RewardPlan {
  const type = terms.reward_type;
  if (type === null) return { rewards: [], completed: true };
  const currency = terms.currency;
  const counted = currency === null ? [] : countedPayments(payments, currency);
  const trigger = triggerIndex(counted, terms.reward_threshold);
  const reward = (payment: PaymentRecord): PlannedReward => ({
    payment_id: payment.id,
    type,
    amount: terms.reward_amount,
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
      if (rewarded.has(payment.id)) continue;
      rewarded.add(payment.id);
      rewards.push(reward(payment));
    }
  }
  const periodOver = terms.commission_months !== null && first !== undefined && opts.now >= end;
  return { rewards, completed: opts.subscriptionDeleted || periodOver };
}

/** Paid payments in `currency`, refunded ids left out, in (paid_at, id) order, each id once. */
function countedPayments(payments: PaymentRecord[], currency: string): PaymentRecord[] {
  const refunded = new Set(payments.filter((p) => p.status === 'refunded').map((p) => p.id));
  const sorted = payments
    .filter((p) => p.status === 'paid' && p.currency === currency && !refunded.has(p.id))
    .sort((a, b) => a.paid_at - b.paid_at || a.id - b.id);
  const seen = new Set<number>();
  return sorted.filter((p) => {
    if (seen.has(p.id)) return false;
    seen.add(p.id);
    return true;
  });
}

/** Index of the first payment at which the running total reaches `threshold`; null when none does. */
function triggerIndex(counted: PaymentRecord[], threshold: number): number | null {
  let total = 0;
  for (let i = 0; i < counted.length; i++) {
    total += (counted[i] as PaymentRecord).amount;
    if (total >= threshold) return i;
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
