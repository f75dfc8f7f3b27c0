// Subscriptions (read-only): copies of the provider's subscriptions written by saveSubscription (the
// webhook worker and background sync use it), listed newest first with an exact count per status
// filter, retrieved by the provider's id, never written through the API.
import { api, type ApiResponse } from '../support/api';
import { newAccount } from '../support/fixtures';
import { saveSubscription, type SubscriptionData } from '../../shared/store/subscriptions';

const STATUSES = ['active', 'trialling', 'past_due', 'deleted', 'paused'] as const;
type Status = (typeof STATUSES)[number];

const BASE_TIME = 1_700_000_000;

function subscription(id: number | string, createdAt: number, overrides: Partial<SubscriptionData> = {}): SubscriptionData {
  return {
    id,
    unit_price: '10.00',
    currency: 'USD',
    status: 'active',
    email: `billing-${id}@example.com`,
    next_bill_date: '2025-07-01',
    last_bill_date: '2025-06-01',
    plan: { id: 9001, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' },
    created_at: createdAt,
    ...overrides,
  };
}

/** The API representation of a subscription: exactly these keys. */
function view(s: SubscriptionData) {
  return {
    id: s.id,
    unit_price: s.unit_price,
    currency: s.currency,
    status: s.status,
    email: s.email,
    next_bill_date: s.next_bill_date,
    last_bill_date: s.last_bill_date,
    plan: {
      id: s.plan.id,
      name: s.plan.name,
      amount: s.plan.amount,
      currency: s.plan.currency,
      interval: s.plan.interval,
      frequency: s.plan.frequency,
      descriptor: s.plan.descriptor,
    },
  };
}

async function send(method: string, path: string, key: string): Promise<ApiResponse> {
  const res = await api(method, path, { key });
  expect(res.headers['content-type']).toBe('application/json');
  return res;
}

/** Follows an absolute next/previous link of this API. */
async function follow(key: string, link: string): Promise<ApiResponse> {
  const url = new URL(link);
  expect(url.origin).toBe('https://api.test');
  return send('GET', url.pathname + url.search, key);
}

const ids = (res: ApiResponse): number[] => (res.body.results as { id: number }[]).map((s) => s.id);

async function countFor(key: string, status?: string): Promise<number> {
  const res = await send('GET', status ? `/v1/subscriptions/?status=${status}` : '/v1/subscriptions/', key);
  expect(res.status).toBe(200);
  return res.body.count as number;
}

describe('GET /v1/subscriptions/', () => {
  it('is an empty envelope for a new account', async () => {
    const { apiKey } = await newAccount();
    const res = await send('GET', '/v1/subscriptions/', apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    for (const status of STATUSES) {
      const filtered = await send('GET', `/v1/subscriptions/?status=${status}`, apiKey);
      expect(filtered.status).toBe(200);
      expect(filtered.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    }
  });

  it('lists newest first by creation time, then id, with the exact shape', async () => {
    const { apiKey, accountId } = await newAccount();
    // Written out of order; two share a creation time (the higher id is listed first).
    const subs = [
      subscription(501, BASE_TIME + 20),
      subscription(502, BASE_TIME + 50, {
        unit_price: null,
        next_bill_date: null,
        last_bill_date: null,
        status: 'paused',
        currency: 'EUR',
        plan: {
          id: 77,
          name: 'Team yearly',
          amount: '120.00',
          currency: 'EUR',
          interval: 'year',
          frequency: 1,
          descriptor: '€120.00 / year',
        },
      }),
      subscription(503, BASE_TIME + 10),
      subscription(504, BASE_TIME + 30, { status: 'past_due' }),
      subscription(499, BASE_TIME + 30, { status: 'trialling' }),
    ];
    for (const s of subs) await saveSubscription(accountId, s);

    const res = await send('GET', '/v1/subscriptions/', apiKey);
    expect(res.status).toBe(200);
    const byId = new Map(subs.map((s) => [s.id, s]));
    const expectedOrder = [502, 504, 499, 501, 503];
    expect(res.body).toEqual({
      count: 5,
      next: null,
      previous: null,
      results: expectedOrder.map((id) => view(byId.get(id) as SubscriptionData)),
    });
    for (const item of res.body.results) {
      expect(Object.keys(item).sort()).toEqual([
        'currency',
        'email',
        'id',
        'last_bill_date',
        'next_bill_date',
        'plan',
        'status',
        'unit_price',
      ]);
      expect(Object.keys(item.plan).sort()).toEqual(['amount', 'currency', 'descriptor', 'frequency', 'id', 'interval', 'name']);
    }
  });

  it('filters by status with exact counts', async () => {
    const { apiKey, accountId } = await newAccount();
    const plan: Record<Status, number[]> = {
      active: [1, 2, 3],
      trialling: [4, 5],
      past_due: [6],
      deleted: [7, 8, 9, 10],
      paused: [],
    };
    let t = BASE_TIME;
    for (const status of STATUSES) {
      for (const id of plan[status]) await saveSubscription(accountId, subscription(id, (t += 10), { status }));
    }

    expect(await countFor(apiKey)).toBe(10);
    for (const status of STATUSES) {
      const res = await send('GET', `/v1/subscriptions/?status=${status}`, apiKey);
      expect({ status, code: res.status, count: res.body.count, ids: ids(res) }).toEqual({
        status,
        code: 200,
        count: plan[status].length,
        ids: [...plan[status]].reverse(),
      });
      for (const item of res.body.results) expect(item.status).toBe(status);
    }
  });

  it("accepts Paddle's spelling trialing for trialling", async () => {
    const { apiKey, accountId } = await newAccount();
    await saveSubscription(accountId, subscription(11, BASE_TIME + 1, { status: 'trialling' }));
    await saveSubscription(accountId, subscription(12, BASE_TIME + 2, { status: 'trialling' }));
    await saveSubscription(accountId, subscription(13, BASE_TIME + 3, { status: 'active' }));

    const paddle = await send('GET', '/v1/subscriptions/?status=trialing', apiKey);
    const spec = await send('GET', '/v1/subscriptions/?status=trialling', apiKey);
    expect(paddle.status).toBe(200);
    expect(paddle.body).toEqual(spec.body);
    expect(paddle.body.count).toBe(2);
    expect(ids(paddle)).toEqual([12, 11]);
    expect(paddle.body.results.map((s: { status: string }) => s.status)).toEqual(['trialling', 'trialling']);
  });

  it("shows a subscription saved with Paddle's status trialing as trialling, under both filters", async () => {
    const { apiKey, accountId } = await newAccount();
    await saveSubscription(accountId, subscription(21, BASE_TIME, { status: 'trialing' }));

    const one = await send('GET', '/v1/subscriptions/21/', apiKey);
    expect(one.status).toBe(200);
    expect(one.body.status).toBe('trialling');
    for (const filter of ['trialling', 'trialing']) {
      const res = await send('GET', `/v1/subscriptions/?status=${filter}`, apiKey);
      expect({ filter, count: res.body.count, ids: ids(res) }).toEqual({ filter, count: 1, ids: [21] });
    }
  });

  it.each<[string, string]>([
    ['cancelled', 'cancelled'],
    ['ACTIVE', 'ACTIVE'],
    ['Active', 'Active'],
    ['trial', 'trial'],
    ['past-due', 'past-due'],
    ['all', 'all'],
    ['past%20due', 'past due'],
  ])('refuses status=%s with 400', async (raw, shown) => {
    const { apiKey } = await newAccount();
    const res = await send('GET', `/v1/subscriptions/?status=${raw}`, apiKey);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ status: [`Select a valid choice. ${shown} is not one of the available choices.`] });
  });

  it('moves a subscription between status filters when its status changes', async () => {
    const { apiKey, accountId } = await newAccount();
    await saveSubscription(accountId, subscription(31, BASE_TIME + 1));
    await saveSubscription(accountId, subscription(32, BASE_TIME + 2));
    await saveSubscription(accountId, subscription(33, BASE_TIME + 3, { status: 'past_due' }));

    const counts = async () => {
      const out: Record<string, number> = { all: await countFor(apiKey) };
      for (const status of STATUSES) out[status] = await countFor(apiKey, status);
      return out;
    };
    expect(await counts()).toEqual({ all: 3, active: 2, trialling: 0, past_due: 1, deleted: 0, paused: 0 });

    // 31 is paused; a later created_at passed on update does not move it in the list.
    await saveSubscription(accountId, subscription(31, BASE_TIME + 99, { status: 'paused' }));
    expect(await counts()).toEqual({ all: 3, active: 1, trialling: 0, past_due: 1, deleted: 0, paused: 1 });
    expect(ids(await send('GET', '/v1/subscriptions/?status=active', apiKey))).toEqual([32]);
    expect(ids(await send('GET', '/v1/subscriptions/?status=paused', apiKey))).toEqual([31]);
    expect(ids(await send('GET', '/v1/subscriptions/', apiKey))).toEqual([33, 32, 31]);
    expect((await send('GET', '/v1/subscriptions/31/', apiKey)).body.status).toBe('paused');

    // Saving again with the same status (other fields changed) moves no counter.
    await saveSubscription(accountId, subscription(31, BASE_TIME + 1, { status: 'paused', email: 'new@example.com', unit_price: '12.50' }));
    expect(await counts()).toEqual({ all: 3, active: 1, trialling: 0, past_due: 1, deleted: 0, paused: 1 });
    const updated = await send('GET', '/v1/subscriptions/31/', apiKey);
    expect(updated.body).toEqual(
      view(subscription(31, BASE_TIME + 1, { status: 'paused', email: 'new@example.com', unit_price: '12.50' })),
    );

    await saveSubscription(accountId, subscription(33, BASE_TIME + 3, { status: 'deleted' }));
    await saveSubscription(accountId, subscription(31, BASE_TIME + 1, { status: 'active' }));
    expect(await counts()).toEqual({ all: 3, active: 2, trialling: 0, past_due: 0, deleted: 1, paused: 0 });
    expect(ids(await send('GET', '/v1/subscriptions/?status=active', apiKey))).toEqual([32, 31]);
    expect(ids(await send('GET', '/v1/subscriptions/?status=past_due', apiKey))).toEqual([]);
  });

  describe('pagination', () => {
    let apiKey: string;
    let otherKey: string;
    // 101..108, created in that order; 101, 103, 104, 106, 108 active, the others paused.
    const all = [108, 107, 106, 105, 104, 103, 102, 101];
    const active = [108, 106, 104, 103, 101];

    beforeAll(async () => {
      const account = await newAccount();
      apiKey = account.apiKey;
      otherKey = (await newAccount()).apiKey;
      const activeIds = new Set(active);
      for (const id of [...all].reverse()) {
        await saveSubscription(account.accountId, subscription(id, BASE_TIME + id, { status: activeIds.has(id) ? 'active' : 'paused' }));
      }
    });

    it('walks more than two pages forward and back with an exact count on every page', async () => {
      const pages: ApiResponse[] = [await send('GET', '/v1/subscriptions/?page_size=3', apiKey)];
      while (pages[pages.length - 1]?.body.next) {
        expect(pages.length).toBeLessThan(10);
        pages.push(await follow(apiKey, pages[pages.length - 1]?.body.next));
      }
      expect(pages.map(ids)).toEqual([
        [108, 107, 106],
        [105, 104, 103],
        [102, 101],
      ]);
      for (const page of pages) {
        expect(page.status).toBe(200);
        expect(page.body.count).toBe(8);
      }
      expect(pages[0]?.body.previous).toBeNull();
      expect(pages[2]?.body.next).toBeNull();
      for (const link of [pages[0]?.body.next, pages[1]?.body.previous, pages[2]?.body.previous]) {
        const url = new URL(link);
        expect(url.origin + url.pathname).toBe('https://api.test/v1/subscriptions/');
        expect(url.searchParams.get('page_size')).toBe('3');
        expect(url.searchParams.get('cursor')).toMatch(/^[A-Za-z0-9_-]+$/);
      }

      const back: ApiResponse[] = [pages[2] as ApiResponse];
      while (back[back.length - 1]?.body.previous) {
        expect(back.length).toBeLessThan(10);
        back.push(await follow(apiKey, back[back.length - 1]?.body.previous));
      }
      expect(back.map(ids)).toEqual([
        [102, 101],
        [105, 104, 103],
        [108, 107, 106],
      ]);
      for (const page of back) expect(page.body.count).toBe(8);
      expect(back[2]?.body.previous).toBeNull();
      expect(back[2]?.body.next).not.toBeNull();
      expect(ids(await follow(apiKey, back[2]?.body.next))).toEqual([105, 104, 103]);
    });

    it('paginates a status filter, keeping the filter in the links', async () => {
      const first = await send('GET', '/v1/subscriptions/?status=active&page_size=2', apiKey);
      expect(first.status).toBe(200);
      expect(first.body.count).toBe(5);
      expect(ids(first)).toEqual([108, 106]);
      expect(first.body.previous).toBeNull();
      expect(new URL(first.body.next).searchParams.get('status')).toBe('active');

      const second = await follow(apiKey, first.body.next);
      expect(ids(second)).toEqual([104, 103]);
      expect(second.body.count).toBe(5);
      const third = await follow(apiKey, second.body.next);
      expect(ids(third)).toEqual([101]);
      expect(third.body.count).toBe(5);
      expect(third.body.next).toBeNull();

      const back = await follow(apiKey, third.body.previous);
      expect(ids(back)).toEqual([104, 103]);
      const start = await follow(apiKey, back.body.previous);
      expect(ids(start)).toEqual([108, 106]);
      expect(start.body.previous).toBeNull();
    });

    it('refuses a cursor issued for another filter or another account', async () => {
      const active1 = await send('GET', '/v1/subscriptions/?status=active&page_size=2', apiKey);
      const activeCursor = new URL(active1.body.next).searchParams.get('cursor') as string;
      const unfiltered = await send('GET', '/v1/subscriptions/?page_size=2', apiKey);
      const plainCursor = new URL(unfiltered.body.next).searchParams.get('cursor') as string;

      // The cursor works with the query it was issued for.
      expect(ids(await send('GET', `/v1/subscriptions/?status=active&page_size=2&cursor=${activeCursor}`, apiKey))).toEqual([104, 103]);

      for (const path of [
        `/v1/subscriptions/?status=paused&page_size=2&cursor=${activeCursor}`,
        `/v1/subscriptions/?status=deleted&cursor=${activeCursor}`,
        `/v1/subscriptions/?page_size=2&cursor=${activeCursor}`,
        `/v1/subscriptions/?status=active&page_size=2&cursor=${plainCursor}`,
      ]) {
        const res = await send('GET', path, apiKey);
        expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 400, body: { cursor: ['Invalid cursor.'] } });
      }
      for (const path of [
        `/v1/subscriptions/?page_size=2&cursor=${plainCursor}`,
        `/v1/subscriptions/?status=active&cursor=${activeCursor}`,
      ]) {
        const res = await send('GET', path, otherKey);
        expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 400, body: { cursor: ['Invalid cursor.'] } });
      }
    });

    it("does not list another account's subscriptions", async () => {
      const res = await send('GET', '/v1/subscriptions/', otherKey);
      expect(res.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    });
  });

  it('pages by 20 by default', async () => {
    const { apiKey, accountId } = await newAccount();
    for (let id = 1; id <= 21; id++) await saveSubscription(accountId, subscription(id, BASE_TIME + id));
    const first = await send('GET', '/v1/subscriptions/', apiKey);
    expect(first.body.count).toBe(21);
    expect(ids(first)).toEqual(Array.from({ length: 20 }, (_, i) => 21 - i));
    expect(first.body.next).not.toBeNull();
    const second = await follow(apiKey, first.body.next);
    expect(ids(second)).toEqual([1]);
    expect(second.body.count).toBe(21);
    expect(second.body.next).toBeNull();
  });
});

describe('GET /v1/subscriptions/{id}/', () => {
  let apiKey: string;
  let accountId: string;
  let otherKey: string;
  let otherAccountId: string;

  beforeAll(async () => {
    ({ apiKey, accountId } = await newAccount());
    ({ apiKey: otherKey, accountId: otherAccountId } = await newAccount());
  });

  it('returns the subscription with the exact shape', async () => {
    const data = subscription(4242, BASE_TIME, { status: 'past_due', unit_price: '49.99', next_bill_date: null });
    await saveSubscription(accountId, data);
    const res = await send('GET', '/v1/subscriptions/4242/', apiKey);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(view(data));
    const noSlash = await send('GET', '/v1/subscriptions/4242', apiKey);
    expect(noSlash.status).toBe(200);
    expect(noSlash.body).toEqual(view(data));
  });

  it.each<[string]>([['999999'], ['abc'], ['12abc'], ['0'], ['-1'], ['1.5'], ['1e3'], ['99999999999999999999']])(
    'answers 404 for %s',
    async (id) => {
      const res = await send('GET', `/v1/subscriptions/${id}/`, apiKey);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Not found.' });
    },
  );

  it("answers 404 for another account's subscription, and each account sees its own copy of an id", async () => {
    await saveSubscription(otherAccountId, subscription(7777, BASE_TIME, { email: 'other@example.com' }));
    const res = await send('GET', '/v1/subscriptions/7777/', apiKey);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ detail: 'Not found.' });

    await saveSubscription(accountId, subscription(7777, BASE_TIME, { email: 'mine@example.com', status: 'deleted' }));
    const mine = await send('GET', '/v1/subscriptions/7777/', apiKey);
    const theirs = await send('GET', '/v1/subscriptions/7777/', otherKey);
    expect(mine.body).toEqual(view(subscription(7777, BASE_TIME, { email: 'mine@example.com', status: 'deleted' })));
    expect(theirs.body).toEqual(view(subscription(7777, BASE_TIME, { email: 'other@example.com' })));
  });
});

describe('subscriptions are read-only', () => {
  it('answers 405 to every write, and nothing changes', async () => {
    const { apiKey, accountId } = await newAccount();
    const data = subscription(8080, BASE_TIME);
    await saveSubscription(accountId, data);

    const attempts: [string, string, unknown][] = [
      ['POST', '/v1/subscriptions/', { id: 9090, status: 'active', email: 'x@example.com' }],
      ['PUT', '/v1/subscriptions/', { id: 9090 }],
      ['DELETE', '/v1/subscriptions/', undefined],
      ['PATCH', '/v1/subscriptions/', { status: 'paused' }],
      ['PATCH', '/v1/subscriptions/8080/', { status: 'paused' }],
      ['PUT', '/v1/subscriptions/8080/', { status: 'paused' }],
      ['DELETE', '/v1/subscriptions/8080/', undefined],
      ['POST', '/v1/subscriptions/8080/', { status: 'paused' }],
    ];
    for (const [method, path, body] of attempts) {
      const res = await api(method, path, { key: apiKey, ...(body === undefined ? {} : { body }) });
      expect({ method, path, status: res.status, body: res.body, allow: res.headers.allow }).toEqual({
        method,
        path,
        status: 405,
        body: { detail: `Method "${method}" not allowed.` },
        allow: 'GET',
      });
    }

    const list = await send('GET', '/v1/subscriptions/', apiKey);
    expect(list.body).toEqual({ count: 1, next: null, previous: null, results: [view(data)] });
    expect((await send('GET', '/v1/subscriptions/8080/', apiKey)).body).toEqual(view(data));
  });
});

// Paddle Billing and Stripe name subscriptions, payments and prices with strings (docs/design/providers.md
// "Ids and shapes"): the API shows them as they are, next to Classic's integers, and accepts them in inputs.
describe('string provider ids (Paddle Billing, Stripe)', () => {
  it('stores, lists, retrieves and attaches a subscription named `sub_…`, and keeps its price id a string', async () => {
    const { apiKey, accountId } = await newAccount();
    const id = 'sub_01h04vsc0qhwtsbsxh3422wjs4';
    const data = subscription(id, BASE_TIME, {
      plan: {
        id: 'pri_01gsz8x8sawmvhz1pv30nge1ke',
        name: 'Pro',
        amount: '10.00',
        currency: 'USD',
        interval: 'month',
        frequency: 1,
        descriptor: '$10.00 / month',
      },
    });
    await saveSubscription(accountId, data);
    await saveSubscription(accountId, subscription(4242, BASE_TIME + 1));

    const got = await send('GET', `/v1/subscriptions/${id}/`, apiKey);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(view(data));
    expect(typeof got.body.id).toBe('string');
    const list = await send('GET', '/v1/subscriptions/', apiKey);
    expect(list.body.results.map((s: { id: unknown }) => s.id)).toEqual([4242, id]);

    // A member attaches it by its string id; a lookalike that is not an id is refused as before.
    const created = await api('POST', '/v1/members/', {
      key: apiKey,
      body: { identifier: 'str-ids', email: 'str-ids@example.com', subscription: { id } },
    });
    expect(created.status).toBe(201);
    expect(created.body.subscription).toEqual(view(data));
    const unknown = await api('POST', '/v1/members/', {
      key: apiKey,
      body: { identifier: 'str-ids-2', email: 'str-ids-2@example.com', subscription: { id: 'sub_doesnotexist' } },
    });
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ subscription: ['Subscription sub_doesnotexist could not be found'] });
    expect((await api('GET', '/v1/subscriptions/sub-01h!/', { key: apiKey })).status).toBe(404);
    expect((await api('GET', '/v1/subscriptions/sub_unknown/', { key: apiKey })).status).toBe(404);
  });
});
