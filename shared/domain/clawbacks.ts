// Refund rules (issue 6): what a refunded payment takes back from the rewards it earned. Pure: the
// caller loads the referral's rewards, the subscription's payments and the refunds recorded for them
// (one per refund alert), and writes what this plans; every planned item names the refund it answers,
// so replaying the same refunds plans nothing new (exactly once per refund alert).
//
// - Commission: each refund of a payment that earned a commission reward takes back a share of that
//   reward proportional to the refund: round(reward * refund / payment amount), as a negative reward
//   (a clawback: its own id, the refunded payment's payment_id, `reverses` the reward, `refund_id` the
//   refund alert's id). The clawbacks of one reward never exceed it; once the payment's refunds add up
//   to its whole amount, the clawbacks add up to the whole reward exactly (rounding is settled there,
//   also when the last refund's own share rounds to zero).
// - Credit: a credit is given once and cannot be taken back in part. When the refunds of the payment
//   that triggered it add up to its whole amount (or one says `refund_type` full), the credit is to be
//   reversed: its modifier deleted at the provider while unbilled, then a clawback of the whole credit
//   is recorded and the credit marked reversed. A partial refund leaves the credit alone. A credit the
//   provider has already billed stays (noted on the reward); so does one already reversed or noted.
// - Rewards with an amount <= 0 (clawbacks themselves) are never clawed back.

import type { ProviderId } from './models';
import { roundToMinorUnit } from './currency';

export interface RefundRecord {
  /** The refund alert's alert_id. */
  id: string;
  payment_id: ProviderId;
  /** Cents refunded (gross_refund), in the payment's currency. */
  amount: number;
  /** Unix seconds (the alert's event_time). */
  refunded_at: number;
  refund_type?: string;
}

export interface RewardState {
  id: string;
  type: 'credit' | 'commission';
  amount: number;
  currency: string;
  payment_id: ProviderId;
  reverses?: string;
  refund_id?: string;
  reversed_at?: number;
  note?: string;
}

export interface PlannedClawback {
  type: 'credit' | 'commission';
  /** Negative cents. */
  amount: number;
  currency: string;
  payment_id: ProviderId;
  reverses: string;
  refund_id: string;
}

export interface CreditReversal {
  reward_id: string;
  payment_id: ProviderId;
  /** The refund that completed the payment's refund. */
  refund_id: string;
}

export interface ClawbackPlan {
  clawbacks: PlannedClawback[];
  creditReversals: CreditReversal[];
}

const byTime = (a: RefundRecord, b: RefundRecord) => a.refunded_at - b.refunded_at || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

export function planClawbacks(
  rewards: RewardState[],
  payments: { id: ProviderId; amount: number }[],
  refunds: RefundRecord[],
): ClawbackPlan {
  const plan: ClawbackPlan = { clawbacks: [], creditReversals: [] };
  const refundsOf = (paymentId: ProviderId) => {
    const seen = new Set<string>();
    return refunds.filter((r) => r.payment_id === paymentId && r.amount > 0 && !seen.has(r.id) && seen.add(r.id)).sort(byTime);
  };
  for (const reward of rewards) {
    if (reward.amount <= 0) continue;
    const mine = refundsOf(reward.payment_id);
    if (mine.length === 0) continue;
    const gross = payments.find((p) => p.id === reward.payment_id)?.amount ?? 0;
    const refunded = mine.reduce((a, r) => a + r.amount, 0);
    const whole = gross <= 0 || refunded >= gross || mine.some((r) => r.refund_type === 'full');

    if (reward.type === 'credit') {
      if (reward.reversed_at !== undefined || reward.note !== undefined) continue;
      if (whole)
        plan.creditReversals.push({
          reward_id: reward.id,
          payment_id: reward.payment_id,
          refund_id: (mine[mine.length - 1] as RefundRecord).id,
        });
      continue;
    }

    const existing = rewards.filter((w) => w.reverses === reward.id && w.amount < 0);
    const answered = new Set(existing.map((w) => w.refund_id));
    let clawed = existing.reduce((a, w) => a - w.amount, 0);
    const planned: PlannedClawback[] = [];
    for (const refund of mine) {
      if (answered.has(refund.id)) continue;
      // Rounded to the currency's unit (whole yen in JPY: domain/currency.ts); the last one settles the rest.
      const share = gross <= 0 ? reward.amount : roundToMinorUnit((reward.amount * refund.amount) / gross, reward.currency);
      const amount = Math.min(share, reward.amount - clawed);
      if (amount <= 0) continue;
      clawed += amount;
      planned.push({
        type: 'commission',
        amount: -amount,
        currency: reward.currency,
        payment_id: reward.payment_id,
        reverses: reward.id,
        refund_id: refund.id,
      });
    }
    // The whole payment refunded: the last new clawback settles the rounding so the reward nets to zero.
    // When no refund planned one (the final shares rounded to zero), the settlement names the latest
    // refund not answered yet, so it is still recorded exactly once.
    const last = planned[planned.length - 1];
    if (whole && clawed < reward.amount) {
      const settling = last ? null : [...mine].reverse().find((r) => !answered.has(r.id));
      if (last) last.amount -= reward.amount - clawed;
      else if (settling)
        planned.push({
          type: 'commission',
          amount: clawed - reward.amount,
          currency: reward.currency,
          payment_id: reward.payment_id,
          reverses: reward.id,
          refund_id: settling.id,
        });
    }
    plan.clawbacks.push(...planned);
  }
  return plan;
}
