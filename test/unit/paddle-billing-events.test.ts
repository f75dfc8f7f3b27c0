// Paddle Billing notifications -> normalized BillingEvents (shared/providers/paddle-billing/events.ts).
import type { BillingEvent } from '../../shared/billing/port';
import {
  instantMs,
  preciseInstantMs,
  lookupsFor,
  parseEnvelope,
  parsePaddleBillingEvents,
  toBillingEvents,
  utcDate,
} from '../../shared/providers/paddle-billing/events';
import { IDS, adjustmentData, notification, subscriptionData, transactionData } from '../fixtures/paddle-billing/notifications';

const parse = (body: unknown, enrichment = {}) => parsePaddleBillingEvents(JSON.stringify(body), enrichment);
const one = (body: unknown, enrichment = {}): BillingEvent => {
  const events = parse(body, enrichment);
  expect(events).toHaveLength(1);
  return events[0] as BillingEvent;
};
const fact = (e: BillingEvent) => {
  if (e.kind !== 'subscription') throw new Error(`expected a subscription event, got ${JSON.stringify(e)}`);
  return e;
};

describe('instants and dates', () => {
  it('RFC 3339 with microseconds -> ms (truncated)', () => {
    expect(instantMs('2024-04-12T10:15:33.123456Z')).toBe(Date.UTC(2024, 3, 12, 10, 15, 33, 123));
    expect(instantMs('2024-04-12T10:15:33Z')).toBe(Date.UTC(2024, 3, 12, 10, 15, 33));
    expect(instantMs('2024-04-12T12:15:33.5+02:00')).toBe(Date.UTC(2024, 3, 12, 10, 15, 33, 500));
    expect(instantMs('2024-04-12')).toBeNull();
    expect(instantMs(12)).toBeNull();
  });

  it('occurred_at keeps its microseconds: two events within one ms are ordered', () => {
    expect(preciseInstantMs('2024-04-12T10:15:33.123456Z')).toBeCloseTo(Date.UTC(2024, 3, 12, 10, 15, 33, 123) + 0.456, 6);
    expect(preciseInstantMs('2024-04-12T10:15:33.1234Z')).toBeCloseTo(Date.UTC(2024, 3, 12, 10, 15, 33, 123) + 0.4, 6);
    expect(preciseInstantMs('2024-04-12T10:15:33.12Z')).toBe(Date.UTC(2024, 3, 12, 10, 15, 33, 120));
    expect(preciseInstantMs('2024-04-12T10:15:33Z')).toBe(Date.UTC(2024, 3, 12, 10, 15, 33));
    expect(preciseInstantMs('nope')).toBeNull();
    const earlier = preciseInstantMs('2026-11-25T10:15:33.123455Z') as number;
    const later = preciseInstantMs('2026-11-25T10:15:33.123456Z') as number;
    expect(later).toBeGreaterThan(earlier);
  });

  it('dates are UTC', () => {
    expect(utcDate('2024-04-12T23:30:00-02:00')).toBe('2024-04-13');
  });
});

describe('subscription events', () => {
  it('subscription.created: state, plan, unit price, dates, customer, referral and checkout hints', () => {
    const body = notification(
      'subscription.created',
      { ...subscriptionData(), transaction_id: IDS.checkoutTxn },
      '2024-04-12T10:15:33.123456Z',
    );
    const e = fact(one(body, { emails: new Map([[IDS.customer, 'jane@example.com']]) }));
    expect(e).toEqual({
      kind: 'subscription',
      eventId: body.event_id,
      occurredAtMs: Date.UTC(2024, 3, 12, 10, 15, 33, 123) + 0.456,
      subscription: {
        id: IDS.subscription,
        status: 'active',
        email: 'jane@example.com',
        currency: 'USD',
        unitPrice: 1500 * 3 + 500,
        plan: { id: IDS.pricePro, name: 'Acme Pro', amount: 1500, currency: 'USD', interval: 'month', frequency: 1 },
        nextBillDate: '2024-05-12',
        lastBillDate: '2024-04-12',
        customerId: IDS.customer,
      },
      hints: { referralId: IDS.referral, checkoutId: IDS.checkoutTxn },
    });
  });

  it('only subscription.created turns transaction_id into a checkout hint', () => {
    const e = fact(one(notification('subscription.updated', { ...subscriptionData(), transaction_id: IDS.checkoutTxn })));
    expect(e.hints.checkoutId).toBeUndefined();
  });

  it('without an email lookup, email is unknown (absent), not empty', () => {
    expect(fact(one(notification('subscription.activated', subscriptionData()))).subscription).not.toHaveProperty('email');
  });

  it.each([
    ['subscription.trialing', 'trialing', 'trialling'],
    ['subscription.past_due', 'past_due', 'past_due'],
    ['subscription.paused', 'paused', 'paused'],
    ['subscription.resumed', 'active', 'active'],
    ['subscription.canceled', 'canceled', 'deleted'],
  ])('%s: status %s -> %s', (type, wire, status) => {
    expect(fact(one(notification(type, subscriptionData({ status: wire })))).subscription.status).toBe(status);
  });

  it('canceled: no next bill date (a known none)', () => {
    const data = subscriptionData({
      status: 'canceled',
      next_billed_at: null,
      canceled_at: '2024-06-01T00:00:00Z',
      current_billing_period: null,
    });
    const s = fact(one(notification('subscription.canceled', data))).subscription;
    expect(s.nextBillDate).toBeNull();
    expect(s.status).toBe('deleted');
  });

  it('trialing: nothing billed yet, so no last bill date', () => {
    const data = subscriptionData({ status: 'trialing' });
    for (const item of data.items) item.previously_billed_at = null as unknown as string;
    expect(fact(one(notification('subscription.trialing', data))).subscription).not.toHaveProperty('lastBillDate');
  });

  it('inactive items do not count toward the unit price; an unknown status is left out', () => {
    const data = subscriptionData({ status: 'something_new' });
    (data.items[1] as { status: string }).status = 'inactive';
    const s = fact(one(notification('subscription.updated', data))).subscription;
    expect(s.unitPrice).toBe(4500);
    expect(s).not.toHaveProperty('status');
  });

  it('custom_data without our key, or null: no referral hint', () => {
    expect(fact(one(notification('subscription.created', subscriptionData({ custom_data: { other: 1 } })))).hints).toEqual({});
    expect(fact(one(notification('subscription.created', subscriptionData({ custom_data: null })))).hints).toEqual({});
  });

  it('a subscription event without a subscription id is ignored', () => {
    expect(one(notification('subscription.updated', subscriptionData({ id: 'nope' })))).toMatchObject({ kind: 'ignored' });
  });
});

describe('transaction events', () => {
  it('transaction.completed from a checkout: payment = what the customer paid, hints with the discount code', () => {
    const body = notification('transaction.completed', transactionData());
    const e = fact(one(body, { discountCodes: new Map([[IDS.discount, 'RFABC123']]) }));
    expect(e.payment).toEqual({
      id: IDS.checkoutTxn,
      subscriptionId: IDS.subscription,
      amount: 4355,
      amountExcludingTax: 4000,
      currency: 'USD',
      paidAtSeconds: Math.floor(Date.UTC(2024, 3, 12, 10, 15, 30, 112) / 1000),
      checkoutId: IDS.checkoutTxn,
    });
    expect(e.subscription).toEqual({ id: IDS.subscription, customerId: IDS.customer, lastBillDate: '2024-04-12' });
    expect(e.hints).toEqual({ referralId: IDS.referral, checkoutId: IDS.checkoutTxn, couponCode: 'RFABC123' });
  });

  it('an included discount (GET ?include=discount) gives the code without a lookup', () => {
    const e = fact(one(notification('transaction.completed', transactionData({ discount: { id: IDS.discount, code: 'RFINCLUDED' } }))));
    expect(e.hints.couponCode).toBe('RFINCLUDED');
  });

  it('a renewal: a payment with no checkout id and no coupon hint', () => {
    const data = transactionData({ id: IDS.renewalTxn, origin: 'subscription_recurring', discount_id: null });
    const e = fact(one(notification('transaction.completed', data)));
    expect(e.payment?.id).toBe(IDS.renewalTxn);
    expect(e.payment).not.toHaveProperty('checkoutId');
    expect(e.hints).toEqual({ referralId: IDS.referral });
  });

  it.each([
    'transaction.payment_failed',
    'transaction.past_due',
    'transaction.paid',
    'transaction.billed',
    'transaction.created',
    'transaction.canceled',
  ])('%s never counts', (type) => {
    expect(one(notification(type, transactionData({ status: 'past_due' })))).toMatchObject({ kind: 'ignored', type });
  });

  it('a completed one-time purchase (no subscription) is ignored', () => {
    expect(one(notification('transaction.completed', transactionData({ subscription_id: null })))).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('one-time'),
    });
  });

  it('a $0 completed transaction (trial start) carries hints but no payment', () => {
    const data = transactionData();
    data.details.totals = { ...data.details.totals, subtotal: '0', discount: '0', tax: '0', total: '0', grand_total: '0' };
    const e = fact(one(notification('transaction.completed', data)));
    expect(e.payment).toBeUndefined();
    expect(e.hints.referralId).toBe(IDS.referral);
  });

  it('a grand_total that is not an amount string: ignored, never a wrong payment', () => {
    const data = transactionData();
    data.details.totals = { ...data.details.totals, grand_total: '43.55' };
    expect(one(notification('transaction.completed', data))).toMatchObject({ kind: 'ignored' });
  });

  it('credit from the balance: amount is grand_total (paid), not total', () => {
    const data = transactionData();
    data.details.totals = { ...data.details.totals, credit: '1000', grand_total: '3355' };
    expect(fact(one(notification('transaction.completed', data))).payment).toMatchObject({ amount: 3355, amountExcludingTax: 4000 });
  });
});

describe('adjustment events', () => {
  it('a refund created pending_approval is ignored; its approval counts, with the adjustment id', () => {
    expect(one(notification('adjustment.created', adjustmentData()))).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('approved'),
    });
    const approved = notification('adjustment.updated', adjustmentData({ status: 'approved', updated_at: '2024-05-03T09:00:00.000001Z' }));
    const e = fact(one(approved));
    expect(e.refund).toEqual({
      id: IDS.adjustment,
      paymentId: IDS.checkoutTxn,
      subscriptionId: IDS.subscription,
      amount: 1089,
      currency: 'USD',
      refundedAtSeconds: Date.UTC(2024, 4, 3, 9, 0, 0) / 1000,
      kind: 'refund',
    });
    expect(e.subscription).toEqual({ id: IDS.subscription });
  });

  it('a chargeback (Paddle creates it approved) counts as a chargeback', () => {
    const e = fact(one(notification('adjustment.created', adjustmentData({ action: 'chargeback', type: 'full', status: 'approved' }))));
    expect(e.refund?.kind).toBe('chargeback');
  });

  it.each([
    ['rejected refund', { status: 'rejected' }],
    ['reversed refund', { status: 'reversed' }],
    ['credit', { action: 'credit', status: 'approved' }],
    ['chargeback warning', { action: 'chargeback_warning', status: 'approved' }],
    ['chargeback reverse', { action: 'chargeback_reverse', status: 'approved' }],
    ['no subscription', { status: 'approved', subscription_id: null }],
  ])('%s is ignored', (_label, over) => {
    expect(one(notification('adjustment.updated', adjustmentData(over)))).toMatchObject({ kind: 'ignored' });
  });
});

describe('bodies that are not usable notifications', () => {
  it('malformed JSON: a single ignored event', () => {
    expect(parsePaddleBillingEvents('{"event_id": "evt_1", ')).toEqual([
      { kind: 'ignored', eventId: '', type: '', reason: 'malformed JSON' },
    ]);
  });

  it.each([
    ['an array', []],
    ['no data', { event_id: 'evt_1', event_type: 'subscription.created', occurred_at: '2024-04-12T10:15:33Z' }],
    ['no event id', { event_type: 'subscription.created', occurred_at: '2024-04-12T10:15:33Z', data: {} }],
    ['bad occurred_at', { event_id: 'evt_1', event_type: 'subscription.created', occurred_at: 'yesterday', data: {} }],
  ])('%s: a single ignored event', (_label, body) => {
    expect(parse(body)).toEqual([expect.objectContaining({ kind: 'ignored' })]);
  });

  it('an event type Refloop does not use: ignored with its type and id', () => {
    const body = notification('price.created', { id: 'pri_1' });
    expect(parse(body)).toEqual([
      { kind: 'ignored', eventId: body.event_id, type: 'price.created', reason: 'event type price.created is not used' },
    ]);
  });
});

describe('lookupsFor: what the adapter must fetch', () => {
  const envelope = (body: unknown) => {
    const r = parseEnvelope(JSON.stringify(body));
    if (!r.ok) throw new Error('bad envelope');
    return r.envelope;
  };

  it('a subscription event needs its customer email', () => {
    expect(lookupsFor(envelope(notification('subscription.created', subscriptionData())))).toEqual({
      customerIds: [IDS.customer],
      discountIds: [],
    });
  });

  it('a checkout transaction needs its discount code; a renewal or an included discount does not', () => {
    expect(lookupsFor(envelope(notification('transaction.completed', transactionData())))).toEqual({
      customerIds: [],
      discountIds: [IDS.discount],
    });
    expect(lookupsFor(envelope(notification('transaction.completed', transactionData({ origin: 'subscription_recurring' }))))).toEqual({
      customerIds: [],
      discountIds: [],
    });
    expect(
      lookupsFor(envelope(notification('transaction.completed', transactionData({ discount: { id: IDS.discount, code: 'X' } })))),
    ).toEqual({ customerIds: [], discountIds: [] });
  });

  it('toBillingEvents is the same as parsePaddleBillingEvents on an envelope', () => {
    const body = notification('subscription.updated', subscriptionData());
    expect(toBillingEvents(envelope(body))).toEqual(parse(body));
  });
});
