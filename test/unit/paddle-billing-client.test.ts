// Paddle Billing API client against a scripted local HTTP server: headers on every call, 429 after
// Retry-After, 5xx/timeouts with backoff inside the budget, Paddle's error shape, not_found -> null.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderUnavailableError } from '../../shared/billing/port';
import { PaddleBillingApiError, PaddleBillingClient, retryAfterMs } from '../../shared/providers/paddle-billing/client';

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
const paddleError = (status: number, code: string, detail = 'x') =>
  json(status, {
    error: { type: 'request_error', code, detail, documentation_url: 'https://developer.paddle.com/errors' },
    meta: { request_id: 'r' },
  });
const ok = (data: unknown, meta: Record<string, unknown> = {}) => json(200, { data, meta: { request_id: 'r', ...meta } });

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
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

function client(over: Partial<ConstructorParameters<typeof PaddleBillingClient>[0]> = {}) {
  const waits: number[] = [];
  let clock = 1_000_000;
  const c = new PaddleBillingClient({
    apiKey: 'pdl_sdbx_apikey_secret',
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

describe('PaddleBillingClient', () => {
  it('sends Bearer auth, Paddle-Version: 1 and JSON on every call', async () => {
    script = [ok({ id: 'sub_1' }), ok({ id: 'dsc_1' }), ok({ id: 'sub_1' })];
    const { c } = client();
    await c.getSubscription('sub_1');
    await c.createDiscount({
      description: 'd',
      type: 'flat',
      amount: '500',
      currency_code: 'USD',
      enabled_for_checkout: false,
      recur: true,
      maximum_recurring_intervals: 1,
    });
    await c.setSubscriptionDiscount('sub_1', 'dsc_1');
    expect(seen.map((s) => [s.method, s.url])).toEqual([
      ['GET', '/subscriptions/sub_1'],
      ['POST', '/discounts'],
      ['PATCH', '/subscriptions/sub_1'],
    ]);
    for (const s of seen) {
      expect(s.headers.authorization).toBe('Bearer pdl_sdbx_apikey_secret');
      expect(s.headers['paddle-version']).toBe('1');
    }
    expect(seen[1]?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(seen[2]?.body ?? '')).toEqual({ discount: { id: 'dsc_1', effective_from: 'next_billing_period' } });
  });

  it('removing the discount sends discount: null', async () => {
    script = [ok({ id: 'sub_1' })];
    await client().c.setSubscriptionDiscount('sub_1', null);
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ discount: null });
  });

  it('429 is retried after its Retry-After (seconds), then succeeds', async () => {
    script = [
      json(429, { error: { type: 'request_error', code: 'too_many_requests', detail: 'slow down' } }, { 'retry-after': '7' }),
      ok({ id: 'sub_1' }),
    ];
    const { c, waits } = client();
    expect(await c.getSubscription('sub_1')).toEqual({ id: 'sub_1' });
    expect(waits).toEqual([7000]);
  });

  it('a Retry-After past the budget is not waited: ProviderUnavailableError at once', async () => {
    script = [json(429, {}, { 'retry-after': '60' })];
    const { c, waits } = client({ budgetMs: 30_000 });
    const err = await c.getSubscription('sub_1').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect(err).toMatchObject({ provider: 'paddle-billing', call: 'get subscription' });
    expect(waits).toEqual([]);
    expect(seen).toHaveLength(1);
  });

  it('5xx is retried with growing backoff, then ProviderUnavailableError after maxAttempts', async () => {
    script = Array.from({ length: 5 }, () => json(503, { error: 'down' }));
    const { c, waits } = client({ maxAttempts: 5, backoffMs: 100 });
    await expect(c.getSubscription('sub_1')).rejects.toBeInstanceOf(ProviderUnavailableError);
    expect(seen).toHaveLength(5);
    expect(waits).toHaveLength(4);
    waits.forEach((w, i) => {
      expect(w).toBeGreaterThanOrEqual(50 * 2 ** i);
      expect(w).toBeLessThanOrEqual(100 * 2 ** i);
    });
  });

  it('a 502 then a 200: the call succeeds', async () => {
    script = [
      json(502, 'bad gateway'),
      ok([{ id: 'sub_1' }], {
        pagination: { per_page: 200, next: `${url}/subscriptions?after=sub_1`, has_more: false, estimated_total: 1 },
      }),
    ];
    const page = await client().c.listSubscriptions(null);
    expect(page).toEqual({ data: [{ id: 'sub_1' }], next: null, estimatedTotal: 1 });
    expect(seen[1]?.url).toBe('/subscriptions?per_page=200');
  });

  it('a timed-out attempt is retried', async () => {
    script = [() => undefined /* never answers */, ok({ id: 'txn_1' })];
    const { c } = client({ timeoutMs: 200 });
    expect(await c.getTransaction('txn_1')).toEqual({ id: 'txn_1' });
    expect(seen[1]?.url).toBe('/transactions/txn_1?include=customer%2Cdiscount');
  });

  it('a body that is not JSON is retried like a 5xx', async () => {
    script = [(_q, res) => res.end('<html>gateway</html>'), ok({ id: 'ctm_1', email: 'a@b.c' })];
    expect(await client().c.getCustomer('ctm_1')).toEqual({ id: 'ctm_1', email: 'a@b.c' });
  });

  it('404 not_found on a get is null', async () => {
    script = [paddleError(404, 'not_found', 'Subscription sub_x not found.')];
    expect(await client().c.getSubscription('sub_x')).toBeNull();
  });

  it('other 4xx: PaddleBillingApiError with code, type and detail, not retried', async () => {
    script = [paddleError(409, 'discount_code_conflict', 'Discount code conflicts with Discount ID dsc_1')];
    const err = await client()
      .c.createDiscount({ description: 'd', type: 'flat', amount: '1', enabled_for_checkout: true, recur: false, code: 'X' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PaddleBillingApiError);
    expect(err).toMatchObject({ status: 409, code: 'discount_code_conflict', type: 'request_error' });
    expect(String((err as Error).message)).not.toContain('pdl_sdbx_apikey_secret');
    expect(seen).toHaveLength(1);
  });

  it('lists follow meta.pagination.next: the after cursor', async () => {
    script = [
      ok([{ id: 'txn_1' }], {
        pagination: { per_page: 30, next: `${url}/transactions?after=txn_1&per_page=30`, has_more: true, estimated_total: 40 },
      }),
    ];
    const page = await client().c.listTransactions('sub_1', 'txn_0');
    expect(page.next).toBe('txn_1');
    expect(seen[0]?.url).toBe('/transactions?subscription_id=sub_1&status=completed&per_page=30&after=txn_0');
  });

  it('retryAfterMs reads seconds and HTTP dates', () => {
    expect(retryAfterMs('3', 0)).toBe(3000);
    expect(retryAfterMs(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(retryAfterMs('soon', 0)).toBeNull();
    expect(retryAfterMs(null, 0)).toBeNull();
  });
});
