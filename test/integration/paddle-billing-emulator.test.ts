// The Paddle Billing emulator cannot drift from the real wire format: the official @paddle/paddle-node-sdk
// (dev dependency) verifies and parses every notification the emulator delivers, and the adapter's client
// drives the emulator end to end (checkout -> facts, credits once, coupons once, refunds once approved).
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Environment, LogLevel, Paddle } from '@paddle/paddle-node-sdk';
import { CreditMustWaitError, ProviderUnavailableError, type BillingEvent } from '../../shared/billing/port';
import { paddleBillingProvider, type PaddleBillingProvider } from '../../shared/providers/paddle-billing/adapter';
import { startPaddleBillingEmulator, type PaddleBillingEmulator } from '../../infra/local/emulators/paddle-billing';
import { verifyPaddleBillingSignature } from '../../shared/providers/paddle-billing/signature';

interface Received {
  headers: Record<string, string | undefined>;
  rawBody: string;
}

let emulator: PaddleBillingEmulator;
let receiver: Server;
let received: Received[] = [];
let provider: PaddleBillingProvider;
const sdk = new Paddle('pdl_sdbx_apikey_unused', { environment: Environment.sandbox, logLevel: LogLevel.none });

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({
        headers: { 'paddle-signature': req.headers['paddle-signature'] as string | undefined, 'content-type': req.headers['content-type'] },
        rawBody: body,
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  emulator = await startPaddleBillingEmulator({
    webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`,
    taxRatePercent: 10,
  });
  provider = paddleBillingProvider({ apiKey: emulator.apiKey, apiUrl: emulator.url }, { timeoutMs: 2_000, budgetMs: 5_000 });
});

afterAll(async () => {
  await emulator?.stop();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

beforeEach(() => {
  received = [];
});

/** The SDK's unmarshal, with its clock (Date only; real timers keep running) 2 s after the signature's ts. */
async function sdkUnmarshal(w: Received) {
  const ts = Number(/ts=(\d+)/.exec(w.headers['paddle-signature'] ?? '')?.[1]);
  jest.useFakeTimers({
    doNotFake: [
      'hrtime',
      'nextTick',
      'performance',
      'queueMicrotask',
      'requestAnimationFrame',
      'cancelAnimationFrame',
      'requestIdleCallback',
      'cancelIdleCallback',
      'setImmediate',
      'clearImmediate',
      'setInterval',
      'clearInterval',
      'setTimeout',
      'clearTimeout',
    ],
    now: ts * 1000 + 2_000,
  });
  try {
    return await sdk.webhooks.unmarshal(w.rawBody, emulator.webhookSecret, w.headers['paddle-signature'] ?? '');
  } finally {
    jest.useRealTimers();
  }
}

const parse = (w: Received) => provider.parseWebhook({ headers: w.headers, rawBody: w.rawBody });
const ofType = (type: string) => received.filter((w) => (JSON.parse(w.rawBody) as { event_type: string }).event_type === type);
const only = (list: Received[]): Received => {
  expect(list).toHaveLength(1);
  return list[0] as Received;
};
const subscriptionEvent = (events: BillingEvent[]) => {
  expect(events).toHaveLength(1);
  const e = events[0] as BillingEvent;
  if (e.kind !== 'subscription') throw new Error(`expected a subscription event, got ${JSON.stringify(e)}`);
  return e;
};

describe('the official SDK verifies and parses every emulator notification', () => {
  it('checkout, renewal, failure, cancel, refund (pending, approved), chargeback: all verify and unmarshal', async () => {
    const { result } = await emulator.checkout({ email: 'sdk@example.com', customData: { refloop_referral_id: 'r1' } });
    const subId = result.subscription.id;
    const renewal = await emulator.renew(subId);
    await emulator.failPayment(subId);
    const refund = await emulator.refund(result.transaction.id, { amount: 200 });
    await emulator.approve(refund.result.adjustment.id);
    await emulator.chargeback(renewal.result.transaction.id);
    await emulator.cancel(subId);

    const types = received.map((w) => (JSON.parse(w.rawBody) as { event_type: string }).event_type);
    expect(types).toEqual([
      'subscription.created',
      'transaction.completed',
      'transaction.completed',
      'subscription.updated',
      'transaction.payment_failed',
      'subscription.past_due',
      'adjustment.created',
      'adjustment.updated',
      'adjustment.created',
      'subscription.canceled',
    ]);
    for (const w of received) {
      expect(w.headers['content-type']).toBe('application/json');
      expect(await sdk.webhooks.isSignatureValid(w.rawBody, 'a-wrong-secret', w.headers['paddle-signature'] ?? '')).toBe(false);
      const event = await sdkUnmarshal(w);
      const body = JSON.parse(w.rawBody) as { event_id: string; event_type: string; occurred_at: string; data: { id: string } };
      expect(event).toMatchObject({ eventId: body.event_id, eventType: body.event_type, occurredAt: body.occurred_at });
      expect((event.data as { id: string }).id).toBe(body.data.id);
      // Refloop's own verifier agrees, with its 300 s window.
      expect(verifyPaddleBillingSignature(w, emulator.webhookSecret, Date.now())).toEqual({ ok: true, eventId: body.event_id });
    }
    // Field names the SDK maps: what the parser reads is where the SDK finds it.
    const created = await sdkUnmarshal(only(ofType('subscription.created')));
    expect(created.data).toMatchObject({
      id: subId,
      transactionId: result.transaction.id,
      customData: { refloop_referral_id: 'r1' },
      status: 'active',
    });
    const paid = await sdkUnmarshal(ofType('transaction.completed')[0] as Received);
    expect(paid.data).toMatchObject({
      origin: 'web',
      subscriptionId: subId,
      details: { totals: { grandTotal: '1100', tax: '100', total: '1100' } },
    });
    const approved = await sdkUnmarshal(only(ofType('adjustment.updated')));
    expect(approved.data).toMatchObject({
      action: 'refund',
      status: 'approved',
      transactionId: result.transaction.id,
      totals: { total: '200' },
    });
  });

  it('the SDK rejects what it should: a changed body, and a signature older than its 5 s', async () => {
    await emulator.checkout({ email: 'sdk2@example.com' });
    const w = received[0] as Received;
    const changed = w.rawBody.replace('"status":"active"', '"status":"paused"');
    expect(changed).not.toBe(w.rawBody);
    expect(await sdk.webhooks.isSignatureValid(changed, emulator.webhookSecret, w.headers['paddle-signature'] ?? '')).toBe(false);
    const stale = emulator.sign(w.rawBody, Math.floor(Date.now() / 1000) - 60);
    expect(await sdk.webhooks.isSignatureValid(w.rawBody, emulator.webhookSecret, stale)).toBe(false);
    // 60 s late is within Refloop's 300 s.
    expect(
      verifyPaddleBillingSignature({ headers: { 'paddle-signature': stale }, rawBody: w.rawBody }, emulator.webhookSecret, Date.now()).ok,
    ).toBe(true);
  });
});

describe("the official SDK calls the emulator's API: every call Refloop makes (shared/providers/paddle-billing/client.ts)", () => {
  // The SDK sends `Authorization: bearer <key>` (lower case); an environment that is not one of its names is its base URL.
  // Paddle-Version 1 as Refloop's client sends it (the last tests check every call carried it).
  const api = () =>
    new Paddle(emulator.apiKey, {
      environment: emulator.url as Environment,
      logLevel: LogLevel.none,
      customHeaders: { 'Paddle-Version': '1' },
    });

  it('auth schemes are matched without case: bearer, Bearer and BEARER pass; a wrong key, no key or another scheme is 403', async () => {
    const url = `${emulator.url}/subscriptions?per_page=1`;
    for (const scheme of ['bearer', 'Bearer', 'BEARER'])
      expect((await fetch(url, { headers: { authorization: `${scheme} ${emulator.apiKey}`, 'paddle-version': '1' } })).status).toBe(200);
    for (const bad of [`bearer pdl_sdbx_apikey_wrong`, `Basic ${emulator.apiKey}`, `bearer`, '']) {
      const res = await fetch(url, { headers: { 'paddle-version': '1', ...(bad ? { authorization: bad } : {}) } });
      expect({ bad, status: res.status }).toEqual({ bad, status: 403 });
      expect(await res.json()).toMatchObject({ error: { type: 'request_error', code: 'forbidden' } });
    }
  });

  it('subscriptions get/list/update (discount), transactions get (include)/list, customers get/list, discounts create/get/list', async () => {
    const sdkApi = api();
    const discount = await sdkApi.discounts.create({
      description: 'SDK coupon',
      type: 'percentage',
      amount: '10',
      code: 'SDKCOUPON1',
      enabledForCheckout: true,
      recur: false,
      usageLimit: 1,
    });
    expect(discount).toMatchObject({
      id: expect.stringMatching(/^dsc_/),
      code: 'SDKCOUPON1',
      type: 'percentage',
      amount: '10',
      usageLimit: 1,
      enabledForCheckout: true,
    });
    expect(await sdkApi.discounts.get(discount.id)).toMatchObject({ id: discount.id, code: 'SDKCOUPON1' });
    const byCode = await sdkApi.discounts.list({ code: ['sdkcoupon1'] }).next();
    expect(byCode.map((d) => d.id)).toEqual([discount.id]);

    const { result } = await emulator.checkout({
      email: 'sdk-api@example.com',
      customData: { refloop_referral_id: 'ref-sdk' },
      discountCode: 'SDKCOUPON1',
    });
    const subId = result.subscription.id;
    const sub = await sdkApi.subscriptions.get(subId);
    expect(sub).toMatchObject({
      id: subId,
      status: 'active',
      customerId: result.subscription.customer_id,
      currencyCode: 'USD',
      customData: { refloop_referral_id: 'ref-sdk' },
    });
    expect(sub.items[0]?.price).toMatchObject({ id: expect.stringMatching(/^pri_/) });
    const listed = await sdkApi.subscriptions.list({ customerId: [result.subscription.customer_id], perPage: 1 }).next();
    expect(listed.map((x) => x.id)).toEqual([subId]);
    const all: string[] = [];
    const collection = sdkApi.subscriptions.list({ perPage: 1 });
    for await (const x of collection) all.push(x.id);
    expect(all).toContain(subId);
    expect(new Set(all).size).toBe(all.length);

    const txn = await sdkApi.transactions.get(result.transaction.id, { include: ['customer', 'discount'] });
    expect(txn).toMatchObject({
      id: result.transaction.id,
      subscriptionId: subId,
      status: 'completed',
      customer: { email: 'sdk-api@example.com' },
      discount: { id: discount.id },
    });
    const txns = await sdkApi.transactions.list({ subscriptionId: [subId], status: ['completed'], perPage: 30 }).next();
    expect(txns.map((t) => t.id)).toEqual([result.transaction.id]);

    expect(await sdkApi.customers.get(result.subscription.customer_id)).toMatchObject({
      id: result.subscription.customer_id,
      email: 'sdk-api@example.com',
    });
    const customers = await sdkApi.customers.list({ id: [result.subscription.customer_id], perPage: 200 }).next();
    expect(customers.map((c) => c.email)).toEqual(['sdk-api@example.com']);

    const credit = await sdkApi.discounts.create({
      description: 'Refloop referral credit',
      type: 'flat',
      amount: '500',
      currencyCode: 'USD',
      enabledForCheckout: false,
      recur: true,
      maximumRecurringIntervals: 1,
    });
    const updated = await sdkApi.subscriptions.update(subId, { discount: { id: credit.id, effectiveFrom: 'next_billing_period' } });
    expect(updated.discount).toMatchObject({ id: credit.id });
    expect(emulator.ledger.subscription(subId).discount).toMatchObject({ id: credit.id });
    const removed = await sdkApi.subscriptions.update(subId, { discount: null });
    expect(removed.discount).toBeNull();

    await expect(sdkApi.subscriptions.get('sub_01unknown000000000000000a')).rejects.toMatchObject({ code: 'not_found' });
  });
});

describe('the adapter drives the emulator end to end', () => {
  it('coupon created once; checkout with customData and the code -> subscription and payment facts with hints', async () => {
    const coupon = {
      referralId: 'ref-42',
      code: 'RFTESTCOUPON42',
      discount: { type: 'percentage' as const, amount: 10_00, currency: null, recurring: false },
    };
    const before = emulator.callCounts()['POST /discounts'] ?? 0;
    expect(await provider.createCoupon(coupon)).toBe('created');
    expect(await provider.createCoupon(coupon)).toBe('existed');
    expect((emulator.callCounts()['POST /discounts'] ?? 0) - before).toBe(2);
    expect([...emulator.ledger.discounts.values()].filter((d) => d.code === 'RFTESTCOUPON42')).toMatchObject([
      { usage_limit: 1, enabled_for_checkout: true, amount: '10', times_used: 0 },
    ]);

    const { result } = await emulator.checkout({
      email: 'referred@example.com',
      customData: { refloop_referral_id: 'ref-42' },
      discountCode: 'rftestcoupon42',
    });
    const sub = subscriptionEvent(await parse(only(ofType('subscription.created'))));
    expect(sub.subscription).toMatchObject({
      id: result.subscription.id,
      status: 'active',
      email: 'referred@example.com',
      currency: 'USD',
      unitPrice: 1000,
      plan: { name: 'Pro', amount: 1000, currency: 'USD', interval: 'month', frequency: 1 },
      customerId: result.subscription.customer_id,
    });
    expect(sub.hints).toEqual({ referralId: 'ref-42', checkoutId: result.transaction.id });

    const pay = subscriptionEvent(await parse(only(ofType('transaction.completed'))));
    // 1000 - 10 % = 900, + 10 % tax = 990 paid.
    expect(pay.payment).toMatchObject({
      id: result.transaction.id,
      subscriptionId: result.subscription.id,
      amount: 990,
      amountExcludingTax: 900,
      currency: 'USD',
      checkoutId: result.transaction.id,
    });
    expect(pay.hints).toEqual({ referralId: 'ref-42', checkoutId: result.transaction.id, couponCode: 'RFTESTCOUPON42' });
    expect(emulator.ledger.discountByCode('RFTESTCOUPON42')).toMatchObject({ times_used: 1, status: 'used' });

    expect(await provider.resolveCheckout(result.transaction.id)).toEqual({
      state: 'subscription',
      subscriptionId: result.subscription.id,
    });
    expect(await provider.resolveCheckout('txn_01unknown0000000000000000a')).toEqual({ state: 'not_found' });
    expect(await provider.resolveCheckout('not-a-txn')).toEqual({ state: 'not_found' });
    expect(await provider.getSubscription(result.subscription.id)).toMatchObject({
      id: result.subscription.id,
      email: 'referred@example.com',
      nextBillDate: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
    });
    expect(await provider.getSubscription('sub_01unknown000000000000000a')).toBeNull();
    expect(await provider.listPayments(result.subscription.id)).toMatchObject([{ id: result.transaction.id, amount: 990 }]);
    const page = await provider.listSubscriptions(null);
    expect(page.next).toBeNull();
    expect(page.subscriptions.find((s) => s.id === result.subscription.id)).toMatchObject({ email: 'referred@example.com' });
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

  it('a credit is applied once even when retried, and shows on the next renewal', async () => {
    const { result } = await emulator.checkout({ email: 'referrer@example.com' });
    const subId = result.subscription.id;
    const credit = { rewardId: 'reward-a', subscriptionId: subId, amount: 300, currency: 'USD' };
    const patches = () => emulator.callCounts()['PATCH /subscriptions/{id}'] ?? 0;
    const before = patches();
    const first = await provider.applyCredit(credit);
    expect(first).toMatchObject({ reused: false, rewardIds: ['reward-a'] });
    expect(await provider.applyCredit(credit)).toEqual({ providerRef: first.providerRef, reused: true, rewardIds: ['reward-a'] });
    expect(patches() - before).toBe(1);
    const discount = emulator.ledger.discount(first.providerRef);
    expect(discount).toMatchObject({
      type: 'flat',
      amount: '300',
      currency_code: 'USD',
      recur: true,
      maximum_recurring_intervals: 1,
      enabled_for_checkout: false,
    });
    expect(discount.description).toContain('reward-a');

    // A retry whose first attempt created the discount but never applied it (the PATCH was lost).
    const lost = { rewardId: 'reward-lost', subscriptionId: subId, amount: 100, currency: 'USD' };
    const other = await emulator.checkout({ email: 'referrer-b@example.com' });
    const first2 = await provider.applyCredit({ ...lost, subscriptionId: other.result.subscription.id });
    emulator.ledger.updateSubscription(other.result.subscription.id, { discount: null }); // as if never applied
    emulator.ledger.discount(first2.providerRef).times_used = 0;
    const again = await provider.applyCredit({ ...lost, subscriptionId: other.result.subscription.id });
    expect(again).toMatchObject({ providerRef: first2.providerRef, reused: true });
    expect(emulator.ledger.subscription(other.result.subscription.id).discount?.id).toBe(first2.providerRef);

    received = [];
    const renewal = await emulator.renew(subId);
    // (1000 - 300) + 10 % tax = 770.
    expect(renewal.result.transaction.details.totals).toMatchObject({ subtotal: '1000', discount: '300', grand_total: '770' });
    const pay = subscriptionEvent(await parse(only(ofType('transaction.completed'))));
    expect(pay.payment).toMatchObject({ amount: 770, amountExcludingTax: 700 });
    expect(pay.payment).not.toHaveProperty('checkoutId');
    // Billed: no reversal any more, and a retry does not apply it again.
    expect(await provider.reverseCredit({ ...credit, providerRef: first.providerRef })).toBe('consumed');
    expect(await provider.applyCredit(credit)).toMatchObject({ providerRef: first.providerRef, reused: true });
    // The one interval is used: the renewal after is full price.
    expect((await emulator.renew(subId)).result.transaction.details.totals.grand_total).toBe('1100');
    expect(await provider.applyCredit(credit)).toMatchObject({ providerRef: first.providerRef, reused: true });
    expect((await emulator.renew(subId)).result.transaction.details.totals.grand_total).toBe('1100');
  });

  it('credits pending in one period combine into one discount; reversing one reduces it', async () => {
    const { result } = await emulator.checkout({ email: 'combiner@example.com' });
    const subId = result.subscription.id;
    await provider.applyCredit({ rewardId: 'reward-b', subscriptionId: subId, amount: 200, currency: 'USD' });
    const combined = await provider.applyCredit({ rewardId: 'reward-c', subscriptionId: subId, amount: 150, currency: 'USD' });
    expect(combined.rewardIds).toEqual(['reward-b', 'reward-c']);
    expect(emulator.ledger.discount(combined.providerRef).amount).toBe('350');
    // The flow can also pass them already combined: the same discount.
    expect(
      await provider.applyCredit({
        rewardId: 'reward-b',
        combined: [
          { rewardId: 'reward-b', amount: 200 },
          { rewardId: 'reward-c', amount: 150 },
        ],
        subscriptionId: subId,
        amount: 350,
        currency: 'USD',
      }),
    ).toMatchObject({ providerRef: combined.providerRef, reused: true });

    expect(
      await provider.reverseCredit({
        rewardId: 'reward-b',
        subscriptionId: subId,
        amount: 200,
        currency: 'USD',
        providerRef: combined.providerRef,
      }),
    ).toBe('reversed');
    const left = emulator.ledger.subscription(subId).discount;
    expect(left && emulator.ledger.discount(left.id)).toMatchObject({ amount: '150' });
    expect((await emulator.renew(subId)).result.transaction.details.totals.discount).toBe('150');
    expect(
      await provider.reverseCredit({
        rewardId: 'reward-c',
        subscriptionId: subId,
        amount: 150,
        currency: 'USD',
        providerRef: left?.id ?? null,
      }),
    ).toBe('consumed');

    // Reversing the only pending credit removes the discount.
    const single = await provider.applyCredit({ rewardId: 'reward-d', subscriptionId: subId, amount: 100, currency: 'USD' });
    expect(
      await provider.reverseCredit({
        rewardId: 'reward-d',
        subscriptionId: subId,
        amount: 100,
        currency: 'USD',
        providerRef: single.providerRef,
      }),
    ).toBe('reversed');
    expect(emulator.ledger.subscription(subId).discount?.id).not.toBe(single.providerRef);
  });

  it('a discount Refloop did not create is never replaced: CreditMustWaitError', async () => {
    await emulator.ledger.createDiscount({
      description: 'Black Friday',
      type: 'percentage',
      amount: '20',
      enabled_for_checkout: true,
      recur: true,
      code: 'BF20',
    });
    const { result } = await emulator.checkout({ email: 'bf@example.com', discountCode: 'BF20' });
    const own = emulator.ledger.subscription(result.subscription.id).discount?.id;
    await expect(
      provider.applyCredit({ rewardId: 'reward-e', subscriptionId: result.subscription.id, amount: 100, currency: 'USD' }),
    ).rejects.toBeInstanceOf(CreditMustWaitError);
    expect(emulator.ledger.subscription(result.subscription.id).discount?.id).toBe(own);
  });

  it('a refund counts once, when approved; a chargeback counts', async () => {
    const { result } = await emulator.checkout({ email: 'refund@example.com' });
    received = [];
    const refund = await emulator.refund(result.transaction.id, { amount: 550 });
    const pending = await parse(only(ofType('adjustment.created')));
    expect(pending).toMatchObject([{ kind: 'ignored', reason: expect.stringContaining('pending_approval') }]);
    await emulator.approve(refund.result.adjustment.id);
    const approved = only(ofType('adjustment.updated'));
    // Delivered twice (at least once): the same fact, so the flow's refund id de-duplicates it.
    const facts = [...(await parse(approved)), ...(await parse(approved))].flatMap((e) =>
      e.kind === 'subscription' && e.refund ? [e.refund] : [],
    );
    expect(new Set(facts.map((f) => f.id))).toEqual(new Set([refund.result.adjustment.id]));
    expect(facts[0]).toMatchObject({
      paymentId: result.transaction.id,
      subscriptionId: result.subscription.id,
      amount: 550,
      currency: 'USD',
      kind: 'refund',
    });

    received = [];
    await emulator.chargeback(result.transaction.id);
    const cb = subscriptionEvent(await parse(only(ofType('adjustment.created'))));
    expect(cb.refund).toMatchObject({ kind: 'chargeback', amount: 1100 - 550 });
  });

  it('every call sends Paddle-Version: 1', () => {
    const versions = emulator.versionsSeen();
    expect(versions.length).toBeGreaterThan(10);
    expect(new Set(versions)).toEqual(new Set(['1']));
  });

  it('429 is retried after Retry-After; a provider that stays down is ProviderUnavailableError', async () => {
    const { result } = await emulator.checkout({ email: 'faults@example.com' });
    emulator.failNext(1, 429, 1);
    const started = Date.now();
    expect(await provider.getSubscription(result.subscription.id)).toMatchObject({ id: result.subscription.id });
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_000);

    emulator.failNext(100, 503);
    const fast = paddleBillingProvider({ apiKey: emulator.apiKey, apiUrl: emulator.url }, { timeoutMs: 1_000, budgetMs: 1_500 });
    await expect(fast.getSubscription(result.subscription.id)).rejects.toBeInstanceOf(ProviderUnavailableError);
    emulator.failNext(0, 503);

    const wrongKey = paddleBillingProvider({ apiKey: 'pdl_sdbx_apikey_wrong', apiUrl: emulator.url });
    await expect(wrongKey.getSubscription(result.subscription.id)).rejects.toMatchObject({ status: 403, code: 'forbidden' });
  });
});
