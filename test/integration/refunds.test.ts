// Refunds (issue 6, item 3) on real parts: a subscription_payment_refunded alert for a payment that
// earned a reward takes it back exactly once per refund alert: commission clawbacks proportional to the
// refund, credit reversals (modifier deleted while unbilled), billed credits kept and noted.
import { evaluateReferral } from '../../shared/flows/settlement';
import { refundItem } from '../../shared/store/refunds';
import { applyProviderUpdate, saveSubscription, type PaymentData } from '../../shared/store/subscriptions';
import { pollUntil } from '../support/fixtures';
import { paddleTenants, pipelineWorld, type Tenant } from '../support/paddle-tenant';

const world = pipelineWorld();

const { tenant, json, deliver, campaign, member, referral, subscribed, getReferral, getMember } = paddleTenants(() => world.paddle);
const drained = () => world.queues.drained(['rewards', 'provider-events']);

interface RewardBody {
  id: string;
  type: string;
  amount: string;
  payment_id: number;
  reverses: string | null;
  refund_id: string | null;
  reversed_at: number | null;
  note: string | null;
}

/** A referral converted with a fresh subscription, once it has `rewards` rewards. */
async function converted(t: Tenant, code: string, user: string, rewards = 1) {
  const r = await referral(t, user, code);
  const sub = await subscribed(t, `${user}@example.com`);
  expect((await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: sub.subscription.subscription_id })).status).toBe(
    200,
  );
  const body = await pollUntil(async () => {
    const b = await getReferral(t, r.id);
    return b.rewards.length === rewards ? b : null;
  });
  return { referral: body, sub };
}

async function refund(t: Tenant, paymentId: number, amount?: string) {
  const out = await world.paddle.refund(paymentId, { deliver: false, ...(amount ? { amount } : {}) });
  await deliver(t, out.alerts);
  return out.alerts[0]?.fields.alert_id as string;
}

const rewardsWhen = (t: Tenant, id: string, n: number) =>
  pollUntil(
    async () => {
      const b = await getReferral(t, id);
      return b.rewards.length === n ? b : null;
    },
    { timeoutMs: 15_000 },
  );

describe('commission refunds', () => {
  it('a full refund records one clawback of the whole commission and lowers commission_earned', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_commission: true, commission_amount: '2.50', commission_currency: 'USD' });
    const m = await member(t, 'ria', { campaign: { id: c.id } });
    const { referral: r, sub } = await converted(t, m.code, 'user-rob');
    const earned = r.rewards[0] as RewardBody;
    expect((await getMember(t, m.id)).stats.commission_earned).toBe('2.50');

    const alertId = await refund(t, sub.payment?.id as number);
    const after = await rewardsWhen(t, r.id, 2);
    const clawback = after.rewards[1] as RewardBody;
    expect(clawback).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      type: 'commission',
      amount: '-2.50',
      currency: 'USD',
      created_at: expect.any(Number),
      payment_id: sub.payment?.id,
      reverses: earned.id,
      refund_id: alertId,
      reversed_at: null,
      note: expect.stringContaining('100.00%'),
      // Refunded in full before it was paid: the commission and its clawback are voided (docs/design/money.md "Clawbacks").
      status: 'voided',
      approves_at: null,
      approved_at: null,
      paid_at: null,
      voided_at: expect.any(Number),
      void_reason: 'refunded',
      payout_id: null,
    });
    expect(after.rewards[0]).toMatchObject({ id: earned.id, status: 'voided', void_reason: 'refunded', payout_id: null });
    expect(clawback.id).not.toBe(earned.id);
    expect(after.stats).toEqual({ rewards: 1, credit_earned: '0.00', commission_earned: '0.00', currency: 'USD' });
    expect((await getMember(t, m.id)).stats.commission_earned).toBe('0.00');
  });

  it('partial refunds take back proportional shares, one per refund alert, and duplicates change nothing', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_commission: true, commission_amount: '2.50', commission_currency: 'USD' });
    const m = await member(t, 'sal', { campaign: { id: c.id } });
    const { referral: r, sub } = await converted(t, m.code, 'user-sam');
    const paymentId = sub.payment?.id as number;

    const first = await world.paddle.refund(paymentId, { amount: '4.00', deliver: false });
    // The same alert three times, two of them at once.
    await deliver(t, first.alerts);
    await Promise.all([deliver(t, first.alerts), deliver(t, first.alerts)]);
    const one = await rewardsWhen(t, r.id, 2);
    expect(one.rewards[1]).toMatchObject({ amount: '-1.00', refund_id: first.alerts[0]?.fields.alert_id, payment_id: paymentId });
    await drained();
    expect((await getReferral(t, r.id)).rewards).toHaveLength(2);

    const secondId = await refund(t, paymentId, '6.00');
    const two = await rewardsWhen(t, r.id, 3);
    expect(two.rewards[2]).toMatchObject({ amount: '-1.50', refund_id: secondId });
    expect(two.stats.commission_earned).toBe('0.00');
    expect((await getMember(t, m.id)).stats.commission_earned).toBe('0.00');
    await drained();
    expect((await getReferral(t, r.id)).rewards).toHaveLength(3);
  });
});

describe('credit refunds', () => {
  async function creditSetup(name: string) {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' });
    const own = await subscribed(t, `${name}@example.com`);
    const m = await member(t, name, { campaign: { id: c.id }, subscription: { id: own.subscription.subscription_id } });
    const { referral: r, sub } = await converted(t, m.code, `user-of-${name}`);
    const modifiers = await pollUntil(() => {
      const found = world.paddle.modifiers(own.subscription.subscription_id);
      return found.length === 1 ? found : null;
    });
    return { t, m, r, sub, own, modifier: modifiers[0] };
  }

  it('an unbilled credit: the modifier is deleted at Paddle, the credit reversed, credit_earned lowered', async () => {
    const { t, m, r, sub, own } = await creditSetup('tia');
    const out = await world.paddle.refund(sub.payment?.id as number, { deliver: false });
    const alertId = out.alerts[0]?.fields.alert_id;
    await deliver(t, out.alerts);
    const after = await rewardsWhen(t, r.id, 2);
    expect(after.rewards[0]).toMatchObject({ id: r.rewards[0].id, amount: '5.00', reversed_at: expect.any(Number), refund_id: alertId });
    expect(after.rewards[1]).toMatchObject({
      type: 'credit',
      amount: '-5.00',
      reverses: r.rewards[0].id,
      refund_id: alertId,
      payment_id: sub.payment?.id,
    });
    expect(after.stats).toMatchObject({ rewards: 0, credit_earned: '0.00' });
    expect(world.paddle.modifiers(own.subscription.subscription_id)).toEqual([]);
    expect((await getMember(t, m.id)).stats.credit_earned).toBe('0.00');
    // A redelivered alert changes nothing.
    await deliver(t, out.alerts);
    await drained();
    expect((await getReferral(t, r.id)).rewards).toHaveLength(2);
    expect((await getMember(t, m.id)).stats.credit_earned).toBe('0.00');
  });

  it('a billed credit stays and is noted; a partial refund leaves a credit alone', async () => {
    const { t, m, r, sub, own } = await creditSetup('uma');
    const partialId = await refund(t, sub.payment?.id as number, '3.00');
    await drained();
    expect((await getReferral(t, r.id)).rewards).toEqual([expect.objectContaining({ amount: '5.00', reversed_at: null, note: null })]);

    // Uma's renewal bills her pending modifier; the rest of the refund then cannot take the credit back.
    await deliver(t, (await world.paddle.renew(own.subscription.subscription_id, { deliver: false })).alerts);
    const restId = await refund(t, sub.payment?.id as number);
    expect(restId).not.toBe(partialId);
    const noted = await pollUntil(
      async () => {
        const b = await getReferral(t, r.id);
        return b.rewards[0]?.note ? b : null;
      },
      { timeoutMs: 15_000 },
    );
    expect(noted.rewards).toHaveLength(1);
    expect(noted.rewards[0]).toMatchObject({
      amount: '5.00',
      reversed_at: null,
      refund_id: restId,
      note: expect.stringContaining('the credit stays'),
    });
    expect(world.paddle.modifiers(own.subscription.subscription_id)).toHaveLength(1);
    expect((await getMember(t, m.id)).stats.credit_earned).toBe('5.00');
  });

  it('a credit not applied yet (no member subscription) is reversed without Paddle and never applied later', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '4.00', credit_currency: 'USD' });
    const m = await member(t, 'vic', { campaign: { id: c.id } });
    const { referral: r, sub } = await converted(t, m.code, 'user-of-vic');
    await refund(t, sub.payment?.id as number);
    const after = await rewardsWhen(t, r.id, 2);
    expect(after.rewards[0].reversed_at).toEqual(expect.any(Number));
    expect(after.rewards[1]).toMatchObject({ amount: '-4.00' });

    const own = await subscribed(t, 'vic@example.com');
    expect((await json('PATCH', `/v1/members/${m.id}/`, t, { subscription: { id: own.subscription.subscription_id } })).status).toBe(200);
    await drained();
    expect(world.paddle.modifiers(own.subscription.subscription_id)).toEqual([]);
  });
});

describe('a partial refund of the first payment (issue 11, item 2)', () => {
  it('a 0.10 refund of payment 1 in a 1-month commission campaign: payment 2, after the month, earns nothing and the referral completes', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_commission: true, commission_amount: '2.50', commission_currency: 'USD', commission_months: 1 });
    const m = await member(t, 'pat', { campaign: { id: c.id } });
    const r = await referral(t, 'user-pete', m.code);
    const subscriptionId = 650_001;
    const day = 86_400;
    const now = Math.floor(Date.now() / 1000);
    const plan = { id: 9001, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' };
    await saveSubscription(t.accountId, {
      id: subscriptionId,
      unit_price: '10.00',
      currency: 'USD',
      status: 'active',
      email: 'pete@example.com',
      next_bill_date: null,
      last_bill_date: null,
      plan,
    });
    const payment = (id: number, paidAt: number): PaymentData => ({
      id,
      subscription_id: subscriptionId,
      order_id: null,
      amount: 1000,
      currency: 'USD',
      paid_at: paidAt,
      status: 'paid',
    });
    // Payment 1 forty days ago: its month ended ten days ago.
    const first = payment(1, now - 40 * day);
    await applyProviderUpdate(t.accountId, { subscriptionId, asOfMs: Date.now(), fields: {}, payment: first, alertId: 'pay-1' });
    expect((await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: subscriptionId })).status).toBe(200);
    await rewardsWhen(t, r.id, 1);

    // 0.10 refunded (as the subscription-sync worker records a refund alert), then payment 2.
    const refunded: PaymentData = { ...first, status: 'refunded', refund_amount: 10, refund_type: 'partial' };
    const refundRecord = refundItem(t.accountId, subscriptionId, {
      id: 'refund-1',
      payment_id: 1,
      amount: 10,
      refunded_at: now - 20 * day,
      currency: 'USD',
      refund_type: 'partial',
    });
    await applyProviderUpdate(t.accountId, {
      subscriptionId,
      asOfMs: Date.now(),
      fields: {},
      payment: refunded,
      alertId: 'refund-1',
      extraItems: [refundRecord],
    });
    await applyProviderUpdate(t.accountId, {
      subscriptionId,
      asOfMs: Date.now(),
      fields: {},
      payment: payment(2, now - 5 * day),
      alertId: 'pay-2',
    });
    await evaluateReferral(t.accountId, r.id);
    await drained();

    const after = await getReferral(t, r.id);
    expect(after.rewards.map((w: RewardBody) => ({ amount: w.amount, payment_id: w.payment_id, refund_id: w.refund_id }))).toEqual([
      { amount: '2.50', payment_id: 1, refund_id: null },
      { amount: '-0.03', payment_id: 1, refund_id: 'refund-1' },
    ]);
    expect(after.rewards_completed).toBe(true);
    expect((await getMember(t, m.id)).stats.commission_earned).toBe('2.47');
  });
});
