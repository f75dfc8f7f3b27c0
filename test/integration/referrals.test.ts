// Referrals through the real handlers on DynamoDB Local: create (idempotent, one per user, no
// self-referral), retrieve by id and by user, list with the member filter and pagination, delete.
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';

type Key = string;

async function campaign(key: Key, body: Record<string, unknown>) {
  const res = await api('POST', '/v1/campaigns/', { key, body });
  expect(res.status).toBe(201);
  return res.body;
}

async function member(key: Key, n: string, body: Record<string, unknown> = {}) {
  const res = await api('POST', '/v1/members/', { key, body: { identifier: `m-${n}`, email: `${n}@example.com`, ...body } });
  expect(res.status).toBe(201);
  return res.body;
}

async function refer(key: Key, user: string, code: string) {
  return api('POST', '/v1/referrals/', { key, body: { user_identifier: user, member_code: code } });
}

const referralShape = {
  id: expect.stringMatching(/^[0-9a-f]{32}$/),
  created_at: expect.any(Number),
  converted_at: null,
  is_converted: false,
  coupon_code: null,
  subscription: null,
  source: 'api',
  sub: null,
  reward_percent: null,
  rewards_completed: false,
  fraud_flags: [],
  rewards: [],
};

describe('POST /v1/referrals/', () => {
  let key: Key;
  let credit: { id: string };
  let referrer: { id: string; code: string };

  beforeAll(async () => {
    ({ apiKey: key } = await newAccount());
    credit = await campaign(key, {
      name: 'Credit',
      allows_credit: true,
      credit_amount: '15',
      credit_currency: 'eur',
      reward_threshold: '9.5',
    });
    referrer = await member(key, 'alice', { campaign: { id: credit.id }, code: 'ALICE' });
  });

  it('creates a referral with the campaign terms copied, answering 200', async () => {
    const res = await refer(key, 'user-1', 'ALICE');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      ...referralShape,
      member_id: referrer.id,
      user_identifier: 'user-1',
      campaign_id: credit.id,
      reward_type: 'credit',
      reward_amount: '15.00',
      reward_threshold: '9.50',
      currency: 'EUR',
      stats: { rewards: 0, credit_earned: '0.00', commission_earned: '0.00', currency: 'EUR' },
    });
  });

  it('looks the code up ignoring case and returns the existing referral for the same pair', async () => {
    const first = await refer(key, 'user-2', 'alice');
    const again = await refer(key, 'user-2', 'Alice');
    expect(first.status).toBe(200);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const stats = await api('GET', `/v1/members/${referrer.id}/`, { key });
    expect(stats.body.stats.referrals).toBe(2);
  });

  it('refuses a user already referred by another member', async () => {
    const other = await member(key, 'bob');
    await refer(key, 'user-3', 'ALICE');
    const res = await refer(key, 'user-3', other.code);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ user_identifier: ['User user-3 has already been referred'] });
  });

  it('refuses self-referral', async () => {
    const res = await refer(key, 'm-alice', 'ALICE');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ user_identifier: ['A member cannot refer themselves'] });
  });

  it('answers 400 for missing fields and unknown codes', async () => {
    const missing = await api('POST', '/v1/referrals/', { key, body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ user_identifier: ['This field is required.'], member_code: ['This field is required.'] });
    const unknown = await refer(key, 'user-4', 'NOPE');
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ member_code: ['Member with code NOPE was not found'] });
    const blank = await refer(key, '  ', 'ALICE');
    expect(blank.body).toEqual({ user_identifier: ['This field may not be blank.'] });
  });

  it('checks a code against its ASCII pattern before any lookup: the Kelvin sign (U+212A) does not find KELVIN', async () => {
    const kelvin = await member(key, 'kelvin', { code: 'KELVIN' });
    for (const code of ['\u212AELVIN', 'kelvin'.replace('k', '\u212A'), 'KELV\u0130N', 'KELVIN\u0000', 'KEL\uFF36IN']) {
      const res = await refer(key, 'user-kelvin', code);
      expect({ code, status: res.status, body: res.body }).toEqual({
        code,
        status: 400,
        body: { member_code: [`Member with code ${code} was not found`] },
      });
    }
    const real = await refer(key, 'user-kelvin', 'kelvin');
    expect({ status: real.status, member: real.body.member_id }).toEqual({ status: 200, member: kelvin.id });
  });

  it('gives a member without a campaign a referral that earns nothing', async () => {
    const loner = await member(key, 'carol');
    const res = await refer(key, 'user-5', loner.code);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      campaign_id: null,
      reward_type: null,
      currency: null,
      reward_amount: '0.00',
      reward_threshold: '0.00',
    });
  });

  it('copies commission terms, and later campaign edits do not change existing referrals', async () => {
    const commission = await campaign(key, {
      name: 'Commission',
      allows_commission: true,
      commission_amount: 3,
      commission_currency: 'GBP',
    });
    const dave = await member(key, 'dave', { campaign: { id: commission.id } });
    const before = await refer(key, 'user-6', dave.code);
    expect(before.body).toMatchObject({ reward_type: 'commission', reward_amount: '3.00', currency: 'GBP', campaign_id: commission.id });
    await api('PATCH', `/v1/campaigns/${commission.id}/`, { key, body: { commission_amount: '7.25' } });
    const after = await api('GET', `/v1/referrals/${before.body.id}/`, { key });
    expect(after.body.reward_amount).toBe('3.00');
    const next = await refer(key, 'user-7', dave.code);
    expect(next.body.reward_amount).toBe('7.25');
  });

  it('treats a member of a deleted campaign as a member without one', async () => {
    const doomed = await campaign(key, { name: 'Doomed', allows_credit: true, credit_amount: 1 });
    const erin = await member(key, 'erin', { campaign: { id: doomed.id } });
    expect((await api('DELETE', `/v1/campaigns/${doomed.id}/`, { key })).status).toBe(204);
    const res = await refer(key, 'user-8', erin.code);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ campaign_id: null, reward_type: null });
  });
});

describe('GET /v1/referrals/{id}/ and /v1/referrals/user/{user_identifier}/', () => {
  it('retrieves by id and by URL-encoded user identifier; 404 otherwise and across accounts', async () => {
    const { apiKey: key } = await newAccount();
    const { apiKey: otherKey } = await newAccount();
    const m = await member(key, 'frank');
    const created = await refer(key, 'user/with spaces@x', m.code);
    expect(created.status).toBe(200);

    const byId = await api('GET', `/v1/referrals/${created.body.id}/`, { key });
    expect(byId.status).toBe(200);
    expect(byId.body).toEqual(created.body);

    const byUser = await api('GET', `/v1/referrals/user/${encodeURIComponent('user/with spaces@x')}/`, { key });
    expect(byUser.status).toBe(200);
    expect(byUser.body).toEqual(created.body);
    expect((await api('GET', `/v1/referrals/user/${encodeURIComponent('user/with spaces@x')}`, { key })).status).toBe(200);

    for (const path of [
      `/v1/referrals/${'0'.repeat(32)}/`,
      '/v1/referrals/not-an-id/',
      '/v1/referrals/user/nobody/',
      `/v1/referrals/user/${'x'.repeat(300)}/`,
    ]) {
      const res = await api('GET', path, { key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Not found.' });
    }
    expect((await api('GET', `/v1/referrals/${created.body.id}/`, { key: otherKey })).status).toBe(404);
    expect((await api('GET', `/v1/referrals/user/${encodeURIComponent('user/with spaces@x')}/`, { key: otherKey })).status).toBe(404);
    expect((await api('DELETE', `/v1/referrals/${created.body.id}/`, { key: otherKey })).status).toBe(404);
  });
});

describe('GET /v1/referrals/', () => {
  let key: Key;
  let a: { id: string; code: string };
  let b: { id: string; code: string };
  const ids: string[] = [];

  beforeAll(async () => {
    ({ apiKey: key } = await newAccount());
    a = await member(key, 'gina');
    b = await member(key, 'hank');
    // Sequential, so creation order is the id order: 7 by a, 3 by b.
    for (let i = 0; i < 10; i++) {
      const res = await refer(key, `list-user-${i}`, i < 7 ? a.code : b.code);
      expect(res.status).toBe(200);
      ids.push(res.body.id);
    }
  });

  it('lists newest first with an exact count', async () => {
    const res = await api('GET', '/v1/referrals/', { key });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(10);
    expect(res.body.next).toBeNull();
    expect(res.body.previous).toBeNull();
    expect(res.body.results.map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
  });

  it('pages forwards and backwards over more than two pages, keeping the filter', async () => {
    const seen: string[] = [];
    let url: string | null = `/v1/referrals/?member=${a.id}&page_size=2`;
    const pages: { next: string | null; previous: string | null; results: { id: string }[] }[] = [];
    while (url) {
      const res = await api('GET', url.replace('https://api.test', ''), { key });
      expect(res.status).toBe(200);
      expect(res.body.count).toBe(7);
      pages.push(res.body);
      seen.push(...res.body.results.map((r: { id: string }) => r.id));
      url = res.body.next;
      if (url) expect(url).toMatch(/^https:\/\/api\.test\/v1\/referrals\/\?member=[0-9a-f]{32}&page_size=2&cursor=/);
    }
    expect(pages).toHaveLength(4);
    expect(pages[0]?.previous).toBeNull();
    expect(seen).toEqual(ids.slice(0, 7).reverse());

    // Walk back from the last page to the first via `previous`.
    const back: string[] = [];
    let prev: string | null = pages[3]?.previous ?? null;
    back.unshift(...(pages[3]?.results ?? []).map((r) => r.id));
    while (prev) {
      const res = await api('GET', prev.replace('https://api.test', ''), { key });
      expect(res.status).toBe(200);
      back.unshift(...res.body.results.map((r: { id: string }) => r.id));
      prev = res.body.previous;
      if (!prev) expect(res.body.results.map((r: { id: string }) => r.id)).toEqual(pages[0]?.results.map((r) => r.id));
    }
    expect(back).toEqual(seen);
  });

  it('filters by member; an unknown member gives an empty page with count 0', async () => {
    const res = await api('GET', `/v1/referrals/?member=${b.id}`, { key });
    expect(res.body.count).toBe(3);
    expect(res.body.results.every((r: { member_id: string }) => r.member_id === b.id)).toBe(true);
    const none = await api('GET', `/v1/referrals/?member=${'f'.repeat(32)}`, { key });
    expect(none.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    const junk = await api('GET', '/v1/referrals/?member=junk', { key });
    expect(junk.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('refuses a cursor issued for another filter', async () => {
    const first = await api('GET', `/v1/referrals/?member=${a.id}&page_size=2`, { key });
    const cursor = new URL(first.body.next).searchParams.get('cursor');
    const res = await api('GET', `/v1/referrals/?member=${b.id}&cursor=${cursor}`, { key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ cursor: ['Invalid cursor.'] });
  });
});

describe('DELETE /v1/referrals/{id}/', () => {
  it('deletes, drops counts and stats, and lets the user be referred again', async () => {
    const { apiKey: key } = await newAccount();
    const m = await member(key, 'ivy');
    const created = await refer(key, 'user-del', m.code);
    const del = await api('DELETE', `/v1/referrals/${created.body.id}/`, { key });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expect((await api('GET', `/v1/referrals/${created.body.id}/`, { key })).status).toBe(404);
    expect((await api('DELETE', `/v1/referrals/${created.body.id}/`, { key })).status).toBe(404);
    expect((await api('GET', '/v1/referrals/', { key })).body.count).toBe(0);
    expect((await api('GET', `/v1/members/${m.id}/`, { key })).body.stats.referrals).toBe(0);

    const again = await refer(key, 'user-del', m.code);
    expect(again.status).toBe(200);
    expect(again.body.id).not.toBe(created.body.id);
  });

  it('keeps referrals of a deleted member and still deletes them cleanly', async () => {
    const { apiKey: key } = await newAccount();
    const m = await member(key, 'jack');
    const created = await refer(key, 'user-orphan', m.code);
    expect((await api('DELETE', `/v1/members/${m.id}/`, { key })).status).toBe(204);
    const kept = await api('GET', `/v1/referrals/${created.body.id}/`, { key });
    expect(kept.status).toBe(200);
    expect(kept.body.member_id).toBe(m.id);
    expect((await api('DELETE', `/v1/referrals/${created.body.id}/`, { key })).status).toBe(204);
    expect((await api('GET', '/v1/referrals/', { key })).body.count).toBe(0);
  });
});
