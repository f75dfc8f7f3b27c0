// Chargebee events -> normalized BillingEvents (shared/providers/chargebee/events.ts) over the reference
// samples (a composed Product Catalog 2.0 subscription_created, a recorded Catalog 1.0 payment_succeeded),
// composed refunds, credit notes and chargebacks; every status; past_due from due_invoices_count; ignored
// types; and the form encoding and amounts of shared/providers/chargebee/wire.ts.
import type { BillingEvent } from '../../shared/billing/port';
import { isAppliedType, parseChargebeeEvents, statusOf, subscriptionFacts } from '../../shared/providers/chargebee/events';
import { decodeForm, encodeForm, isSupportedCurrency, rowsOf, toChargebeeAmount } from '../../shared/providers/chargebee/wire';

type Json = Record<string, unknown>;

// Composed from the SDK's field names (values invented): Product Catalog 2.0.
const subscriptionCreated = {
  id: 'ev_16BPgETyVrQbiGhA',
  occurred_at: 1767225600,
  source: 'hosted_page',
  object: 'event',
  api_version: 'v2',
  event_type: 'subscription_created',
  webhook_status: 'scheduled',
  content: {
    subscription: {
      id: 'AzZTZgVlCqZ3S1Ab',
      customer_id: 'AzZTZgVlCqZ2k1Aa',
      status: 'active',
      currency_code: 'USD',
      current_term_start: 1767225600,
      current_term_end: 1769904000,
      next_billing_at: 1769904000,
      created_at: 1767225600,
      started_at: 1767225600,
      activated_at: 1767225600,
      resource_version: 1767225600123,
      due_invoices_count: 0,
      deleted: false,
      object: 'subscription',
      mrr: 2900,
      subscription_items: [
        {
          item_price_id: 'pro-USD-monthly',
          item_type: 'plan',
          quantity: 1,
          unit_price: 2900,
          amount: 2900,
          billing_period: 1,
          billing_period_unit: 'month',
          object: 'subscription_item',
        },
      ],
      coupons: [{ coupon_id: 'refloop-pct2000-once', coupon_code: 'JANE-7Q2K', applied_count: 1, object: 'coupon' }],
      cf_refloop_referral_id: 'rf_01JH7Q2K',
      meta_data: { refloop_referral_id: 'rf_01JH7Q2K' },
    },
    customer: {
      id: 'AzZTZgVlCqZ2k1Aa',
      email: 'jane@example.com',
      resource_version: 1767225600010,
      deleted: false,
      object: 'customer',
      promotional_credits: 0,
      preferred_currency_code: 'USD',
      cf_refloop_referral_id: 'rf_01JH7Q2K',
    },
  },
};

// Recorded (trimmed), Product Catalog 1.0: `plan_id` on the subscription.
const paymentSucceeded = {
  id: 'ev_AzqYRySIstMN16O',
  occurred_at: 1607708103,
  source: 'admin_console',
  user: 'user@example.com',
  object: 'event',
  api_version: 'v2',
  content: {
    transaction: {
      id: 'txn_AzqYRySIstMLf6N',
      customer_id: '16BjsrSIh4AdLqkD',
      subscription_id: 'tax customer test',
      payment_method: 'cash',
      gateway: 'not_applicable',
      type: 'payment',
      date: 1607700898,
      amount: 450000,
      status: 'success',
      resource_version: 1607708103483,
      object: 'transaction',
      currency_code: 'USD',
      amount_unused: 0,
      linked_invoices: [
        { invoice_id: '22', applied_amount: 450000, applied_at: 1607708103, invoice_total: 450000, invoice_status: 'paid' },
      ],
      linked_refunds: [],
    },
    invoice: {
      id: '22',
      customer_id: '16BjsrSIh4AdLqkD',
      subscription_id: 'tax customer test',
      recurring: true,
      status: 'paid',
      price_type: 'tax_exclusive',
      total: 450000,
      amount_paid: 450000,
      amount_adjusted: 0,
      credits_applied: 0,
      amount_due: 0,
      paid_at: 1607700898,
      first_invoice: true,
      currency_code: 'USD',
      tax: 0,
      sub_total: 450000,
      object: 'invoice',
    },
    customer: {
      id: '16BjsrSIh4AdLqkD',
      email: 'taxes@test.com',
      promotional_credits: 0,
      preferred_currency_code: 'USD',
      object: 'customer',
    },
    subscription: {
      id: 'tax customer test',
      plan_id: 'contract-plan',
      plan_quantity: 6,
      plan_unit_price: 50000,
      billing_period: 1,
      billing_period_unit: 'year',
      status: 'active',
      current_term_start: 1607705376,
      current_term_end: 1639241376,
      next_billing_at: 1639241376,
      resource_version: 1607705383330,
      currency_code: 'USD',
      mrr: 25000,
      object: 'subscription',
    },
  },
  event_type: 'payment_succeeded',
  webhook_status: 'not_configured',
};

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;
const sub2 = () => clone(subscriptionCreated.content.subscription) as Json;
const customer2 = () => clone(subscriptionCreated.content.customer) as Json;

function ev(type: string, content: Json, over: Json = {}) {
  return {
    id: `ev_${type}_1`,
    occurred_at: 1767300000,
    source: 'system',
    object: 'event',
    api_version: 'v2',
    event_type: type,
    webhook_status: 'scheduled',
    content,
    ...over,
  };
}

const parse = (body: unknown, planNames: Map<string, string> = new Map()) => parseChargebeeEvents(JSON.stringify(body), { planNames });
const one = (body: unknown, planNames?: Map<string, string>): BillingEvent => {
  const events = parse(body, planNames);
  expect(events).toHaveLength(1);
  return events[0] as BillingEvent;
};
const fact = (e: BillingEvent) => {
  if (e.kind !== 'subscription') throw new Error(`expected a subscription event, got ${JSON.stringify(e)}`);
  return e;
};
const ignoredReason = (e: BillingEvent) => {
  if (e.kind !== 'ignored') throw new Error(`expected an ignored event, got ${JSON.stringify(e)}`);
  return e.reason;
};

const invoice = (over: Json = {}): Json => ({
  id: 'inv_7',
  customer_id: 'AzZTZgVlCqZ2k1Aa',
  subscription_id: 'AzZTZgVlCqZ3S1Ab',
  recurring: true,
  status: 'paid',
  price_type: 'tax_exclusive',
  sub_total: 2900,
  tax: 580,
  total: 3480,
  amount_paid: 3480,
  amount_due: 0,
  paid_at: 1767225700,
  first_invoice: true,
  currency_code: 'USD',
  deleted: false,
  object: 'invoice',
  ...over,
});
const creditNote = (over: Json = {}): Json => ({
  id: 'cn_1',
  customer_id: 'AzZTZgVlCqZ2k1Aa',
  subscription_id: 'AzZTZgVlCqZ3S1Ab',
  reference_invoice_id: 'inv_7',
  type: 'refundable',
  reason_code: 'product_unsatisfactory',
  status: 'refunded',
  date: 1767400000,
  currency_code: 'USD',
  total: 1740,
  sub_total: 1450,
  amount_refunded: 1740,
  deleted: false,
  object: 'credit_note',
  ...over,
});
const refundTxn = (over: Json = {}): Json => ({
  id: 'txn_refund_1',
  customer_id: 'AzZTZgVlCqZ2k1Aa',
  subscription_id: 'AzZTZgVlCqZ3S1Ab',
  type: 'refund',
  status: 'success',
  date: 1767400100,
  amount: 1740,
  currency_code: 'USD',
  deleted: false,
  object: 'transaction',
  ...over,
});

describe('subscription events (the composed Catalog 2.0 sample)', () => {
  it('subscription_created: state, plan named by the lookup, email, customer, referral and coupon; ordered by resource_version', () => {
    const e = fact(one(subscriptionCreated, new Map([['pro-USD-monthly', 'Pro']])));
    expect(e).toEqual({
      kind: 'subscription',
      eventId: 'ev_16BPgETyVrQbiGhA',
      occurredAtMs: 1767225600123,
      subscription: {
        id: 'AzZTZgVlCqZ3S1Ab',
        status: 'active',
        currency: 'USD',
        customerId: 'AzZTZgVlCqZ2k1Aa',
        email: 'jane@example.com',
        unitPrice: 2900,
        plan: { id: 'pro-USD-monthly', name: 'Pro', amount: 2900, currency: 'USD', interval: 'month', frequency: 1 },
        nextBillDate: '2026-02-01',
        lastBillDate: '2026-01-01',
      },
      hints: { referralId: 'rf_01JH7Q2K', couponCode: 'JANE-7Q2K' },
    });
    expect(e.orderUncertain).toBeUndefined();
  });

  it('the plan name is null when the lookup found none; the unit price sums plan and addons × quantity, not one-time charges', () => {
    const sub = sub2();
    (sub.subscription_items as Json[]).push(
      { item_price_id: 'seats-USD-monthly', item_type: 'addon', quantity: 3, unit_price: 500 },
      { item_price_id: 'setup-USD', item_type: 'charge', quantity: 1, unit_price: 9900 },
    );
    const e = fact(one(ev('subscription_changed', { subscription: sub, customer: customer2() })));
    expect(e.subscription.unitPrice).toBe(2900 + 1500);
    expect(e.subscription.plan).toEqual({
      id: 'pro-USD-monthly',
      name: null,
      amount: 2900,
      currency: 'USD',
      interval: 'month',
      frequency: 1,
    });
  });

  it.each([
    ['future', {}, 'trialling'],
    ['in_trial', {}, 'trialling'],
    ['active', {}, 'active'],
    ['active', { due_invoices_count: 1 }, 'past_due'],
    ['non_renewing', {}, 'active'],
    ['non_renewing', { due_invoices_count: 2 }, 'past_due'],
    ['paused', {}, 'paused'],
    ['cancelled', {}, 'deleted'],
    ['transferred', {}, 'deleted'],
    ['active', { deleted: true }, 'deleted'],
  ])('status %s %j -> %s', (status, over, expected) => {
    expect(statusOf({ ...sub2(), status, ...over })).toBe(expected);
    const e = fact(one(ev('subscription_changed', { subscription: { ...sub2(), status, ...over }, customer: customer2() })));
    expect(e.subscription.status).toBe(expected);
  });

  it('an unknown status word is left out (unknown, not changed)', () => {
    expect(statusOf({ status: 'something_new' })).toBeNull();
    expect(
      fact(one(ev('subscription_changed', { subscription: { ...sub2(), status: 'something_new' } }))).subscription.status,
    ).toBeUndefined();
  });

  it('no next bill date once non_renewing, paused, cancelled or deleted; no last bill date while in trial or future', () => {
    for (const status of ['non_renewing', 'paused', 'cancelled']) {
      expect(subscriptionFacts({ ...sub2(), status })?.nextBillDate).toBeNull();
    }
    expect(fact(one(ev('subscription_deleted', { subscription: { ...sub2(), status: 'active' } }))).subscription).toMatchObject({
      status: 'deleted',
      nextBillDate: null,
    });
    for (const status of ['in_trial', 'future']) {
      const facts = subscriptionFacts({ ...sub2(), status, next_billing_at: 1768435200 });
      expect(facts?.lastBillDate).toBeUndefined();
      expect(facts).toMatchObject({ status: 'trialling', nextBillDate: '2026-01-15' });
    }
  });

  it('every subscription_* event the worker applies reads the same way', () => {
    for (const type of [
      'subscription_created',
      'subscription_started',
      'subscription_activated',
      'subscription_changed',
      'subscription_renewed',
      'subscription_cancelled',
      'subscription_reactivated',
      'subscription_paused',
      'subscription_resumed',
      'subscription_cancellation_scheduled',
      'subscription_scheduled_cancellation_removed',
    ]) {
      expect(isAppliedType(type)).toBe(true);
      expect(fact(one(ev(type, { subscription: sub2(), customer: customer2() }))).subscription.id).toBe('AzZTZgVlCqZ3S1Ab');
    }
  });

  it('without resource_version: occurred_at in ms, order uncertain (the worker re-reads)', () => {
    const sub = sub2();
    delete sub.resource_version;
    const e = fact(one(ev('subscription_changed', { subscription: sub })));
    expect(e.occurredAtMs).toBe(1767300000 * 1000);
    expect(e.orderUncertain).toBe(true);
    expect(e.subscription.email).toBeUndefined();
  });

  it('a subscription_created with a 100 % coupon and no payment still mirrors the subscription', () => {
    const sub = { ...sub2(), coupons: [{ coupon_id: 'refloop-pct10000-forever', coupon_code: 'FREE-1' }] };
    const e = fact(
      one(ev('subscription_created', { subscription: sub, customer: customer2(), invoice: invoice({ total: 0, tax: 0, amount_paid: 0 }) })),
    );
    expect(e.payment).toBeUndefined();
    expect(e.subscription.status).toBe('active');
    expect(e.hints.couponCode).toBe('FREE-1');
  });

  it('attribution: subscription cf_, then customer cf_, then subscription meta_data, then customer meta_data (a JSON string too)', () => {
    const base = { ...sub2() };
    delete base.cf_refloop_referral_id;
    delete base.meta_data;
    const cust = customer2();
    delete cust.cf_refloop_referral_id;
    const hints = (sub: Json, c: Json) => fact(one(ev('subscription_changed', { subscription: sub, customer: c }))).hints.referralId;
    expect(hints({ ...base, cf_refloop_referral_id: 'A' }, { ...cust, cf_refloop_referral_id: 'B' })).toBe('A');
    expect(hints(base, { ...cust, cf_refloop_referral_id: 'B', meta_data: { refloop_referral_id: 'D' } })).toBe('B');
    expect(hints({ ...base, meta_data: { refloop_referral_id: 'C' } }, { ...cust, meta_data: { refloop_referral_id: 'D' } })).toBe('C');
    expect(hints(base, { ...cust, meta_data: '{"refloop_referral_id":"D"}' })).toBe('D');
    expect(hints(base, cust)).toBeUndefined();
  });

  it("a customer that is not the subscription's gives no email", () => {
    const e = fact(one(ev('subscription_changed', { subscription: sub2(), customer: { ...customer2(), id: 'other' } })));
    expect(e.subscription.email).toBeUndefined();
    expect(e.subscription.customerId).toBe('AzZTZgVlCqZ2k1Aa');
  });
});

describe('Product Catalog 1.0 (the recorded payment_succeeded): read, the plan unnamed', () => {
  it('payment_succeeded: the invoice as the payment, the subscription from plan_id/plan_unit_price × plan_quantity', () => {
    const e = fact(one(paymentSucceeded));
    expect(e).toEqual({
      kind: 'subscription',
      eventId: 'ev_AzqYRySIstMN16O',
      occurredAtMs: 1607705383330,
      subscription: {
        id: 'tax customer test',
        status: 'active',
        currency: 'USD',
        customerId: '16BjsrSIh4AdLqkD',
        email: 'taxes@test.com',
        unitPrice: 300000,
        plan: { id: 'contract-plan', name: null, amount: 50000, currency: 'USD', interval: 'year', frequency: 1 },
        nextBillDate: '2021-12-11',
        lastBillDate: '2020-12-11',
      },
      payment: {
        id: '22',
        subscriptionId: 'tax customer test',
        amount: 450000,
        amountExcludingTax: 450000,
        currency: 'USD',
        paidAtSeconds: 1607700898,
      },
      hints: {},
    });
  });
});

describe('payments', () => {
  const paid = (
    inv: Json = invoice(),
    txn: Json | null = { id: 'txn_1', type: 'payment', status: 'success', amount: 3480, currency_code: 'USD' },
  ) => ev('payment_succeeded', { ...(txn ? { transaction: txn } : {}), invoice: inv, subscription: sub2(), customer: customer2() });

  it('amount = amount_paid, excluding tax = total − tax; the subscription state and the hints come along', () => {
    const e = fact(one(paid()));
    expect(e.payment).toEqual({
      id: 'inv_7',
      subscriptionId: 'AzZTZgVlCqZ3S1Ab',
      amount: 3480,
      amountExcludingTax: 2900,
      currency: 'USD',
      paidAtSeconds: 1767225700,
    });
    expect(e.subscription).toMatchObject({ status: 'active', email: 'jane@example.com' });
    expect(e.hints.referralId).toBe('rf_01JH7Q2K');
  });

  it('promotional credits are a discount inside total, before tax: excluding tax follows', () => {
    const inv = invoice({
      sub_total: 2900,
      discounts: [{ entity_type: 'promotional_credits', amount: 1000 }],
      tax: 380,
      total: 2280,
      amount_paid: 2280,
    });
    expect(fact(one(paid(inv))).payment).toMatchObject({ amount: 2280, amountExcludingTax: 1900 });
  });

  it('a $0 invoice (100 % coupon, credits) is no payment; the subscription is still mirrored', () => {
    const e = fact(one(paid(invoice({ total: 0, tax: 0, amount_paid: 0 }))));
    expect(e.payment).toBeUndefined();
    expect(e.subscription.id).toBe('AzZTZgVlCqZ3S1Ab');
  });

  it('JPY (zero-decimal) amounts are already the minor unit', () => {
    const e = fact(one(paid(invoice({ currency_code: 'JPY', total: 3300, tax: 300, amount_paid: 3300 }), null)));
    expect(e.payment).toMatchObject({ amount: 3300, amountExcludingTax: 3000, currency: 'JPY' });
  });

  it('a three-decimal currency is refused with a reason', () => {
    const sub = { ...sub2(), currency_code: 'KWD' };
    const body = ev('payment_succeeded', { invoice: invoice({ currency_code: 'KWD' }), subscription: sub });
    expect(ignoredReason(one(body))).toMatch(/KWD is a three-decimal currency/);
    expect(isSupportedCurrency('KWD')).toBe(false);
    expect(isSupportedCurrency('JPY')).toBe(true);
    expect(() => toChargebeeAmount(100, 'BHD')).toThrow(/three-decimal/);
  });

  it('only a success transaction of type payment on a paid invoice counts', () => {
    expect(ignoredReason(one(paid(invoice(), { id: 't', type: 'payment', status: 'in_progress' })))).toMatch(/not a successful payment/);
    expect(ignoredReason(one(paid(invoice({ status: 'payment_due' }))))).toMatch(/not paid/);
    expect(fact(one(paid(invoice({ subscription_id: undefined }), null))).payment?.subscriptionId).toBe('AzZTZgVlCqZ3S1Ab');
    expect(ignoredReason(one(paid(invoice({ paid_at: undefined }), null)))).toBe(
      'paid invoice without a usable amount_paid, currency or paid_at',
    );
    const noSub = ev('payment_succeeded', { invoice: invoice({ subscription_id: undefined }) });
    expect(ignoredReason(one(noSub))).toMatch(/no subscription/);
  });

  it('payment_failed: the subscription past_due (an active one), trials and ended ones keep their status', () => {
    const failed = (sub: Json) =>
      fact(
        one(
          ev('payment_failed', {
            transaction: { id: 't', type: 'payment', status: 'failure' },
            invoice: invoice({ status: 'payment_due' }),
            subscription: sub,
            customer: customer2(),
          }),
        ),
      );
    expect(failed(sub2()).subscription.status).toBe('past_due');
    expect(failed(sub2()).payment).toBeUndefined();
    expect(failed({ ...sub2(), status: 'in_trial' }).subscription.status).toBe('trialling');
    expect(failed({ ...sub2(), status: 'cancelled' }).subscription.status).toBe('deleted');
  });
});

describe('refunds and chargebacks: one fact per refundable credit note', () => {
  const refunded = (note: Json | null = creditNote(), txn: Json = refundTxn()) =>
    ev('payment_refunded', {
      transaction: txn,
      invoice: invoice(),
      ...(note ? { credit_note: note } : {}),
      subscription: sub2(),
      customer: customer2(),
    });
  const created = (note: Json = creditNote()) => ev('credit_note_created', { credit_note: note }, { id: 'ev_cn_created_1' });

  const expected = {
    id: 'cn_1',
    paymentId: 'inv_7',
    subscriptionId: 'AzZTZgVlCqZ3S1Ab',
    amount: 1740,
    currency: 'USD',
    refundedAtSeconds: 1767400000,
    kind: 'refund',
  };

  it('payment_refunded and credit_note_created of one refund give the same fact (the credit note id), counted once by the flow', () => {
    const a = fact(one(refunded()));
    const b = fact(one(created()));
    expect(a.refund).toEqual(expected);
    expect(b.refund).toEqual(expected);
    expect(a.subscription.id).toBe(b.subscription.id);
    expect(b.subscription).toEqual({ id: 'AzZTZgVlCqZ3S1Ab' });
  });

  it('a partial refund is its note total; a note still refund_due counts only with its payment_refunded', () => {
    expect(fact(one(created(creditNote({ total: 500 })))).refund).toEqual({ ...expected, amount: 500 });
    expect(ignoredReason(one(created(creditNote({ status: 'refund_due' }))))).toMatch(/refund_due: no money went back yet/);
    expect(fact(one(refunded(creditNote({ status: 'refund_due' }))))).toMatchObject({ refund: expected });
  });

  it('payment_refunded without a credit_note reads the refund transaction’s linked credit note', () => {
    const txn = refundTxn({
      linked_credit_notes: [
        {
          cn_id: 'cn_1',
          applied_amount: 1740,
          cn_total: 1740,
          cn_reference_invoice_id: 'inv_7',
          cn_reason_code: 'other',
          cn_status: 'refunded',
          cn_date: 1767400000,
        },
      ],
    });
    expect(fact(one(refunded(null, txn))).refund).toEqual(expected);
    expect(ignoredReason(one(refunded(null)))).toMatch(/without a credit note/);
  });

  it("chargebacks: reason_code 'chargeback' on either event", () => {
    const note = creditNote({ reason_code: 'chargeback', total: 3480 });
    expect(fact(one(created(note))).refund).toMatchObject({ id: 'cn_1', kind: 'chargeback', amount: 3480 });
    expect(fact(one(refunded(note))).refund).toMatchObject({ id: 'cn_1', kind: 'chargeback', amount: 3480 });
  });

  it('adjustment and store notes, voided notes and a refund not yet successful return no money: ignored', () => {
    expect(ignoredReason(one(created(creditNote({ type: 'adjustment' }))))).toMatch(/returns no money/);
    expect(ignoredReason(one(created(creditNote({ type: 'store' }))))).toMatch(/returns no money/);
    expect(ignoredReason(one(created(creditNote({ status: 'voided' }))))).toMatch(/returns no money/);
    expect(ignoredReason(one(created(creditNote({ reference_invoice_id: undefined }))))).toMatch(/returns no money/);
    expect(ignoredReason(one(refunded(creditNote(), refundTxn({ status: 'in_progress' }))))).toMatch(/not a successful refund/);
  });

  it('refund_initiated claws back nothing (its payment_refunded does)', () => {
    const e = one(
      ev('refund_initiated', { transaction: refundTxn({ status: 'in_progress' }), credit_note: creditNote({ status: 'refund_due' }) }),
    );
    expect(e).toEqual({
      kind: 'ignored',
      eventId: 'ev_refund_initiated_1',
      type: 'refund_initiated',
      reason: expect.stringMatching(/in progress/),
    });
  });
});

describe('ignored bodies', () => {
  it.each([
    ['customer_changed'],
    ['promotional_credits_added'],
    ['promotional_credits_deducted'],
    ['invoice_generated'],
    ['coupon_codes_updated'],
    ['mrr_updated'],
  ])('%s is not applied', (type) => {
    expect(isAppliedType(type)).toBe(false);
    expect(one(ev(type, { customer: customer2() }))).toMatchObject({ kind: 'ignored', eventId: `ev_${type}_1`, type });
  });

  it('malformed JSON, not an event, another API version, no occurred_at', () => {
    expect(parseChargebeeEvents('{')).toEqual([{ kind: 'ignored', eventId: '', type: '', reason: 'malformed JSON' }]);
    expect(ignoredReason(one({ ...subscriptionCreated, object: 'subscription' }))).toMatch(/not a Chargebee event/);
    expect(ignoredReason(one({ ...subscriptionCreated, id: 'evt_1' }))).toMatch(/not a Chargebee event/);
    expect(ignoredReason(one({ ...subscriptionCreated, api_version: 'v1' }))).toMatch(/API version v1/);
    expect(ignoredReason(one({ ...subscriptionCreated, occurred_at: 'soon' }))).toMatch(/occurred_at/);
    expect(ignoredReason(one(ev('subscription_changed', { customer: customer2() })))).toMatch(/without a subscription id/);
  });
});

describe('wire: form encoding and decoding', () => {
  it('lists of objects are indexed by field, then position; values by position; meta_data one JSON field', () => {
    const form = encodeForm({
      customer: { id: 'c 1' },
      subscription_items: [
        { item_price_id: 'day-pass-USD', unit_price: 100 },
        { item_price_id: 'basic-USD', quantity: 1 },
      ],
      coupon_ids: ['FIFTYOFF', 'TENOFF'],
      meta_data: { refloop_referral_id: 'rf_1' },
      status: { is: 'active' },
      skip: undefined,
    });
    expect(decodeURIComponent(form)).toBe(
      'customer[id]=c 1&subscription_items[item_price_id][0]=day-pass-USD&subscription_items[unit_price][0]=100&subscription_items[item_price_id][1]=basic-USD&subscription_items[quantity][1]=1&coupon_ids[0]=FIFTYOFF&coupon_ids[1]=TENOFF&meta_data={"refloop_referral_id":"rf_1"}&status[is]=active',
    );
    const decoded = decodeForm(form);
    expect(decoded).toEqual({
      customer: { id: 'c 1' },
      subscription_items: { item_price_id: ['day-pass-USD', 'basic-USD'], unit_price: ['100'], quantity: [undefined, '1'] },
      coupon_ids: ['FIFTYOFF', 'TENOFF'],
      meta_data: '{"refloop_referral_id":"rf_1"}',
      status: { is: 'active' },
    });
    expect(rowsOf(decoded.subscription_items)).toEqual([
      { item_price_id: 'day-pass-USD', unit_price: '100' },
      { item_price_id: 'basic-USD', quantity: '1' },
    ]);
  });

  it('a name whose shape contradicts an earlier one, or a huge index, is refused', () => {
    expect(() => decodeForm('a=1&a[b]=2')).toThrow(/contradicts/);
    expect(() => decodeForm('a[0]=1&a[b]=2')).toThrow(/contradicts/);
    expect(() => decodeForm('a[5000]=1')).toThrow(/index/);
  });
});
