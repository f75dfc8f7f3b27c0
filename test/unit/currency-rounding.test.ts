// Zero-decimal currencies (issue 23, finding 26) and the sanity bounds on amounts (finding 33), on the pure
// rules: every computed amount is rounded to what its currency can pay (whole yen in JPY) where it is
// computed (commission percentages, clawback shares, fixed amounts), payout files write JPY without
// decimals, a campaign's amounts are checked against their currency, and a payment above the sanity
// limit earns only a held reward.
import { planClawbacks } from '../../shared/domain/clawbacks';
import { commissionErrors, percentOf } from '../../shared/domain/commissions';
import { formatInCurrency, isZeroDecimal, minorUnitCents, roundToMinorUnit } from '../../shared/domain/currency';
import { maxPaymentCents, maxPayoutCents } from '../../shared/domain/money-limits';
import { payoutFile, type PayoutFileRow } from '../../shared/domain/payout-files';
import { planRewards, type PaymentRecord, type RewardTerms } from '../../shared/domain/rewards';
import { ZERO_DECIMAL_CURRENCIES } from '../../shared/providers/stripe/wire';

describe('the currency unit', () => {
  it('JPY and the other zero-decimal currencies pay whole units; USD and KWD pay cents', () => {
    expect(minorUnitCents('JPY')).toBe(100);
    expect(minorUnitCents('KRW')).toBe(100);
    expect(minorUnitCents('USD')).toBe(1);
    expect(minorUnitCents('KWD')).toBe(1);
    expect(roundToMinorUnit(3996, 'JPY')).toBe(4000);
    expect(roundToMinorUnit(3949, 'JPY')).toBe(3900);
    expect(roundToMinorUnit(3950, 'JPY')).toBe(4000);
    expect(roundToMinorUnit(-3950, 'JPY')).toBe(-4000);
    expect(roundToMinorUnit(3996, 'USD')).toBe(3996);
    expect(roundToMinorUnit(1666.67, 'USD')).toBe(1667);
  });

  it('every currency Stripe treats as zero-decimal is zero-decimal here too (one list: shared/domain/currency.ts)', () => {
    for (const c of ZERO_DECIMAL_CURRENCIES) expect({ c, zero: isZeroDecimal(c) }).toEqual({ c, zero: true });
    expect(isZeroDecimal('USD')).toBe(false);
    expect(isZeroDecimal('EUR')).toBe(false);
  });

  it("formats amounts with the currency's decimals for the payout files", () => {
    expect(formatInCurrency(12000, 'JPY')).toBe('120');
    expect(formatInCurrency(11988, 'JPY')).toBe('120');
    expect(formatInCurrency(11988, 'USD')).toBe('119.88');
    expect(formatInCurrency(5, 'EUR')).toBe('0.05');
    expect(formatInCurrency(-250, 'USD')).toBe('-2.50');
  });
});

const jpyTerms: RewardTerms = {
  reward_type: 'commission',
  reward_amount: 0,
  reward_threshold: 0,
  commission_months: null,
  currency: 'JPY',
  reward_percent: 333,
};
const usdTerms: RewardTerms = { ...jpyTerms, currency: 'USD' };
const pay = (id: number, amount: number, currency: string, at = 1_700_000_000 + id): PaymentRecord => ({
  id,
  amount,
  currency,
  paid_at: at,
  status: 'paid',
});
const opts = { subscriptionDeleted: false, now: 1_800_000_000 };

describe('commissions are rounded where they are computed', () => {
  it('3.33% of 1,200 JPY is 40 JPY (not 39.96); of 12.00 USD it is 0.40 (39.96 cents rounds to 0.40)', () => {
    expect(percentOf(120_000, 333, 100)).toBe(4000);
    expect(percentOf(1200, 333)).toBe(40);
    const jpy = planRewards(jpyTerms, [pay(1, 120_000, 'JPY'), pay(2, 120_000, 'JPY'), pay(3, 120_000, 'JPY')], [], opts);
    expect(jpy.rewards.map((r) => r.amount)).toEqual([4000, 4000, 4000]);
    // USD keeps its cents: 3.33% of 119.88 is 3.99 (3.992).
    expect(planRewards(usdTerms, [pay(1, 11_988, 'USD')], [], opts).rewards.map((r) => r.amount)).toEqual([399]);
  });

  it('a fixed JPY amount stored with decimals (before the campaign check) is paid in whole yen', () => {
    const fixed = planRewards({ ...jpyTerms, reward_percent: null, reward_amount: 3996 }, [pay(1, 120_000, 'JPY')], [], opts);
    expect(fixed.rewards[0]?.amount).toBe(4000);
    const credit = planRewards(
      { ...jpyTerms, reward_type: 'credit', reward_percent: null, reward_amount: 3996 },
      [pay(1, 120_000, 'JPY')],
      [],
      opts,
    );
    expect(credit.rewards[0]?.amount).toBe(4000);
  });

  it('clawbacks of a JPY commission are whole yen and add up to the whole reward', () => {
    const reward = { id: 'r1', type: 'commission' as const, amount: 4000, currency: 'JPY', payment_id: 1 };
    const refunds = [
      { id: 'a', payment_id: 1, amount: 50_000, refunded_at: 1 },
      { id: 'b', payment_id: 1, amount: 33_300, refunded_at: 2 },
      { id: 'c', payment_id: 1, amount: 36_700, refunded_at: 3 },
    ];
    const plan = planClawbacks([reward], [{ id: 1, amount: 120_000 }], refunds);
    expect(plan.clawbacks.every((c) => c.amount % 100 === 0)).toBe(true);
    expect(plan.clawbacks.reduce((a, c) => a + c.amount, 0)).toBe(-4000);
    // A part: 50,000 of 120,000 takes back 1,666.67 yen of the reward -> 1,700.
    expect(planClawbacks([reward], [{ id: 1, amount: 120_000 }], refunds.slice(0, 1)).clawbacks[0]?.amount).toBe(-1700);
    // USD keeps cents.
    expect(planClawbacks([{ ...reward, currency: 'USD' }], [{ id: 1, amount: 120_000 }], refunds.slice(0, 1)).clawbacks[0]?.amount).toBe(
      -1667,
    );
  });
});

describe('payout files', () => {
  const row = (amount: number, currency: string): PayoutFileRow => ({
    payout_id: `po_${'a'.repeat(32)}`,
    member_id: 'm1',
    member_identifier: 'mia',
    member_email: 'mia@example.com',
    member_name: 'Mia',
    payout_email: 'pay@example.com',
    amount,
    currency,
    reward_count: 3,
    period_start: 1,
    period_end: 2,
    status: 'processing',
    paid_at: null,
    reference: null,
  });

  it('PayPal and Wise rows ask for whole yen in JPY and for cents in USD', () => {
    expect(payoutFile('paypal', [row(12_000, 'JPY')], { note: 'n' }).split(',')[1]).toBe('120');
    expect(
      payoutFile('wise', [row(12_000, 'JPY')], { note: 'n' })
        .split('\r\n')[1]
        ?.split(',')[5],
    ).toBe('120');
    expect(payoutFile('paypal', [row(11_988, 'USD')], { note: 'n' }).split(',')[1]).toBe('119.88');
    expect(
      payoutFile('wise', [row(11_988, 'USD')], { note: 'n' })
        .split('\r\n')[1]
        ?.split(',')[5],
    ).toBe('119.88');
  });
});

describe("a campaign's amounts against their currency (400s)", () => {
  const base = {
    allows_commission: true,
    commission_type: 'fixed' as const,
    commission_percent: 0,
    allows_credit: false,
    credit_amount: 0,
    credit_currency: 'USD',
    commission_amount: 100,
    commission_currency: 'USD',
    min_payout: 0,
    referred_discount_type: null,
    referred_discount_amount: 0,
  };

  it('a zero-decimal currency refuses decimals: commission, credit, minimum payout, flat discount', () => {
    expect(commissionErrors({ ...base, commission_currency: 'JPY', commission_amount: 3996 })).toEqual({
      commission_amount: ['JPY has no decimals: use a whole amount such as "40".'],
    });
    expect(commissionErrors({ ...base, commission_currency: 'JPY', commission_amount: 4000 })).toEqual({});
    expect(commissionErrors({ ...base, commission_amount: 3996 })).toEqual({});
    expect(Object.keys(commissionErrors({ ...base, allows_credit: true, credit_currency: 'KRW', credit_amount: 150 }))).toEqual([
      'credit_amount',
    ]);
    expect(Object.keys(commissionErrors({ ...base, commission_currency: 'JPY', commission_amount: 4000, min_payout: 50 }))).toEqual([
      'min_payout',
    ]);
    expect(
      Object.keys(
        commissionErrors({
          ...base,
          commission_currency: 'JPY',
          commission_amount: 4000,
          referred_discount_type: 'flat',
          referred_discount_amount: 1050,
        }),
      ),
    ).toEqual(['referred_discount_amount']);
  });

  it('no fixed amount above what one payout may carry', () => {
    expect(commissionErrors({ ...base, commission_amount: maxPayoutCents('USD') })).toEqual({});
    expect(commissionErrors({ ...base, commission_amount: maxPayoutCents('USD') + 1 })).toEqual({
      commission_amount: ['Ensure this value is less than or equal to 1000000.00 (the most one payout in USD may carry).'],
    });
    expect(Object.keys(commissionErrors({ ...base, min_payout: maxPayoutCents('USD') + 100 }))).toEqual(['min_payout']);
    expect(Object.keys(commissionErrors({ ...base, allows_credit: true, credit_amount: maxPayoutCents('USD') + 100 }))).toEqual([
      'credit_amount',
    ]);
  });
});

describe('a payment above the sanity limit', () => {
  it('earns a reward held for review (with its reason), and the payments around it earn as usual', () => {
    const huge = 3_330_000_000_000; // 33.3 billion dollars, in cents
    expect(huge).toBeGreaterThan(maxPaymentCents('USD'));
    const plan = planRewards(
      { ...usdTerms, reward_percent: 1000 },
      [pay(1, 1000, 'USD'), pay(2, huge, 'USD'), pay(3, 1000, 'USD')],
      [],
      opts,
    );
    expect(plan.rewards.map((r) => [r.payment_id, r.amount, r.held !== undefined])).toEqual([
      [1, 100, false],
      [2, huge / 10, true],
      [3, 100, false],
    ]);
    expect(plan.rewards[1]?.held).toMatch(
      /^Held for review: payment 2 of 33,300,000,000 USD is above the sanity limit of 10,000,000 USD per payment/,
    );
    expect(planRewards(usdTerms, [pay(1, maxPaymentCents('USD'), 'USD')], [], opts).rewards[0]?.held).toBeUndefined();
    // A zero-decimal currency's limit is in its own (smaller) units.
    expect(maxPaymentCents('JPY')).toBe(maxPaymentCents('USD') * 1000);
  });
});
