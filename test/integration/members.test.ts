// Members through the real handlers: shape, generated codes, validation and uniqueness messages,
// campaign and subscription references, partial updates that free and claim unique values, delete,
// the `campaign=` filter with pagination, tenant isolation and concurrent creates with one code.
import { api, type ApiResponse } from '../support/api';
import { newAccount } from '../support/fixtures';
import { saveSubscription } from '../../shared/store/subscriptions';

const BASE = 'https://api.test';
const MEMBERS = '/v1/members/';
const memberPath = (id: string) => `/v1/members/${id}/`;
const NOT_FOUND = { detail: 'Not found.' };

let seq = 0;
/** A fresh identifier / email pair, unique across the run. */
function person(): { identifier: string; email: string } {
  const n = ++seq;
  return { identifier: `user-${n}`, email: `user${n}@example.com` };
}

/** POST /v1/members/ that must succeed; `overrides` win over a fresh identifier and email. */
async function createMember(key: string, overrides: Record<string, unknown> = {}): Promise<any> {
  const res = await api('POST', MEMBERS, { key, body: { ...person(), ...overrides } });
  expect(res).toMatchObject({ status: 201 });
  return res.body;
}

async function createCampaign(key: string, overrides: Record<string, unknown> = {}): Promise<any> {
  const res = await api('POST', '/v1/campaigns/', { key, body: { name: `Campaign ${++seq}`, ...overrides } });
  expect(res.status).toBe(201);
  return res.body;
}

async function getMember(key: string, id: string): Promise<ApiResponse> {
  return api('GET', memberPath(id), { key });
}

async function patchMember(key: string, id: string, body: unknown): Promise<ApiResponse> {
  return api('PATCH', memberPath(id), { key, body });
}

async function listMembers(key: string, query = ''): Promise<any> {
  const res = await api('GET', `${MEMBERS}${query}`, { key });
  expect(res.status).toBe(200);
  return res.body;
}

/** Follows an absolute `next` / `previous` link of this API. */
async function follow(key: string, url: string): Promise<ApiResponse> {
  expect(url.startsWith(`${BASE}/`)).toBe(true);
  return api('GET', url.slice(BASE.length), { key });
}

let subscriptionSeq = 5000;
/** Writes a provider subscription through the store (the API cannot) and returns its API view. */
async function newSubscription(accountId: string): Promise<any> {
  const id = ++subscriptionSeq;
  const plan = { id: 77, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' };
  const data = {
    id,
    unit_price: '10.00',
    currency: 'USD',
    status: 'active',
    email: `payer${id}@example.com`,
    next_bill_date: '2030-02-01',
    last_bill_date: '2030-01-01',
    plan,
  };
  await saveSubscription(accountId, data);
  return { ...data, plan: { ...plan } };
}

const STATS = {
  link_clicks: 0,
  referrals: 0,
  conversions: 0,
  credit_earned: '0.00',
  commission_earned: '0.00',
  commission_pending: '0.00',
  commission_approved: '0.00',
  commission_held: '0.00',
  commission_paid: '0.00',
  currency: 'USD',
};

/** The full Member representation of a brand-new member without campaign or subscription. */
function memberShape(overrides: Record<string, unknown> = {}) {
  return {
    id: expect.stringMatching(/^[0-9a-f]{32}$/),
    identifier: expect.any(String),
    email: expect.any(String),
    first_name: null,
    last_name: null,
    code: expect.stringMatching(/^[0-9A-Z]{8}$/),
    stats: STATS,
    link_clicks: 0,
    campaign: null,
    subscription: null,
    email_opt_out: false,
    payout_email: null,
    payout_method: null,
    payout_method_ready: false,
    payout_method_reason: 'The member has no payout email.',
    source: 'app',
    fraud_flags: [],
    created_at: expect.any(Number),
    ...overrides,
  };
}

const inUse = (what: string, value: string) => `The ${what} ${value} is already in use; choose another`;

describe('POST /v1/members/', () => {
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    ({ apiKey: key, accountId } = await newAccount());
  });

  it('creates a member and answers 201 with the exact representation', async () => {
    const p = person();
    const before = Math.floor(Date.now() / 1000);
    const res = await api('POST', MEMBERS, { key, body: p });
    const after = Math.floor(Date.now() / 1000);
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(memberShape(p));
    expect(res.body.created_at).toBeGreaterThanOrEqual(before);
    expect(res.body.created_at).toBeLessThanOrEqual(after);
    const got = await getMember(key, res.body.id);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('generates distinct codes of 8 digits and capital letters', async () => {
    const codes = new Set<string>();
    for (let i = 0; i < 5; i++) {
      const m = await createMember(key);
      expect(m.code).toMatch(/^[0-9A-Z]{8}$/);
      codes.add(m.code);
    }
    expect(codes.size).toBe(5);
  });

  it('keeps every given field', async () => {
    const body = { ...person(), first_name: 'Ada', last_name: 'Lovelace', code: 'ada-L_1' };
    const res = await api('POST', MEMBERS, { key, body });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(memberShape(body));
    expect((await getMember(key, res.body.id)).body).toEqual(res.body);
  });

  it('accepts limits exactly: identifier 100, names 50, code 30 characters', async () => {
    const body = {
      identifier: `i${seq++}`.padEnd(100, 'i'),
      email: `limits${seq++}@example.com`,
      first_name: 'f'.repeat(50),
      last_name: 'l'.repeat(50),
      code: `C${seq++}`.padEnd(30, 'c'),
    };
    const res = await api('POST', MEMBERS, { key, body });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(memberShape(body));
  });

  it('ignores unknown and read-only fields', async () => {
    const p = person();
    const res = await api('POST', MEMBERS, {
      key,
      body: {
        ...p,
        id: 'f'.repeat(32),
        created_at: 1,
        link_clicks: 9,
        stats: { referrals: 5, credit_earned: '9.00' },
        favourite_colour: 'blue',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(memberShape(p));
    expect(res.body.id).not.toBe('f'.repeat(32));
    expect(res.body.created_at).toBeGreaterThan(1_600_000_000);
    expect((await getMember(key, res.body.id)).body).toEqual(res.body);
    expect((await getMember(key, 'f'.repeat(32))).status).toBe(404);
  });

  describe('campaign', () => {
    it('attaches the member to an existing campaign and returns the full Campaign', async () => {
      const campaign = await createCampaign(key, { allows_credit: true, credit_amount: '5', credit_currency: 'EUR' });
      const p = person();
      const res = await api('POST', MEMBERS, { key, body: { ...p, campaign: { id: campaign.id } } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(memberShape({ ...p, campaign, stats: { ...STATS, currency: 'EUR' } }));
      expect((await getMember(key, res.body.id)).body).toEqual(res.body);
    });

    it('uses the commission currency for stats when the campaign does not allow credit', async () => {
      const campaign = await createCampaign(key, { allows_credit: false, credit_currency: 'EUR', commission_currency: 'GBP' });
      const m = await createMember(key, { campaign: { id: campaign.id } });
      expect(m.stats).toEqual({ ...STATS, currency: 'GBP' });
      expect(m.campaign).toEqual(campaign);
    });

    it('uses the credit currency when the campaign allows both rewards', async () => {
      const campaign = await createCampaign(key, {
        allows_credit: true,
        credit_currency: 'CHF',
        allows_commission: true,
        commission_currency: 'GBP',
      });
      const m = await createMember(key, { campaign: { id: campaign.id } });
      expect(m.stats.currency).toBe('CHF');
    });

    it('accepts extra keys in the campaign object without saving them', async () => {
      const campaign = await createCampaign(key);
      const m = await createMember(key, {
        campaign: { id: campaign.id, name: 'Renamed by a member', credit_amount: '99.00', allows_credit: true },
      });
      expect(m.campaign).toEqual(campaign);
      const got = await api('GET', `/v1/campaigns/${campaign.id}/`, { key });
      expect(got.body).toEqual(campaign);
    });

    it('accepts campaign null as no campaign', async () => {
      const p = person();
      const res = await api('POST', MEMBERS, { key, body: { ...p, campaign: null, subscription: null } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(memberShape(p));
    });
  });

  describe('subscription', () => {
    it('attaches an existing subscription and returns the Subscription object', async () => {
      const subscription = await newSubscription(accountId);
      const p = person();
      const res = await api('POST', MEMBERS, { key, body: { ...p, subscription: { id: subscription.id } } });
      expect(res.status).toBe(201);
      expect(res.body).toEqual(memberShape({ ...p, subscription }));
      expect((await getMember(key, res.body.id)).body).toEqual(res.body);
    });

    it('accepts extra keys in the subscription object and a string id of digits', async () => {
      const subscription = await newSubscription(accountId);
      const m = await createMember(key, { subscription: { id: String(subscription.id), status: 'deleted', unit_price: '0.01' } });
      expect(m.subscription).toEqual(subscription);
    });

    it('refuses a subscription already attached to another member', async () => {
      const subscription = await newSubscription(accountId);
      const holder = await createMember(key, { subscription: { id: subscription.id } });
      const res = await api('POST', MEMBERS, { key, body: { ...person(), subscription: { id: subscription.id } } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ subscription: [`Subscription ${subscription.id} is already attached to another member`] });
      expect((await getMember(key, holder.id)).body.subscription).toEqual(subscription);
    });
  });

  describe('400 on invalid bodies, nothing created', () => {
    const cases: [string, Record<string, unknown>, Record<string, string[]>][] = [
      ['an empty body', {}, { identifier: ['This field is required.'], email: ['This field is required.'] }],
      ['identifier missing', { email: 'a@example.com' }, { identifier: ['This field is required.'] }],
      ['email missing', { identifier: 'a' }, { email: ['This field is required.'] }],
      ['identifier blank', { identifier: '', email: 'a@example.com' }, { identifier: ['This field may not be blank.'] }],
      ['identifier null', { identifier: null, email: 'a@example.com' }, { identifier: ['This field may not be null.'] }],
      [
        'identifier too long',
        { identifier: 'i'.repeat(101), email: 'a@example.com' },
        { identifier: ['Ensure this field has no more than 100 characters.'] },
      ],
      ['email invalid', { identifier: 'a', email: 'not-an-email' }, { email: ['Enter a valid email address.'] }],
      ['email without a domain', { identifier: 'a', email: 'a@' }, { email: ['Enter a valid email address.'] }],
      ['email blank', { identifier: 'a', email: '' }, { email: ['This field may not be blank.'] }],
      [
        'first_name too long',
        { identifier: 'a', email: 'a@example.com', first_name: 'f'.repeat(51) },
        { first_name: ['Ensure this field has no more than 50 characters.'] },
      ],
      [
        'last_name too long',
        { identifier: 'a', email: 'a@example.com', last_name: 'l'.repeat(51) },
        { last_name: ['Ensure this field has no more than 50 characters.'] },
      ],
      [
        'code too long',
        { identifier: 'a', email: 'a@example.com', code: 'c'.repeat(31) },
        { code: ['Ensure this field has no more than 30 characters.'] },
      ],
      ['code blank', { identifier: 'a', email: 'a@example.com', code: '' }, { code: ['This field may not be blank.'] }],
      ['code null', { identifier: 'a', email: 'a@example.com', code: null }, { code: ['This field may not be null.'] }],
      [
        'unknown campaign',
        { identifier: 'a', email: 'a@example.com', campaign: { id: '0badc0de' } },
        { campaign: ['Campaign 0badc0de could not be found'] },
      ],
      [
        'malformed campaign id',
        { identifier: 'a', email: 'a@example.com', campaign: { id: 'nope' } },
        { campaign: ['Campaign nope could not be found'] },
      ],
      [
        'unknown subscription',
        { identifier: 'a', email: 'a@example.com', subscription: { id: 424242 } },
        { subscription: ['Subscription 424242 could not be found'] },
      ],
      [
        'several fields at once',
        { identifier: 'i'.repeat(101), email: 'nope', first_name: 'f'.repeat(51), code: 'c'.repeat(31) },
        {
          identifier: ['Ensure this field has no more than 100 characters.'],
          email: ['Enter a valid email address.'],
          first_name: ['Ensure this field has no more than 50 characters.'],
          code: ['Ensure this field has no more than 30 characters.'],
        },
      ],
      [
        'unknown campaign and subscription at once',
        { identifier: 'a', email: 'a@example.com', campaign: { id: '0badc0de' }, subscription: { id: 424242 } },
        { campaign: ['Campaign 0badc0de could not be found'], subscription: ['Subscription 424242 could not be found'] },
      ],
    ];

    it.each(cases)('%s', async (_label, body, errors) => {
      const { apiKey } = await newAccount();
      const res = await api('POST', MEMBERS, { key: apiKey, body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errors);
      expect(await listMembers(apiKey)).toEqual({ count: 0, next: null, previous: null, results: [] });
    });

    it.each([['has space'], ['semi;colon'], ['slash/code'], ['ünïcode'], ['\u212AELVIN'], ['\u017Fam'], ['full\uFF37idth']])(
      'refuses the code %p',
      async (code) => {
        const { apiKey } = await newAccount();
        const res = await api('POST', MEMBERS, { key: apiKey, body: { identifier: 'a', email: 'a@example.com', code } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ code: [expect.any(String)] });
        expect((await listMembers(apiKey)).count).toBe(0);
      },
    );

    it("refuses another account's campaign as unknown", async () => {
      const { apiKey: otherKey } = await newAccount();
      const foreign = await createCampaign(otherKey);
      const res = await api('POST', MEMBERS, { key, body: { ...person(), campaign: { id: foreign.id } } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ campaign: [`Campaign ${foreign.id} could not be found`] });
    });

    it('refuses a deleted campaign as unknown', async () => {
      const campaign = await createCampaign(key);
      expect((await api('DELETE', `/v1/campaigns/${campaign.id}/`, { key })).status).toBe(204);
      const res = await api('POST', MEMBERS, { key, body: { ...person(), campaign: { id: campaign.id } } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ campaign: [`Campaign ${campaign.id} could not be found`] });
    });

    it("refuses another account's subscription as unknown", async () => {
      const other = await newAccount();
      const foreign = await newSubscription(other.accountId);
      const res = await api('POST', MEMBERS, { key, body: { ...person(), subscription: { id: foreign.id } } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ subscription: [`Subscription ${foreign.id} could not be found`] });
    });
  });

  describe('uniqueness', () => {
    let own: string;
    let first: any;
    beforeAll(async () => {
      ({ apiKey: own } = await newAccount());
      first = await createMember(own, { identifier: 'Ident-1', email: 'alice@example.com', code: 'AliceCode' });
    });

    it('refuses the same identifier', async () => {
      const res = await api('POST', MEMBERS, { key: own, body: { identifier: 'Ident-1', email: 'other1@example.com' } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ identifier: [inUse('identifier', 'Ident-1')] });
    });

    it('treats identifiers that differ in case as different', async () => {
      const m = await createMember(own, { identifier: 'ident-1', email: 'lower-ident@example.com' });
      expect(m.identifier).toBe('ident-1');
    });

    it.each([['alice@example.com'], ['Alice@example.com'], ['ALICE@example.com']])('refuses the email %p', async (email) => {
      const res = await api('POST', MEMBERS, { key: own, body: { identifier: `id-${email}`, email } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ email: [inUse('email address', email)] });
    });

    it('refuses the email with its domain in another case', async () => {
      const res = await api('POST', MEMBERS, { key: own, body: { identifier: 'domain-case', email: 'alice@EXAMPLE.COM' } });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['email']);
      expect(res.body.email).toEqual([expect.stringMatching(/^The email address alice@example\.com is already in use; choose another$/i)]);
    });

    it.each([['AliceCode'], ['alicecode'], ['ALICECODE']])('refuses the code %p', async (code) => {
      const res = await api('POST', MEMBERS, { key: own, body: { identifier: `id-${code}`, email: `${code}@example.org`, code } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: [inUse('code', code)] });
    });

    it('reports every conflict at once', async () => {
      const res = await api('POST', MEMBERS, {
        key: own,
        body: { identifier: 'Ident-1', email: 'ALICE@example.com', code: 'alicecode' },
      });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        identifier: [inUse('identifier', 'Ident-1')],
        email: [inUse('email address', 'ALICE@example.com')],
        code: [inUse('code', 'alicecode')],
      });
    });

    it('created nothing for the refused requests', async () => {
      const list = await listMembers(own, '?page_size=100');
      expect(list.count).toBe(2);
      expect(list.results.map((m: any) => m.identifier)).toEqual(['ident-1', 'Ident-1']);
      expect(list.results[1]).toEqual(first);
    });

    it('lets another account reuse identifier, email and code', async () => {
      const { apiKey: other } = await newAccount();
      const m = await createMember(other, { identifier: 'Ident-1', email: 'alice@example.com', code: 'AliceCode' });
      expect(m).toMatchObject({ identifier: 'Ident-1', email: 'alice@example.com', code: 'AliceCode' });
    });
  });
});

describe('GET /v1/members/{id}/', () => {
  it('answers 200 with the member, its campaign and its subscription', async () => {
    const { apiKey, accountId } = await newAccount();
    const campaign = await createCampaign(apiKey, { allows_commission: true, commission_currency: 'AUD' });
    const subscription = await newSubscription(accountId);
    const m = await createMember(apiKey, { campaign: { id: campaign.id }, subscription: { id: subscription.id }, first_name: 'Bo' });
    const res = await getMember(apiKey, m.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      memberShape({
        id: m.id,
        identifier: m.identifier,
        email: m.email,
        code: m.code,
        first_name: 'Bo',
        campaign,
        subscription,
        stats: { ...STATS, currency: 'AUD' },
      }),
    );
  });

  it('shows the campaign as it is now, after the campaign was edited', async () => {
    const { apiKey } = await newAccount();
    const campaign = await createCampaign(apiKey);
    const m = await createMember(apiKey, { campaign: { id: campaign.id } });
    const patched = await api('PATCH', `/v1/campaigns/${campaign.id}/`, {
      key: apiKey,
      body: { name: 'Edited', allows_credit: true, credit_currency: 'NZD' },
    });
    expect(patched.status).toBe(200);
    const res = await getMember(apiKey, m.id);
    expect(res.body.campaign).toEqual(patched.body);
    expect(res.body.stats.currency).toBe('NZD');
  });

  it.each([
    ['an unknown id', '0'.repeat(32)],
    ['a malformed id', 'not-a-member'],
    ['an upper-case id', 'A'.repeat(32)],
  ])('answers 404 for %s', async (_label, id) => {
    const { apiKey } = await newAccount();
    const res = await getMember(apiKey, id);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });
});

describe('PATCH /v1/members/{id}/', () => {
  let key: string;
  let accountId: string;
  beforeAll(async () => {
    ({ apiKey: key, accountId } = await newAccount());
  });

  async function expectUnchanged(member: any): Promise<void> {
    expect((await getMember(key, member.id)).body).toEqual(member);
  }

  it('changes only the given fields and answers 200', async () => {
    const m = await createMember(key, { first_name: 'Ann', last_name: 'Old' });
    const res = await patchMember(key, m.id, { last_name: 'New' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...m, last_name: 'New' });
    await expectUnchanged({ ...m, last_name: 'New' });
  });

  it('answers 200 and changes nothing for an empty body', async () => {
    const m = await createMember(key);
    const res = await patchMember(key, m.id, {});
    expect(res.status).toBe(200);
    expect(res.body).toEqual(m);
  });

  it('ignores read-only and unknown fields', async () => {
    const m = await createMember(key);
    const res = await patchMember(key, m.id, { id: 'a'.repeat(32), created_at: 1, stats: { referrals: 3 }, link_clicks: 8, x: 1 });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(m);
    await expectUnchanged(m);
  });

  it('sets first_name and last_name to null', async () => {
    const m = await createMember(key, { first_name: 'Ann', last_name: 'Lee' });
    const res = await patchMember(key, m.id, { first_name: null, last_name: null });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...m, first_name: null, last_name: null });
    await expectUnchanged({ ...m, first_name: null, last_name: null });
  });

  describe('campaign', () => {
    it('attaches, moves and detaches, and the campaign filter counts follow', async () => {
      const a = await createCampaign(key, { allows_credit: true, credit_currency: 'EUR' });
      const b = await createCampaign(key, { commission_currency: 'SEK' });
      const m = await createMember(key);
      const filtered = async (c: any) => listMembers(key, `?campaign=${c.id}`);

      const attached = await patchMember(key, m.id, { campaign: { id: a.id } });
      expect(attached.status).toBe(200);
      expect(attached.body).toEqual({ ...m, campaign: a, stats: { ...STATS, currency: 'EUR' } });
      expect(await filtered(a)).toEqual({ count: 1, next: null, previous: null, results: [attached.body] });
      expect(await filtered(b)).toEqual({ count: 0, next: null, previous: null, results: [] });

      const moved = await patchMember(key, m.id, { campaign: { id: b.id, name: 'ignored' } });
      expect(moved.status).toBe(200);
      expect(moved.body).toEqual({ ...m, campaign: b, stats: { ...STATS, currency: 'SEK' } });
      expect(await filtered(a)).toEqual({ count: 0, next: null, previous: null, results: [] });
      expect(await filtered(b)).toEqual({ count: 1, next: null, previous: null, results: [moved.body] });

      const detached = await patchMember(key, m.id, { campaign: null });
      expect(detached.status).toBe(200);
      expect(detached.body).toEqual(m);
      expect(await filtered(a)).toEqual({ count: 0, next: null, previous: null, results: [] });
      expect(await filtered(b)).toEqual({ count: 0, next: null, previous: null, results: [] });
      await expectUnchanged(m);
    });

    it('keeps the campaign when another field changes', async () => {
      const c = await createCampaign(key);
      const m = await createMember(key, { campaign: { id: c.id } });
      const res = await patchMember(key, m.id, { first_name: 'Kept' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...m, first_name: 'Kept' });
      expect((await listMembers(key, `?campaign=${c.id}`)).count).toBe(1);
    });

    it('attaching the same campaign again does not count the member twice', async () => {
      const c = await createCampaign(key);
      const m = await createMember(key, { campaign: { id: c.id } });
      const res = await patchMember(key, m.id, { campaign: { id: c.id } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(m);
      expect(await listMembers(key, `?campaign=${c.id}`)).toEqual({ count: 1, next: null, previous: null, results: [m] });
    });

    it('refuses an unknown campaign and changes nothing', async () => {
      const c = await createCampaign(key);
      const m = await createMember(key, { campaign: { id: c.id } });
      const res = await patchMember(key, m.id, { campaign: { id: '0badc0de' }, first_name: 'Nope' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ campaign: ['Campaign 0badc0de could not be found'] });
      await expectUnchanged(m);
      expect((await listMembers(key, `?campaign=${c.id}`)).count).toBe(1);
    });

    it('moves a member whose campaign was deleted into a new campaign', async () => {
      const gone = await createCampaign(key);
      const m = await createMember(key, { campaign: { id: gone.id } });
      expect((await api('DELETE', `/v1/campaigns/${gone.id}/`, { key })).status).toBe(204);
      const next = await createCampaign(key);
      const res = await patchMember(key, m.id, { campaign: { id: next.id } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...m, campaign: next });
      expect(await listMembers(key, `?campaign=${next.id}`)).toEqual({ count: 1, next: null, previous: null, results: [res.body] });
      expect(await listMembers(key, `?campaign=${gone.id}`)).toEqual({ count: 0, next: null, previous: null, results: [] });
    });
  });

  describe('subscription', () => {
    it('attaches, detaches, and another member can then attach it', async () => {
      const subscription = await newSubscription(accountId);
      const m = await createMember(key);
      const attached = await patchMember(key, m.id, { subscription: { id: subscription.id } });
      expect(attached.status).toBe(200);
      expect(attached.body).toEqual({ ...m, subscription });
      await expectUnchanged({ ...m, subscription });

      const other = await createMember(key);
      const refused = await patchMember(key, other.id, { subscription: { id: subscription.id } });
      expect(refused.status).toBe(400);
      expect(refused.body).toEqual({ subscription: [`Subscription ${subscription.id} is already attached to another member`] });
      await expectUnchanged(other);

      const detached = await patchMember(key, m.id, { subscription: null });
      expect(detached.status).toBe(200);
      expect(detached.body).toEqual(m);
      await expectUnchanged(m);

      const taken = await patchMember(key, other.id, { subscription: { id: subscription.id } });
      expect(taken.status).toBe(200);
      expect(taken.body).toEqual({ ...other, subscription });
    });

    it('swaps one subscription for another and frees the first', async () => {
      const s1 = await newSubscription(accountId);
      const s2 = await newSubscription(accountId);
      const m = await createMember(key, { subscription: { id: s1.id } });
      const res = await patchMember(key, m.id, { subscription: { id: s2.id } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...m, subscription: s2 });
      const other = await createMember(key, { subscription: { id: s1.id } });
      expect(other.subscription).toEqual(s1);
    });

    it('re-attaching its own subscription is accepted', async () => {
      const s = await newSubscription(accountId);
      const m = await createMember(key, { subscription: { id: s.id } });
      const res = await patchMember(key, m.id, { subscription: { id: s.id } });
      expect(res.status).toBe(200);
      expect(res.body).toEqual(m);
    });

    it('refuses an unknown subscription and changes nothing', async () => {
      const m = await createMember(key);
      const res = await patchMember(key, m.id, { subscription: { id: 987654321 } });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ subscription: ['Subscription 987654321 could not be found'] });
      await expectUnchanged(m);
    });
  });

  describe('code, email and identifier', () => {
    it('changes the code; the old code becomes free and the new one is taken', async () => {
      const m = await createMember(key, { code: 'OldCode1' });
      const res = await patchMember(key, m.id, { code: 'NewCode1' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...m, code: 'NewCode1' });
      await expectUnchanged({ ...m, code: 'NewCode1' });

      const reuse = await createMember(key, { code: 'oldcode1' });
      expect(reuse.code).toBe('oldcode1');
      const dup = await api('POST', MEMBERS, { key, body: { ...person(), code: 'NEWCODE1' } });
      expect(dup.status).toBe(400);
      expect(dup.body).toEqual({ code: [inUse('code', 'NEWCODE1')] });
    });

    it("refuses another member's code, ignoring case, and changes nothing", async () => {
      await createMember(key, { code: 'Holder-9' });
      const m = await createMember(key);
      const res = await patchMember(key, m.id, { code: 'holder-9', first_name: 'Nope' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ code: [inUse('code', 'holder-9')] });
      await expectUnchanged(m);
    });

    it('changes only the case of its own code', async () => {
      const m = await createMember(key, { code: 'casecode' });
      const res = await patchMember(key, m.id, { code: 'CASECODE' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...m, code: 'CASECODE' });
      const dup = await api('POST', MEMBERS, { key, body: { ...person(), code: 'casecode' } });
      expect(dup.status).toBe(400);
      expect(dup.body).toEqual({ code: [inUse('code', 'casecode')] });
    });

    it('changes the email; the old email becomes free and the new one is taken', async () => {
      const m = await createMember(key, { email: 'before@example.net' });
      const res = await patchMember(key, m.id, { email: 'after@example.net' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...m, email: 'after@example.net' });
      expect((await createMember(key, { email: 'Before@example.net' })).email).toBe('Before@example.net');
      const dup = await api('POST', MEMBERS, { key, body: { identifier: 'dup-after', email: 'AFTER@example.net' } });
      expect(dup.status).toBe(400);
      expect(dup.body).toEqual({ email: [inUse('email address', 'AFTER@example.net')] });
    });

    it('changes only the case of its own email', async () => {
      const m = await createMember(key, { email: 'mixed@example.net' });
      const res = await patchMember(key, m.id, { email: 'Mixed@example.net' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...m, email: 'Mixed@example.net' });
      const dup = await api('POST', MEMBERS, { key, body: { identifier: 'dup-mixed', email: 'mixed@example.net' } });
      expect(dup.status).toBe(400);
      expect(dup.body).toEqual({ email: [inUse('email address', 'mixed@example.net')] });
    });

    it("refuses another member's email, ignoring case, and changes nothing", async () => {
      await createMember(key, { email: 'owner@example.net' });
      const m = await createMember(key);
      const res = await patchMember(key, m.id, { email: 'Owner@example.net' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ email: [inUse('email address', 'Owner@example.net')] });
      await expectUnchanged(m);
    });

    it('changes the identifier; the old identifier becomes free and the new one is taken', async () => {
      const m = await createMember(key, { identifier: 'ident-before' });
      const res = await patchMember(key, m.id, { identifier: 'ident-after' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ ...m, identifier: 'ident-after' });
      expect((await createMember(key, { identifier: 'ident-before' })).identifier).toBe('ident-before');
      const dup = await api('POST', MEMBERS, { key, body: { identifier: 'ident-after', email: 'dup-ident@example.net' } });
      expect(dup.status).toBe(400);
      expect(dup.body).toEqual({ identifier: [inUse('identifier', 'ident-after')] });
    });

    it("refuses another member's identifier and changes nothing", async () => {
      await createMember(key, { identifier: 'ident-owner' });
      const m = await createMember(key);
      const res = await patchMember(key, m.id, { identifier: 'ident-owner' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ identifier: [inUse('identifier', 'ident-owner')] });
      await expectUnchanged(m);
    });

    it('reports every conflict at once and changes nothing', async () => {
      const holder = await createMember(key, { code: 'AllThree' });
      const m = await createMember(key);
      const res = await patchMember(key, m.id, { identifier: holder.identifier, email: holder.email, code: 'allthree' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({
        identifier: [inUse('identifier', holder.identifier)],
        email: [inUse('email address', holder.email)],
        code: [inUse('code', 'allthree')],
      });
      await expectUnchanged(m);
    });
  });

  it.each([
    [{ email: 'bad' }, { email: ['Enter a valid email address.'] }],
    [{ identifier: null }, { identifier: ['This field may not be null.'] }],
    [{ identifier: '' }, { identifier: ['This field may not be blank.'] }],
    [{ first_name: 'f'.repeat(51) }, { first_name: ['Ensure this field has no more than 50 characters.'] }],
    [{ code: 'c'.repeat(31) }, { code: ['Ensure this field has no more than 30 characters.'] }],
    [{ email: null }, { email: ['This field may not be null.'] }],
    [{ code: 'ok', email: 'bad' }, { email: ['Enter a valid email address.'] }],
  ])('answers 400 for %j and changes nothing', async (patch, errors) => {
    const m = await createMember(key);
    const res = await patchMember(key, m.id, patch);
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errors);
    await expectUnchanged(m);
  });

  it('refuses a code with a space', async () => {
    const m = await createMember(key);
    const res = await patchMember(key, m.id, { code: 'two words' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ code: [expect.any(String)] });
    await expectUnchanged(m);
  });

  it.each([
    ['an unknown id', '0'.repeat(32)],
    ['a malformed id', 'not-a-member'],
  ])('answers 404 for %s', async (_label, id) => {
    const res = await patchMember(key, id, { first_name: 'Ghost' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });

  it('answers 404 for a deleted member', async () => {
    const m = await createMember(key);
    expect((await api('DELETE', memberPath(m.id), { key })).status).toBe(204);
    const res = await patchMember(key, m.id, { first_name: 'Ghost' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });
});

describe('DELETE /v1/members/{id}/', () => {
  it('answers 204 with an empty body, then 404; the count drops', async () => {
    const { apiKey } = await newAccount();
    const keep = await createMember(apiKey);
    const m = await createMember(apiKey);
    expect((await listMembers(apiKey)).count).toBe(2);
    const res = await api('DELETE', memberPath(m.id), { key: apiKey });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    for (const method of ['GET', 'DELETE']) {
      const again = await api(method, memberPath(m.id), { key: apiKey });
      expect(again.status).toBe(404);
      expect(again.body).toEqual(NOT_FOUND);
    }
    expect(await listMembers(apiKey)).toEqual({ count: 1, next: null, previous: null, results: [keep] });
  });

  it('frees code, email, identifier and subscription for a new member', async () => {
    const { apiKey, accountId } = await newAccount();
    const subscription = await newSubscription(accountId);
    const m = await createMember(apiKey, {
      identifier: 'leaver',
      email: 'leaver@example.com',
      code: 'LEAVER',
      subscription: { id: subscription.id },
    });
    expect((await api('DELETE', memberPath(m.id), { key: apiKey })).status).toBe(204);
    const res = await api('POST', MEMBERS, {
      key: apiKey,
      body: { identifier: 'leaver', email: 'Leaver@example.com', code: 'leaver', subscription: { id: subscription.id } },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(memberShape({ identifier: 'leaver', email: 'Leaver@example.com', code: 'leaver', subscription }));
    expect(res.body.id).not.toBe(m.id);
    expect((await listMembers(apiKey)).count).toBe(1);
  });

  it("drops the member from its campaign's filter and count", async () => {
    const { apiKey } = await newAccount();
    const c = await createCampaign(apiKey);
    const stays = await createMember(apiKey, { campaign: { id: c.id } });
    const leaves = await createMember(apiKey, { campaign: { id: c.id } });
    expect((await listMembers(apiKey, `?campaign=${c.id}`)).count).toBe(2);
    expect((await api('DELETE', memberPath(leaves.id), { key: apiKey })).status).toBe(204);
    expect(await listMembers(apiKey, `?campaign=${c.id}`)).toEqual({ count: 1, next: null, previous: null, results: [stays] });
  });

  it.each([
    ['an unknown id', '0'.repeat(32)],
    ['a malformed id', 'not-a-member'],
  ])('answers 404 for %s', async (_label, id) => {
    const { apiKey } = await newAccount();
    const res = await api('DELETE', memberPath(id), { key: apiKey });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });
});

describe("another account's member", () => {
  let key: string;
  let ownerKey: string;
  let foreign: any;
  beforeAll(async () => {
    ({ apiKey: key } = await newAccount());
    ({ apiKey: ownerKey } = await newAccount());
    foreign = await createMember(ownerKey, { first_name: 'Owned' });
  });

  it('is 404 on GET', async () => {
    const res = await getMember(key, foreign.id);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });

  it('is 404 on PATCH and stays unchanged', async () => {
    const res = await patchMember(key, foreign.id, { first_name: 'Stolen', code: 'STOLEN' });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
    expect((await getMember(ownerKey, foreign.id)).body).toEqual(foreign);
  });

  it('is 404 on DELETE and stays', async () => {
    const res = await api('DELETE', memberPath(foreign.id), { key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
    expect((await getMember(ownerKey, foreign.id)).body).toEqual(foreign);
    expect((await listMembers(ownerKey)).count).toBe(1);
  });

  it('is not listed', async () => {
    expect(await listMembers(key)).toEqual({ count: 0, next: null, previous: null, results: [] });
  });
});

describe('GET /v1/members/', () => {
  describe('with and without ?campaign=', () => {
    let key: string;
    let campaign: any;
    let other: any;
    let inCampaign: any[];
    let all: any[];
    beforeAll(async () => {
      ({ apiKey: key } = await newAccount());
      campaign = await createCampaign(key);
      other = await createCampaign(key);
      inCampaign = [];
      all = [];
      // Interleave members of the campaign with members of another campaign and without one.
      for (let i = 0; i < 5; i++) {
        const m = await createMember(key, { campaign: { id: campaign.id } });
        inCampaign.unshift(m);
        all.unshift(m);
        all.unshift(await createMember(key, i % 2 === 0 ? { campaign: { id: other.id } } : {}));
      }
    });

    it('lists every member newest first with the exact count', async () => {
      expect(await listMembers(key, '?page_size=100')).toEqual({ count: 10, next: null, previous: null, results: all });
    });

    it("lists only the campaign's members with the exact count", async () => {
      expect(await listMembers(key, `?campaign=${campaign.id}`)).toEqual({ count: 5, next: null, previous: null, results: inCampaign });
      const others = await listMembers(key, `?campaign=${other.id}`);
      expect(others.count).toBe(3);
      expect(others.results.map((m: any) => m.campaign)).toEqual([other, other, other]);
    });

    it('pages the filtered list forwards and backwards, keeping the filter', async () => {
      const pages: any[] = [];
      let res = await api('GET', `${MEMBERS}?campaign=${campaign.id}&page_size=2`, { key });
      for (;;) {
        expect(res.status).toBe(200);
        pages.push(res.body);
        if (res.body.next === null) break;
        const url = new URL(res.body.next);
        expect(`${url.protocol}//${url.host}${url.pathname}`).toBe(`${BASE}${MEMBERS}`);
        expect(url.searchParams.get('campaign')).toBe(campaign.id);
        expect(url.searchParams.get('page_size')).toBe('2');
        expect(pages.length).toBeLessThan(3);
        res = await follow(key, res.body.next);
      }
      expect(pages.map((p) => p.results)).toEqual([inCampaign.slice(0, 2), inCampaign.slice(2, 4), inCampaign.slice(4)]);
      expect(pages.map((p) => p.count)).toEqual([5, 5, 5]);
      expect(pages[0].previous).toBeNull();

      const back = await follow(key, pages[2].previous);
      expect(back.body).toEqual({ count: 5, next: expect.any(String), previous: expect.any(String), results: inCampaign.slice(2, 4) });
      const start = await follow(key, back.body.previous);
      expect(start.body).toEqual({ count: 5, next: expect.any(String), previous: null, results: inCampaign.slice(0, 2) });
    });

    it('pages the unfiltered list over several pages', async () => {
      const seen: any[] = [];
      let body = await listMembers(key, '?page_size=3');
      expect(body.previous).toBeNull();
      for (;;) {
        expect(body.count).toBe(10);
        seen.push(...body.results);
        if (body.next === null) break;
        expect(seen.length).toBeLessThan(10);
        body = (await follow(key, body.next)).body;
      }
      expect(seen).toEqual(all);
    });

    it('refuses a cursor of the filtered list on the unfiltered list', async () => {
      const filtered = await listMembers(key, `?campaign=${campaign.id}&page_size=1`);
      const cursor = new URL(filtered.next).searchParams.get('cursor');
      const res = await api('GET', `${MEMBERS}?cursor=${cursor}`, { key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ cursor: ['Invalid cursor.'] });
    });

    it.each([['0badc0de'], ['not-a-campaign']])('answers an empty page for ?campaign=%p', async (id) => {
      expect(await listMembers(key, `?campaign=${id}`)).toEqual({ count: 0, next: null, previous: null, results: [] });
    });

    it("answers an empty page for another account's campaign", async () => {
      const { apiKey: otherKey } = await newAccount();
      const foreign = await createCampaign(otherKey);
      await createMember(otherKey, { campaign: { id: foreign.id } });
      expect(await listMembers(key, `?campaign=${foreign.id}`)).toEqual({ count: 0, next: null, previous: null, results: [] });
    });

    it.each([['0'], ['101'], ['x']])('answers 400 for page_size=%s', async (value) => {
      const res = await api('GET', `${MEMBERS}?page_size=${value}`, { key });
      expect(res.status).toBe(400);
      expect(Object.keys(res.body)).toEqual(['page_size']);
    });

    it('answers 400 for a bad cursor', async () => {
      const res = await api('GET', `${MEMBERS}?cursor=nonsense`, { key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ cursor: ['Invalid cursor.'] });
    });
  });
});

describe('concurrent creates with the same code', () => {
  it('creates exactly one member; the others get the code message', async () => {
    const { apiKey } = await newAccount();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api('POST', MEMBERS, { key: apiKey, body: { identifier: `racer-${i}`, email: `racer${i}@example.com`, code: 'RACE' } }),
      ),
    );
    const statuses = responses.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 400, 400, 400, 400, 400, 400, 400, 400, 400]);
    for (const r of responses.filter((x) => x.status === 400)) {
      expect(r.body).toEqual({ code: [inUse('code', 'RACE')] });
    }
    const winner = responses.find((r) => r.status === 201)!.body;
    expect(winner.code).toBe('RACE');

    const list = await listMembers(apiKey, '?page_size=100');
    expect(list.results).toEqual([winner]);
    expect(list.count).toBe(list.results.length);
  });

  it('creates all members with generated codes in parallel', async () => {
    const { apiKey } = await newAccount();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        api('POST', MEMBERS, { key: apiKey, body: { identifier: `p-${i}`, email: `p${i}@example.com` } }),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
    expect(new Set(responses.map((r) => r.body.code)).size).toBe(10);
    const list = await listMembers(apiKey, '?page_size=100');
    expect(list.count).toBe(10);
    expect(list.results).toHaveLength(10);
  });
});
