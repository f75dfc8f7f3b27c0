// Chargebee's API client and adapter against a local HTTP server (shared/providers/chargebee/{client,adapter}.ts):
// Basic auth with the key, `/api/v2`, form bodies with bracket keys and JSON meta_data, the idempotency
// header on writes (reused by retries), 429/5xx after Retry-After or backoff inside the budget, timeouts,
// Chargebee's error shape; then the port: events re-fetched by id (a forged body changes nothing, an
// unknown id is ignored, an outage throws), plan names, credits found by reference, reversal of what is
// unspent only, coupons and codes, checkout states, list cursors.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ProviderUnavailableError } from '../../shared/billing/port';
import { chargebeeProvider, couponIdFor, creditBalance, idempotencyKey } from '../../shared/providers/chargebee/adapter';
import { ChargebeeApiError, ChargebeeClient, IDEMPOTENCY_HEADER } from '../../shared/providers/chargebee/client';
import { decodeForm, type Customer } from '../../shared/providers/chargebee/wire';

type Json = Record<string, unknown>;
type Reply = (req: IncomingMessage, res: ServerResponse, body: string) => void;
interface Seen {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

let server: Server;
let url: string;
let script: Reply[] = [];
let route: ((s: Seen) => { status: number; body: unknown } | null) | null = null;
let seen: Seen[] = [];

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Reply =>
  (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(typeof body === 'string' ? body : JSON.stringify(body));
  };
const ok = (body: unknown) => json(200, body);
const cbError = (status: number, code: string, message = 'x', type = 'invalid_request', headers: Record<string, string> = {}) =>
  json(status, { message, type, api_error_code: code, param: 'id' }, headers);

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const u = new URL(req.url ?? '/', 'http://x');
      const s: Seen = { method: req.method ?? '', path: decodeURIComponent(u.pathname), query: u.searchParams, headers: req.headers, body };
      seen.push(s);
      if (route) {
        const r = route(s);
        return json(r?.status ?? 404, r?.body ?? { message: 'not found', type: 'invalid_request', api_error_code: 'resource_not_found' })(
          req,
          res,
          body,
        );
      }
      const reply = script.shift();
      if (!reply) return json(500, { message: 'script exhausted' })(req, res, body);
      reply(req, res, body);
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
  route = null;
  seen = [];
});

const API_KEY = 'test_cbKeyValue123';
function clock() {
  const waits: number[] = [];
  let now = 1_000_000;
  return {
    waits,
    options: {
      timeoutMs: 300,
      budgetMs: 20_000,
      sleep: async (ms: number) => {
        waits.push(ms);
        now += ms;
      },
      now: () => now,
    },
  };
}
function client(over: Partial<ConstructorParameters<typeof ChargebeeClient>[0]> = {}) {
  const c = clock();
  return { c: new ChargebeeClient({ apiKey: API_KEY, apiUrl: `${url}/`, ...c.options, ...over }), waits: c.waits };
}

describe('ChargebeeClient', () => {
  it('Basic auth with the key and an empty password, /api/v2, JSON accepted; writes are forms with an idempotency key', async () => {
    script = [ok({ subscription: { id: 's1' }, customer: { id: 'c1' } }), ok({ customer: {}, promotional_credit: { id: 'pc_1' } })];
    const { c } = client();
    await c.getSubscription('s 1/x');
    await c.addPromotionalCredits(
      { customer_id: 'c1', amount: 500, currency_code: 'USD', reference: 'refloop:reward:r1' },
      'refloop-credit-r1',
    );
    expect(seen.map((s) => [s.method, s.path])).toEqual([
      ['GET', '/api/v2/subscriptions/s 1/x'],
      ['POST', '/api/v2/promotional_credits/add'],
    ]);
    for (const s of seen) {
      expect(s.headers.authorization).toBe(`Basic ${Buffer.from(`${API_KEY}:`).toString('base64')}`);
      expect(s.headers.accept).toBe('application/json');
    }
    expect(seen[0]?.headers[IDEMPOTENCY_HEADER]).toBeUndefined();
    expect(seen[1]?.headers[IDEMPOTENCY_HEADER]).toBe('refloop-credit-r1');
    expect(seen[1]?.headers['content-type']).toBe('application/x-www-form-urlencoded; charset=utf-8');
    expect(decodeForm(seen[1]?.body ?? '')).toEqual({
      customer_id: 'c1',
      amount: '500',
      currency_code: 'USD',
      reference: 'refloop:reward:r1',
    });
  });

  it('list queries: limit 100, filters with [is], sort_by[asc], include_deleted, offset; next_offset is the cursor', async () => {
    script = [ok({ list: [{ subscription: { id: 'a' } }], next_offset: '["1767225600000","a"]' }), ok({ list: [] })];
    const { c } = client();
    const first = await c.listSubscriptions(null);
    expect(first).toEqual({ rows: [{ subscription: { id: 'a' } }], next: '["1767225600000","a"]' });
    const second = await c.listSubscriptions(first.next);
    expect(second).toEqual({ rows: [], next: null });
    expect(Object.fromEntries(seen[0]?.query ?? [])).toEqual({ limit: '100', 'sort_by[asc]': 'updated_at', include_deleted: 'true' });
    expect(seen[1]?.query.get('offset')).toBe('["1767225600000","a"]');
    script = [ok({ list: [] })];
    await c.listPaidInvoices('sub_1', null);
    expect(Object.fromEntries(seen[2]?.query ?? [])).toEqual({ limit: '100', 'subscription_id[is]': 'sub_1', 'status[is]': 'paid' });
  });

  it('checkout-shaped writes: subscription_items by field then index, coupon_ids by index, meta_data one JSON field', async () => {
    script = [ok({})];
    await client().c.request('x', 'POST', '/hosted_pages/checkout_new_for_items', {
      customer: { id: 'c1' },
      subscription_items: [{ item_price_id: 'pro-USD-monthly', quantity: 1 }],
      coupon_ids: ['JANE-7Q2K'],
      meta_data: { refloop_referral_id: 'rf_1' },
    });
    const body = seen[0]?.body ?? '';
    expect(body).toContain('subscription_items[item_price_id][0]=pro-USD-monthly');
    expect(body).toContain('coupon_ids[0]=JANE-7Q2K');
    expect(new URLSearchParams(body).get('meta_data')).toBe('{"refloop_referral_id":"rf_1"}');
  });

  it('429 waits Retry-After; 5xx backs off; a write keeps its idempotency key across retries', async () => {
    script = [
      cbError(429, 'api_request_limit_exceeded', 'slow down', 'invalid_request', { 'retry-after': '2' }),
      cbError(503, 'internal_temporary_error', 'busy', 'operation_failed'),
      ok({ customer: {}, promotional_credit: { id: 'pc_9' } }),
    ];
    const { c, waits } = client();
    const out = await c.addPromotionalCredits({ customer_id: 'c1', amount: 1 }, 'refloop-credit-r9');
    expect(out.promotional_credit.id).toBe('pc_9');
    expect(waits[0]).toBe(2000);
    expect(waits).toHaveLength(2);
    expect(seen.map((s) => s.headers[IDEMPOTENCY_HEADER])).toEqual(['refloop-credit-r9', 'refloop-credit-r9', 'refloop-credit-r9']);
  });

  it('a POST without a key gets a random one, the same for its retries', async () => {
    script = [cbError(500, 'internal_error'), ok({ coupon: { id: 'x' } })];
    await client().c.request('x', 'POST', '/coupons/create_for_items', { id: 'x' });
    const keys = seen.map((s) => s.headers[IDEMPOTENCY_HEADER]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).toBe(keys[0]);
  });

  it('past the budget, or the attempts, it is the port’s ProviderUnavailableError (the key never in the message)', async () => {
    script = [cbError(429, 'api_request_limit_exceeded', 'x', 'invalid_request', { 'retry-after': '60' })];
    const err = await client()
      .c.getCustomer('c1')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as ProviderUnavailableError).reason).toMatch(/retrieve customer: HTTP 429 api_request_limit_exceeded after 1 attempt/);
    expect((err as ProviderUnavailableError).reason).not.toContain(API_KEY);
    script = Array.from({ length: 5 }, () => cbError(502, ''));
    const err2 = await client()
      .c.getCustomer('c1')
      .catch((e: unknown) => e);
    expect((err2 as ProviderUnavailableError).reason).toMatch(/HTTP 502 after 5 attempt/);
    expect(seen).toHaveLength(6);
  });

  it('a body that is not JSON is retried like an outage', async () => {
    script = [json(200, '<html>gateway</html>'), ok({ customer: { id: 'c1' } })];
    expect(await client().c.getCustomer('c1')).toEqual({ id: 'c1' });
  });

  it('an attempt that hangs past the timeout is retried, then unavailable', async () => {
    const hang: Reply = () => {};
    script = [hang, ok({ customer: { id: 'c1' } })];
    expect(await client({ timeoutMs: 100 }).c.getCustomer('c1')).toEqual({ id: 'c1' });
    script = [hang, hang];
    const err = await client({ timeoutMs: 100, maxAttempts: 2 })
      .c.getCustomer('c1')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderUnavailableError);
    expect((err as ProviderUnavailableError).reason).toMatch(/TimeoutError/);
  });

  it('other 4xx: ChargebeeApiError with Chargebee’s fields, not retried; a 404 on a get is null', async () => {
    script = [cbError(400, 'duplicate_entry', 'The value abc is already present.', 'invalid_request')];
    const err = await client()
      .c.createCoupon({ id: 'abc' }, 'k')
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ChargebeeApiError);
    expect(err).toMatchObject({
      status: 400,
      type: 'invalid_request',
      code: 'duplicate_entry',
      detail: 'The value abc is already present.',
      param: 'id',
    });
    script = [cbError(401, 'api_authentication_failed', 'Sorry, authentication failed')];
    expect(
      await client()
        .c.getCustomer('c1')
        .catch((e: unknown) => e),
    ).toMatchObject({ status: 401, code: 'api_authentication_failed' });
    script = [cbError(404, 'resource_not_found', 'Event is not present')];
    expect(await client().c.getEvent('ev_nope')).toBeNull();
    expect(seen).toHaveLength(3);
  });
});

// --- the adapter over a small stateful Chargebee -------------------------------------------------------

const T = 1767225600;
function subscription(over: Json = {}): Json {
  return {
    id: 'sub_A',
    customer_id: 'cus_A',
    status: 'active',
    currency_code: 'USD',
    current_term_start: T,
    next_billing_at: T + 31 * 86_400,
    resource_version: T * 1000 + 5,
    due_invoices_count: 0,
    deleted: false,
    object: 'subscription',
    subscription_items: [
      {
        item_price_id: 'pro-USD-monthly',
        item_type: 'plan',
        quantity: 1,
        unit_price: 2900,
        billing_period: 1,
        billing_period_unit: 'month',
      },
    ],
    ...over,
  };
}
const customer = (over: Json = {}): Json => ({
  id: 'cus_A',
  email: 'ann@example.com',
  deleted: false,
  object: 'customer',
  promotional_credits: 0,
  ...over,
});
function event(id: string, type: string, content: Json): Json {
  return {
    id,
    occurred_at: T + 100,
    source: 'api',
    object: 'event',
    api_version: 'v2',
    event_type: type,
    webhook_status: 'scheduled',
    content,
  };
}

interface World {
  events: Map<string, Json>;
  subscriptions: Map<string, Json>;
  credits: Json[];
  balance: number;
  coupons: Set<string>;
  codes: Set<string>;
  itemPriceCalls: number;
  itemPriceDown: boolean;
  eventsDown: boolean;
}

function world(): World {
  const w: World = {
    events: new Map(),
    subscriptions: new Map([['sub_A', subscription()]]),
    credits: [],
    balance: 0,
    coupons: new Set(),
    codes: new Set(),
    itemPriceCalls: 0,
    itemPriceDown: false,
    eventsDown: false,
  };
  route = (s) => {
    const form = s.method === 'POST' ? (decodeForm(s.body) as Record<string, string>) : {};
    const p = s.path.replace(/^\/api\/v2/, '');
    let m: RegExpExecArray | null;
    if ((m = /^\/events\/(.+)$/.exec(p))) {
      if (w.eventsDown) return { status: 503, body: { message: 'down', api_error_code: 'internal_temporary_error' } };
      const e = w.events.get(m[1] as string);
      return e ? { status: 200, body: { event: e } } : null;
    }
    if ((m = /^\/subscriptions\/(.+)$/.exec(p))) {
      const sub = w.subscriptions.get(m[1] as string);
      return sub ? { status: 200, body: { subscription: sub, customer: customer() } } : null;
    }
    if (p === '/subscriptions') {
      const all = [...w.subscriptions.values()];
      const start = Number(s.query.get('offset') ?? 0);
      const page = all.slice(start, start + 1);
      return {
        status: 200,
        body: {
          list: page.map((sub) => ({ subscription: sub, customer: customer() })),
          ...(start + 1 < all.length ? { next_offset: String(start + 1) } : {}),
        },
      };
    }
    if ((m = /^\/item_prices\/(.+)$/.exec(p))) {
      w.itemPriceCalls++;
      if (w.itemPriceDown) return { status: 500, body: { message: 'down', api_error_code: 'internal_error' } };
      return m[1] === 'pro-USD-monthly'
        ? {
            status: 200,
            body: { item_price: { id: 'pro-USD-monthly', name: 'Pro USD Monthly', external_name: 'Pro', object: 'item_price' } },
          }
        : null;
    }
    if ((m = /^\/customers\/(.+)$/.exec(p))) {
      return {
        status: 200,
        body: {
          customer: customer({
            balances: [
              { currency_code: 'USD', promotional_credits: w.balance },
              { currency_code: 'EUR', promotional_credits: 99999 },
            ],
          }),
        },
      };
    }
    if (p === '/promotional_credits') {
      const type = s.query.get('type[is]');
      const rows = w.credits.filter((c) => c.customer_id === s.query.get('customer_id[is]') && (!type || c.type === type)).reverse();
      const start = Number(s.query.get('offset') ?? 0);
      return {
        status: 200,
        body: {
          list: rows.slice(start, start + 2).map((c) => ({ promotional_credit: c })),
          ...(start + 2 < rows.length ? { next_offset: String(start + 2) } : {}),
        },
      };
    }
    if (p === '/promotional_credits/add' || p === '/promotional_credits/deduct') {
      const add = p.endsWith('add');
      const amount = Number(form.amount);
      w.balance += add ? amount : -Math.min(amount, w.balance);
      const pc = {
        id: `pc_${w.credits.length + 1}`,
        customer_id: form.customer_id,
        type: add ? 'increment' : 'decrement',
        amount,
        currency_code: form.currency_code,
        description: form.description,
        credit_type: form.credit_type,
        reference: form.reference,
        closing_balance: w.balance,
        created_at: T,
        object: 'promotional_credit',
      };
      w.credits.push(pc);
      return { status: 200, body: { customer: customer(), promotional_credit: pc } };
    }
    if (p === '/coupons/create_for_items') {
      if (w.coupons.has(form.id as string))
        return { status: 400, body: { message: 'exists', type: 'invalid_request', api_error_code: 'duplicate_entry', param: 'id' } };
      w.coupons.add(form.id as string);
      return { status: 200, body: { coupon: { id: form.id } } };
    }
    if ((m = /^\/coupon_codes\/(.+)$/.exec(p))) {
      return w.codes.has(m[1] as string)
        ? { status: 200, body: { coupon_code: { code: m[1], status: 'not_redeemed', coupon_id: 'x' } } }
        : null;
    }
    if (p === '/coupon_codes') {
      if (w.codes.has(form.code as string)) return { status: 400, body: { message: 'exists', api_error_code: 'duplicate_entry' } };
      w.codes.add(form.code as string);
      return { status: 200, body: { coupon_code: { code: form.code, status: 'not_redeemed', coupon_id: form.coupon_id } } };
    }
    if ((m = /^\/hosted_pages\/(.+)$/.exec(p))) {
      const states: Record<string, Json> = {
        hp_open: { id: 'hp_open', state: 'created' },
        hp_paying: { id: 'hp_paying', state: 'requested' },
        hp_done: { id: 'hp_done', state: 'succeeded', content: { subscription: { id: 'sub_A' } } },
        hp_ack: { id: 'hp_ack', state: 'acknowledged', content: { subscription: { id: 'sub_A' } } },
        hp_cancelled: { id: 'hp_cancelled', state: 'cancelled' },
      };
      const page = states[m[1] as string];
      return page ? { status: 200, body: { hosted_page: { type: 'checkout_new', object: 'hosted_page', ...page } } } : null;
    }
    if (p === '/invoices') {
      const start = Number(s.query.get('offset') ?? 0);
      const inv = (n: number) => ({
        id: `inv_${n}`,
        subscription_id: s.query.get('subscription_id[is]'),
        status: 'paid',
        currency_code: 'USD',
        total: 2900,
        tax: 0,
        amount_paid: 2900,
        paid_at: T + n,
        object: 'invoice',
      });
      return {
        status: 200,
        body: start === 0 ? { list: [{ invoice: inv(1) }, { invoice: inv(2) }], next_offset: '2' } : { list: [{ invoice: inv(3) }] },
      };
    }
    return null;
  };
  return w;
}

let site = 0;
function adapter() {
  // A site of its own per test: the plan-name cache is per process.
  site++;
  return chargebeeProvider(
    { site: `acme${site}`, apiKey: API_KEY, apiUrl: url },
    { timeoutMs: 300, budgetMs: 2_000, sleep: async () => {} },
  );
}
const delivered = (e: Json) => ({ headers: {}, rawBody: JSON.stringify(e) });

describe('parseWebhook: only the event fetched again from Chargebee is applied', () => {
  it('the fetched event, not the delivered body: a forged amount or status changes nothing', async () => {
    const w = world();
    const real = event('ev_1', 'subscription_changed', { subscription: subscription(), customer: customer() });
    w.events.set('ev_1', real);
    const forged = event('ev_1', 'subscription_changed', {
      subscription: subscription({ status: 'cancelled', id: 'sub_EVIL' }),
      customer: customer(),
    });
    const [e] = await adapter().parseWebhook(delivered(forged));
    expect(e).toMatchObject({
      kind: 'subscription',
      eventId: 'ev_1',
      subscription: { id: 'sub_A', status: 'active', email: 'ann@example.com', customerId: 'cus_A', plan: { name: 'Pro' } },
    });
    expect(seen.filter((s) => s.path === '/api/v2/events/ev_1')).toHaveLength(1);
  });

  it('an id Chargebee does not know is acknowledged as ignored, nothing applied', async () => {
    world();
    const forged = event('ev_forged', 'payment_succeeded', {
      invoice: { id: 'inv_1', subscription_id: 'sub_A', status: 'paid', amount_paid: 999999 },
    });
    expect(await adapter().parseWebhook(delivered(forged))).toEqual([
      { kind: 'ignored', eventId: 'ev_forged', type: 'payment_succeeded', reason: 'not found at Chargebee' },
    ]);
  });

  it('types the worker ignores are not fetched; a malformed body makes no call', async () => {
    world();
    const [e] = await adapter().parseWebhook(delivered(event('ev_2', 'customer_changed', { customer: customer() })));
    expect(e).toMatchObject({ kind: 'ignored', eventId: 'ev_2', type: 'customer_changed' });
    expect(await adapter().parseWebhook({ headers: {}, rawBody: '{' })).toEqual([
      { kind: 'ignored', eventId: '', type: '', reason: 'malformed JSON' },
    ]);
    expect(seen).toHaveLength(0);
  });

  it('Chargebee down (5xx past the budget) throws ProviderUnavailableError, so the record is retried', async () => {
    const w = world();
    w.eventsDown = true;
    w.events.set('ev_3', event('ev_3', 'payment_succeeded', {}));
    await expect(adapter().parseWebhook(delivered(event('ev_3', 'payment_succeeded', {})))).rejects.toBeInstanceOf(
      ProviderUnavailableError,
    );
  });

  it('plan names are looked up once per process; a failed lookup leaves the name null', async () => {
    const w = world();
    w.events.set('ev_4', event('ev_4', 'subscription_renewed', { subscription: subscription(), customer: customer() }));
    const a = adapter();
    await a.parseWebhook(delivered(w.events.get('ev_4') as Json));
    await a.parseWebhook(delivered(w.events.get('ev_4') as Json));
    expect(w.itemPriceCalls).toBe(1);
    w.itemPriceDown = true;
    const [e] = await adapter().parseWebhook(delivered(w.events.get('ev_4') as Json));
    expect(e).toMatchObject({ kind: 'subscription', subscription: { plan: { id: 'pro-USD-monthly', name: null } } });
  });
});

describe('subscriptions, checkouts and payments', () => {
  it('getSubscription: facts with email and plan name; unknown -> null', async () => {
    world();
    const a = adapter();
    expect(await a.getSubscription('sub_A')).toMatchObject({
      id: 'sub_A',
      status: 'active',
      email: 'ann@example.com',
      unitPrice: 2900,
      plan: { name: 'Pro' },
    });
    expect(await a.getSubscription('sub_nope')).toBeNull();
  });

  it('resolveCheckout: hosted page states', async () => {
    world();
    const a = adapter();
    expect(await a.resolveCheckout('hp_done')).toEqual({ state: 'subscription', subscriptionId: 'sub_A' });
    expect(await a.resolveCheckout('hp_ack')).toEqual({ state: 'subscription', subscriptionId: 'sub_A' });
    expect(await a.resolveCheckout('hp_open')).toEqual({ state: 'processing' });
    expect(await a.resolveCheckout('hp_paying')).toEqual({ state: 'processing' });
    expect(await a.resolveCheckout('hp_cancelled')).toEqual({ state: 'no_subscription' });
    expect(await a.resolveCheckout('hp_unknown')).toEqual({ state: 'not_found' });
    expect(await a.resolveCheckout('../admin')).toEqual({ state: 'not_found' });
  });

  it('listSubscriptions pages with next_offset; listPayments reads every page of paid invoices', async () => {
    const w = world();
    w.subscriptions.set('sub_B', subscription({ id: 'sub_B', status: 'cancelled' }));
    const a = adapter();
    const first = await a.listSubscriptions(null);
    expect(first.subscriptions.map((s) => [s.id, s.status])).toEqual([['sub_A', 'active']]);
    const second = await a.listSubscriptions(first.next);
    expect(second).toMatchObject({ subscriptions: [{ id: 'sub_B', status: 'deleted' }], next: null });
    expect((await a.listPayments('sub_A')).map((p) => p.id)).toEqual(['inv_1', 'inv_2', 'inv_3']);
  });
});

describe('credits: promotional credits, exactly once per reward', () => {
  const req = { rewardId: 'rw_1', subscriptionId: 'sub_A', amount: 1000, currency: 'USD' };

  it('added on the customer in the subscription currency, as referral_rewards with the reward reference and key', async () => {
    const w = world();
    expect(await adapter().applyCredit(req)).toEqual({ providerRef: 'pc_1', reused: false });
    const add = seen.find((s) => s.path.endsWith('/promotional_credits/add'));
    expect(add?.headers[IDEMPOTENCY_HEADER]).toBe('refloop-credit-rw_1');
    expect(decodeForm(add?.body ?? '')).toEqual({
      customer_id: 'cus_A',
      amount: '1000',
      currency_code: 'USD',
      description: 'Referral reward rw_1',
      credit_type: 'referral_rewards',
      reference: 'refloop:reward:rw_1',
    });
    expect(w.balance).toBe(1000);
  });

  it('a retry long after the idempotency window finds the credit by its reference: never a second one', async () => {
    const w = world();
    await adapter().applyCredit(req);
    // Newer credits of other rewards push it to the third page (two per page here).
    for (let i = 0; i < 4; i++)
      w.credits.push({ id: `pc_other${i}`, customer_id: 'cus_A', type: 'increment', amount: 5, reference: `refloop:reward:other${i}` });
    seen = [];
    expect(await adapter().applyCredit(req)).toEqual({ providerRef: 'pc_1', reused: true });
    expect(seen.filter((s) => s.path === '/api/v2/promotional_credits').map((s) => s.query.get('offset'))).toEqual([null, '2', '4']);
    expect(w.credits.filter((c) => c.reference === 'refloop:reward:rw_1')).toHaveLength(1);
  });

  it('refuses a currency the subscription is not billed in, a three-decimal currency, a non-positive amount, an unknown subscription', async () => {
    world();
    const a = adapter();
    await expect(a.applyCredit({ ...req, currency: 'EUR' })).rejects.toThrow(/billed in USD/);
    await expect(a.applyCredit({ ...req, currency: 'KWD' })).rejects.toThrow(/three-decimal/);
    await expect(a.applyCredit({ ...req, amount: 0 })).rejects.toThrow(/positive/);
    await expect(a.applyCredit({ ...req, subscriptionId: 'sub_nope' })).rejects.toMatchObject({ status: 404 });
    expect(seen.filter((s) => s.method === 'POST')).toHaveLength(0);
  });

  it('reversal while unspent: deducts the whole credit (reversal reference and key), reversed; again: nothing more', async () => {
    const w = world();
    const a = adapter();
    await a.applyCredit(req);
    w.balance += 500; // another reward's credit
    expect(await a.reverseCredit({ ...req, providerRef: 'pc_1' })).toBe('reversed');
    const deduct = seen.find((s) => s.path.endsWith('/promotional_credits/deduct'));
    expect(deduct?.headers[IDEMPOTENCY_HEADER]).toBe('refloop-reversal-rw_1');
    expect(decodeForm(deduct?.body ?? '')).toMatchObject({ amount: '1000', currency_code: 'USD', reference: 'refloop:reversal:rw_1' });
    expect(w.balance).toBe(500);
    expect(await a.reverseCredit({ ...req, providerRef: 'pc_1' })).toBe('reversed');
    expect(w.balance).toBe(500);
  });

  it('partly spent: deducts only what is left in that currency, consumed (and stays consumed on a retry)', async () => {
    const w = world();
    const a = adapter();
    await a.applyCredit(req);
    w.balance = 300; // an invoice consumed 700
    expect(await a.reverseCredit({ ...req, providerRef: 'pc_1' })).toBe('consumed');
    expect(w.balance).toBe(0);
    expect(await a.reverseCredit({ ...req, providerRef: 'pc_1' })).toBe('consumed');
    expect(w.credits.filter((c) => c.type === 'decrement')).toHaveLength(1);
  });

  it('all spent: no deduction, consumed; never applied: reversed with nothing written', async () => {
    const w = world();
    const a = adapter();
    await a.applyCredit(req);
    w.balance = 0;
    expect(await a.reverseCredit({ ...req, providerRef: 'pc_1' })).toBe('consumed');
    expect(await a.reverseCredit({ ...req, rewardId: 'rw_never', providerRef: null })).toBe('reversed');
    expect(w.credits.filter((c) => c.type === 'decrement')).toHaveLength(0);
  });

  it('the balance per currency: balances[] first, else the preferred currency’s', () => {
    const c = (over: Partial<Customer>) => ({ id: 'c', deleted: false, object: 'customer', promotional_credits: 0, ...over }) as Customer;
    expect(creditBalance(c({ balances: [{ currency_code: 'USD', promotional_credits: 300 }], promotional_credits: 0 }), 'usd')).toBe(300);
    expect(creditBalance(c({ balances: [{ currency_code: 'USD', promotional_credits: 300 }] }), 'EUR')).toBe(0);
    expect(creditBalance(c({ preferred_currency_code: 'GBP', promotional_credits: 40 }), 'GBP')).toBe(40);
    expect(creditBalance(c({ preferred_currency_code: 'GBP', promotional_credits: 40 }), 'USD')).toBe(0);
  });

  it('idempotency keys stay within 100 characters', () => {
    expect(idempotencyKey('refloop-credit', 'rw_1')).toBe('refloop-credit-rw_1');
    expect(idempotencyKey('refloop-credit', 'x'.repeat(200))).toMatch(/^refloop-credit-[0-9a-f]{64}$/);
  });
});

describe('coupons: one per discount terms, one code per referral', () => {
  const pct = {
    referralId: 'rf_1',
    code: 'JANE-7Q2K',
    discount: { type: 'percentage' as const, amount: 2000, currency: null, recurring: false },
  };

  it('coupon ids from the terms', () => {
    expect(couponIdFor(pct.discount)).toBe('refloop-pct2000-once');
    expect(couponIdFor({ type: 'flat', amount: 1000, currency: 'USD', recurring: true })).toBe('refloop-flat1000-usd-forever');
  });

  it('created: the coupon (20 %, one_time, invoice_amount) and the code; again: existed, no second code', async () => {
    const w = world();
    const a = adapter();
    expect(await a.createCoupon(pct)).toBe('created');
    const coupon = seen.find((s) => s.path.endsWith('/coupons/create_for_items'));
    expect(decodeForm(coupon?.body ?? '')).toMatchObject({
      id: 'refloop-pct2000-once',
      discount_type: 'percentage',
      discount_percentage: '20',
      duration_type: 'one_time',
      apply_on: 'invoice_amount',
    });
    const code = seen.find((s) => s.path === '/api/v2/coupon_codes');
    expect(decodeForm(code?.body ?? '')).toEqual({
      coupon_id: 'refloop-pct2000-once',
      coupon_set_name: 'refloop-pct2000-once',
      code: 'JANE-7Q2K',
    });
    expect(await a.createCoupon(pct)).toBe('existed');
    expect(await a.createCoupon({ ...pct, referralId: 'rf_2', code: 'BOB-1' })).toBe('created');
    expect([...w.coupons]).toEqual(['refloop-pct2000-once']);
    expect(w.codes.size).toBe(2);
  });

  it('flat coupons carry their currency; bad codes, amounts and currencies are refused before any call', async () => {
    world();
    const a = adapter();
    expect(
      await a.createCoupon({ referralId: 'rf_3', code: 'C-3', discount: { type: 'flat', amount: 1000, currency: 'jpy', recurring: true } }),
    ).toBe('created');
    expect(decodeForm(seen[0]?.body ?? '')).toMatchObject({
      discount_type: 'fixed_amount',
      discount_amount: '1000',
      currency_code: 'JPY',
      duration_type: 'forever',
    });
    seen = [];
    await expect(a.createCoupon({ ...pct, code: 'has space' })).rejects.toThrow(/letters, digits/);
    await expect(a.createCoupon({ ...pct, code: 'x'.repeat(51) })).rejects.toThrow(/1 to 50/);
    await expect(a.createCoupon({ ...pct, discount: { ...pct.discount, amount: 0 } })).rejects.toThrow(/positive/);
    await expect(a.createCoupon({ ...pct, discount: { ...pct.discount, amount: 10_001 } })).rejects.toThrow(/100 %/);
    await expect(a.createCoupon({ ...pct, discount: { type: 'flat', amount: 5, currency: null, recurring: false } })).rejects.toThrow(
      /currency/,
    );
    await expect(a.createCoupon({ ...pct, discount: { type: 'flat', amount: 5, currency: 'BHD', recurring: false } })).rejects.toThrow(
      /three-decimal/,
    );
    expect(seen).toHaveLength(0);
  });
});
