// Refund rules (shared/domain/clawbacks.ts): proportional commission clawbacks, whole-credit reversals,
// exactly once per refund.
import { planClawbacks, type RefundRecord, type RewardState } from '../../shared/domain/clawbacks';

const commission = (over: Partial<RewardState> = {}): RewardState => ({ id: 'c1', type: 'commission', amount: 250, currency: 'USD', payment_id: 7, ...over });
const credit = (over: Partial<RewardState> = {}): RewardState => ({ id: 'k1', type: 'credit', amount: 500, currency: 'USD', payment_id: 7, ...over });
const refund = (id: string, amount: number, at = 100, over: Partial<RefundRecord> = {}): RefundRecord => ({ id, payment_id: 7, amount, refunded_at: at, ...over });
const payments = [{ id: 7, amount: 1000 }];

describe('commission clawbacks', () => {
  it('a full refund takes back the whole reward as one negative reward naming the refund', () => {
    expect(planClawbacks([commission()], payments, [refund('r1', 1000)])).toEqual({
      clawbacks: [{ type: 'commission', amount: -250, currency: 'USD', payment_id: 7, reverses: 'c1', refund_id: 'r1' }],
      creditReversals: [],
    });
  });

  it('a partial refund takes back a proportional share (gross_refund / payment amount)', () => {
    expect(planClawbacks([commission()], payments, [refund('r1', 400)]).clawbacks).toEqual([expect.objectContaining({ amount: -100, refund_id: 'r1' })]);
  });

  it('plans nothing for a refund already answered, and only the new share for a later one', () => {
    const existing = [commission(), commission({ id: 'x1', amount: -100, reverses: 'c1', refund_id: 'r1' })];
    expect(planClawbacks(existing, payments, [refund('r1', 400)]).clawbacks).toEqual([]);
    expect(planClawbacks(existing, payments, [refund('r1', 400), refund('r2', 200, 200)]).clawbacks).toEqual([expect.objectContaining({ amount: -50, refund_id: 'r2' })]);
  });

  it('settles rounding when the payment is refunded in full: the reward nets to zero', () => {
    const thirds = [refund('r1', 333, 1), refund('r2', 333, 2), refund('r3', 334, 3)];
    const plan = planClawbacks([commission({ amount: 100 })], payments, thirds);
    expect(plan.clawbacks.map((c) => c.amount)).toEqual([-33, -33, -34]);
    expect(plan.clawbacks.reduce((a, c) => a + c.amount, 0)).toBe(-100);
  });

  it('never takes back more than the reward, and ignores duplicate refund records and other payments', () => {
    const plan = planClawbacks([commission()], payments, [refund('r1', 1000), refund('r1', 1000), refund('r9', 1000, 5, { payment_id: 8 })]);
    expect(plan.clawbacks).toHaveLength(1);
    expect(plan.clawbacks[0]?.amount).toBe(-250);
    const capped = planClawbacks([commission(), commission({ id: 'x', amount: -240, reverses: 'c1', refund_id: 'r0' })], payments, [refund('r0', 960), refund('r1', 400, 200)]);
    expect(capped.clawbacks.map((c) => c.amount)).toEqual([-10]);
  });

  it('never claws back a clawback', () => {
    expect(planClawbacks([commission({ amount: -250, reverses: 'c0', refund_id: 'r0' })], payments, [refund('r1', 1000)]).clawbacks).toEqual([]);
  });
});

describe('credit reversals', () => {
  it('reverses a credit once its payment is refunded in full, naming the refund that completed it', () => {
    expect(planClawbacks([credit()], payments, [refund('r1', 600, 1), refund('r2', 400, 2)]).creditReversals).toEqual([{ reward_id: 'k1', payment_id: 7, refund_id: 'r2' }]);
    expect(planClawbacks([credit()], payments, [refund('r1', 10, 1, { refund_type: 'full' })]).creditReversals).toHaveLength(1);
  });

  it('leaves a credit alone on a partial refund, and once reversed or noted', () => {
    expect(planClawbacks([credit()], payments, [refund('r1', 600)]).creditReversals).toEqual([]);
    expect(planClawbacks([credit({ reversed_at: 5 })], payments, [refund('r1', 1000)]).creditReversals).toEqual([]);
    expect(planClawbacks([credit({ note: 'billed' })], payments, [refund('r1', 1000)]).creditReversals).toEqual([]);
    expect(planClawbacks([credit()], payments, [refund('r1', 1000)]).clawbacks).toEqual([]);
  });
});
