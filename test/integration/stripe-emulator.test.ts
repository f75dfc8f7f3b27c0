// The Stripe emulator cannot drift from the real wire format: the official `stripe` package (dev
// dependency, the version whose API version Refloop pins) verifies and parses every webhook the emulator
// delivers with constructEvent, and its client, pointed at the emulator through host/port/protocol, reads
// and writes the objects Refloop uses. Then the adapter drives the emulator end to end: checkout -> facts,
// a credit once under retries, reversal vs consumed, a coupon and promotion code once, two partial refunds
// -> two refund facts and a redelivery -> none new, a dispute.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { ProviderUnavailableError, type BillingEvent, type RefundFacts } from '../../shared/billing/port';
import { stripeProvider, type StripeProvider } from '../../shared/providers/stripe/adapter';
import { StripeApiError } from '../../shared/providers/stripe/client';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { verifyStripeSignature } from '../../shared/providers/stripe/signature';
import { STRIPE_API_VERSION, type StripeEvent } from '../../shared/providers/stripe/wire';

interface Received {
  headers: Record<string, string | undefined>;
  rawBody: string;
}

let emulator: StripeEmulator;
let receiver: Server;
let received: Received[] = [];
let provider: StripeProvider;
let sdk: Stripe;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({
        headers: { 'stripe-signature': req.headers['stripe-signature'] as string | undefined, 'content-type': req.headers['content-type'] },
        rawBody: body,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  emulator = await startStripeEmulator({ webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`, taxRatePercent: 10 });
  provider = stripeProvider({ secretKey: emulator.secretKey, apiUrl: emulator.url }, { timeoutMs: 2_000, budgetMs: 5_000 });
  sdk = new Stripe(emulator.secretKey, {
    host: '127.0.0.1',
    port: emulator.port,
    protocol: 'http',
    maxNetworkRetries: 0,
    telemetry: false,
  });
});

afterAll(async () => {
  await emulator?.stop();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

beforeEach(() => {
  received = [];
});

const typeOf = (w: Received) => (JSON.parse(w.rawBody) as StripeEvent).type;
const ofType = (type: string) => received.filter((w) => typeOf(w) === type);
const only = (list: Received[]): Received => {
  expect(list).toHaveLength(1);
  return list[0] as Received;
};
const parse = (w: Received) => provider.parseWebhook({ headers: w.headers, rawBody: w.rawBody });
const subscriptionEvent = (events: BillingEvent[]) => {
  expect(events).toHaveLength(1);
  const e = events[0] as BillingEvent;
  if (e.kind !== 'subscription') throw new Error(`expected a subscription event, got ${JSON.stringify(e)}`);
  return e;
};
const refundsOf = (events: BillingEvent[]): RefundFacts[] =>
  events.flatMap((e) => (e.kind === 'subscription' && e.refund ? [e.refund] : []));

describe('the official stripe package verifies and parses every emulator webhook', () => {
  it('checkout, renewal, failure, two partial refunds, dispute, cancel: constructEvent accepts each; a wrong secret or a changed body is refused', async () => {
    const { result } = await emulator.checkout({
      email: 'sdk@example.com',
      clientReferenceId: 'r1',
      subscriptionMetadata: { refloop_referral_id: 'r1' },
    });
    const subId = result.subscription.id;
    const renewal = await emulator.renew(subId);
    await emulator.failPayment(subId);
    await emulator.refund(result.charge?.id as string, { amount: 300 });
    await emulator.refund(result.charge?.id as string, { amount: 200 });
    await emulator.dispute(renewal.result.charge?.id as string);
    await emulator.cancel(subId);

    expect(received.map(typeOf)).toEqual([
      'customer.subscription.created',
      'invoice.paid',
      'checkout.session.completed',
      'invoice.paid',
      'customer.subscription.updated',
      'invoice.payment_failed',
      'customer.subscription.updated',
      'charge.refunded',
      'charge.refunded',
      'charge.dispute.created',
      'customer.subscription.deleted',
    ]);
    for (const w of received) {
      expect(w.headers['content-type']).toBe('application/json; charset=utf-8');
      const header = w.headers['stripe-signature'] ?? '';
      // Signed with a fresh timestamp: the SDK's default 300 s tolerance and real clock apply.
      const event = sdk.webhooks.constructEvent(w.rawBody, header, emulator.webhookSecret);
      const body = JSON.parse(w.rawBody) as StripeEvent<{ id: string; object: string }>;
      expect(event).toMatchObject({ id: body.id, object: 'event', type: body.type, api_version: STRIPE_API_VERSION });
      expect((event.data.object as { id: string }).id).toBe(body.data.object.id);
      expect(() => sdk.webhooks.constructEvent(w.rawBody, header, 'whsec_wrongsecret00000000')).toThrow(
        Stripe.errors.StripeSignatureVerificationError,
      );
      expect(() => sdk.webhooks.constructEvent(w.rawBody.replace(body.id, 'evt_forged'), header, emulator.webhookSecret)).toThrow(
        Stripe.errors.StripeSignatureVerificationError,
      );
      // Refloop's own verifier agrees.
      expect(verifyStripeSignature(w, emulator.webhookSecret, Date.now())).toEqual({ ok: true, eventId: body.id });
    }
    // Field names as the SDK types them: the parser reads where the SDK finds them.
    const paid = sdk.webhooks.constructEvent(
      ofType('invoice.paid')[0]?.rawBody as string,
      ofType('invoice.paid')[0]?.headers['stripe-signature'] as string,
      emulator.webhookSecret,
    );
    const invoice = paid.data.object as Stripe.Invoice;
    expect(invoice.parent?.subscription_details?.subscription).toBe(subId);
    expect(invoice.total_taxes?.[0]?.amount).toBe(100);
    const refunded = ofType('charge.refunded').map(
      (w) =>
        (
          sdk.webhooks.constructEvent(w.rawBody, w.headers['stripe-signature'] as string, emulator.webhookSecret).data
            .object as Stripe.Charge
        ).amount_refunded,
    );
    expect(refunded).toEqual([300, 500]); // cumulative
  });

  it('a timestamp older than the SDK tolerance is refused by both; within it, accepted', () => {
    const w = emulator.events()[0];
    if (!w) throw new Error('no event built');
    const stale = emulator.sign(w.rawBody, Math.floor(Date.now() / 1000) - 301);
    expect(() => sdk.webhooks.constructEvent(w.rawBody, stale, emulator.webhookSecret)).toThrow(/tolerance/);
    expect(
      verifyStripeSignature({ headers: { 'stripe-signature': stale }, rawBody: w.rawBody }, emulator.webhookSecret, Date.now()),
    ).toEqual({ ok: false, reason: 'stale_timestamp' });
    const late = emulator.sign(w.rawBody, Math.floor(Date.now() / 1000) - 120);
    expect(sdk.webhooks.constructEvent(w.rawBody, late, emulator.webhookSecret).id).toBe(w.event.id);
  });
});

describe('the official stripe client, pointed at the emulator (host/port/protocol), reads and writes what Refloop uses', () => {
  it('reads: subscription (expanded), subscriptions (status=all), checkout session, invoices, invoice payments, charge with refunds, customer, promotion codes', async () => {
    const { result } = await emulator.checkout({ email: 'sdk-reader@example.com', clientReferenceId: 'ref-sdk' });
    const subId = result.subscription.id;
    const sub = await sdk.subscriptions.retrieve(subId, { expand: ['customer', 'items.data.price.product'] });
    expect(sub).toMatchObject({
      id: subId,
      object: 'subscription',
      status: 'active',
      currency: 'usd',
      customer: { id: result.subscription.customer, email: 'sdk-reader@example.com' },
    });
    const item = sub.items.data[0] as Stripe.SubscriptionItem;
    expect(item.current_period_end).toBeGreaterThan(item.current_period_start);
    expect(item.price).toMatchObject({
      unit_amount: 1000,
      currency: 'usd',
      recurring: { interval: 'month', interval_count: 1 },
      product: { object: 'product', name: 'Pro' },
    });
    expect(sub.lastResponse.headers['request-id']).toMatch(/^req_/);

    await emulator.cancel(subId);
    const all: string[] = [];
    for await (const s of sdk.subscriptions.list({ status: 'all', limit: 2 })) all.push(s.id);
    expect(all).toContain(subId);
    const defaults = await sdk.subscriptions.list({ limit: 100 });
    expect(defaults.data.map((s) => s.id)).not.toContain(subId); // without status=all, canceled ones are left out

    expect(await sdk.checkout.sessions.retrieve(result.session.id)).toMatchObject({
      object: 'checkout.session',
      client_reference_id: 'ref-sdk',
      subscription: subId,
      status: 'complete',
      mode: 'subscription',
    });
    expect((await sdk.invoices.list({ subscription: subId, status: 'paid' })).data.map((i) => i.id)).toEqual([result.invoice.id]);

    await emulator.refund(result.charge?.id as string, { amount: 100 });
    const payments = await sdk.invoicePayments.list({
      payment: { type: 'payment_intent', payment_intent: result.charge?.payment_intent as string },
      expand: ['data.invoice'],
    });
    expect(payments.data).toMatchObject([
      { object: 'invoice_payment', status: 'paid', invoice: { id: result.invoice.id, object: 'invoice' } },
    ]);
    const charge = await sdk.charges.retrieve(result.charge?.id as string, { expand: ['refunds'] });
    expect(charge.refunds?.data.map((r) => r.amount)).toEqual([100]);

    await expect(sdk.subscriptions.retrieve('sub_doesnotexist')).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 404,
      code: 'resource_missing',
    });
  });

  it('writes: a negative balance transaction, a coupon, a promotion code (Clover form), replayed on the same Idempotency-Key', async () => {
    const { result } = await emulator.checkout({ email: 'sdk-writer@example.com' });
    const customerId = result.subscription.customer as string;
    const txn = await sdk.customers.createBalanceTransaction(
      customerId,
      { amount: -250, currency: 'usd', description: 'sdk credit', metadata: { refloop_reward_id: 'sdk-r1' } },
      { idempotencyKey: 'sdk-credit-1' },
    );
    expect(txn).toMatchObject({
      object: 'customer_balance_transaction',
      amount: -250,
      ending_balance: -250,
      type: 'adjustment',
      metadata: { refloop_reward_id: 'sdk-r1' },
    });
    const again = await sdk.customers.createBalanceTransaction(
      customerId,
      { amount: -250, currency: 'usd', description: 'sdk credit', metadata: { refloop_reward_id: 'sdk-r1' } },
      { idempotencyKey: 'sdk-credit-1' },
    );
    expect(again.id).toBe(txn.id);
    expect(emulator.ledger.creditLeft(customerId, 'usd')).toBe(250);
    await expect(
      sdk.customers.createBalanceTransaction(customerId, { amount: -999, currency: 'usd' }, { idempotencyKey: 'sdk-credit-1' }),
    ).rejects.toMatchObject({ type: 'StripeIdempotencyError' });
    const customer = await sdk.customers.retrieve(customerId, { expand: ['invoice_credit_balance'] });
    expect(customer).toMatchObject({ balance: -250, invoice_credit_balance: { usd: 250 } });
    expect((await sdk.customers.listBalanceTransactions(customerId)).data.map((t) => t.id)).toEqual([txn.id]);

    const coupon = await sdk.coupons.create({ id: 'sdk-coupon-10', percent_off: 10, duration: 'once' });
    expect(coupon).toMatchObject({ object: 'coupon', id: 'sdk-coupon-10', percent_off: 10, valid: true });
    const promo = await sdk.promotionCodes.create({
      promotion: { type: 'coupon', coupon: coupon.id },
      code: 'SDK-JANE',
      max_redemptions: 1,
      restrictions: { first_time_transaction: true },
    });
    expect(promo).toMatchObject({
      object: 'promotion_code',
      code: 'SDK-JANE',
      active: true,
      max_redemptions: 1,
      promotion: { type: 'coupon', coupon: 'sdk-coupon-10' },
      restrictions: { first_time_transaction: true },
    });
    expect((await sdk.promotionCodes.list({ code: 'sdk-jane' })).data.map((p) => p.id)).toEqual([promo.id]);
    await expect(sdk.promotionCodes.create({ promotion: { type: 'coupon', coupon: coupon.id }, code: 'SDK-JANE' })).rejects.toMatchObject({
      statusCode: 400,
    });
  });
});

describe('the emulator answers as Stripe does: HTTP Basic auth, enum params, and the rest of what Refloop calls through the SDK', () => {
  it('HTTP Basic with the key as user (curl -u sk_…:) is accepted; a wrong user, no key or another scheme is a 401; the Bearer scheme without case', async () => {
    const { result } = await emulator.checkout({ email: 'basic@example.com' });
    const url = `${emulator.url}/v1/subscriptions/${result.subscription.id}`;
    const basic = (userPass: string) => `Basic ${Buffer.from(userPass).toString('base64')}`;
    // The pinned version on each (the last test of the file checks every call carried it).
    const get = (authorization?: string) =>
      fetch(url, { headers: { 'stripe-version': STRIPE_API_VERSION, ...(authorization === undefined ? {} : { authorization }) } });

    const viaBasic = await get(basic(`${emulator.secretKey}:`));
    expect(viaBasic.status).toBe(200);
    expect(await viaBasic.json()).toMatchObject({ id: result.subscription.id, object: 'subscription' });
    expect((await get(`basic ${Buffer.from(`${emulator.secretKey}:`).toString('base64')}`)).status).toBe(200);
    expect((await get(`bearer ${emulator.secretKey}`)).status).toBe(200);
    expect((await get(`BEARER ${emulator.secretKey}`)).status).toBe(200);

    const wrong = await get(basic('sk_test_notthekey:'));
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({
      error: { type: 'invalid_request_error', message: expect.stringContaining('Invalid API Key provided: sk_test_') },
    });
    for (const bad of [undefined, basic(':'), `Token ${emulator.secretKey}`, `Bearer`]) {
      const res = await get(bad);
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ error: { type: 'invalid_request_error' } });
    }
  });

  it('a value outside an enum parameter is a 400 naming the param (Stripe), never an empty list; the SDK raises StripeInvalidRequestError', async () => {
    const get = async (path: string) => {
      const res = await fetch(`${emulator.url}${path}`, {
        headers: { authorization: `Bearer ${emulator.secretKey}`, 'stripe-version': STRIPE_API_VERSION },
      });
      return { status: res.status, body: (await res.json()) as { error?: { type: string; param?: string; message: string } } };
    };
    for (const [path, param] of [
      ['/v1/subscriptions?status=bogus', 'status'],
      ['/v1/invoices?status=bogus', 'status'],
      ['/v1/invoice_payments?status=bogus', 'status'],
      ['/v1/checkout/sessions?status=bogus', 'status'],
      ['/v1/promotion_codes?active=maybe', 'active'],
    ] as const) {
      const out = await get(path);
      expect({ path, status: out.status, type: out.body.error?.type, param: out.body.error?.param }).toEqual({
        path,
        status: 400,
        type: 'invalid_request_error',
        param,
      });
      expect(out.body.error?.message).toMatch(new RegExp(`^Invalid ${param}: must be one of `));
    }
    expect((await get('/v1/subscriptions?status=all')).status).toBe(200);
    expect((await get('/v1/promotion_codes?active=true')).status).toBe(200);
    await expect(sdk.subscriptions.list({ status: 'bogus' as Stripe.SubscriptionListParams.Status })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 400,
      param: 'status',
    });
  });

  it('the SDK reads the remaining objects Refloop asks for: checkout sessions by subscription, invoice, product, coupon, promotion code, refunds of a charge', async () => {
    const coupon = await sdk.coupons.create({ id: 'sdk-coupon-rest', amount_off: 300, currency: 'usd', duration: 'once' });
    const promo = await sdk.promotionCodes.create({
      promotion: { type: 'coupon', coupon: coupon.id },
      code: 'SDK-REST',
      max_redemptions: 1,
    });
    const { result } = await emulator.checkout({ email: 'sdk-rest@example.com', clientReferenceId: 'ref-rest', promotionCode: 'SDK-REST' });
    const subId = result.subscription.id;

    const sessions = await sdk.checkout.sessions.list({ subscription: subId, limit: 1 });
    expect(sessions.data.map((x) => x.id)).toEqual([result.session.id]);
    const invoice = await sdk.invoices.retrieve(result.invoice.id);
    expect(invoice).toMatchObject({ id: result.invoice.id, object: 'invoice', status: 'paid' });
    const priceProduct = result.subscription.items.data[0]?.price.product as string;
    expect(await sdk.products.retrieve(priceProduct)).toMatchObject({ id: priceProduct, object: 'product', name: 'Pro' });
    expect(await sdk.coupons.retrieve(coupon.id)).toMatchObject({
      id: coupon.id,
      object: 'coupon',
      amount_off: 300,
      currency: 'usd',
      times_redeemed: 1,
    });
    expect(await sdk.promotionCodes.retrieve(promo.id)).toMatchObject({
      id: promo.id,
      object: 'promotion_code',
      code: 'SDK-REST',
      times_redeemed: 1,
    });
    expect((await sdk.promotionCodes.list({ code: 'SDK-REST', active: false })).data.map((x) => x.id)).toEqual([promo.id]);

    const chargeId = result.charge?.id as string;
    await emulator.refund(chargeId, { amount: 100 });
    await emulator.refund(chargeId, { amount: 50 });
    const refunds: number[] = [];
    for await (const r of sdk.refunds.list({ charge: chargeId, limit: 1 })) refunds.push(r.amount);
    expect(refunds).toEqual([50, 100]);
    await expect(sdk.coupons.retrieve('no-such-coupon')).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      statusCode: 404,
      code: 'resource_missing',
    });
  });
});

describe('the adapter drives the emulator end to end', () => {
  it('coupon and promotion code once; checkout with client_reference_id, metadata and the code -> subscription, payment and attribution facts', async () => {
    const coupon = {
      referralId: 'ref-42',
      code: 'RF-TEST-42',
      discount: { type: 'percentage' as const, amount: 10_00, currency: null, recurring: false },
    };
    expect(await provider.createCoupon(coupon)).toBe('created');
    expect(await provider.createCoupon(coupon)).toBe('existed');
    // A second referral of the same campaign: the same coupon, its own code.
    expect(await provider.createCoupon({ ...coupon, referralId: 'ref-43', code: 'RF-TEST-43' })).toBe('created');
    expect([...emulator.ledger.coupons.values()].filter((c) => c.id === 'refloop-pct-1000-once')).toMatchObject([
      { percent_off: 10, duration: 'once' },
    ]);
    expect([...emulator.ledger.promotionCodes.values()].filter((p) => p.code.startsWith('RF-TEST-'))).toMatchObject([
      {
        code: 'RF-TEST-42',
        max_redemptions: 1,
        restrictions: { first_time_transaction: true },
        promotion: { coupon: 'refloop-pct-1000-once' },
        metadata: { refloop_referral_id: 'ref-42' },
      },
      { code: 'RF-TEST-43', max_redemptions: 1 },
    ]);

    const { result } = await emulator.checkout({
      email: 'referred@example.com',
      clientReferenceId: 'ref-42',
      subscriptionMetadata: { refloop_referral_id: 'ref-42' },
      promotionCode: 'rf-test-42',
    });
    const subId = result.subscription.id;
    const created = subscriptionEvent(await parse(only(ofType('customer.subscription.created'))));
    expect(created).toMatchObject({ orderUncertain: true, hints: { referralId: 'ref-42' } });
    expect(created.subscription).toMatchObject({
      id: subId,
      status: 'active',
      email: 'referred@example.com',
      currency: 'USD',
      unitPrice: 1000,
      plan: {
        id: result.subscription.items.data[0]?.price.id,
        name: 'Pro',
        amount: 1000,
        currency: 'USD',
        interval: 'month',
        frequency: 1,
      },
      customerId: result.subscription.customer,
      nextBillDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
    const pay = subscriptionEvent(await parse(only(ofType('invoice.paid'))));
    // 1000 - 10 % = 900, + 10 % tax = 990 paid.
    expect(pay.payment).toMatchObject({
      id: result.invoice.id,
      subscriptionId: subId,
      amount: 990,
      amountExcludingTax: 900,
      currency: 'USD',
      checkoutId: result.session.id,
    });
    const attribution = subscriptionEvent(await parse(only(ofType('checkout.session.completed'))));
    expect(attribution.hints).toEqual({ referralId: 'ref-42', checkoutId: result.session.id, couponCode: 'RF-TEST-42' });
    expect(emulator.ledger.promotionCodeByCode('RF-TEST-42', false)).toMatchObject({ times_redeemed: 1, active: false });

    expect(await provider.resolveCheckout(result.session.id)).toEqual({ state: 'subscription', subscriptionId: subId });
    expect(await provider.resolveCheckout(emulator.ledger.openCheckout('later@example.com').id)).toEqual({ state: 'processing' });
    expect(await provider.resolveCheckout('cs_test_unknown000000000000')).toEqual({ state: 'not_found' });
    expect(await provider.resolveCheckout('txn_not_a_session')).toEqual({ state: 'not_found' });
    expect(await provider.getSubscription(subId)).toMatchObject({ id: subId, email: 'referred@example.com', plan: { name: 'Pro' } });
    expect(await provider.getSubscription('sub_unknown0000000000000000')).toBeNull();
    expect(await provider.listPayments(subId)).toMatchObject([{ id: result.invoice.id, amount: 990 }]);

    await emulator.cancel(subId);
    const all = [];
    let cursor: string | null = null;
    do {
      const page = await provider.listSubscriptions(cursor);
      all.push(...page.subscriptions);
      cursor = page.next;
    } while (cursor);
    expect(all.find((s) => s.id === subId)).toMatchObject({
      status: 'deleted',
      email: 'referred@example.com',
      nextBillDate: null,
      plan: { name: 'Pro' },
    });
  });

  it('a promotion code for first-time customers is refused to a returning customer', async () => {
    await provider.createCoupon({
      referralId: 'ref-44',
      code: 'RF-TEST-44',
      discount: { type: 'flat', amount: 500, currency: 'USD', recurring: false },
    });
    await emulator.checkout({ email: 'returning@example.com' });
    expect(() => emulator.ledger.checkout({ email: 'returning@example.com', promotionCode: 'RF-TEST-44' })).toThrow(/prior transactions/);
  });

  it('a credit is applied once under retries (sequential, concurrent, and a lost answer), and consumed by the next invoice', async () => {
    const { result } = await emulator.checkout({ email: 'referrer@example.com' });
    const subId = result.subscription.id;
    const customerId = result.subscription.customer as string;
    const credit = { rewardId: 'reward-a', subscriptionId: subId, amount: 300, currency: 'USD' };
    const first = await provider.applyCredit(credit);
    expect(first).toEqual({ providerRef: expect.stringMatching(/^cbtxn_/), reused: false });
    expect(await provider.applyCredit(credit)).toEqual({ providerRef: first.providerRef, reused: true });
    const concurrent = await Promise.all(Array.from({ length: 5 }, () => provider.applyCredit(credit)));
    expect(new Set(concurrent.map((c) => c.providerRef))).toEqual(new Set([first.providerRef]));
    // The first attempt's answer was lost: its retry carries the same Idempotency-Key and gets the same one.
    const replay = await provider.client.createBalanceTransaction(
      customerId,
      {
        amount: -300,
        currency: 'usd',
        description: 'Refloop referral credit: reward reward-a',
        metadata: { refloop: 'credit', refloop_reward_id: 'reward-a', refloop_subscription_id: subId },
      },
      'refloop-credit-reward-a',
    );
    expect(replay.id).toBe(first.providerRef);
    expect(emulator.ledger.balanceTransactions.get(customerId)).toMatchObject([
      { id: first.providerRef, amount: -300, currency: 'usd', metadata: { refloop_reward_id: 'reward-a' } },
    ]);
    expect(emulator.ledger.creditLeft(customerId, 'usd')).toBe(300);

    received = [];
    const renewal = await emulator.renew(subId);
    // 1000 + 10 % tax = 1100, of which 300 from the credit.
    expect(renewal.result.invoice).toMatchObject({ total: 1100, starting_balance: -300, ending_balance: 0, amount_paid: 800 });
    const pay = subscriptionEvent(await parse(only(ofType('invoice.paid'))));
    expect(pay.payment).toMatchObject({ amount: 800, amountExcludingTax: 1000 });
    expect(pay.payment).not.toHaveProperty('checkoutId');
    // Consumed: the reversal takes nothing back, and a retry of the credit does not apply it again.
    expect(await provider.reverseCredit({ ...credit, providerRef: first.providerRef })).toBe('consumed');
    expect(await provider.applyCredit(credit)).toMatchObject({ providerRef: first.providerRef, reused: true });
    expect(emulator.ledger.creditLeft(customerId, 'usd')).toBe(0);
  });

  it('reversal while unspent: a positive transaction, once; partly spent credit: consumed', async () => {
    const { result } = await emulator.checkout({ email: 'reversal@example.com' });
    const subId = result.subscription.id;
    const customerId = result.subscription.customer as string;
    const b = { rewardId: 'reward-b', subscriptionId: subId, amount: 200, currency: 'USD' };
    const applied = await provider.applyCredit(b);
    expect(await provider.reverseCredit({ ...b, providerRef: applied.providerRef })).toBe('reversed');
    expect(await provider.reverseCredit({ ...b, providerRef: applied.providerRef })).toBe('reversed');
    expect(emulator.ledger.balanceTransactions.get(customerId)?.map((t) => [t.amount, t.metadata?.refloop])).toEqual([
      [200, 'credit_reversal'],
      [-200, 'credit'],
    ]);
    expect(emulator.ledger.creditLeft(customerId, 'usd')).toBe(0);
    expect((await emulator.renew(subId)).result.invoice.amount_paid).toBe(1100);

    // Two credits; an invoice spends 1100 of 1300: neither is whole any more -> consumed (never a debit).
    const c = { rewardId: 'reward-c', subscriptionId: subId, amount: 800, currency: 'USD' };
    const d = { rewardId: 'reward-d', subscriptionId: subId, amount: 500, currency: 'USD' };
    await provider.applyCredit(c);
    await provider.applyCredit(d);
    expect((await emulator.renew(subId)).result.invoice).toMatchObject({ amount_paid: 0, status: 'paid' });
    expect(emulator.ledger.creditLeft(customerId, 'usd')).toBe(200);
    expect(await provider.reverseCredit({ ...d, providerRef: null })).toBe('consumed');
    expect(emulator.ledger.creditLeft(customerId, 'usd')).toBe(200);
    // A failed payment still consumes the credit (Stripe applies the balance at finalization).
    const e = { rewardId: 'reward-e', subscriptionId: subId, amount: 100, currency: 'USD' };
    await provider.applyCredit(e);
    await emulator.failPayment(subId);
    expect(await provider.reverseCredit({ ...e, providerRef: null })).toBe('consumed');
    // Never applied: nothing to take back.
    expect(
      await provider.reverseCredit({ rewardId: 'reward-never', subscriptionId: subId, amount: 100, currency: 'USD', providerRef: null }),
    ).toBe('reversed');
  });

  it('a credit in another currency than the subscription is refused before any write', async () => {
    const { result } = await emulator.checkout({ email: 'eur@example.com', currency: 'eur' });
    const posts = emulator.callCounts()['POST /v1/customers/{id}/balance_transactions'] ?? 0;
    expect(posts).toBeGreaterThan(0); // earlier tests wrote credits: the counter is the right one
    await expect(
      provider.applyCredit({ rewardId: 'reward-f', subscriptionId: result.subscription.id, amount: 100, currency: 'USD' }),
    ).rejects.toThrow(/EUR/);
    expect(emulator.callCounts()['POST /v1/customers/{id}/balance_transactions'] ?? 0).toBe(posts);
  });

  it('zero-decimal JPY: amounts are yen end to end (credit, invoice, payment facts)', async () => {
    const { result } = await emulator.checkout({ email: 'jpy@example.com', currency: 'jpy' });
    received = [];
    await provider.applyCredit({ rewardId: 'reward-jpy', subscriptionId: result.subscription.id, amount: 200, currency: 'JPY' });
    const renewal = await emulator.renew(result.subscription.id);
    // ¥1200 + 10 % = ¥1320, ¥200 from the credit.
    expect(renewal.result.invoice).toMatchObject({ currency: 'jpy', total: 1320, amount_paid: 1120 });
    const pay = subscriptionEvent(await parse(only(ofType('invoice.paid'))));
    expect(pay.payment).toMatchObject({ amount: 1120, amountExcludingTax: 1200, currency: 'JPY' });
  });

  it('two partial refunds -> two refund facts (never the cumulative amount); a redelivery -> none new; a dispute -> a chargeback', async () => {
    const { result } = await emulator.checkout({ email: 'refund@example.com' });
    const chargeId = result.charge?.id as string;
    const counted = new Set<string>();
    const fresh = (facts: RefundFacts[]) => facts.filter((r) => !counted.has(r.id) && counted.add(r.id));
    received = [];
    await emulator.refund(chargeId, { amount: 300 });
    const first = refundsOf(await parse(only(ofType('charge.refunded'))));
    expect(first).toMatchObject([
      { amount: 300, paymentId: result.invoice.id, subscriptionId: result.subscription.id, currency: 'USD', kind: 'refund' },
    ]);
    expect(fresh(first).map((r) => r.amount)).toEqual([300]);
    received = [];
    await emulator.refund(chargeId, { amount: 450 });
    const secondEvent = only(ofType('charge.refunded'));
    expect((JSON.parse(secondEvent.rawBody) as StripeEvent<{ amount_refunded: number }>).data.object.amount_refunded).toBe(750);
    // The second event's charge lists both refunds: each is its own fact, never one of 750.
    const second = refundsOf(await parse(secondEvent));
    expect(second.map((r) => r.amount).sort()).toEqual([300, 450]);
    expect(fresh(second).map((r) => r.amount)).toEqual([450]);
    // Stripe delivers at least once: the redelivered event verifies and brings nothing new.
    const again = await emulator.redeliver((JSON.parse(secondEvent.rawBody) as StripeEvent).id);
    expect(again.status).toBe(200);
    const redelivered = received[received.length - 1] as Received;
    expect(redelivered.rawBody).toBe(secondEvent.rawBody);
    expect(fresh(refundsOf(await parse(redelivered)))).toEqual([]);

    received = [];
    await emulator.dispute(chargeId);
    const dispute = subscriptionEvent(await parse(only(ofType('charge.dispute.created'))));
    expect(dispute.refund).toMatchObject({
      id: expect.stringMatching(/^dp_/),
      kind: 'chargeback',
      amount: 1100,
      paymentId: result.invoice.id,
      subscriptionId: result.subscription.id,
    });
  });

  it('a failed payment never counts; a cancellation mirrors as deleted', async () => {
    const { result } = await emulator.checkout({ email: 'failing@example.com' });
    received = [];
    await emulator.failPayment(result.subscription.id);
    await emulator.cancel(result.subscription.id);
    const events = (await Promise.all(received.map(parse))).flat();
    expect(events.filter((e) => e.kind === 'subscription' && e.payment)).toEqual([]);
    expect(events.map((e) => (e.kind === 'subscription' ? e.subscription.status : e.kind))).toEqual(['ignored', 'past_due', 'deleted']);
  });

  it('every call sends the pinned Stripe-Version; every write an Idempotency-Key', () => {
    const versions = emulator.versionsSeen();
    expect(versions.length).toBeGreaterThan(20);
    expect(new Set(versions)).toEqual(new Set([STRIPE_API_VERSION]));
    const keys = emulator.idempotencyKeysSeen();
    expect(keys.length).toBeGreaterThan(5);
    expect(keys.every((k) => typeof k === 'string' && k.length > 0)).toBe(true);
  });

  it('429 is retried after Retry-After; a provider that stays down is ProviderUnavailableError; a wrong key is a 401', async () => {
    const { result } = await emulator.checkout({ email: 'faults@example.com' });
    emulator.failNext(1, 429, 1);
    const started = Date.now();
    expect(await provider.getSubscription(result.subscription.id)).toMatchObject({ id: result.subscription.id });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);

    emulator.failNext(100, 503);
    const fast = stripeProvider({ secretKey: emulator.secretKey, apiUrl: emulator.url }, { timeoutMs: 1_000, budgetMs: 1_500 });
    await expect(fast.getSubscription(result.subscription.id)).rejects.toBeInstanceOf(ProviderUnavailableError);
    emulator.failNext(0, 503);

    const wrongKey = stripeProvider({ secretKey: 'sk_test_wrongwrongwrong', apiUrl: emulator.url });
    const err = await wrongKey.getSubscription(result.subscription.id).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StripeApiError);
    expect(err).toMatchObject({ status: 401 });
    expect(String((err as Error).message)).not.toContain('wrongwrongwrong');
  });
});
