// Stripe events -> normalized BillingEvents (shared/providers/stripe/events.ts), Stripe's amount units
// (zero-decimal list) and form encoding (shared/providers/stripe/wire.ts).
import type { BillingEvent } from '../../shared/billing/port';
import { centsToMinor, minorToCents } from '../../shared/domain/currency';
import {
  batchLookupsOf,
  lookupsFor,
  parseEnvelope,
  parseStripeEvents,
  toBillingEvents,
  type Enrichment,
} from '../../shared/providers/stripe/events';
import {
  STRIPE_API_VERSION,
  decodeForm,
  encodeForm,
  fromStripeAmount,
  stripeExponent,
  toStripeAmount,
} from '../../shared/providers/stripe/wire';
import { IDS, T, charge, checkoutSession, dispute, event, invoice, refund, subscription } from '../fixtures/stripe/events';

const paidInvoice = { invoiceId: IDS.invoice, subscriptionId: IDS.subscription };
const withInvoice: Enrichment = { invoicesByPaymentIntent: new Map([[IDS.paymentIntent, paidInvoice]]) };

const parse = (body: unknown, enrichment: Enrichment = {}) => parseStripeEvents(JSON.stringify(body), enrichment);
const one = (body: unknown, enrichment: Enrichment = {}): BillingEvent => {
  const events = parse(body, enrichment);
  expect(events).toHaveLength(1);
  return events[0] as BillingEvent;
};
const fact = (e: BillingEvent) => {
  if (e.kind !== 'subscription') throw new Error(`expected a subscription event, got ${JSON.stringify(e)}`);
  return e;
};
const envelope = (body: unknown) => {
  const r = parseEnvelope(JSON.stringify(body));
  if (!r.ok) throw new Error('bad envelope');
  return r.envelope;
};

describe('customer.subscription.* events', () => {
  it('created: state, plan (product name looked up), unit price over items, item dates, customer, referral; order uncertain', () => {
    const body = event('customer.subscription.created', subscription());
    const e = fact(
      one(body, { emails: new Map([[IDS.customer, 'jane@example.com']]), productNames: new Map([[IDS.product, 'Acme Pro']]) }),
    );
    expect(e).toEqual({
      kind: 'subscription',
      eventId: body.id,
      occurredAtMs: T.event * 1000,
      orderUncertain: true,
      subscription: {
        id: IDS.subscription,
        status: 'active',
        email: 'jane@example.com',
        currency: 'USD',
        unitPrice: 1500 * 3 + 500,
        plan: { id: IDS.price, name: 'Acme Pro', amount: 1500, currency: 'USD', interval: 'month', frequency: 1 },
        nextBillDate: '2024-05-12',
        lastBillDate: '2024-04-12',
        customerId: IDS.customer,
      },
      hints: { referralId: IDS.referral },
    });
  });

  it('an expanded customer and product are read in place; without a lookup, the price nickname names the plan', () => {
    const sub = subscription({ customer: { id: IDS.customer, object: 'customer', email: 'exp@example.com' } as never });
    (sub.items.data[0] as { price: { product: unknown } }).price.product = { id: IDS.product, object: 'product', name: 'Expanded Pro' };
    expect(fact(one(event('customer.subscription.updated', sub))).subscription).toMatchObject({
      email: 'exp@example.com',
      customerId: IDS.customer,
      plan: { name: 'Expanded Pro' },
    });
    const plain = fact(one(event('customer.subscription.updated', subscription()))).subscription;
    expect(plain.plan?.name).toBe('Pro monthly');
    expect(plain).not.toHaveProperty('email');
  });

  it.each([
    ['trialing', 'trialling'],
    ['active', 'active'],
    ['past_due', 'past_due'],
    ['unpaid', 'past_due'],
    ['incomplete', 'past_due'],
    ['paused', 'paused'],
    ['canceled', 'deleted'],
    ['incomplete_expired', 'deleted'],
  ] as const)('status %s -> %s', (wire, status) => {
    expect(fact(one(event('customer.subscription.updated', subscription({ status: wire })))).subscription.status).toBe(status);
  });

  it('deleted: no next bill date (a known none)', () => {
    const s = fact(
      one(
        event('customer.subscription.deleted', subscription({ status: 'canceled', canceled_at: T.start + 100, ended_at: T.start + 100 })),
      ),
    ).subscription;
    expect(s).toMatchObject({ status: 'deleted', nextBillDate: null });
  });

  it('set to cancel at period end: no next bill', () => {
    expect(
      fact(one(event('customer.subscription.updated', subscription({ cancel_at_period_end: true })))).subscription.nextBillDate,
    ).toBeNull();
  });

  it('trialing: the trial end is the next bill, nothing billed yet', () => {
    const s = fact(one(event('customer.subscription.created', subscription({ status: 'trialing' })))).subscription;
    expect(s.nextBillDate).toBe('2024-05-12');
    expect(s).not.toHaveProperty('lastBillDate');
  });

  it('dates come from the items: the earliest current_period_end', () => {
    const sub = subscription();
    (sub.items.data[1] as { current_period_end: number }).current_period_end = T.end - 10 * 86400;
    expect(fact(one(event('customer.subscription.updated', sub))).subscription.nextBillDate).toBe('2024-05-02');
  });

  it('a metered or tiered item makes the renewal amount unknown (absent, never wrong)', () => {
    const metered = subscription();
    (metered.items.data[1]?.price.recurring as { usage_type: string }).usage_type = 'metered';
    expect(fact(one(event('customer.subscription.updated', metered))).subscription).not.toHaveProperty('unitPrice');
    const tiered = subscription();
    (tiered.items.data[0]?.price as { unit_amount: number | null }).unit_amount = null;
    const s = fact(one(event('customer.subscription.updated', tiered))).subscription;
    expect(s).not.toHaveProperty('unitPrice');
    expect(s.plan?.amount).toBeNull();
  });

  it('an unknown status is left out; no metadata: no hint', () => {
    const e = fact(one(event('customer.subscription.updated', subscription({ status: 'something_new' as never, metadata: {} }))));
    expect(e.subscription).not.toHaveProperty('status');
    expect(e.hints).toEqual({});
  });

  it('a subscription event without a subscription id is ignored', () => {
    expect(one(event('customer.subscription.updated', subscription({ id: 'nope' })))).toMatchObject({ kind: 'ignored' });
  });

  it('lookups: the customer email and the product name', () => {
    expect(lookupsFor(envelope(event('customer.subscription.created', subscription())))).toMatchObject({
      customerIds: [IDS.customer],
      productIds: [IDS.product],
    });
  });
});

describe('checkout.session.completed', () => {
  it('attribution: client_reference_id, session id, promotion code (looked up), the customer email; no payment', () => {
    const body = event('checkout.session.completed', checkoutSession());
    const e = fact(one(body, { promotionCodes: new Map([[IDS.promo, 'RFJANE7']]) }));
    expect(e).toEqual({
      kind: 'subscription',
      eventId: body.id,
      occurredAtMs: T.event * 1000,
      subscription: { id: IDS.subscription, customerId: IDS.customer, email: 'jane@example.com' },
      hints: { referralId: IDS.referral, checkoutId: IDS.session, couponCode: 'RFJANE7' },
    });
    expect(lookupsFor(envelope(body))).toMatchObject({ promotionCodeIds: [IDS.promo], customerIds: [] });
  });

  it('no client_reference_id: the session metadata names the referral; no discount: no coupon', () => {
    const e = fact(
      one(
        event(
          'checkout.session.completed',
          checkoutSession({ client_reference_id: null, metadata: { refloop_referral_id: 'ref-meta' }, discounts: [] }),
        ),
      ),
    );
    expect(e.hints).toEqual({ referralId: 'ref-meta', checkoutId: IDS.session });
  });

  it('a payment or setup checkout, or an open one, is ignored', () => {
    expect(one(event('checkout.session.completed', checkoutSession({ mode: 'payment', subscription: null })))).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('payment'),
    });
    expect(one(event('checkout.session.completed', checkoutSession({ mode: 'setup', subscription: null })))).toMatchObject({
      kind: 'ignored',
    });
    expect(one(event('checkout.session.completed', checkoutSession({ status: 'open' })))).toMatchObject({ kind: 'ignored' });
  });
});

describe('invoice.paid', () => {
  it('the first invoice of a subscription: a payment (in_), excluding tax = total - taxes, checkout id when found', () => {
    const body = event('invoice.paid', invoice());
    const e = fact(one(body, { checkoutBySubscription: new Map([[IDS.subscription, IDS.session]]) }));
    expect(e.payment).toEqual({
      id: IDS.invoice,
      subscriptionId: IDS.subscription,
      amount: 4950,
      amountExcludingTax: 4500,
      currency: 'USD',
      paidAtSeconds: T.start + 2,
      checkoutId: IDS.session,
    });
    expect(e.subscription).toEqual({
      id: IDS.subscription,
      customerId: IDS.customer,
      email: 'jane@example.com',
      lastBillDate: '2024-04-12',
    });
    expect(e.hints).toEqual({ referralId: IDS.referral, checkoutId: IDS.session });
    expect(lookupsFor(envelope(body)).checkoutForSubscriptions).toEqual([IDS.subscription]);
  });

  it('a renewal: a payment with no checkout id; nothing to look up', () => {
    const body = event('invoice.paid', invoice({ id: 'in_renewal1', billing_reason: 'subscription_cycle' }));
    const e = fact(one(body, { checkoutBySubscription: new Map([[IDS.subscription, IDS.session]]) }));
    expect(e.payment).toMatchObject({ id: 'in_renewal1', amount: 4950 });
    expect(e.payment).not.toHaveProperty('checkoutId');
    expect(lookupsFor(envelope(body)).checkoutForSubscriptions).toEqual([]);
  });

  it('a customer balance applied: amount is what was paid, not the total', () => {
    const e = fact(one(event('invoice.paid', invoice({ amount_paid: 3950, starting_balance: -1000, ending_balance: 0 }))));
    expect(e.payment).toMatchObject({ amount: 3950, amountExcludingTax: 4500 });
  });

  it('a $0 invoice (trial, 100 % off, all from credit) is no payment but keeps the subscription and hints', () => {
    const e = fact(one(event('invoice.paid', invoice({ amount_paid: 0, total: 0, total_taxes: [] }))));
    expect(e.payment).toBeUndefined();
    expect(e.hints.referralId).toBe(IDS.referral);
  });

  it('an invoice with no subscription parent (one-off), or the pre-Basil top-level shape, is ignored', () => {
    expect(one(event('invoice.paid', invoice({ parent: null })))).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('parent.subscription_details'),
    });
  });

  it('a non-integer amount: ignored, never a wrong payment', () => {
    expect(one(event('invoice.paid', invoice({ amount_paid: 49.5 as never })))).toMatchObject({ kind: 'ignored' });
  });

  it.each(['invoice.payment_failed', 'invoice.finalized', 'invoice.created', 'invoice.payment_succeeded'])('%s never counts', (type) => {
    expect(one(event(type, invoice()))).toMatchObject({ kind: 'ignored', type });
  });
});

describe('charge.refunded: cumulative amount_refunded, one fact per refund', () => {
  it('one partial refund: one refund fact of its amount, mapped to the invoice', () => {
    const body = event('charge.refunded', charge([refund(IDS.refund1, 1000)]));
    const events = parse(body, withInvoice);
    expect(events).toEqual([
      {
        kind: 'subscription',
        eventId: body.id,
        occurredAtMs: T.event * 1000,
        subscription: { id: IDS.subscription },
        refund: {
          id: IDS.refund1,
          paymentId: IDS.invoice,
          subscriptionId: IDS.subscription,
          amount: 1000,
          currency: 'USD',
          refundedAtSeconds: T.start + 86400,
          kind: 'refund',
        },
        hints: {},
      },
    ]);
  });

  it('a second partial refund: the event carries both refunds (amount_refunded 2500); the new one is its own fact', () => {
    const body = event('charge.refunded', charge([refund(IDS.refund2, 1500, { created: T.start + 2 * 86400 }), refund(IDS.refund1, 1000)]));
    expect(body.data.object.amount_refunded).toBe(2500);
    const refunds = parse(body, withInvoice).map((e) => fact(e).refund);
    expect(refunds.map((r) => [r?.id, r?.amount])).toEqual([
      [IDS.refund2, 1500],
      [IDS.refund1, 1000],
    ]);
    // Never a fact for the cumulative amount.
    expect(refunds.some((r) => r?.amount === 2500)).toBe(false);
  });

  it('a failed or pending refund is no fact (yet); charge.refund.updated to succeeded counts under the same id', () => {
    const pending = event('charge.refunded', charge([refund(IDS.refund1, 1000, { status: 'pending' })]));
    expect(one(pending, withInvoice)).toMatchObject({ kind: 'ignored', reason: expect.stringContaining('succeeded') });
    const later = fact(one(event('charge.refund.updated', refund(IDS.refund1, 1000)), withInvoice));
    expect(later.refund).toMatchObject({ id: IDS.refund1, amount: 1000, paymentId: IDS.invoice });
    expect(one(event('charge.refund.updated', refund(IDS.refund1, 1000, { status: 'failed' })), withInvoice)).toMatchObject({
      kind: 'ignored',
    });
  });

  it('without the refunds list in the payload (the default since 2022-11-15), the charge is looked up', () => {
    const body = event('charge.refunded', charge(null, { amount_refunded: 1000 }));
    expect(lookupsFor(envelope(body))).toMatchObject({ chargeIds: [IDS.charge], paymentIntentIds: [IDS.paymentIntent] });
    expect(one(body, withInvoice)).toMatchObject({ kind: 'ignored', reason: expect.stringContaining('refunds list') });
    const read = charge([refund(IDS.refund1, 1000)]) as unknown as Record<string, unknown>;
    expect(fact(one(body, { ...withInvoice, charges: new Map([[IDS.charge, read]]) })).refund?.id).toBe(IDS.refund1);
  });

  it('a charge that paid no subscription invoice is ignored', () => {
    expect(one(event('charge.refunded', charge([refund(IDS.refund1, 1000)])))).toMatchObject({
      kind: 'ignored',
      reason: expect.stringContaining('no subscription invoice'),
    });
  });
});

describe('charge.dispute.created', () => {
  it('a chargeback fact for the disputed amount, id = the dispute', () => {
    const e = fact(one(event('charge.dispute.created', dispute()), withInvoice));
    expect(e.refund).toEqual({
      id: IDS.dispute,
      paymentId: IDS.invoice,
      subscriptionId: IDS.subscription,
      amount: 4950,
      currency: 'USD',
      refundedAtSeconds: T.start + 5 * 86400,
      kind: 'chargeback',
    });
  });

  it('no payment intent on the dispute: the charge is looked up for it', () => {
    const body = event('charge.dispute.created', dispute({ payment_intent: null }));
    expect(lookupsFor(envelope(body))).toMatchObject({ chargeIds: [IDS.charge], paymentIntentIds: [] });
    const charges = new Map([[IDS.charge, charge(null) as unknown as Record<string, unknown>]]);
    expect(fact(one(body, { ...withInvoice, charges })).refund?.kind).toBe('chargeback');
  });
});

describe("zero-decimal currencies (Stripe's own list)", () => {
  it('JPY amounts are yen: no conversion, in facts too', () => {
    const sub = subscription({ currency: 'jpy' });
    for (const item of sub.items.data) Object.assign(item.price, { currency: 'jpy', unit_amount: 1200 });
    const s = fact(one(event('customer.subscription.updated', sub))).subscription;
    expect(s).toMatchObject({ currency: 'JPY', unitPrice: 1200 * 3 + 1200, plan: { amount: 1200, currency: 'JPY' } });
    const p = fact(
      one(event('invoice.paid', invoice({ currency: 'jpy', amount_paid: 1320, total: 1320, total_taxes: [{ amount: 120 } as never] }))),
    ).payment;
    expect(p).toMatchObject({ amount: 1320, amountExcludingTax: 1200, currency: 'JPY' });
  });

  it.each([
    ['JPY', 0],
    ['jpy', 0],
    ['KRW', 0],
    ['VND', 0],
    ['CLP', 0],
    ['UGX', 0],
    ['MGA', 0],
    ['XOF', 0],
    ['USD', 2],
    ['EUR', 2],
    ['HUF', 2],
    ['TWD', 2],
    ['ISK', 2],
    ['KWD', 3],
    ['BHD', 3],
  ])('Stripe exponent of %s is %i', (currency, exponent) => {
    expect(stripeExponent(currency)).toBe(exponent);
  });

  it('port minor units follow shared/domain/currency.ts: ISK and HUF (two decimals at Stripe, none there) are converted, others pass', () => {
    expect(fromStripeAmount(1000, 'USD')).toBe(1000);
    expect(fromStripeAmount(500, 'JPY')).toBe(500);
    expect(fromStripeAmount(50000, 'ISK')).toBe(500);
    expect(toStripeAmount(500, 'ISK')).toBe(50000);
    expect(fromStripeAmount(4010, 'isk')).toBe(40); // a pre-2023 fractional króna rounds
    // MGA is zero-decimal in both; HUF 1,234.00 at Stripe is 1,234 forints (not 123,400).
    expect(fromStripeAmount(1500, 'MGA')).toBe(1500);
    expect(toStripeAmount(1500, 'MGA')).toBe(1500);
    expect(fromStripeAmount(123400, 'HUF')).toBe(1234);
    expect(toStripeAmount(1234, 'HUF')).toBe(123400);
    expect(minorToCents(fromStripeAmount(123400, 'HUF'), 'HUF')).toBe(123400);
    for (const c of ['USD', 'JPY', 'HUF', 'ISK', 'MGA', 'KWD', 'TWD', 'IDR'])
      expect(minorToCents(fromStripeAmount(toStripeAmount(centsToMinor(500000, c), c), c), c)).toBe(500000);
    expect(fromStripeAmount(-50000, 'ISK')).toBe(-500);
    const isk = fact(one(event('invoice.paid', invoice({ currency: 'isk', amount_paid: 99000, total: 99000, total_taxes: [] })))).payment;
    expect(isk).toMatchObject({ amount: 990, amountExcludingTax: 990, currency: 'ISK' });
  });
});

describe('envelopes', () => {
  it('malformed JSON: a single ignored event', () => {
    expect(parseStripeEvents('{"id": "evt_1", ')).toEqual([{ kind: 'ignored', eventId: '', type: '', reason: 'malformed JSON' }]);
  });

  it.each([
    ['an array', []],
    ['not an event object', { ...event('invoice.paid', invoice()), object: 'invoice' }],
    ['no data.object', { id: 'evt_1', object: 'event', type: 'invoice.paid', created: T.event, data: {} }],
    ['an id that is not evt_', { ...event('invoice.paid', invoice()), id: 'in_1' }],
    ['created in ms as a string', { ...event('invoice.paid', invoice()), created: '1712916934' }],
  ])('%s: a single ignored event', (_label, body) => {
    expect(parse(body)).toEqual([expect.objectContaining({ kind: 'ignored' })]);
  });

  it('an endpoint on a pre-Basil API version: ignored, saying to recreate it with the pinned version', () => {
    const e = one(event('invoice.paid', invoice(), { api_version: '2024-06-20' }));
    expect(e).toMatchObject({ kind: 'ignored', reason: expect.stringContaining(STRIPE_API_VERSION) });
    // A later Basil/Clover version than the pin still parses.
    expect(fact(one(event('invoice.paid', invoice(), { api_version: '2025-09-30.clover' }))).payment).toBeDefined();
  });

  it('an event type Refloop does not use: ignored with its type and id', () => {
    const body = event('customer.created', { id: IDS.customer, object: 'customer' });
    expect(parse(body)).toEqual([
      { kind: 'ignored', eventId: body.id, type: 'customer.created', reason: 'event type customer.created is not used' },
    ]);
  });

  it('toBillingEvents is the same as parseStripeEvents on an envelope', () => {
    const body = event('customer.subscription.updated', subscription());
    expect(toBillingEvents(envelope(body))).toEqual(parse(body));
  });
});

describe('form encoding (bracket keys)', () => {
  it('nested objects and arrays, as the official SDK writes them', () => {
    const body = encodeForm({
      amount: -500,
      currency: 'usd',
      metadata: { refloop_reward_id: 'r 1', empty: '' },
      expand: ['customer', 'items.data.price.product'],
      promotion: { type: 'coupon', coupon: 'C1' },
      restrictions: { first_time_transaction: true },
      skip: undefined,
    });
    expect(body).toBe(
      'amount=-500&currency=usd&metadata[refloop_reward_id]=r%201&metadata[empty]=&expand[0]=customer&expand[1]=items.data.price.product&promotion[type]=coupon&promotion[coupon]=C1&restrictions[first_time_transaction]=true',
    );
    expect(decodeForm(body)).toEqual({
      amount: '-500',
      currency: 'usd',
      metadata: { refloop_reward_id: 'r 1', empty: '' },
      expand: ['customer', 'items.data.price.product'],
      promotion: { type: 'coupon', coupon: 'C1' },
      restrictions: { first_time_transaction: 'true' },
    });
  });

  it('decodes a[]= lists, percent-encoded brackets, and deep keys', () => {
    expect(decodeForm('expand%5B%5D=customer&expand[]=x&a[b][c]=1&payment[type]=payment_intent')).toEqual({
      expand: ['customer', 'x'],
      a: { b: { c: '1' } },
      payment: { type: 'payment_intent' },
    });
  });

  it('refuses contradictory or malformed keys', () => {
    expect(() => decodeForm('a=1&a[b]=2')).toThrow();
    expect(() => decodeForm('a[b]=1&a=2')).toThrow();
    expect(() => decodeForm('a]=1')).toThrow();
    expect(() => decodeForm('a[5000]=1')).toThrow();
  });
});

describe('batchLookupsOf: what one event tells the others of its batch', () => {
  it("a completed checkout: its customer's email and the session that created the subscription", () => {
    expect(batchLookupsOf(envelope(event('checkout.session.completed', checkoutSession())))).toEqual({
      emails: [[IDS.customer, 'jane@example.com']],
      checkouts: [[IDS.subscription, IDS.session]],
    });
  });

  it("a paid invoice: its customer's email; a subscription event: nothing (it carries no email)", () => {
    const paid = batchLookupsOf(envelope(event('invoice.paid', invoice())));
    expect(paid.checkouts).toEqual([]);
    expect(paid.emails).toEqual([[IDS.customer, expect.stringContaining('@')]]);
    expect(batchLookupsOf(envelope(event('customer.subscription.created', subscription())))).toEqual({ emails: [], checkouts: [] });
  });

  it('a checkout that is not a completed subscription checkout tells no session', () => {
    const open = batchLookupsOf(envelope(event('checkout.session.completed', { ...checkoutSession(), status: 'open' })));
    const payment = batchLookupsOf(envelope(event('checkout.session.completed', { ...checkoutSession(), mode: 'payment' })));
    expect([open, payment]).toEqual([
      { emails: [], checkouts: [] },
      { emails: [], checkouts: [] },
    ]);
  });
});
