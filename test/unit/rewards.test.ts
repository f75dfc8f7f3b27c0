// Reward rules (docs/design/api-contract.md "Rewards"): threshold, credit once, commission per payment within
// commission_months, completion, and the payments that do not count.
import { addMonthsUtc, planRewards, type PaymentRecord, type RewardTerms } from '../../shared/domain/rewards';
import { percentOf, type RewardRule } from '../../shared/domain/commissions';
import { minorUnitCents } from '../../shared/domain/currency';
import { REWARD_RULES } from '../../shared/flows/settlement/plan';

const DAY = 86_400;
/** Unix seconds of a UTC date-time. */
const at = (iso: string): number => Date.parse(`${iso}Z`) / 1000;

const T0 = at('2024-01-31T10:00:00');

function paid(id: number, amount: number, paid_at: number, currency = 'USD'): PaymentRecord {
  return { id, amount, currency, paid_at, status: 'paid' };
}

const credit = (over: Partial<RewardTerms> = {}): RewardTerms => ({
  reward_type: 'credit',
  reward_amount: 1500,
  reward_threshold: 0,
  commission_months: null,
  currency: 'USD',
  ...over,
});

const commission = (over: Partial<RewardTerms> = {}): RewardTerms => ({
  reward_type: 'commission',
  reward_amount: 250,
  reward_threshold: 0,
  commission_months: 3,
  currency: 'USD',
  ...over,
});

const live = (now = T0 + 5 * DAY) => ({ subscriptionDeleted: false, now });
const deleted = (now = T0 + 5 * DAY) => ({ subscriptionDeleted: true, now });
const ids = (plan: { rewards: { payment_id: number | string }[] }) => plan.rewards.map((r) => r.payment_id);

describe('addMonthsUtc', () => {
  it.each<[string, number, string]>([
    ['2024-01-15T10:20:30', 1, '2024-02-15T10:20:30'],
    ['2024-01-31T10:00:00', 1, '2024-02-29T10:00:00'], // leap year clamp
    ['2023-01-31T10:00:00', 1, '2023-02-28T10:00:00'],
    ['2024-03-31T00:00:00', 1, '2024-04-30T00:00:00'],
    ['2024-01-31T23:59:59', 3, '2024-04-30T23:59:59'],
    ['2024-08-31T12:00:00', 6, '2025-02-28T12:00:00'],
    ['2024-11-30T00:00:00', 2, '2025-01-30T00:00:00'],
    ['2024-12-15T00:00:00', 1, '2025-01-15T00:00:00'],
    ['2024-02-29T08:00:00', 12, '2025-02-28T08:00:00'],
    ['2024-02-29T08:00:00', 48, '2028-02-29T08:00:00'],
    ['2024-05-31T00:00:00', 0, '2024-05-31T00:00:00'],
    ['2024-03-31T00:00:00', -1, '2024-02-29T00:00:00'],
    ['2024-01-15T00:00:00', -13, '2022-12-15T00:00:00'],
  ])('%s + %d months = %s', (from, months, to) => {
    expect(addMonthsUtc(at(from), months)).toBe(at(to));
  });

  it('does not drift across chained months the way adding days would', () => {
    // Jan 31 + 2 months is Mar 31, not (Jan 31 + 1) + 1 = Mar 29.
    expect(addMonthsUtc(at('2024-01-31T00:00:00'), 2)).toBe(at('2024-03-31T00:00:00'));
  });

  it('rejects a fractional month count', () => {
    expect(() => addMonthsUtc(T0, 1.5)).toThrow(RangeError);
  });
});

describe('planRewards: no campaign', () => {
  it('never rewards and is complete at once', () => {
    const terms: RewardTerms = { reward_type: null, reward_amount: 0, reward_threshold: 0, commission_months: null, currency: null };
    expect(planRewards(terms, [paid(1, 1000, T0)], [], live())).toEqual({ rewards: [], completed: true });
    expect(planRewards(terms, [], [], live())).toEqual({ rewards: [], completed: true });
  });
});

describe('planRewards: threshold', () => {
  it('threshold 0 triggers on the first counted payment', () => {
    const plan = planRewards(credit(), [paid(7, 999, T0)], [], live());
    expect(plan).toEqual({ rewards: [{ payment_id: 7, type: 'credit', amount: 1500, currency: 'USD' }], completed: true });
  });

  it('threshold 0 triggers even on a free (0.00) first payment', () => {
    expect(ids(planRewards(credit(), [paid(7, 0, T0)], [], live()))).toEqual([7]);
  });

  it('nothing until the running total reaches the threshold', () => {
    const terms = credit({ reward_threshold: 3000 });
    expect(planRewards(terms, [paid(1, 1000, T0)], [], live())).toEqual({ rewards: [], completed: false });
    expect(planRewards(terms, [paid(1, 1000, T0), paid(2, 1000, T0 + DAY)], [], live())).toEqual({ rewards: [], completed: false });
  });

  it('the payment that reaches the threshold exactly is the trigger', () => {
    const terms = credit({ reward_threshold: 3000 });
    const payments = [paid(1, 1000, T0), paid(2, 1000, T0 + DAY), paid(3, 1000, T0 + 2 * DAY), paid(4, 1000, T0 + 3 * DAY)];
    expect(ids(planRewards(terms, payments, [], live()))).toEqual([3]);
  });

  it('the payment that crosses the threshold is the trigger', () => {
    const terms = credit({ reward_threshold: 2500 });
    const payments = [paid(1, 1000, T0), paid(2, 1000, T0 + DAY), paid(3, 1000, T0 + 2 * DAY)];
    expect(ids(planRewards(terms, payments, [], live()))).toEqual([3]);
  });

  it('a single payment above the threshold triggers at once', () => {
    expect(ids(planRewards(credit({ reward_threshold: 500 }), [paid(1, 4900, T0)], [], live()))).toEqual([1]);
  });

  it('payments count in paid_at order, then id, whatever order they are given in', () => {
    const terms = credit({ reward_threshold: 2000 });
    const payments = [paid(9, 1000, T0 + 2 * DAY), paid(5, 1000, T0 + DAY), paid(4, 1000, T0 + DAY), paid(8, 1000, T0)];
    // Order: 8 (T0), 4 and 5 (T0+1d, by id), 9. The total reaches 2000 at payment 4.
    expect(ids(planRewards(terms, payments, [], live()))).toEqual([4]);
  });
});

describe('planRewards: credit', () => {
  it('one reward however many payments there are', () => {
    const payments = Array.from({ length: 24 }, (_, i) => paid(100 + i, 1000, T0 + i * 30 * DAY));
    const plan = planRewards(credit(), payments, [], live(T0 + 800 * DAY));
    expect(plan.rewards).toEqual([{ payment_id: 100, type: 'credit', amount: 1500, currency: 'USD' }]);
    expect(plan.completed).toBe(true);
  });

  it('nothing more once a reward exists, even for another payment', () => {
    const payments = [paid(1, 1000, T0), paid(2, 1000, T0 + 30 * DAY)];
    expect(planRewards(credit(), payments, [{ payment_id: 1 }], live())).toEqual({ rewards: [], completed: true });
    expect(planRewards(credit(), payments, [{ payment_id: 999 }], live())).toEqual({ rewards: [], completed: true });
    expect(planRewards(credit(), [], [{ payment_id: 1 }], live())).toEqual({ rewards: [], completed: true });
  });

  it('not complete while waiting for the threshold', () => {
    expect(planRewards(credit({ reward_threshold: 5000 }), [paid(1, 1000, T0)], [], live())).toEqual({ rewards: [], completed: false });
    expect(planRewards(credit(), [], [], live())).toEqual({ rewards: [], completed: false });
  });

  it('deleted before the threshold: complete with no reward', () => {
    expect(planRewards(credit({ reward_threshold: 5000 }), [paid(1, 1000, T0)], [], deleted())).toEqual({ rewards: [], completed: true });
    expect(planRewards(credit(), [], [], deleted())).toEqual({ rewards: [], completed: true });
  });

  it('deleted after the trigger payment was made: the reward is still earned', () => {
    expect(planRewards(credit(), [paid(1, 1000, T0)], [], deleted())).toEqual({
      rewards: [{ payment_id: 1, type: 'credit', amount: 1500, currency: 'USD' }],
      completed: true,
    });
  });

  it('the reward is reward_amount in the referral currency, whatever the payment amount', () => {
    const plan = planRewards(credit({ currency: 'EUR', reward_amount: 2000 }), [paid(3, 99_900, T0, 'EUR')], [], live());
    expect(plan.rewards).toEqual([{ payment_id: 3, type: 'credit', amount: 2000, currency: 'EUR' }]);
  });
});

describe('planRewards: commission', () => {
  it('one reward per qualifying payment', () => {
    const payments = [paid(1, 1000, T0), paid(2, 1000, T0 + 29 * DAY), paid(3, 1000, T0 + 60 * DAY)];
    const plan = planRewards(commission(), payments, [], live(T0 + 61 * DAY));
    expect(plan.rewards).toEqual([
      { payment_id: 1, type: 'commission', amount: 250, currency: 'USD' },
      { payment_id: 2, type: 'commission', amount: 250, currency: 'USD' },
      { payment_id: 3, type: 'commission', amount: 250, currency: 'USD' },
    ]);
    expect(plan.completed).toBe(false);
  });

  it('only the payments from the trigger on earn', () => {
    const payments = [paid(1, 1000, T0), paid(2, 1000, T0 + 29 * DAY), paid(3, 1000, T0 + 60 * DAY)];
    expect(ids(planRewards(commission({ reward_threshold: 2000 }), payments, [], live(T0 + 61 * DAY)))).toEqual([2, 3]);
  });

  it('skips payments already rewarded and plans only the new ones', () => {
    const payments = [paid(1, 1000, T0), paid(2, 1000, T0 + 29 * DAY), paid(3, 1000, T0 + 60 * DAY)];
    const plan = planRewards(commission(), payments, [{ payment_id: 1 }, { payment_id: 2 }], live(T0 + 61 * DAY));
    expect(ids(plan)).toEqual([3]);
    expect(planRewards(commission(), payments, [{ payment_id: 1 }, { payment_id: 2 }, { payment_id: 3 }], live()).rewards).toEqual([]);
  });

  it('the window starts at the first counted payment and ends, exclusive, commission_months later', () => {
    const start = at('2024-01-31T10:00:00');
    const end = at('2024-04-30T10:00:00'); // Jan 31 + 3 months, clamped
    const payments = [
      paid(1, 1000, start),
      paid(2, 1000, at('2024-02-29T10:00:00')),
      paid(3, 1000, at('2024-03-31T10:00:00')),
      paid(4, 1000, end - 1),
      paid(5, 1000, end),
      paid(6, 1000, at('2024-05-31T10:00:00')),
    ];
    expect(ids(planRewards(commission(), payments, [], live(end + DAY)))).toEqual([1, 2, 3, 4]);
  });

  it('clamps the end of a window that starts on a month end (leap and common years)', () => {
    // Jan 31 2023 + 1 month = Feb 28 2023: a payment on Feb 28 at the same time is outside.
    const start = at('2023-01-31T00:00:00');
    const payments = [paid(1, 1000, start), paid(2, 1000, at('2023-02-27T23:59:59')), paid(3, 1000, at('2023-02-28T00:00:00'))];
    expect(ids(planRewards(commission({ commission_months: 1 }), payments, [], live(start)))).toEqual([1, 2]);
    // In 2024 the end is Feb 29, so Feb 28 is inside.
    const start24 = at('2024-01-31T00:00:00');
    const payments24 = [paid(1, 1000, start24), paid(2, 1000, at('2024-02-28T00:00:00')), paid(3, 1000, at('2024-02-29T00:00:00'))];
    expect(ids(planRewards(commission({ commission_months: 1 }), payments24, [], live(start24)))).toEqual([1, 2]);
  });

  it('the window starts at the first counted payment even when the threshold is reached later', () => {
    const payments = [paid(1, 1000, T0), paid(2, 1000, at('2024-03-15T00:00:00')), paid(3, 1000, at('2024-05-15T00:00:00'))];
    // Window Jan 31 .. Apr 30; threshold reached at payment 2; payment 3 is after the window.
    expect(ids(planRewards(commission({ reward_threshold: 2000 }), payments, [], live(at('2024-06-01T00:00:00'))))).toEqual([2]);
  });

  it('a threshold reached only after the window ends earns nothing', () => {
    const payments = [paid(1, 1000, T0), paid(2, 1000, at('2024-06-01T00:00:00'))];
    expect(planRewards(commission({ reward_threshold: 2000 }), payments, [], live(at('2024-06-02T00:00:00')))).toEqual({
      rewards: [],
      completed: true,
    });
  });

  it('completion: not before the end, from the end exactly', () => {
    const end = addMonthsUtc(T0, 3);
    const payments = [paid(1, 1000, T0)];
    expect(planRewards(commission(), payments, [{ payment_id: 1 }], live(end - 1)).completed).toBe(false);
    expect(planRewards(commission(), payments, [{ payment_id: 1 }], live(end)).completed).toBe(true);
    expect(planRewards(commission(), payments, [{ payment_id: 1 }], live(end + 365 * DAY)).completed).toBe(true);
  });

  it('no counted payment yet: the window has not started, so not complete', () => {
    expect(planRewards(commission(), [], [], live(T0 + 1000 * DAY))).toEqual({ rewards: [], completed: false });
  });

  it('commission_months null: for the life of the subscription, complete only when deleted', () => {
    const payments = Array.from({ length: 60 }, (_, i) => paid(i + 1, 1000, addMonthsUtc(T0, i)));
    const plan = planRewards(commission({ commission_months: null }), payments, [], live(addMonthsUtc(T0, 61)));
    expect(ids(plan)).toEqual(payments.map((p) => p.id));
    expect(plan.completed).toBe(false);
    expect(planRewards(commission({ commission_months: null }), payments, [], deleted()).completed).toBe(true);
  });

  it('deleted: complete, and the payments made before still earn', () => {
    const payments = [paid(1, 1000, T0), paid(2, 1000, T0 + 30 * DAY)];
    const plan = planRewards(commission(), payments, [{ payment_id: 1 }], deleted(T0 + 31 * DAY));
    expect(plan).toEqual({ rewards: [{ payment_id: 2, type: 'commission', amount: 250, currency: 'USD' }], completed: true });
    expect(planRewards(commission(), [], [], deleted())).toEqual({ rewards: [], completed: true });
  });
});

describe('planRewards: payments that do not count', () => {
  it('other currencies are ignored: neither toward the threshold nor as a trigger', () => {
    const terms = commission({ reward_threshold: 1500 });
    const payments = [paid(1, 1000, T0, 'EUR'), paid(2, 1000, T0 + DAY), paid(3, 5000, T0 + 2 * DAY, 'GBP'), paid(4, 1000, T0 + 3 * DAY)];
    expect(ids(planRewards(terms, payments, [], live()))).toEqual([4]);
    expect(planRewards(credit(), [paid(1, 1000, T0, 'EUR')], [], live())).toEqual({ rewards: [], completed: false });
  });

  it('the commission window starts at the first payment in the referral currency', () => {
    const payments = [paid(1, 1000, at('2023-01-01T00:00:00'), 'EUR'), paid(2, 1000, T0), paid(3, 1000, T0 + 60 * DAY)];
    expect(ids(planRewards(commission(), payments, [], live(T0 + 61 * DAY)))).toEqual([2, 3]);
  });

  it('failed and refunded payments are ignored', () => {
    const payments: PaymentRecord[] = [
      { id: 1, amount: 5000, currency: 'USD', paid_at: T0, status: 'failed' },
      { id: 2, amount: 5000, currency: 'USD', paid_at: T0 + DAY, status: 'refunded' },
      paid(3, 1000, T0 + 2 * DAY),
      paid(4, 1000, T0 + 3 * DAY),
    ];
    expect(ids(planRewards(credit({ reward_threshold: 2000 }), payments, [], live()))).toEqual([4]);
    expect(ids(planRewards(commission({ reward_threshold: 2000 }), payments, [], live()))).toEqual([4]);
  });

  it('a payment that failed and was then paid (same id) counts once, as paid', () => {
    const payments: PaymentRecord[] = [{ id: 1, amount: 1000, currency: 'USD', paid_at: T0, status: 'failed' }, paid(1, 1000, T0 + DAY)];
    expect(ids(planRewards(commission(), payments, [], live()))).toEqual([1]);
  });

  it('a payment id with a refunded record does not count even if a paid record is given too', () => {
    const payments: PaymentRecord[] = [paid(1, 1000, T0), { id: 1, amount: 1000, currency: 'USD', paid_at: T0 + DAY, status: 'refunded' }];
    expect(planRewards(credit(), payments, [], live())).toEqual({ rewards: [], completed: false });
  });

  it('duplicate payment ids count once toward the threshold and never earn twice', () => {
    const payments = [paid(1, 1000, T0), paid(1, 1000, T0), paid(1, 1000, T0 + DAY), paid(2, 1000, T0 + 2 * DAY)];
    expect(ids(planRewards(credit({ reward_threshold: 2000 }), payments, [], live()))).toEqual([2]);
    expect(ids(planRewards(commission(), payments, [], live()))).toEqual([1, 2]);
  });

  it('an existing reward for a payment id is never planned again', () => {
    const payments = [paid(1, 1000, T0), paid(2, 1000, T0 + DAY)];
    const existing = [{ payment_id: 2 }, { payment_id: 2 }];
    expect(ids(planRewards(commission(), payments, existing, live()))).toEqual([1]);
  });
});

describe('partial refunds (issue 11, item 2)', () => {
  const refunded = (id: number, amount: number, paid_at: number, refund_amount?: number): PaymentRecord => ({
    id,
    amount,
    currency: 'USD',
    paid_at,
    status: 'refunded',
    ...(refund_amount !== undefined ? { refund_amount } : {}),
  });

  it('a small partial refund of payment 1 keeps the 1-month commission period where it started', () => {
    const terms = commission({ commission_months: 1 });
    const payments = [refunded(1, 1000, T0, 10), paid(2, 1000, addMonthsUtc(T0, 1))];
    const refunds = [{ payment_id: 1, amount: 10 }];
    const now = addMonthsUtc(T0, 1) + DAY;
    // Payment 1 earned the period's commission before its refund: payment 2 is past the period.
    expect(planRewards(terms, payments, [{ payment_id: 1 }], { subscriptionDeleted: false, now, refunds })).toEqual({
      rewards: [],
      completed: true,
    });
    // Evaluated only after the refund: payment 1 still earns (the clawback takes back its share), payment 2 does not.
    expect(planRewards(terms, payments, [], { subscriptionDeleted: false, now, refunds })).toEqual({
      rewards: [{ payment_id: 1, type: 'commission', amount: 250, currency: 'USD' }],
      completed: true,
    });
  });

  it('the period starts at the first payment even when it is refunded in full, which earns nothing', () => {
    const terms = commission({ commission_months: 1 });
    const payments = [refunded(1, 1000, T0), paid(2, 1000, T0 + 10 * DAY), paid(3, 1000, addMonthsUtc(T0, 1))];
    const plan = planRewards(terms, payments, [], {
      subscriptionDeleted: false,
      now: addMonthsUtc(T0, 1) + DAY,
      refunds: [{ payment_id: 1, amount: 1000 }],
    });
    expect(ids(plan)).toEqual([2]);
    expect(plan.completed).toBe(true);
  });

  it('a partial refund lowers the amount counted toward the threshold; several refunds add up', () => {
    const payments = [refunded(1, 1000, T0, 300), paid(2, 1000, T0 + DAY), paid(3, 1000, T0 + 2 * DAY)];
    // 1000 - 300 - 200 = 500 from payment 1, 1500 after payment 2, 2500 after payment 3.
    const refunds = [
      { payment_id: 1, amount: 300 },
      { payment_id: 1, amount: 200 },
    ];
    expect(ids(planRewards(credit({ reward_threshold: 2000 }), payments, [], { ...live(), refunds }))).toEqual([3]);
    expect(ids(planRewards(credit({ reward_threshold: 1500 }), payments, [], { ...live(), refunds }))).toEqual([2]);
    // Without the refund records, the payment's own refund_amount counts.
    expect(ids(planRewards(credit({ reward_threshold: 1700 }), payments, [], live()))).toEqual([2]);
  });

  it('a refund of type full refunds the payment whole whatever its amount says', () => {
    const payments = [refunded(1, 1000, T0, 10), paid(2, 1000, T0 + DAY)];
    expect(ids(planRewards(credit(), payments, [], { ...live(), refunds: [{ payment_id: 1, amount: 10, refund_type: 'full' }] }))).toEqual([
      2,
    ]);
  });
});

describe('percentage commissions (docs/design/money.md)', () => {
  const percentage = (percent: number) => commission({ reward_amount: 0, reward_percent: percent, commission_months: null });

  it('earn that share of each payment excluding tax, rounded half up to the cent', () => {
    const payments: PaymentRecord[] = [
      { ...paid(1, 12_000, T0), tax: 2_000 }, // 20% of 100.00
      { ...paid(2, 1_005, T0 + DAY) }, // 20% of 10.05 = 2.01
      { ...paid(3, 1_003, T0 + 2 * DAY) }, // 12.5% of 10.03 = 1.25375 -> 1.25
    ];
    expect(planRewards(percentage(20_00), payments.slice(0, 2), [], live()).rewards.map((r) => r.amount)).toEqual([2_000, 201]);
    expect(planRewards(percentage(12_50), [payments[2]!], [], live()).rewards.map((r) => r.amount)).toEqual([125]);
    // 12.5% of 10.04 = 1.255: half up to 1.26.
    expect(planRewards(percentage(12_50), [paid(4, 1_004, T0)], [], live()).rewards.map((r) => r.amount)).toEqual([126]);
  });

  it('a payment whose share rounds to 0.00 earns nothing, and the next one still does', () => {
    const plan = planRewards(percentage(1), [paid(1, 10, T0), paid(2, 100_000, T0 + DAY)], [], live());
    expect(plan.rewards).toEqual([{ payment_id: 2, type: 'commission', amount: 10, currency: 'USD' }]);
  });

  it('fixed commissions and credits ignore reward_percent', () => {
    expect(
      planRewards(credit({ reward_percent: 50_00 } as Partial<RewardTerms>), [paid(1, 10_000, T0)], [], live()).rewards[0]?.amount,
    ).toBe(1500);
    expect(planRewards(commission({ reward_percent: null }), [{ ...paid(1, 10_000, T0), tax: 5_000 }], [], live()).rewards[0]?.amount).toBe(
      250,
    );
  });
});

describe('reward rules: a commission rule is one function (shared/flows/settlement/plan.ts REWARD_RULES)', () => {
  it('the default rules: a percentage commission, else the fixed amount', () => {
    const payments = [paid(1, 10_000, T0)];
    expect(planRewards(commission({ reward_percent: 20_00 }), payments, [], { ...live(), rules: REWARD_RULES }).rewards[0]?.amount).toBe(
      2000,
    );
    expect(planRewards(commission(), payments, [], { ...live(), rules: REWARD_RULES }).rewards[0]?.amount).toBe(250);
    expect(planRewards(credit(), payments, [], { ...live(), rules: REWARD_RULES }).rewards[0]?.amount).toBe(1500);
  });

  it('an example, not a product feature: 25% once the member has 10 conversions, the usual rules below that', () => {
    const tiered: RewardRule = ({ type, payment, currency, member }) =>
      type === 'commission' && (member?.conversions ?? 0) >= 10
        ? percentOf(payment.amount - (payment.tax ?? 0), 25_00, minorUnitCents(currency))
        : null;
    const rules = [tiered, ...REWARD_RULES];
    const payments = [paid(1, 10_000, T0)];
    const amount = (conversions: number) =>
      planRewards(commission(), payments, [], { ...live(), rules, member: { conversions } }).rewards[0]?.amount;
    expect(amount(9)).toBe(250);
    expect(amount(10)).toBe(2500);
    // Credits keep their fixed amount.
    expect(planRewards(credit(), payments, [], { ...live(), rules, member: { conversions: 50 } }).rewards[0]?.amount).toBe(1500);
  });
});
