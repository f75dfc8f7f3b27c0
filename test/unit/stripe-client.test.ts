// Stripe API client against a scripted local HTTP server: headers on every call (Bearer, Stripe-Version,
// Idempotency-Key on writes, reused by retries), form bodies with bracket keys, 429/5xx after Retry-After
// or backoff inside the budget, Stripe-Should-Retry, Stripe's error shape, resource_missing -> null.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderUnavailableError } from '../../shared/billing/port';
import { StripeApiError, StripeClient, retryAfterMs } from '../../shared/providers/stripe/client';
import { STRIPE_API_VERSION, decodeForm } from '../../shared/providers/stripe/wire';

type Reply = (req: IncomingMessage, res: ServerResponse) => void;
interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let url: string;
let script: Reply[] = [];
let seen: Seen[] = [];

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const stripeError = (status: number, type: string, code: string, message = 'x', headers: Record<string, string> = {}) =>
  json(status, { error: { type, code, message, param: 'id' } }, headers);
const ok = (body: unknown) => json(200, body);
const list = (data: { id: string }[], hasMore: boolean, path = '/v1/x') => ok({ object: 'list', data, has_more: hasMore, url: path });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: decodeURIComponent(req.url ?? ''), headers: req.headers, body });
      const reply = script.shift();
      if (!reply) return json(500, { error: 'script exhausted' })(req, res);
      reply(req, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});
beforeEach(() => {
  script = [];
  seen = [];
});

function client(over: Partial<ConstructorParameters<typeof StripeClient>[0]> = {}) {
  const waits: number[] = [];
  let clock = 1_000_000;
  const c = new StripeClient({
    secretKey: 'rk_test_secretvalue',
    apiUrl: url,
    timeoutMs: 500,
    budgetMs: 20_000,
    // A virtual clock: waits advance it without sleeping.
    sleep: async (ms) => {
      waits.push(ms);
      clock += ms;
    },
    now: () => clock,
    ...over,
  });
  return { c, waits };
}

describe('StripeClient', () => {
  it('sends Bearer auth and the pinned Stripe-Version on every call; writes are forms with an Idempotency-Key', async () => {
    script = [ok({ id: 'sub_1', object: 'subscription' }), ok({ id: 'cbtxn_1' })];
    const { c } = client();
    await c.getSubscription('sub_1');
    await c.createBalanceTransaction(
      'cus_1',
      { amount: -500, currency: 'usd', description: 'Refloop credit', metadata: { refloop_reward_id: 'r1' } },
      'refloop-credit-r1',
    );
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/v1/subscriptions/sub_1?expand[0]=customer&expand[1]=items.data.price.product&expand[2]=default_payment_method'],
      ['POST', '/v1/customers/cus_1/balance_transactions'],
    ]);
    for (const s of seen) {
      expect(s.headers.authorization).toBe('Bearer rk_test_secretvalue');
      expect(s.headers['stripe-version']).toBe(STRIPE_API_VERSION);
    }
    expect(seen[0]?.headers['idempotency-key']).toBeUndefined();
    expect(seen[1]?.headers['idempotency-key']).toBe('refloop-credit-r1');
    expect(seen[1]?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(decodeForm(seen[1]?.body ?? '')).toEqual({
      amount: '-500',
      currency: 'usd',
      description: 'Refloop credit',
      metadata: { refloop_reward_id: 'r1' },
    });
  });

  it('promotion codes use the Clover form: promotion[type]=coupon&promotion[coupon]=…', async () => {
    script = [ok({ id: 'promo_1' })];
    await client().c.createPromotionCode(
      {
        coupon: 'refloop-abc',
        code: 'RFJANE7',
        max_redemptions: 1,
        first_time_transaction: true,
        metadata: { refloop_referral_id: 'ref-1' },
      },
      'k1',
    );
    expect(decodeForm(seen[0]?.body ?? '')).toEqual({
      promotion: { type: 'coupon', coupon: 'refloop-abc' },
      code: 'RFJANE7',
      max_redemptions: '1',
      restrictions: { first_time_transaction: 'true' },
      metadata: { refloop_referral_id: 'ref-1' },
    });
  });

  it('a write without a key gets a random one, and its retries reuse it', async () => {
    script = [json(500, { error: { type: 'api_error', message: 'boom' } }), ok({ id: 'cbtxn_1' })];
    await client().c.request('x', 'POST', '/v1/x', { a: 1 });
    expect(seen).toHaveLength(2);
    expect(seen[0]?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(seen[1]?.headers['idempotency-key']).toBe(seen[0]?.headers['idempotency-key']);
  });

  it('429 is retried after its Retry-After, then succeeds', async () => {
    script = [stripeError(429, 'invalid_request_error', 'rate_limit', 'slow down', { 'retry-after': '2' }), ok({ id: 'ch_1' })];
    const { c, waits } = client();
    expect(await c.getCharge('ch_1')).toEqual({ id: 'ch_1' });
    expect(waits).toEqual([2000]);
    expect(seen[1]?.url).toBe('/v1/charges/ch_1?expand[0]=refunds');
  });

  it('a Retry-After past the budget is not waited: ProviderUnavailableError at once', async () => {
    script = [json(429, {}, { 'retry-after': '60' })];
    const { c, waits } = client({ budgetMs: 30_000 });
    const err = await c.getCustomer('cus_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err).toMatchObject({ provider: 'stripe', call: 'retrieve customer' });
    expect(waits).toEqual([]);
  });

  it('5xx is retried with growing backoff, then ProviderUnavailableError after maxAttempts', async () => {
    script = Array.from({ length: 4 }, () => json(503, { error: { type: 'api_error', message: 'down' } }));
    const { c, waits } = client({ maxAttempts: 4, backoffMs: 100 });
    await expect(c.getSubscription('sub_1')).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(seen).toHaveLength(4);
    expect(waits).toHaveLength(3);
    waits.forEach((w, i) => {
      expect(w).toBeGreaterThanOrEqual(50 * 2 ** i);
      expect(w).toBeLessThanOrEqual(100 * 2 ** i);
    });
  });

  it('Stripe-Should-Retry: false stops at once; true retries a 409 idempotency lock', async () => {
    script = [json(500, { error: { type: 'api_error', message: 'no' } }, { 'stripe-should-retry': 'false' })];
    await expect(client().c.getSubscription('sub_1')).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(seen).toHaveLength(1);
    seen = [];
    script = [stripeError(409, 'idempotency_error', 'lock_timeout', 'locked', { 'stripe-should-retry': 'true' }), ok({ id: 'cbtxn_1' })];
    expect(
      await client().c.createBalanceTransaction('cus_1', { amount: -1, currency: 'usd', description: 'd', metadata: {} }, 'k'),
    ).toEqual({ id: 'cbtxn_1' });
    expect(seen).toHaveLength(2);
  });

  it('a timed-out attempt is retried; a body that is not JSON is retried', async () => {
    script = [() => undefined /* never answers */, (_q, res) => res.end('<html>gateway</html>'), ok({ id: 'cs_1' })];
    expect(await client({ timeoutMs: 200 }).c.getCheckoutSession('cs_1')).toEqual({ id: 'cs_1' });
    expect(seen).toHaveLength(3);
  });

  it('404 resource_missing on a get is null', async () => {
    script = [stripeError(404, 'invalid_request_error', 'resource_missing', "No such subscription: 'sub_x'")];
    expect(await client().c.getSubscription('sub_x')).toBeNull();
  });

  it('other 4xx: StripeApiError with type, code, message and param, not retried, no key in the message', async () => {
    script = [stripeError(400, 'invalid_request_error', 'resource_already_exists', 'Coupon already exists.')];
    const err = await client()
      .c.createCoupon({ id: 'c1', name: 'n', duration: 'once', percent_off: 10, metadata: {} }, 'k')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StripeApiError);
    expect(err).toMatchObject({ status: 400, type: 'invalid_request_error', code: 'resource_already_exists', param: 'id' });
    expect(String((err as Error).message)).not.toContain('rk_test_secretvalue');
    expect(seen).toHaveLength(1);
  });

  it('lists: status=all, limit 100, starting_after = the last id while has_more', async () => {
    script = [list([{ id: 'sub_3' }, { id: 'sub_2' }], true), list([{ id: 'sub_1' }], false)];
    const { c } = client();
    const first = await c.listSubscriptions(null);
    expect(first.next).toBe('sub_2');
    const second = await c.listSubscriptions(first.next);
    expect(second).toEqual({ data: [{ id: 'sub_1' }], next: null });
    expect(seen.map((s) => s.url)).toEqual([
      '/v1/subscriptions?limit=100&status=all&expand[0]=data.customer&expand[1]=data.default_payment_method',
      '/v1/subscriptions?limit=100&status=all&starting_after=sub_2&expand[0]=data.customer&expand[1]=data.default_payment_method',
    ]);
  });

  it('a key without the PaymentMethods permission (403) still reads subscriptions, without their card', async () => {
    const denied = () => stripeError(403, 'invalid_request_error', '', 'The provided key does not have the required permissions');
    script = [denied(), ok({ id: 'sub_1' }), denied(), list([{ id: 'sub_1' }], false)];
    const { c } = client();
    expect(await c.getSubscription('sub_1')).toEqual({ id: 'sub_1' });
    expect((await c.listSubscriptions(null)).data).toEqual([{ id: 'sub_1' }]);
    expect(seen.map((s) => s.url)).toEqual([
      '/v1/subscriptions/sub_1?expand[0]=customer&expand[1]=items.data.price.product&expand[2]=default_payment_method',
      '/v1/subscriptions/sub_1?expand[0]=customer&expand[1]=items.data.price.product',
      '/v1/subscriptions?limit=100&status=all&expand[0]=data.customer&expand[1]=data.default_payment_method',
      '/v1/subscriptions?limit=100&status=all&expand[0]=data.customer',
    ]);
  });

  it('charge -> invoice: invoice payments by payment intent, invoices expanded', async () => {
    script = [list([{ id: 'inpay_1' }], false)];
    await client().c.listInvoicePaymentsByPaymentIntent('pi_1');
    expect(seen[0]?.url).toBe(
      '/v1/invoice_payments?limit=100&payment[type]=payment_intent&payment[payment_intent]=pi_1&expand[0]=data.invoice',
    );
  });

  it('retryAfterMs reads seconds and HTTP dates', () => {
    expect(retryAfterMs('3', 0)).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(retryAfterMs('soon', 0)).toBeNull();
    expect(retryAfterMs(null, 0)).toBeNull();
  });
});
