// Refund rules (shared/domain/clawbacks.ts): proportional commission clawbacks, whole-credit reversals,
// exactly once per refund.
import { planClawbacks, type RefundRecord, type RewardState } from '../../shared/domain/clawbacks';
import fc from 'fast-check';
import { planSettlement } from '../../shared/flows/settlement/plan';
import type { Settlement } from '../../shared/flows/settlement/load';

const commission = (over: Partial<RewardState> = {}): RewardState => ({
  id: 'c1',
  type: 'commission',
  amount: 250,
  currency: 'USD',
  payment_id: 7,
  ...over,
});
const credit = (over: Partial<RewardState> = {}): RewardState => ({
  id: 'k1',
  type: 'credit',
  amount: 500,
  currency: 'USD',
  payment_id: 7,
  ...over,
});
const refund = (id: string, amount: number, at = 100, over: Partial<RefundRecord> = {}): RefundRecord => ({
  id,
  payment_id: 7,
  amount,
  refunded_at: at,
  ...over,
});
const payments = [{ id: 7, amount: 1000 }];

describe('commission clawbacks', () => {
  it('a full refund takes back the whole reward as one negative reward naming the refund', () => {
    expect(planClawbacks([commission()], payments, [refund('r1', 1000)])).toEqual({
      clawbacks: [{ type: 'commission', amount: -250, currency: 'USD', payment_id: 7, reverses: 'c1', refund_id: 'r1' }],
      creditReversals: [],
    });
  });

  it('a partial refund takes back a proportional share (gross_refund / payment amount)', () => {
    expect(planClawbacks([commission()], payments, [refund('r1', 400)]).clawbacks).toEqual([
      expect.objectContaining({ amount: -100, refund_id: 'r1' }),
    ]);
  });

  it('plans nothing for a refund already answered, and only the new share for a later one', () => {
    const existing = [commission(), commission({ id: 'x1', amount: -100, reverses: 'c1', refund_id: 'r1' })];
    expect(planClawbacks(existing, payments, [refund('r1', 400)]).clawbacks).toEqual([]);
    expect(planClawbacks(existing, payments, [refund('r1', 400), refund('r2', 200, 200)]).clawbacks).toEqual([
      expect.objectContaining({ amount: -50, refund_id: 'r2' }),
    ]);
  });

  it('settles rounding when the payment is refunded in full: the reward nets to zero', () => {
    const thirds = [refund('r1', 333, 1), refund('r2', 333, 2), refund('r3', 334, 3)];
    const plan = planClawbacks([commission({ amount: 100 })], payments, thirds);
    expect(plan.clawbacks.map((c) => c.amount)).toEqual([-33, -33, -34]);
    expect(plan.clawbacks.reduce((a, c) => a + c.amount, 0)).toBe(-100);
  });

  it('never takes back more than the reward, and ignores duplicate refund records and other payments', () => {
    const plan = planClawbacks([commission()], payments, [
      refund('r1', 1000),
      refund('r1', 1000),
      refund('r9', 1000, 5, { payment_id: 8 }),
    ]);
    expect(plan.clawbacks).toHaveLength(1);
    expect(plan.clawbacks[0]?.amount).toBe(-250);
    const capped = planClawbacks([commission(), commission({ id: 'x', amount: -240, reverses: 'c1', refund_id: 'r0' })], payments, [
      refund('r0', 960),
      refund('r1', 400, 200),
    ]);
    expect(capped.clawbacks.map((c) => c.amount)).toEqual([-10]);
  });

  it('never claws back a clawback', () => {
    expect(
      planClawbacks([commission({ amount: -250, reverses: 'c0', refund_id: 'r0' })], payments, [refund('r1', 1000)]).clawbacks,
    ).toEqual([]);
  });
});

describe('credit reversals', () => {
  it('reverses a credit once its payment is refunded in full, naming the refund that completed it', () => {
    expect(planClawbacks([credit()], payments, [refund('r1', 600, 1), refund('r2', 400, 2)]).creditReversals).toEqual([
      { reward_id: 'k1', payment_id: 7, refund_id: 'r2' },
    ]);
    expect(planClawbacks([credit()], payments, [refund('r1', 10, 1, { refund_type: 'full' })]).creditReversals).toHaveLength(1);
  });

  it('leaves a credit alone on a partial refund, and once reversed or noted', () => {
    expect(planClawbacks([credit()], payments, [refund('r1', 600)]).creditReversals).toEqual([]);
    expect(planClawbacks([credit({ reversed_at: 5 })], payments, [refund('r1', 1000)]).creditReversals).toEqual([]);
    expect(planClawbacks([credit({ note: 'billed' })], payments, [refund('r1', 1000)]).creditReversals).toEqual([]);
    expect(planClawbacks([credit()], payments, [refund('r1', 1000)]).clawbacks).toEqual([]);
  });
});

describe('refunds in pieces (issue 11, item 4)', () => {
  it('a final refund whose share rounds to zero still settles the reward to zero', () => {
    // 940 takes back 9 of 10; 20 and 40 round to 0 each: without the settlement a cent stayed.
    const earned = commission({ amount: 10 });
    const first = planClawbacks([earned], payments, [refund('r1', 940, 1)]).clawbacks;
    expect(first.map((c) => c.amount)).toEqual([-9]);
    const rewards: RewardState[] = [earned, ...first.map((c, i) => ({ ...c, id: `x${i}` }))];
    expect(planClawbacks(rewards, payments, [refund('r1', 940, 1), refund('r2', 20, 2)]).clawbacks).toEqual([]);
    const last = planClawbacks(rewards, payments, [refund('r1', 940, 1), refund('r2', 20, 2), refund('r3', 40, 3)]).clawbacks;
    expect(last).toEqual([{ type: 'commission', amount: -1, currency: 'USD', payment_id: 7, reverses: 'c1', refund_id: 'r3' }]);
  });

  it('property: any split of a full refund, evaluated at any points, claws back exactly the whole reward, once per refund', () => {
    // Pieces of every size (many tiny ones, whose shares round to zero); the payment is their sum.
    const scenario = fc
      .record({
        pieces: fc.array(fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 100_000 })), { minLength: 1, maxLength: 20 }),
        reward: fc.integer({ min: 1, max: 5_000 }),
        evaluateAfter: fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
      })
      .map((s) => ({ ...s, gross: s.pieces.reduce((a, p) => a + p, 0) }));
    fc.assert(
      fc.property(scenario, ({ gross, reward, pieces, evaluateAfter }) => {
        const pays = [{ id: 7, amount: gross }];
        let rewards: RewardState[] = [commission({ amount: reward })];
        const seen: RefundRecord[] = [];
        const evaluate = () => {
          const plan = planClawbacks(rewards, pays, seen);
          rewards = [...rewards, ...plan.clawbacks.map((c, i) => ({ ...c, id: `x${rewards.length + i}` }))];
          const clawed = -rewards.filter((r) => r.amount < 0).reduce((a, r) => a + r.amount, 0);
          expect(clawed).toBeLessThanOrEqual(reward);
          for (const c of plan.clawbacks) expect(c.amount).toBeLessThan(0);
        };
        pieces.forEach((amount, i) => {
          seen.push(refund(`r${i}`, amount, i + 1));
          if (evaluateAfter[i] || i === pieces.length - 1) evaluate();
        });
        const clawbacks = rewards.filter((r) => r.amount < 0);
        expect(clawbacks.reduce((a, r) => a - r.amount, 0)).toBe(reward);
        expect(new Set(clawbacks.map((c) => c.refund_id)).size).toBe(clawbacks.length);
        // A replay of the same refunds plans nothing more.
        expect(planClawbacks(rewards, pays, seen).clawbacks).toEqual([]);
      }),
      { numRuns: 500 },
    );
  });
});

describe('planSettlement (shared/flows/settlement/plan.ts): the rewards, clawbacks and reports of one evaluation, pure', () => {
  const referral = {
    id: 'r1',
    member_id: 'm1',
    user_identifier: 'u',
    created_at: 0,
    campaign_id: 'c1',
    coupon_code: null,
    converted_at: 50,
    reward_type: 'commission' as const,
    reward_amount: 250,
    reward_threshold: 0,
    commission_months: null,
    currency: 'USD',
    reward_percent: null,
    hold_days: 30,
    approval: 'auto' as const,
    rewards: [],
    rewards_completed: false,
    referred_discount: null,
    subscription: { id: 9, status: 'active' },
  } as unknown as Settlement['referral'];
  const loaded = (over: Partial<Settlement> = {}): Settlement => ({
    accountId: 'a1',
    referral,
    member: null,
    payments: [{ id: 7, subscription_id: 9, order_id: null, amount: 1000, currency: 'USD', paid_at: 100, status: 'paid' }],
    refunds: [],
    unreported: [],
    paymentItems: [],
    ...over,
  });
  let n = 0;
  const newId = () => `id${++n}`;

  it('plans the new rewards as stored (ids, lifecycle) and a clawback of a part refund against them', () => {
    n = 0;
    const plan = planSettlement(loaded({ refunds: [refund('rf1', 400, 120)] }), { now: 200, newId });
    expect(plan.rewards).toEqual([
      {
        id: 'id1',
        type: 'commission',
        amount: 250,
        currency: 'USD',
        created_at: 200,
        payment_id: 7,
        status: 'pending',
        approves_at: 200 + 30 * 86_400,
      },
    ]);
    expect(plan.clawbacks).toEqual([
      { type: 'commission', amount: -100, currency: 'USD', payment_id: 7, reverses: 'id1', refund_id: 'rf1' },
    ]);
    expect(plan.completed).toBe(false);
  });

  it('a replay plans nothing new, and the early payments are the report deltas', () => {
    const unreported = [{ key: { pk: 'p', sk: 's' }, metric: 'revenue' as const, at: 100, amount: 1000, currency: 'USD' }];
    const stored = {
      ...referral,
      rewards: [{ id: 'x', type: 'commission' as const, amount: 250, currency: 'USD', created_at: 150, payment_id: 7 }],
    };
    const plan = planSettlement(loaded({ referral: stored, unreported }), { now: 200, newId });
    expect({ rewards: plan.rewards, clawbacks: plan.clawbacks, reversals: plan.creditReversals, reports: plan.reports }).toEqual({
      rewards: [],
      clawbacks: [],
      reversals: [],
      reports: unreported,
    });
  });
});
