// The Chargebee emulator cannot drift from Chargebee's wire: the official `chargebee` package (dev
// dependency, 3.33.0), pointed at it with protocol/hostSuffix/port, reads and writes the objects Refloop
// uses (customers with custom fields and meta_data, hosted pages, subscriptions and their lists, promotional
// credits with idempotency keys, coupons and codes) and parses its errors; the same package's webhook
// handler (basicAuthValidator) receives every webhook it POSTs, whose envelopes type-check as the package's
// WebhookEvent types and equal what GET /events/{id} answers. Then the rules Refloop depends on: Basic auth
// and the no-auth mode, duplicates and reversed batches ordered by resource_version, a renewal consuming
// promotional credits before tax, a refund's credit note and refund transaction, the assumed chargeback,
// failNext and failAfterApply, and the 30-minute idempotency window on the emulator's clock.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Chargebee, { basicAuthValidator, type WebhookEvent, type WebhookEventType } from 'chargebee';
import {
  type CbEvent,
  type ChargebeeEmulator,
  type Delivery,
  type EventContents,
  startChargebeeEmulator,
} from '../../infra/local/emulators/chargebee';

// Compile-time: what the emulator sends is the package's WebhookEvent of its type. Each event type's
// content (./ledger.ts EventContents, which the ledger's event() takes) is assignable to the package's
// content for that type, keys Chargebee may leave out (unbilled_charge…) aside; the envelope to its envelope.
type Content<T extends WebhookEventType> = Partial<WebhookEvent<T>['content']>;
const envelope = (e: CbEvent): Omit<WebhookEvent, 'content'> => e;
const contents = {
  customer_created: (c: EventContents['customer_created']): Content<WebhookEventType.CustomerCreated> => c,
  customer_changed: (c: EventContents['customer_changed']): Content<WebhookEventType.CustomerChanged> => c,
  subscription_created: (c: EventContents['subscription_created']): Content<WebhookEventType.SubscriptionCreated> => c,
  subscription_activated: (c: EventContents['subscription_activated']): Content<WebhookEventType.SubscriptionActivated> => c,
  subscription_changed: (c: EventContents['subscription_changed']): Content<WebhookEventType.SubscriptionChanged> => c,
  subscription_renewed: (c: EventContents['subscription_renewed']): Content<WebhookEventType.SubscriptionRenewed> => c,
  subscription_cancelled: (c: EventContents['subscription_cancelled']): Content<WebhookEventType.SubscriptionCancelled> => c,
  subscription_reactivated: (c: EventContents['subscription_reactivated']): Content<WebhookEventType.SubscriptionReactivated> => c,
  subscription_paused: (c: EventContents['subscription_paused']): Content<WebhookEventType.SubscriptionPaused> => c,
  subscription_resumed: (c: EventContents['subscription_resumed']): Content<WebhookEventType.SubscriptionResumed> => c,
  subscription_deleted: (c: EventContents['subscription_deleted']): Content<WebhookEventType.SubscriptionDeleted> => c,
  payment_succeeded: (c: EventContents['payment_succeeded']): Content<WebhookEventType.PaymentSucceeded> => c,
  payment_failed: (c: EventContents['payment_failed']): Content<WebhookEventType.PaymentFailed> => c,
  payment_refunded: (c: EventContents['payment_refunded']): Content<WebhookEventType.PaymentRefunded> => c,
  refund_initiated: (c: EventContents['refund_initiated']): Content<WebhookEventType.RefundInitiated> => c,
  credit_note_created: (c: EventContents['credit_note_created']): Content<WebhookEventType.CreditNoteCreated> => c,
  promotional_credits_added: (c: EventContents['promotional_credits_added']): Content<WebhookEventType.PromotionalCreditsAdded> => c,
  promotional_credits_deducted: (c: EventContents['promotional_credits_deducted']): Content<WebhookEventType.PromotionalCreditsDeducted> =>
    c,
} satisfies { [K in keyof EventContents]: (c: EventContents[K]) => unknown };

interface Received {
  headers: Record<string, string | undefined>;
  rawBody: string;
}

let emulator: ChargebeeEmulator;
let receiver: Server;
let received: Received[] = [];
let cb: Chargebee;

/** The official client on the emulator: `<site><hostSuffix>` is the host, so site 127 + `.0.0.1` = 127.0.0.1. */
const clientFor = (e: ChargebeeEmulator, apiKey = e.apiKey) =>
  new Chargebee({ site: '127', hostSuffix: '.0.0.1', protocol: 'http', port: e.port, apiKey, sdkTelemetryEnabled: false });

const until = async <T>(check: () => T | undefined | null | false, timeoutMs = 5_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
};

/** The deliveries' bodies as the receiver got them. */
const receivedFor = (ds: Delivery[]) => until(() => ds.every((d) => received.some((r) => r.rawBody === d.rawBody)) && ds);

const failureOf = async (p: Promise<unknown>): Promise<Record<string, unknown>> => {
  try {
    await p;
  } catch (err) {
    return err as Record<string, unknown>;
  }
  throw new Error('expected a failure');
};

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({
        headers: { authorization: req.headers.authorization, 'content-type': req.headers['content-type'] },
        rawBody: body,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  emulator = await startChargebeeEmulator({
    webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
    webhookUsername: 'refloop',
    webhookPassword: 'a-webhook-password-of-24-chars',
  });
  cb = clientFor(emulator);
});

afterAll(async () => {
  await emulator?.stop();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

beforeEach(() => {
  received = [];
  emulator.setDeliveryFaults({});
});

describe('the official chargebee package against the emulator', () => {
  it('creates and updates a customer with custom fields and meta_data, and reads it back', async () => {
    const made = await cb.customer.create({
      id: 'cust-sdk-1',
      email: 'ann@example.com',
      cf_refloop_referral_id: 'rf_1',
      meta_data: { refloop_referral_id: 'rf_1', source: 'test' },
    } as Parameters<typeof cb.customer.create>[0]);
    expect(made.customer).toMatchObject({
      id: 'cust-sdk-1',
      email: 'ann@example.com',
      cf_refloop_referral_id: 'rf_1',
      meta_data: { refloop_referral_id: 'rf_1', source: 'test' },
      promotional_credits: 0,
      balances: [],
      object: 'customer',
    });
    await cb.customer.update('cust-sdk-1', { meta_data: { refloop_referral_id: 'rf_2' } });
    const read = await cb.customer.retrieve('cust-sdk-1');
    expect(read.customer.meta_data).toEqual({ refloop_referral_id: 'rf_2' });
    expect(read.customer.cf_refloop_referral_id).toBe('rf_1');
    const again = await failureOf(cb.customer.create({ id: 'cust-sdk-1', email: 'x@example.com' }));
    expect(again).toMatchObject({ http_status_code: 400, api_error_code: 'duplicate_entry', type: 'invalid_request', param: 'id' });
  });

  it('opens a hosted page (created), which the customer completes (succeeded) into a subscription it retrieves', async () => {
    await cb.customer.create({ id: 'cust-sdk-2', email: 'bob@example.com' });
    const opened = await cb.hostedPage.checkoutNewForItems({
      customer: { id: 'cust-sdk-2' },
      subscription_items: [{ item_price_id: 'pro-USD-monthly', quantity: 2 }],
    });
    expect(opened.hosted_page).toMatchObject({ type: 'checkout_new', state: 'created', object: 'hosted_page' });
    const id = opened.hosted_page.id as string;
    expect((await cb.hostedPage.retrieve(id)).hosted_page.state).toBe('created');
    const done = await emulator.completeCheckout(id, { taxRate: 0.1 });
    const page = (await cb.hostedPage.retrieve(id)).hosted_page;
    expect(page.state).toBe('succeeded');
    expect((page.content as unknown as { subscription: { id: string } }).subscription.id).toBe(done.subscription.id);
    const { subscription, customer } = await cb.subscription.retrieve(done.subscription.id);
    expect(subscription).toMatchObject({
      customer_id: 'cust-sdk-2',
      status: 'active',
      currency_code: 'USD',
      due_invoices_count: 0,
      subscription_items: [{ item_price_id: 'pro-USD-monthly', item_type: 'plan', quantity: 2, unit_price: 1000, amount: 2000 }],
    });
    expect(subscription.next_billing_at).toBe(subscription.current_term_end);
    expect(customer.email).toBe('bob@example.com');
    expect(done.invoice).toMatchObject({ sub_total: 2000, tax: 200, total: 2200, amount_paid: 2200, first_invoice: true, status: 'paid' });
    const price = await cb.itemPrice.retrieve('pro-USD-monthly');
    expect(price.item_price).toMatchObject({
      id: 'pro-USD-monthly',
      item_id: 'pro',
      price: 1000,
      currency_code: 'USD',
      period_unit: 'month',
    });
    // A page is completed once.
    await expect(emulator.completeCheckout(id)).rejects.toMatchObject({ apiErrorCode: 'invalid_state_for_request' });
  });

  it('lists subscriptions by updated_at with next_offset until the end, filtered by status[in] and updated_at[after]', async () => {
    const made: string[] = [];
    for (let i = 0; i < 3; i++) made.push((await emulator.checkout({ email: `list-${i}@example.com`, deliver: false })).subscription.id);
    await emulator.cancel(made[1] as string, { deliver: false });
    const seen: string[] = [];
    let offset: string | undefined;
    do {
      const page = await cb.subscription.list({
        limit: 2,
        'sort_by[asc]': 'updated_at',
        include_deleted: true,
        ...(offset ? { offset } : {}),
      });
      expect(page.list.length).toBeLessThanOrEqual(2);
      for (const row of page.list) {
        expect(row.customer.id).toBe(row.subscription.customer_id);
        seen.push(row.subscription.id);
      }
      offset = page.next_offset;
    } while (offset);
    const all = [...emulator.ledger.subscriptions.values()]
      .sort((a, b) => (a.resource_version ?? 0) - (b.resource_version ?? 0))
      .map((s) => s.id);
    expect(seen).toEqual(all);
    // The cancelled one changed last.
    expect(seen[seen.length - 1]).toBe(made[1]);
    const active = await cb.subscription.list({ limit: 100, status: { in: ['active'] } });
    expect(active.list.map((r) => r.subscription.id)).not.toContain(made[1]);
    expect(active.list.map((r) => r.subscription.id)).toEqual(expect.arrayContaining([made[0], made[2]]));
    const later = await cb.subscription.list({ limit: 100, updated_at: { after: Math.floor(Date.now() / 1000) + 60 } });
    expect(later.list).toEqual([]);
    expect(await failureOf(cb.subscription.list({ limit: 101 }))).toMatchObject({
      http_status_code: 400,
      api_error_code: 'param_wrong_value',
    });
    expect(await failureOf(cb.subscription.list({ offset: 'not-an-offset' }))).toMatchObject({
      api_error_code: 'param_wrong_value',
      param: 'offset',
    });
  });

  it('adds and deducts promotional credits per currency with idempotency keys (replayed), and lists them', async () => {
    const { customer } = await emulator.checkout({ email: 'credits@example.com', deliver: false });
    const add = (key: string, amount: number, reference: string) =>
      cb.promotionalCredit.add(
        {
          customer_id: customer.id,
          amount,
          currency_code: 'USD',
          description: 'Referral reward',
          credit_type: 'referral_rewards',
          reference,
        },
        { 'chargebee-idempotency-key': key },
      );
    const first = await add('refloop-credit-r1', 500, 'refloop:reward:r1');
    const replay = await add('refloop-credit-r1', 500, 'refloop:reward:r1');
    expect(first.isIdempotencyReplayed).toBe(false);
    expect(replay.isIdempotencyReplayed).toBe('true');
    expect(replay.promotional_credit.id).toBe(first.promotional_credit.id);
    expect(first.promotional_credit).toMatchObject({
      type: 'increment',
      amount: 500,
      closing_balance: 500,
      credit_type: 'referral_rewards',
    });
    expect(first.customer.balances).toEqual([
      expect.objectContaining({ currency_code: 'USD', balance_currency_code: 'USD', promotional_credits: 500 }),
    ]);
    await add('refloop-credit-r2', 300, 'refloop:reward:r2');
    await cb.promotionalCredit.add({ customer_id: customer.id, amount: 700, currency_code: 'EUR', description: 'euro' });
    expect(emulator.balanceOf(customer.id, 'USD')).toBe(800);
    expect(emulator.balanceOf(customer.id, 'EUR')).toBe(700);
    // A deduction above the balance is refused (never clamped); one without an amount takes it all.
    const above = await failureOf(
      cb.promotionalCredit.deduct({ customer_id: customer.id, amount: 900, currency_code: 'USD', description: 'too much' }),
    );
    expect(above).toMatchObject({ http_status_code: 400, api_error_code: 'param_wrong_value', param: 'amount' });
    const part = await cb.promotionalCredit.deduct(
      { customer_id: customer.id, amount: 200, currency_code: 'USD', description: 'reversal', reference: 'refloop:reversal:r1' },
      { 'chargebee-idempotency-key': 'refloop-reversal-r1' },
    );
    expect(part.promotional_credit).toMatchObject({ type: 'decrement', amount: 200, closing_balance: 600 });
    const rest = await cb.promotionalCredit.deduct({ customer_id: customer.id, currency_code: 'USD', description: 'all' });
    expect(rest.promotional_credit).toMatchObject({ amount: 600, closing_balance: 0 });
    expect(emulator.balanceOf(customer.id, 'EUR')).toBe(700);
    const increments: string[] = [];
    let offset: string | undefined;
    do {
      const page = await cb.promotionalCredit.list({
        limit: 1,
        customer_id: { is: customer.id },
        type: { is: 'increment' },
        ...(offset ? { offset } : {}),
      });
      increments.push(...page.list.map((r) => r.promotional_credit.reference ?? '-'));
      offset = page.next_offset;
    } while (offset);
    expect(increments.sort()).toEqual(['-', 'refloop:reward:r1', 'refloop:reward:r2']);
    expect((await cb.promotionalCredit.retrieve(first.promotional_credit.id)).promotional_credit.reference).toBe('refloop:reward:r1');
  });

  it('creates a coupon once (duplicate_entry), a code in a set, redeemed by one checkout only', async () => {
    const coupon = await cb.coupon.createForItems({
      id: 'refloop-pct2000-once',
      name: 'Refloop 20% once',
      discount_type: 'percentage',
      discount_percentage: 20,
      apply_on: 'invoice_amount',
      duration_type: 'one_time',
    });
    expect(coupon.coupon).toMatchObject({
      id: 'refloop-pct2000-once',
      discount_percentage: 20,
      duration_type: 'one_time',
      status: 'active',
    });
    const twice = await failureOf(
      cb.coupon.createForItems({
        id: 'refloop-pct2000-once',
        name: 'again',
        discount_type: 'percentage',
        discount_percentage: 20,
        apply_on: 'invoice_amount',
      }),
    );
    expect(twice).toMatchObject({ http_status_code: 400, api_error_code: 'duplicate_entry', param: 'id' });
    const code = await cb.couponCode.create({ coupon_id: 'refloop-pct2000-once', coupon_set_name: 'refloop', code: 'ANN-7Q2K' });
    expect(code.coupon_code).toMatchObject({ code: 'ANN-7Q2K', status: 'not_redeemed', coupon_set_name: 'refloop' });
    expect(
      await failureOf(cb.couponCode.create({ coupon_id: 'refloop-pct2000-once', coupon_set_name: 'refloop', code: 'ANN-7Q2K' })),
    ).toMatchObject({
      api_error_code: 'duplicate_entry',
    });
    const bought = await emulator.checkout({ email: 'coupon@example.com', couponCode: 'ANN-7Q2K', deliver: false });
    expect(bought.subscription.coupons).toEqual([expect.objectContaining({ coupon_id: 'refloop-pct2000-once', coupon_code: 'ANN-7Q2K' })]);
    expect(bought.invoice).toMatchObject({ sub_total: 1000, total: 800, amount_paid: 800 });
    expect((await cb.couponCode.retrieve('ANN-7Q2K')).coupon_code.status).toBe('redeemed');
    const reuse = await failureOf(
      cb.hostedPage.checkoutNewForItems({ subscription_items: [{ item_price_id: 'pro-USD-monthly' }], coupon_ids: ['ANN-7Q2K'] }),
    );
    expect(reuse).toMatchObject({ http_status_code: 400, api_error_code: 'param_wrong_value', param: 'coupon_ids[0]' });
    // The one-time coupon is not applied again at renewal.
    const renewed = await emulator.renew(bought.subscription.id, { deliver: false });
    expect(renewed.invoice).toMatchObject({ sub_total: 1000, total: 1000, discounts: [] });
  });

  it('a fixed-amount forever coupon, given by id at checkout, takes its amount from every invoice before tax', async () => {
    await cb.coupon.createForItems({
      id: 'refloop-flat300-usd-forever',
      name: 'Refloop 3.00 forever',
      discount_type: 'fixed_amount',
      discount_amount: 300,
      currency_code: 'USD',
      apply_on: 'invoice_amount',
      duration_type: 'forever',
    });
    const bought = await emulator.checkout({
      email: 'flat@example.com',
      couponCode: 'refloop-flat300-usd-forever',
      taxRate: 0.1,
      deliver: false,
    });
    expect(bought.invoice).toMatchObject({ sub_total: 1000, tax: 70, total: 770 });
    expect(bought.invoice?.discounts).toEqual([
      expect.objectContaining({ entity_type: 'document_level_coupon', entity_id: 'refloop-flat300-usd-forever', amount: 300 }),
    ]);
    const renewed = await emulator.renew(bought.subscription.id, { deliver: false });
    expect(renewed.invoice).toMatchObject({ total: 770 });
    // A USD coupon on a EUR plan is refused.
    const eur = await failureOf(
      cb.hostedPage.checkoutNewForItems({
        subscription_items: [{ item_price_id: 'pro-EUR-monthly' }],
        coupon_ids: ['refloop-flat300-usd-forever'],
      }),
    );
    expect(eur).toMatchObject({ http_status_code: 400, api_error_code: 'param_wrong_value', param: 'coupon_ids[0]' });
  });

  it('answers errors the package parses: 404 resource_not_found, 401 api_authentication_failed', async () => {
    expect(await failureOf(cb.subscription.retrieve('no-such-subscription'))).toMatchObject({
      http_status_code: 404,
      api_error_code: 'resource_not_found',
      type: 'invalid_request',
    });
    expect(await failureOf(clientFor(emulator, 'test_wrong_key').customer.retrieve('cust-sdk-1'))).toMatchObject({
      http_status_code: 401,
      api_error_code: 'api_authentication_failed',
    });
    // The key with a password is not Chargebee's scheme either.
    const res = await fetch(`${emulator.url}/api/v2/customers/cust-sdk-1`, {
      headers: { authorization: `Basic ${Buffer.from(`${emulator.apiKey}:x`).toString('base64')}` },
    });
    expect(res.status).toBe(401);
  });
});

describe('webhooks', () => {
  it('POSTs every event with Basic auth; the package parses each, and GET /events/{id} answers the same envelope', async () => {
    const handler = cb.webhooks.createHandler({
      requestValidator: basicAuthValidator((u, p) => u === 'refloop' && p === 'a-webhook-password-of-24-chars'),
    });
    const parsed: string[] = [];
    handler.on('payment_succeeded', ({ event }) => {
      // Typed by the package: the content's invoice and transaction.
      parsed.push(`${event.event_type}:${event.content.invoice.id}:${event.content.transaction.status}`);
    });
    handler.on('unhandled_event', ({ event }) => void parsed.push(String(event.event_type)));
    const bought = await emulator.checkout({ email: 'hooks@example.com', referralId: 'rf_hook', taxRate: 0.2 });
    const added = await cb.promotionalCredit.add({ customer_id: bought.customer.id, amount: 100, currency_code: 'USD', description: 'x' });
    const all = await receivedFor(bought.deliveries);
    const credit = await until(() => received.find((r) => r.rawBody.includes(added.promotional_credit.id)));
    for (const r of [...received]) {
      expect(r.headers.authorization).toBe(`Basic ${Buffer.from('refloop:a-webhook-password-of-24-chars').toString('base64')}`);
      expect(r.headers['content-type']).toBe('application/json');
      await handler.handle({ body: r.rawBody, headers: r.headers });
    }
    expect(parsed).toEqual([
      'customer_created',
      'subscription_created',
      `payment_succeeded:${bought.invoice?.id}:success`,
      'promotional_credits_added',
    ]);
    for (const d of [...all, { rawBody: credit.rawBody, event: JSON.parse(credit.rawBody) as CbEvent }]) {
      const sent = JSON.parse(d.rawBody) as CbEvent;
      expect(Object.keys(sent).sort()).toEqual(
        [
          'api_version',
          'content',
          'event_type',
          'id',
          'object',
          'occurred_at',
          'source',
          'webhook_status',
          ...(sent.user ? ['user'] : []),
        ].sort(),
      );
      expect(sent).toMatchObject({ object: 'event', api_version: 'v2', webhook_status: 'scheduled' });
      envelope(sent);
      expect(typeof contents[sent.event_type]).toBe('function');
      const fetched = (await cb.event.retrieve(sent.id)).event as unknown as CbEvent;
      expect({ ...fetched, webhook_status: 'scheduled' }).toEqual(sent);
      expect(fetched.webhook_status).toBe('succeeded');
    }
    const created = JSON.parse(all[1]?.rawBody as string) as CbEvent;
    expect(created.content.customer?.cf_refloop_referral_id).toBe('rf_hook');
    const events = await cb.event.list({ limit: 100, occurred_at: { after: (bought.subscription.created_at as number) - 1 } });
    expect(events.list.map((r) => r.event.id)).toEqual(expect.arrayContaining(all.map((d) => d.event.id)));
  });

  it('a no-auth webhook carries no Authorization header', async () => {
    emulator.setDeliveryFaults({ noAuth: true });
    const bought = await emulator.checkout({ email: 'noauth@example.com' });
    await receivedFor(bought.deliveries);
    expect(bought.deliveries.map((d) => d.headers.authorization)).toEqual([undefined, undefined]);
    expect(received.map((r) => r.headers.authorization)).toEqual([undefined, undefined]);
  });

  it('duplicates and reversed batches: de-duplicated by id, the order restored by resource_version', async () => {
    emulator.setDeliveryFaults({ duplicates: true, outOfOrder: true });
    const bought = await emulator.checkout({ email: 'faults@example.com' });
    const renewed = await emulator.renew(bought.subscription.id);
    const cancelled = await emulator.cancel(bought.subscription.id);
    const deliveries = [...bought.deliveries, ...renewed.deliveries, ...cancelled.deliveries];
    await receivedFor(deliveries);
    const bodies = received.map((r) => JSON.parse(r.rawBody) as CbEvent);
    expect(bodies.map((e) => e.event_type)).toEqual([
      'payment_succeeded',
      'payment_succeeded',
      'subscription_created',
      'subscription_created',
      'customer_created',
      'customer_created',
      'payment_succeeded',
      'payment_succeeded',
      'subscription_renewed',
      'subscription_renewed',
      'subscription_cancelled',
      'subscription_cancelled',
    ]);
    const unique = [...new Map(bodies.map((e) => [e.id, e])).values()];
    expect(unique).toHaveLength(6);
    // Events of one change carry the same subscription state (one resource_version); each change a newer one.
    const version = (e: CbEvent) => e.content.subscription?.resource_version as number;
    const withSubscription = unique.filter((e) => e.content.subscription);
    expect(new Set(withSubscription.map(version)).size).toBe(3);
    const ordered = [...withSubscription].sort((a, b) => version(a) - version(b));
    expect(ordered.map((e) => e.content.subscription?.status)).toEqual(['active', 'active', 'active', 'active', 'cancelled']);
    expect(
      ordered
        .map((e) => e.event_type)
        .slice(2, 4)
        .sort(),
    ).toEqual(['payment_succeeded', 'subscription_renewed']);
    expect(ordered[ordered.length - 1]?.event_type).toBe('subscription_cancelled');
  });

  it("a renewal consumes the customer's promotional credits in its currency before tax, and its events show it", async () => {
    const bought = await emulator.checkout({ email: 'renewal@example.com', taxRate: 0.2, deliver: false });
    await cb.promotionalCredit.add({ customer_id: bought.customer.id, amount: 300, currency_code: 'USD', description: 'reward' });
    await cb.promotionalCredit.add({ customer_id: bought.customer.id, amount: 400, currency_code: 'EUR', description: 'other currency' });
    const renewed = await emulator.renew(bought.subscription.id);
    expect(renewed.creditsUsed).toBe(300);
    expect(renewed.invoice).toMatchObject({
      sub_total: 1000,
      tax: 140,
      total: 840,
      amount_paid: 840,
      first_invoice: false,
      credits_applied: 0,
    });
    expect(renewed.invoice.discounts).toEqual([expect.objectContaining({ entity_type: 'promotional_credits', amount: 300 })]);
    expect(emulator.balanceOf(bought.customer.id, 'USD')).toBe(0);
    expect(emulator.balanceOf(bought.customer.id, 'EUR')).toBe(400);
    const [renewedEvent, paid] = renewed.deliveries.map((d) => d.event);
    expect(renewedEvent?.event_type).toBe('subscription_renewed');
    expect(paid).toMatchObject({
      event_type: 'payment_succeeded',
      content: {
        invoice: { total: 840, tax: 140, discounts: [expect.objectContaining({ entity_type: 'promotional_credits', amount: 300 })] },
        transaction: { type: 'payment', status: 'success', amount: 840 },
        customer: { balances: expect.arrayContaining([expect.objectContaining({ currency_code: 'USD', promotional_credits: 0 })]) },
      },
    });
    // A failed renewal: payment_failed, the subscription past due (due_invoices_count).
    const failed = await emulator.renew(bought.subscription.id, { fail: true });
    expect(failed.deliveries.map((d) => d.event.event_type)).toEqual(['subscription_renewed', 'payment_failed']);
    expect(failed.transaction?.status).toBe('failure');
    expect(failed.subscription.due_invoices_count).toBe(1);
    expect((await cb.subscription.retrieve(bought.subscription.id)).subscription.due_invoices_count).toBe(1);
  });

  it('a refund is a refundable credit note and a refund transaction; a dispute is the same with reason_code chargeback', async () => {
    const bought = await emulator.checkout({ email: 'refund@example.com', taxRate: 0.25, deliver: false });
    const invoiceId = bought.invoice?.id as string;
    const partial = await emulator.refund(invoiceId, { amount: 500 });
    expect(partial.deliveries.map((d) => d.event.event_type)).toEqual(['credit_note_created', 'payment_refunded']);
    expect(partial.creditNote).toMatchObject({
      type: 'refundable',
      reference_invoice_id: invoiceId,
      total: 500,
      sub_total: 400,
      status: 'refunded',
    });
    expect(partial.transaction).toMatchObject({ type: 'refund', status: 'success', amount: 500, refunded_txn_id: bought.transaction?.id });
    expect(partial.deliveries[1]?.event.content.credit_note?.id).toBe(partial.creditNote.id);
    const notes = await cb.creditNote.list({ reference_invoice_id: { is: invoiceId } } as Parameters<typeof cb.creditNote.list>[0]);
    expect(notes.list.map((r) => r.credit_note.id)).toEqual([partial.creditNote.id]);
    const refunds = await cb.transaction.list({ subscription_id: { is: bought.subscription.id }, type: { is: 'refund' } });
    expect(refunds.list.map((r) => r.transaction.id)).toEqual([partial.transaction.id]);
    await expect(emulator.refund(invoiceId, { amount: 5000 })).rejects.toMatchObject({ apiErrorCode: 'param_wrong_value' });
    const disputed = await emulator.dispute(invoiceId);
    expect(disputed.deliveries.map((d) => d.event.event_type)).toEqual(['credit_note_created', 'payment_refunded']);
    expect(disputed.creditNote).toMatchObject({ reason_code: 'chargeback', total: 750, reference_invoice_id: invoiceId });
    expect(disputed.deliveries[0]?.event.content).toEqual({ credit_note: expect.objectContaining({ reason_code: 'chargeback' }) });
    await expect(emulator.dispute(invoiceId)).rejects.toMatchObject({ apiErrorCode: 'param_wrong_value' });
    // A pending refund: refund_initiated, the note refund_due.
    const other = await emulator.checkout({ email: 'pending@example.com', deliver: false });
    const pending = await emulator.refund(other.invoice?.id as string, { pending: true, deliver: false });
    expect(pending.deliveries.map((d) => d.event.event_type)).toEqual(['credit_note_created', 'refund_initiated']);
    expect(pending.creditNote.status).toBe('refund_due');
    expect(pending.transaction.status).toBe('in_progress');
    const settled = await emulator.settleRefund(pending.creditNote.id, { deliver: false });
    expect(settled.deliveries.map((d) => d.event.event_type)).toEqual(['payment_refunded']);
    expect(settled.creditNote).toMatchObject({ id: pending.creditNote.id, status: 'refunded', amount_refunded: settled.creditNote.total });
    expect(settled.transaction).toMatchObject({ id: pending.transaction.id, status: 'success' });
    await expect(emulator.settleRefund(pending.creditNote.id)).rejects.toMatchObject({ apiErrorCode: 'invalid_state_for_request' });
  });
});

describe('the subscription lifecycle', () => {
  it('trial -> activated with its first invoice; changed, paused, resumed, cancelled, reactivated, deleted', async () => {
    const trial = await emulator.checkout({ email: 'trial@example.com', trialDays: 14, deliver: false });
    expect(trial.subscription).toMatchObject({ status: 'in_trial', trial_end: trial.subscription.current_term_end });
    expect(trial.invoice).toBeNull();
    expect(trial.deliveries.map((d) => d.event.event_type)).toEqual(['customer_created', 'subscription_created']);
    const activated = await emulator.renew(trial.subscription.id, { deliver: false });
    expect(activated.deliveries.map((d) => d.event.event_type)).toEqual(['subscription_activated', 'payment_succeeded']);
    expect(activated.invoice).toMatchObject({ first_invoice: true, status: 'paid' });
    expect(activated.subscription.current_term_start).toBe(trial.subscription.trial_end);
    const id = trial.subscription.id;
    const changed = await cb.subscription.updateForItems(id, {
      subscription_items: [{ item_price_id: 'pro-USD-yearly' }],
      meta_data: { refloop_referral_id: 'rf_late' },
    } as Parameters<typeof cb.subscription.updateForItems>[1]);
    expect(changed.subscription).toMatchObject({
      billing_period_unit: 'year',
      meta_data: { refloop_referral_id: 'rf_late' },
      subscription_items: [expect.objectContaining({ item_price_id: 'pro-USD-yearly', unit_price: 10000 })],
    });
    const steps = [
      await emulator.pause(id, { deliver: false }),
      await emulator.resume(id, { deliver: false }),
      await emulator.cancel(id, { deliver: false }),
      await emulator.reactivate(id, { deliver: false }),
    ];
    expect(steps.map((x) => [x.deliveries[0]?.event.event_type, x.subscription.status])).toEqual([
      ['subscription_paused', 'paused'],
      ['subscription_resumed', 'active'],
      ['subscription_cancelled', 'cancelled'],
      ['subscription_reactivated', 'active'],
    ]);
    await expect(emulator.resume(id)).rejects.toMatchObject({ apiErrorCode: 'invalid_state_for_request' });
    await cb.subscription.delete(id);
    const visible = await cb.subscription.list({ limit: 100, id: { is: id } });
    expect(visible.list).toEqual([]);
    const withDeleted = await cb.subscription.list({ limit: 100, id: { is: id }, include_deleted: true });
    expect(withDeleted.list.map((r) => r.subscription.deleted)).toEqual([true]);
    const types = emulator.ledger.events.filter((e) => e.content.subscription?.id === id).map((e) => e.event_type);
    expect(types).toEqual(expect.arrayContaining(['subscription_changed', 'subscription_deleted']));
  });
});

describe('faults and idempotency', () => {
  it("Chargebee's retries, compressed: a delivery answered 500 is POSTed again until a 2xx, the event re_scheduled meanwhile", async () => {
    const answers = [500, 503, 200];
    const got: { body: string; auth: string | undefined }[] = [];
    const flaky = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        got.push({ body, auth: req.headers.authorization });
        res.writeHead(answers.shift() ?? 200).end();
      });
    });
    await new Promise<void>((resolve) => flaky.listen(0, '127.0.0.1', resolve));
    const retrying = await startChargebeeEmulator({
      webhookUrl: `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/`,
      retryDelaysMs: [300, 30, 30],
    });
    try {
      const { customer } = await retrying
        .request('POST', '/api/v2/customers', { email: 'retry@example.com' })
        .then((r) => r.body as { customer: { id: string } });
      const event = await until(() => retrying.ledger.events[0]);
      // Between the first answer and its retry (300 ms later) the event is re_scheduled.
      await until(() => retrying.deliveries()[0]?.status === 500);
      expect(retrying.ledger.events[0]?.webhook_status).toBe('re_scheduled');
      await until(() => retrying.ledger.events[0]?.webhook_status === 'succeeded');
      expect(got).toHaveLength(3);
      expect(new Set(got.map((g) => g.body)).size).toBe(1);
      expect((JSON.parse(got[0]?.body as string) as CbEvent).content.customer?.id).toBe(customer.id);
      expect(got.every((g) => g.auth === got[0]?.auth && g.auth?.startsWith('Basic '))).toBe(true);
      expect(retrying.deliveries().map((d) => [d.event.id, d.attempt, d.status])).toEqual([
        [event.id, 0, 500],
        [event.id, 1, 503],
        [event.id, 2, 200],
      ]);
    } finally {
      await retrying.stop();
      flaky.closeAllConnections();
      await new Promise((resolve) => flaky.close(resolve));
    }
  });

  it('failNext answers before applying (429 with Retry-After); failAfterApply applies and loses the answer, the same key replays it', async () => {
    const bought = await emulator.checkout({ email: 'faulty@example.com', deliver: false });
    emulator.failNext(1, 429, 7);
    const limited = await failureOf(
      cb.promotionalCredit.add({ customer_id: bought.customer.id, amount: 100, currency_code: 'USD', description: 'x' }),
    );
    expect(limited).toMatchObject({ http_status_code: 429, api_error_code: 'api_request_limit_exceeded' });
    expect((limited.headers as Record<string, string>)['retry-after']).toBe('7');
    expect(emulator.balanceOf(bought.customer.id, 'USD')).toBe(0);
    emulator.failNext(1, 503);
    expect(await failureOf(cb.subscription.retrieve(bought.subscription.id))).toMatchObject({ http_status_code: 503 });

    emulator.failAfterApply(1, 500);
    const input = {
      customer_id: bought.customer.id,
      amount: 250,
      currency_code: 'USD',
      description: 'lost',
      reference: 'refloop:reward:lost',
    };
    const lost = await failureOf(cb.promotionalCredit.add(input, { 'chargebee-idempotency-key': 'refloop-credit-lost' }));
    expect(lost).toMatchObject({ http_status_code: 500 });
    expect(emulator.balanceOf(bought.customer.id, 'USD')).toBe(250);
    const retried = await cb.promotionalCredit.add(input, { 'chargebee-idempotency-key': 'refloop-credit-lost' });
    expect(retried.isIdempotencyReplayed).toBe('true');
    expect(emulator.balanceOf(bought.customer.id, 'USD')).toBe(250);
    expect(emulator.promotionalCredits(bought.customer.id)).toHaveLength(1);
    // The same key with other parameters is refused.
    expect(
      await failureOf(cb.promotionalCredit.add({ ...input, amount: 1 }, { 'chargebee-idempotency-key': 'refloop-credit-lost' })),
    ).toMatchObject({
      http_status_code: 400,
    });
  });

  it('a key is replayed for 30 minutes of the emulator clock, then runs again', async () => {
    let now = Date.UTC(2026, 0, 1);
    const clocked = await startChargebeeEmulator({ now: () => now });
    try {
      const client = clientFor(clocked);
      const { customer } = await client.customer.create({ id: 'clocked', email: 'clock@example.com' });
      const add = () =>
        client.promotionalCredit.add(
          { customer_id: customer.id, amount: 100, currency_code: 'USD', description: 'x' },
          { 'chargebee-idempotency-key': 'k-1' },
        );
      await add();
      now += 29 * 60 * 1000;
      expect((await add()).isIdempotencyReplayed).toBe('true');
      expect(clocked.balanceOf('clocked', 'USD')).toBe(100);
      now += 2 * 60 * 1000;
      expect((await add()).isIdempotencyReplayed).toBe(false);
      expect(clocked.balanceOf('clocked', 'USD')).toBe(200);
      // resource_version is unix ms on the clock, strictly increasing even when the clock stands still.
      const versions = [...clocked.ledger.events].map((e) => e.content.customer?.resource_version as number);
      expect(versions[0]).toBeGreaterThanOrEqual(Date.UTC(2026, 0, 1));
      for (let i = 1; i < versions.length; i++) expect(versions[i]).toBeGreaterThan(versions[i - 1] as number);
    } finally {
      await clocked.stop();
    }
  });
});
