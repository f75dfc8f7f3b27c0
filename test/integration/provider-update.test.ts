// applyProviderUpdate on DynamoDB Local: the one write path of webhooks and background sync. Ordering by
// event time, idempotency on alert_id, payments that only move forward, and no write when nothing changed.
import type { Plan } from '../../shared/domain/models';
import { applyProviderUpdate, getSubscription, listPayments, mergePayment, type PaymentData } from '../../shared/store/subscriptions';
import { newAccount } from '../support/fixtures';

const plan: Plan = {
  id: 9001,
  name: 'Pro monthly',
  amount: '10.00',
  currency: 'USD',
  interval: 'month',
  frequency: 1,
  descriptor: '$10.00 / month',
};
const state = {
  status: 'active',
  currency: 'USD',
  email: 'a@example.com',
  unit_price: '10.00',
  next_bill_date: '2030-01-01',
  last_bill_date: null,
  plan,
};
const T = Date.UTC(2030, 0, 1);

const payment = (over: Partial<PaymentData> = {}): PaymentData => ({
  id: 501,
  subscription_id: 11,
  order_id: '1-1',
  amount: 1000,
  currency: 'USD',
  paid_at: T / 1000,
  status: 'paid',
  ...over,
});

describe('applyProviderUpdate', () => {
  let accountId: string;
  beforeAll(async () => {
    ({ accountId } = await newAccount());
  });

  it('writes nothing when the same state is applied again (whatever the key order of the plan)', async () => {
    const first = await applyProviderUpdate(accountId, { subscriptionId: 11, asOfMs: T, fields: state });
    expect(first).toMatchObject({ duplicate: false, subscriptionWritten: true });
    const reordered = {
      ...state,
      plan: { descriptor: plan.descriptor, frequency: 1, interval: 'month', currency: 'USD', amount: '10.00', name: plan.name, id: 9001 },
    };
    const again = await applyProviderUpdate(accountId, { subscriptionId: 11, asOfMs: T + 1000, fields: reordered });
    expect(again).toMatchObject({ duplicate: false, subscriptionWritten: false, statusChanged: false });
  });

  it('ignores a state older than the stored one, applies a newer one and reports the status change', async () => {
    const older = await applyProviderUpdate(accountId, { subscriptionId: 11, asOfMs: T - 60_000, fields: { status: 'paused' } });
    expect(older.subscriptionWritten).toBe(false);
    expect((await getSubscription(accountId, 11))?.status).toBe('active');
    const newer = await applyProviderUpdate(accountId, { subscriptionId: 11, asOfMs: T + 60_000, fields: { status: 'past_due' } });
    expect(newer).toMatchObject({ subscriptionWritten: true, statusChanged: true });
    expect(await getSubscription(accountId, 11)).toMatchObject({ status: 'past_due', email: 'a@example.com', plan });
  });

  it('is idempotent on alert_id: the second delivery writes nothing, even with other content', async () => {
    const once = await applyProviderUpdate(accountId, {
      subscriptionId: 11,
      asOfMs: T + 120_000,
      fields: { status: 'active' },
      alertId: '777',
      payment: payment(),
    });
    expect(once).toMatchObject({ duplicate: false, paymentChanged: true });
    const twice = await applyProviderUpdate(accountId, {
      subscriptionId: 11,
      asOfMs: T + 180_000,
      fields: { status: 'paused' },
      alertId: '777',
      payment: payment({ amount: 1 }),
    });
    expect(twice).toMatchObject({ duplicate: true, subscriptionWritten: false, paymentChanged: false });
    expect((await getSubscription(accountId, 11))?.status).toBe('active');
    expect(await listPayments(accountId, 11)).toEqual([payment()]);
  });

  it('records a payment even from an alert older than the subscription state', async () => {
    const r = await applyProviderUpdate(accountId, {
      subscriptionId: 11,
      asOfMs: 0,
      fields: { status: 'deleted' },
      payment: payment({ id: 502 }),
    });
    expect(r).toMatchObject({ subscriptionWritten: false, paymentChanged: true });
    expect((await listPayments(accountId, 11)).map((p) => p.id)).toEqual([501, 502]);
  });

  it('does not create a subscription from a source without status, currency and plan', async () => {
    const r = await applyProviderUpdate(accountId, { subscriptionId: 12, asOfMs: T, fields: { email: 'x@example.com' } });
    expect(r).toMatchObject({ subscriptionWritten: false, subscription: null });
    expect(await getSubscription(accountId, 12)).toBeNull();
  });
});

describe('mergePayment (status only moves failed -> paid -> refunded)', () => {
  it('a paid event over a failed one takes its amount and time', () => {
    expect(mergePayment(payment({ status: 'failed', amount: 5, paid_at: 1 }), payment())).toEqual(payment());
  });

  it('a refund keeps the paid amount and adds the refund', () => {
    expect(
      mergePayment(payment(), payment({ status: 'refunded', amount: 400, refund_amount: 400, refund_type: 'partial', paid_at: 9 })),
    ).toEqual(payment({ status: 'refunded', refund_amount: 400, refund_type: 'partial' }));
  });

  it('a late paid or failed event never undoes a refund, and the first paid record wins', () => {
    const refunded = payment({ status: 'refunded', refund_amount: 1000 });
    expect(mergePayment(refunded, payment({ paid_at: 5 })).status).toBe('refunded');
    expect(mergePayment(refunded, payment({ status: 'failed' })).status).toBe('refunded');
    expect(mergePayment(payment(), payment({ paid_at: 5, amount: 999 }))).toEqual(payment());
  });
});
