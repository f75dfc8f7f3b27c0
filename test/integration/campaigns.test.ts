// Campaigns through the real handlers: shapes and defaults, validation messages, plan limits, tenant
// isolation, partial updates, delete (and what it does to members), newest-first cursor pagination.
import { api, type ApiResponse } from '../support/api';
import { newAccount } from '../support/fixtures';

const BASE = 'https://api.test';
const CAMPAIGNS = '/v1/campaigns/';
const campaignPath = (id: string) => `/v1/campaigns/${id}/`;

let seq = 0;
const uniqueName = (prefix = 'Campaign') => `${prefix} ${++seq}`;

/** POST /v1/campaigns/ that must succeed; `overrides` win over a fresh unique name. */
async function createCampaign(key: string, overrides: Record<string, unknown> = {}): Promise<any> {
  const res = await api('POST', CAMPAIGNS, { key, body: { name: uniqueName(), ...overrides } });
  expect(res.status).toBe(201);
  return res.body;
}

async function getCampaign(key: string, id: string): Promise<ApiResponse> {
  return api('GET', campaignPath(id), { key });
}

/** The full Campaign representation with the contract's defaults. */
function campaignShape(overrides: Record<string, unknown> = {}) {
  return {
    id: expect.stringMatching(/^[0-9a-f]{8}$/),
    name: expect.any(String),
    slug: expect.stringMatching(/^[a-z0-9-]{1,40}$/),
    signup: { enabled: false, approval: 'manual', terms_url: null, questions: [] },
    allows_credit: false,
    credit_amount: '0.00',
    credit_currency: 'USD',
    allows_commission: false,
    commission_amount: '0.00',
    commission_currency: 'USD',
    commission_months: null,
    reward_threshold: '0.00',
    referred_discount_type: null,
    referred_discount_amount: '0.00',
    referred_discount_recurring: false,
    commission_type: 'fixed',
    commission_percent: '0.00',
    hold_days: 30,
    approval: 'auto',
    min_payout: '0.00',
    created_at: expect.any(Number),
    ...overrides,
  };
}

/** Follows an absolute `next` / `previous` link of this API. */
async function follow(key: string, url: string): Promise<ApiResponse> {
  expect(url.startsWith(`${BASE}/`)).toBe(true);
  return api('GET', url.slice(BASE.length), { key });
}

const NOT_FOUND = { detail: 'Not found.' };

describe('POST /v1/campaigns/', () => {
  let key: string;
  beforeAll(async () => {
    ({ apiKey: key } = await newAccount('unlimited'));
  });

  it('creates a campaign with the defaults and answers 201 with the exact representation', async () => {
    const before = Math.floor(Date.now() / 1000);
    const res = await api('POST', CAMPAIGNS, { key, body: { name: 'Defaults' } });
    const after = Math.floor(Date.now() / 1000);
    expect(res.status).toBe(201);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(campaignShape({ name: 'Defaults' }));
    expect(res.body.created_at).toBeGreaterThanOrEqual(before);
    expect(res.body.created_at).toBeLessThanOrEqual(after);

    const got = await getCampaign(key, res.body.id);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(res.body);
  });

  it('stores every given field', async () => {
    const body = {
      name: 'All fields',
      allows_credit: true,
      credit_amount: '12.34',
      credit_currency: 'EUR',
      allows_commission: true,
      commission_amount: '5.00',
      commission_currency: 'GBP',
      commission_months: 12,
      reward_threshold: '100.00',
    };
    const res = await api('POST', CAMPAIGNS, { key, body });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(campaignShape(body));
    expect((await getCampaign(key, res.body.id)).body).toEqual(res.body);
  });

  it.each([
    ['15', '15.00'],
    [15, '15.00'],
    ['15.5', '15.50'],
    [15.5, '15.50'],
    ['0.05', '0.05'],
    [0, '0.00'],
    // The most one payout may carry (shared/domain/money-limits.ts); above it a fixed amount is a 400 (test/integration/money-currency.test.ts).
    ['1000000.00', '1000000.00'],
  ])('accepts the decimal %p and writes it as %p', async (input, output) => {
    const created = await createCampaign(key, { credit_amount: input, commission_amount: input, reward_threshold: input });
    expect(created).toEqual(
      campaignShape({ name: created.name, credit_amount: output, commission_amount: output, reward_threshold: output }),
    );
    expect((await getCampaign(key, created.id)).body.credit_amount).toBe(output);
  });

  it('stores currency codes in upper case', async () => {
    const created = await createCampaign(key, { credit_currency: 'eur', commission_currency: 'gbp' });
    expect(created).toMatchObject({ credit_currency: 'EUR', commission_currency: 'GBP' });
    expect((await getCampaign(key, created.id)).body).toMatchObject({ credit_currency: 'EUR', commission_currency: 'GBP' });
  });

  it('accepts a name of exactly 100 characters and trims surrounding spaces', async () => {
    const long = 'n'.repeat(100);
    expect((await createCampaign(key, { name: long })).name).toBe(long);
    expect((await createCampaign(key, { name: '  Padded name  ' })).name).toBe('Padded name');
  });

  it('ignores unknown and read-only fields', async () => {
    const res = await api('POST', CAMPAIGNS, {
      key,
      body: { name: 'Read-only ignored', id: 'deadbeef', created_at: 1, member_count: 7, colour: 'blue', stats: {} },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(campaignShape({ name: 'Read-only ignored' }));
    expect(res.body.id).not.toBe('deadbeef');
    expect(res.body.created_at).toBeGreaterThan(1_600_000_000);
    expect((await getCampaign(key, res.body.id)).body).toEqual(res.body);
    expect((await getCampaign(key, 'deadbeef')).status).toBe(404);
  });

  describe('400 on invalid bodies, nothing created', () => {
    const cases: [string, Record<string, unknown>, Record<string, string[]>][] = [
      ['name missing', {}, { name: ['This field is required.'] }],
      ['name blank', { name: '' }, { name: ['This field may not be blank.'] }],
      ['name only spaces', { name: '   ' }, { name: ['This field may not be blank.'] }],
      ['name null', { name: null }, { name: ['This field may not be null.'] }],
      ['name too long', { name: 'x'.repeat(101) }, { name: ['Ensure this field has no more than 100 characters.'] }],
      ['name not a string', { name: { a: 1 } }, { name: ['Not a valid string.'] }],
      ['credit_amount not a number', { name: 'ok', credit_amount: 'abc' }, { credit_amount: ['A valid number is required.'] }],
      [
        'credit_amount with 3 decimals',
        { name: 'ok', credit_amount: '1.234' },
        { credit_amount: ['Ensure that there are no more than 2 decimal places.'] },
      ],
      [
        'credit_amount negative',
        { name: 'ok', credit_amount: '-1.00' },
        { credit_amount: ['Ensure this value is greater than or equal to 0.'] },
      ],
      [
        'credit_amount negative number',
        { name: 'ok', credit_amount: -5 },
        { credit_amount: ['Ensure this value is greater than or equal to 0.'] },
      ],
      [
        'credit_amount over 10 digits',
        { name: 'ok', credit_amount: '12345678901' },
        { credit_amount: ['Ensure that there are no more than 10 digits in total.'] },
      ],
      [
        'credit_amount over 10 digits with decimals',
        { name: 'ok', credit_amount: '123456789.12' },
        { credit_amount: ['Ensure that there are no more than 10 digits in total.'] },
      ],
      ['credit_amount null', { name: 'ok', credit_amount: null }, { credit_amount: ['This field may not be null.'] }],
      ['credit_currency unknown', { name: 'ok', credit_currency: 'XYZ' }, { credit_currency: ['"XYZ" is not a valid currency code.'] }],
      ['credit_currency too short', { name: 'ok', credit_currency: 'US' }, { credit_currency: ['"US" is not a valid currency code.'] }],
      ['credit_currency too long', { name: 'ok', credit_currency: 'USDX' }, { credit_currency: ['"USDX" is not a valid currency code.'] }],
      ['credit_currency null', { name: 'ok', credit_currency: null }, { credit_currency: ['This field may not be null.'] }],
      ['allows_credit not a boolean', { name: 'ok', allows_credit: 'maybe' }, { allows_credit: ['Must be a valid boolean.'] }],
      ['allows_credit null', { name: 'ok', allows_credit: null }, { allows_credit: ['This field may not be null.'] }],
      ['allows_commission not a boolean', { name: 'ok', allows_commission: 2 }, { allows_commission: ['Must be a valid boolean.'] }],
      ['commission_amount not a number', { name: 'ok', commission_amount: 'ten' }, { commission_amount: ['A valid number is required.'] }],
      [
        'commission_currency unknown',
        { name: 'ok', commission_currency: 'ABC' },
        { commission_currency: ['"ABC" is not a valid currency code.'] },
      ],
      [
        'reward_threshold negative',
        { name: 'ok', reward_threshold: '-0.01' },
        { reward_threshold: ['Ensure this value is greater than or equal to 0.'] },
      ],
      [
        'several fields at once',
        { name: '', allows_credit: 'maybe', credit_amount: 'abc', credit_currency: 'XYZ' },
        {
          name: ['This field may not be blank.'],
          allows_credit: ['Must be a valid boolean.'],
          credit_amount: ['A valid number is required.'],
          credit_currency: ['"XYZ" is not a valid currency code.'],
        },
      ],
      [
        'several fields at once with the name missing',
        { credit_amount: '1.234', credit_currency: 'zz' },
        {
          name: ['This field is required.'],
          credit_amount: ['Ensure that there are no more than 2 decimal places.'],
          credit_currency: ['"zz" is not a valid currency code.'],
        },
      ],
    ];

    it.each(cases)('%s', async (_label, body, errors) => {
      const { apiKey } = await newAccount();
      const res = await api('POST', CAMPAIGNS, { key: apiKey, body });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(errors);
      const list = await api('GET', CAMPAIGNS, { key: apiKey });
      expect(list.body).toEqual({ count: 0, next: null, previous: null, results: [] });
    });
  });

  describe('unique names', () => {
    let own: string;
    beforeAll(async () => {
      ({ apiKey: own } = await newAccount());
      await createCampaign(own, { name: 'Spring Promo' });
    });

    it.each([['Spring Promo'], ['spring promo'], ['SPRING PROMO'], ['  Spring Promo  '], [' spring PROMO\t']])(
      'refuses %p as a duplicate',
      async (name) => {
        const res = await api('POST', CAMPAIGNS, { key: own, body: { name } });
        expect(res.status).toBe(400);
        expect(res.body).toEqual({ name: [`The name ${name.trim()} is already in use; choose another`] });
      },
    );

    it('counts only the original campaign after the refused duplicates', async () => {
      const list = await api('GET', CAMPAIGNS, { key: own });
      expect(list.body).toEqual({ count: 1, next: null, previous: null, results: [campaignShape({ name: 'Spring Promo' })] });
    });

    it('lets another account use the same name', async () => {
      const { apiKey: other } = await newAccount();
      expect((await createCampaign(other, { name: 'Spring Promo' })).name).toBe('Spring Promo');
    });
  });
});

describe('plan limits', () => {
  const limitMessage = (plan: string, n: number) => ({ detail: `The ${plan} plan allows ${n} campaign(s); upgrade to add more.` });

  it('allows one campaign on the Starter plan, then answers 403', async () => {
    const { apiKey } = await newAccount('starter');
    await createCampaign(apiKey);
    const res = await api('POST', CAMPAIGNS, { key: apiKey, body: { name: 'Second' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(limitMessage('Starter', 1));
    expect((await api('GET', CAMPAIGNS, { key: apiKey })).body.count).toBe(1);
  });

  it('allows three campaigns on the Small plan, then answers 403', async () => {
    const { apiKey } = await newAccount('small');
    for (let i = 0; i < 3; i++) await createCampaign(apiKey);
    const res = await api('POST', CAMPAIGNS, { key: apiKey, body: { name: 'Fourth' } });
    expect(res.status).toBe(403);
    expect(res.body).toEqual(limitMessage('Small', 3));
    const list = await api('GET', CAMPAIGNS, { key: apiKey });
    expect(list.body.count).toBe(3);
    expect(list.body.results).toHaveLength(3);
  });

  it('frees a slot when a campaign is deleted', async () => {
    const { apiKey } = await newAccount('starter');
    const first = await createCampaign(apiKey, { name: 'Only one' });
    expect((await api('POST', CAMPAIGNS, { key: apiKey, body: { name: 'Blocked' } })).status).toBe(403);
    expect((await api('DELETE', campaignPath(first.id), { key: apiKey })).status).toBe(204);
    const again = await api('POST', CAMPAIGNS, { key: apiKey, body: { name: 'Replacement' } });
    expect(again.status).toBe(201);
    expect((await api('POST', CAMPAIGNS, { key: apiKey, body: { name: 'Blocked again' } })).status).toBe(403);
    const list = await api('GET', CAMPAIGNS, { key: apiKey });
    expect(list.body).toEqual({ count: 1, next: null, previous: null, results: [again.body] });
  });

  it('does not count a refused duplicate or invalid campaign against the limit', async () => {
    const { apiKey } = await newAccount('starter');
    expect((await api('POST', CAMPAIGNS, { key: apiKey, body: { name: '' } })).status).toBe(400);
    await createCampaign(apiKey, { name: 'Taken' });
    expect((await api('POST', CAMPAIGNS, { key: apiKey, body: { name: 'taken' } })).status).toBe(400);
    expect((await api('GET', CAMPAIGNS, { key: apiKey })).body.count).toBe(1);
  });
});

describe('GET /v1/campaigns/{id}/', () => {
  let key: string;
  let otherKey: string;
  let campaign: any;
  let foreign: any;
  beforeAll(async () => {
    ({ apiKey: key } = await newAccount());
    ({ apiKey: otherKey } = await newAccount());
    campaign = await createCampaign(key, { allows_credit: true, credit_amount: '3.50', credit_currency: 'CAD' });
    foreign = await createCampaign(otherKey, { name: 'Foreign' });
  });

  it('answers 200 with the campaign', async () => {
    const res = await getCampaign(key, campaign.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(
      campaignShape({ id: campaign.id, name: campaign.name, allows_credit: true, credit_amount: '3.50', credit_currency: 'CAD' }),
    );
  });

  it('serves the path without its trailing slash identically', async () => {
    const res = await api('GET', `/v1/campaigns/${campaign.id}`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(campaign);
  });

  it.each([
    ['an unknown id', '0badc0de'],
    ['a malformed id', 'not-a-campaign'],
    ['an upper-case id', 'ABCDEF12'],
    ['an overlong id', 'a'.repeat(300)],
  ])('answers 404 for %s', async (_label, id) => {
    const res = await getCampaign(key, id);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
  });

  it("answers 404 for another account's campaign", async () => {
    const res = await getCampaign(key, foreign.id);
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
    // and the owner still sees it
    expect((await getCampaign(otherKey, foreign.id)).body).toEqual(foreign);
  });
});

describe('PATCH /v1/campaigns/{id}/', () => {
  let key: string;
  beforeAll(async () => {
    ({ apiKey: key } = await newAccount('unlimited'));
  });

  it('changes only the given fields and answers 200', async () => {
    const original = await createCampaign(key, { name: 'Patch me', allows_credit: true, credit_amount: '10' });
    const res = await api('PATCH', campaignPath(original.id), { key, body: { credit_amount: '7.5', commission_currency: 'jpy' } });
    expect(res.status).toBe(200);
    const expected = { ...original, credit_amount: '7.50', commission_currency: 'JPY' };
    expect(res.body).toEqual(expected);
    expect((await getCampaign(key, original.id)).body).toEqual(expected);
  });

  it('updates every field at once', async () => {
    const original = await createCampaign(key);
    const patch = {
      name: 'Everything changed',
      allows_credit: true,
      credit_amount: 20,
      credit_currency: 'EUR',
      allows_commission: true,
      commission_amount: '2.25',
      commission_currency: 'GBP',
      commission_months: 6,
      reward_threshold: '9.99',
    };
    const res = await api('PATCH', campaignPath(original.id), { key, body: patch });
    expect(res.status).toBe(200);
    const expected = { ...original, ...patch, credit_amount: '20.00' };
    expect(res.body).toEqual(expected);
    expect((await getCampaign(key, original.id)).body).toEqual(expected);
  });

  it('answers 200 and changes nothing for an empty body', async () => {
    const original = await createCampaign(key);
    const res = await api('PATCH', campaignPath(original.id), { key, body: {} });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(original);
  });

  it('ignores read-only and unknown fields', async () => {
    const original = await createCampaign(key);
    const res = await api('PATCH', campaignPath(original.id), { key, body: { id: 'deadbeef', created_at: 5, extra: true } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual(original);
    expect((await getCampaign(key, original.id)).body).toEqual(original);
  });

  it('sets commission_months back to null', async () => {
    const original = await createCampaign(key, { commission_months: 3 });
    const res = await api('PATCH', campaignPath(original.id), { key, body: { commission_months: null } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...original, commission_months: null });
  });

  it('renames a campaign to its own name in another case', async () => {
    const original = await createCampaign(key, { name: 'Case Only' });
    const res = await api('PATCH', campaignPath(original.id), { key, body: { name: 'CASE ONLY' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ...original, name: 'CASE ONLY' });
    // the name is still taken by this campaign
    const dup = await api('POST', CAMPAIGNS, { key, body: { name: 'case only' } });
    expect(dup.status).toBe(400);
    expect(dup.body).toEqual({ name: ['The name case only is already in use; choose another'] });
  });

  it("refuses another campaign's name (ignoring case and spaces) and changes nothing", async () => {
    const taken = await createCampaign(key, { name: 'Taken Name' });
    const original = await createCampaign(key, { name: 'Wants Rename' });
    const res = await api('PATCH', campaignPath(original.id), { key, body: { name: ' taken name ', credit_amount: '4.00' } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ name: ['The name taken name is already in use; choose another'] });
    expect((await getCampaign(key, original.id)).body).toEqual(original);
    expect((await getCampaign(key, taken.id)).body).toEqual(taken);
  });

  it('frees the old name on rename and claims the new one', async () => {
    const original = await createCampaign(key, { name: 'Old Name' });
    const res = await api('PATCH', campaignPath(original.id), { key, body: { name: 'New Name' } });
    expect(res.status).toBe(200);
    expect(res.body.name).toBe('New Name');
    expect((await createCampaign(key, { name: 'old name' })).name).toBe('old name');
    const dup = await api('POST', CAMPAIGNS, { key, body: { name: 'NEW NAME' } });
    expect(dup.status).toBe(400);
    expect(dup.body).toEqual({ name: ['The name NEW NAME is already in use; choose another'] });
  });

  it.each([
    [{ credit_amount: 'abc' }, { credit_amount: ['A valid number is required.'] }],
    [{ credit_amount: '1.001' }, { credit_amount: ['Ensure that there are no more than 2 decimal places.'] }],
    [{ credit_amount: '-3' }, { credit_amount: ['Ensure this value is greater than or equal to 0.'] }],
    [{ credit_currency: 'QQQ' }, { credit_currency: ['"QQQ" is not a valid currency code.'] }],
    [{ allows_credit: 'maybe' }, { allows_credit: ['Must be a valid boolean.'] }],
    [{ allows_credit: null }, { allows_credit: ['This field may not be null.'] }],
    [{ name: null }, { name: ['This field may not be null.'] }],
    [{ name: '' }, { name: ['This field may not be blank.'] }],
    [{ name: 'y'.repeat(101) }, { name: ['Ensure this field has no more than 100 characters.'] }],
    [{ name: 'Valid new name', allows_credit: true, credit_amount: 'abc' }, { credit_amount: ['A valid number is required.'] }],
    [
      { name: '', credit_amount: 'abc', credit_currency: 'XYZ' },
      {
        name: ['This field may not be blank.'],
        credit_amount: ['A valid number is required.'],
        credit_currency: ['"XYZ" is not a valid currency code.'],
      },
    ],
  ])('answers 400 for %j and changes nothing', async (patch, errors) => {
    const original = await createCampaign(key, { credit_amount: '1.00' });
    const res = await api('PATCH', campaignPath(original.id), { key, body: patch });
    expect(res.status).toBe(400);
    expect(res.body).toEqual(errors);
    expect((await getCampaign(key, original.id)).body).toEqual(original);
  });

  it('answers 404 for an unknown or malformed id', async () => {
    for (const id of ['0badc0de', 'not-a-campaign']) {
      const res = await api('PATCH', campaignPath(id), { key, body: { name: 'Nope' } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
  });

  it("answers 404 for another account's campaign and leaves it unchanged", async () => {
    const { apiKey: otherKey } = await newAccount();
    const foreign = await createCampaign(otherKey, { name: 'Not yours' });
    const res = await api('PATCH', campaignPath(foreign.id), { key, body: { name: 'Hijacked', credit_amount: '99.00' } });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
    expect((await getCampaign(otherKey, foreign.id)).body).toEqual(foreign);
    // the attempted name did not get claimed in either account
    expect((await createCampaign(key, { name: 'Hijacked' })).name).toBe('Hijacked');
  });
});

describe('DELETE /v1/campaigns/{id}/', () => {
  let key: string;
  beforeAll(async () => {
    ({ apiKey: key } = await newAccount('unlimited'));
  });

  it('answers 204 with an empty body, then 404 everywhere', async () => {
    const campaign = await createCampaign(key);
    const res = await api('DELETE', campaignPath(campaign.id), { key });
    expect(res.status).toBe(204);
    expect(res.text).toBe('');
    for (const method of ['GET', 'DELETE']) {
      const again = await api(method, campaignPath(campaign.id), { key });
      expect(again.status).toBe(404);
      expect(again.body).toEqual(NOT_FOUND);
    }
    const patch = await api('PATCH', campaignPath(campaign.id), { key, body: { name: 'Zombie' } });
    expect(patch.status).toBe(404);
    expect(patch.body).toEqual(NOT_FOUND);
  });

  it('removes it from the list and the count', async () => {
    const { apiKey } = await newAccount();
    const keep = await createCampaign(apiKey);
    const gone = await createCampaign(apiKey);
    expect((await api('GET', CAMPAIGNS, { key: apiKey })).body.count).toBe(2);
    expect((await api('DELETE', campaignPath(gone.id), { key: apiKey })).status).toBe(204);
    const list = await api('GET', CAMPAIGNS, { key: apiKey });
    expect(list.body).toEqual({ count: 1, next: null, previous: null, results: [keep] });
  });

  it('frees the name for reuse', async () => {
    const campaign = await createCampaign(key, { name: 'Reusable' });
    expect((await api('DELETE', campaignPath(campaign.id), { key })).status).toBe(204);
    const again = await createCampaign(key, { name: 'REUSABLE' });
    expect(again.name).toBe('REUSABLE');
    expect(again.id).not.toBe(campaign.id);
  });

  it('leaves its members without a campaign', async () => {
    const campaign = await createCampaign(key, { allows_credit: true, credit_currency: 'EUR' });
    const created = await api('POST', '/v1/members/', {
      key,
      body: { identifier: `m-${campaign.id}`, email: `m-${campaign.id}@example.com`, campaign: { id: campaign.id } },
    });
    expect(created.status).toBe(201);
    expect(created.body.campaign).toEqual(campaign);
    expect(created.body.stats.currency).toBe('EUR');
    const before = await api('GET', `/v1/members/?campaign=${campaign.id}`, { key });
    expect(before.body).toEqual({ count: 1, next: null, previous: null, results: [created.body] });

    expect((await api('DELETE', campaignPath(campaign.id), { key })).status).toBe(204);

    const member = await api('GET', `/v1/members/${created.body.id}/`, { key });
    expect(member.status).toBe(200);
    expect(member.body).toEqual({ ...created.body, campaign: null, stats: { ...created.body.stats, currency: 'USD' } });
    const filtered = await api('GET', `/v1/members/?campaign=${campaign.id}`, { key });
    expect(filtered.status).toBe(200);
    expect(filtered.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it('answers 404 for an unknown or malformed id', async () => {
    for (const id of ['0badc0de', 'not-a-campaign']) {
      const res = await api('DELETE', campaignPath(id), { key });
      expect(res.status).toBe(404);
      expect(res.body).toEqual(NOT_FOUND);
    }
  });

  it("answers 404 for another account's campaign and keeps it", async () => {
    const { apiKey: otherKey } = await newAccount();
    const foreign = await createCampaign(otherKey);
    const res = await api('DELETE', campaignPath(foreign.id), { key });
    expect(res.status).toBe(404);
    expect(res.body).toEqual(NOT_FOUND);
    expect((await getCampaign(otherKey, foreign.id)).body).toEqual(foreign);
    expect((await api('GET', CAMPAIGNS, { key: otherKey })).body.count).toBe(1);
  });
});

describe('GET /v1/campaigns/', () => {
  it('answers an empty envelope for a new account', async () => {
    const { apiKey } = await newAccount();
    const res = await api('GET', CAMPAIGNS, { key: apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 0, next: null, previous: null, results: [] });
  });

  it("lists only the caller's campaigns, newest first", async () => {
    const { apiKey } = await newAccount();
    const { apiKey: otherKey } = await newAccount();
    await createCampaign(otherKey);
    const created = [];
    for (let i = 0; i < 3; i++) created.push(await createCampaign(apiKey));
    const res = await api('GET', CAMPAIGNS, { key: apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ count: 3, next: null, previous: null, results: [...created].reverse() });
  });

  it('pages 20 at a time by default', async () => {
    const { apiKey } = await newAccount('unlimited');
    const created = [];
    for (let i = 0; i < 21; i++) created.push(await createCampaign(apiKey));
    const newestFirst = [...created].reverse();

    const first = await api('GET', CAMPAIGNS, { key: apiKey });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ count: 21, next: expect.any(String), previous: null, results: newestFirst.slice(0, 20) });
    const second = await follow(apiKey, first.body.next);
    expect(second.status).toBe(200);
    expect(second.body).toEqual({ count: 21, next: null, previous: expect.any(String), results: newestFirst.slice(20) });
  });

  describe('cursor pagination over several pages', () => {
    let key: string;
    let newestFirst: any[];
    beforeAll(async () => {
      ({ apiKey: key } = await newAccount());
      const created = [];
      for (let i = 0; i < 7; i++) created.push(await createCampaign(key));
      newestFirst = [...created].reverse();
    });

    it('walks forwards via next and backwards via previous, keeping other query parameters', async () => {
      const pages: any[] = [];
      // (A parameter the list does not take is a 400 now: docs/api.md "Query parameters".)
      let res = await api('GET', `${CAMPAIGNS}?page_size=2`, { key });
      for (;;) {
        expect(res.status).toBe(200);
        pages.push(res.body);
        if (res.body.next === null) break;
        res = await follow(key, res.body.next);
      }
      expect(pages.map((p) => p.results)).toEqual([
        newestFirst.slice(0, 2),
        newestFirst.slice(2, 4),
        newestFirst.slice(4, 6),
        newestFirst.slice(6, 7),
      ]);
      expect(pages.map((p) => p.count)).toEqual([7, 7, 7, 7]);
      expect(pages[0].previous).toBeNull();
      for (const page of pages.slice(1)) expect(page.previous).toEqual(expect.any(String));
      for (const page of pages.slice(0, -1)) {
        const url = new URL(page.next);
        expect(`${url.protocol}//${url.host}${url.pathname}`).toBe(`${BASE}${CAMPAIGNS}`);
        expect(url.searchParams.get('page_size')).toBe('2');
        expect(url.searchParams.get('cursor')).toEqual(expect.any(String));
      }

      // Back from the last page to the first.
      const back: any[] = [pages[3]];
      let cur = pages[3];
      while (cur.previous !== null) {
        const prevUrl = new URL(cur.previous);
        expect(`${prevUrl.protocol}//${prevUrl.host}${prevUrl.pathname}`).toBe(`${BASE}${CAMPAIGNS}`);
        expect(prevUrl.searchParams.get('page_size')).toBe('2');
        const r = await follow(key, cur.previous);
        expect(r.status).toBe(200);
        cur = r.body;
        back.push(cur);
        expect(back.length).toBeLessThanOrEqual(4);
      }
      expect(back.map((p) => p.results)).toEqual([
        newestFirst.slice(6, 7),
        newestFirst.slice(4, 6),
        newestFirst.slice(2, 4),
        newestFirst.slice(0, 2),
      ]);
      expect(back.map((p) => p.count)).toEqual([7, 7, 7, 7]);
      expect(back[3].previous).toBeNull();
      // a page reached backwards still links forwards
      for (const page of back.slice(1)) expect(page.next).toEqual(expect.any(String));
      const forwardAgain = await follow(key, back[3].next);
      expect(forwardAgain.body.results).toEqual(newestFirst.slice(2, 4));
    });

    it('returns everything on one page when page_size allows it', async () => {
      const res = await api('GET', `${CAMPAIGNS}?page_size=100`, { key });
      expect(res.body).toEqual({ count: 7, next: null, previous: null, results: newestFirst });
    });

    it('ends with next null when the last page is full', async () => {
      const first = await api('GET', `${CAMPAIGNS}?page_size=7`, { key });
      expect(first.body).toEqual({ count: 7, next: null, previous: null, results: newestFirst });
      const p1 = await api('GET', `${CAMPAIGNS}?page_size=1`, { key });
      let body = p1.body;
      const seen = [...body.results];
      while (body.next) {
        body = (await follow(key, body.next)).body;
        seen.push(...body.results);
        expect(seen.length).toBeLessThanOrEqual(7);
      }
      expect(seen).toEqual(newestFirst);
    });

    it.each([
      ['0', 'Ensure this value is greater than or equal to 1.'],
      ['101', 'Ensure this value is less than or equal to 100.'],
      ['x', 'A valid integer is required.'],
      ['-1', 'Ensure this value is greater than or equal to 1.'],
      ['2.5', 'A valid integer is required.'],
    ])('answers 400 for page_size=%s', async (value, message) => {
      const res = await api('GET', `${CAMPAIGNS}?page_size=${value}`, { key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ page_size: [message] });
    });

    it.each([
      ['characters outside base64url', 'garbage!!'],
      ['base64url that is not JSON', 'abc'],
      ['JSON without the cursor fields', 'eyJkIjoibiJ9'],
      ['an overlong value', 'x'.repeat(700)],
    ])('answers 400 for a cursor of %s', async (_label, cursor) => {
      const res = await api('GET', `${CAMPAIGNS}?cursor=${cursor}`, { key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ cursor: ['Invalid cursor.'] });
    });

    it("refuses another account's cursor", async () => {
      const { apiKey: otherKey } = await newAccount();
      await createCampaign(otherKey);
      await createCampaign(otherKey);
      const theirs = await api('GET', `${CAMPAIGNS}?page_size=1`, { key: otherKey });
      expect(theirs.body.next).toEqual(expect.any(String));
      const cursor = new URL(theirs.body.next).searchParams.get('cursor');
      const res = await api('GET', `${CAMPAIGNS}?page_size=1&cursor=${cursor}`, { key });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ cursor: ['Invalid cursor.'] });
    });

    it('refuses a cursor issued by another list', async () => {
      const { apiKey } = await newAccount();
      for (let i = 0; i < 2; i++) {
        const r = await api('POST', '/v1/members/', { key: apiKey, body: { identifier: `u${i}`, email: `u${i}@example.com` } });
        expect(r.status).toBe(201);
      }
      await createCampaign(apiKey);
      await createCampaign(apiKey);
      const members = await api('GET', '/v1/members/?page_size=1', { key: apiKey });
      const cursor = new URL(members.body.next).searchParams.get('cursor');
      const res = await api('GET', `${CAMPAIGNS}?cursor=${cursor}`, { key: apiKey });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ cursor: ['Invalid cursor.'] });
    });
  });
});

describe('money terms (docs/design/money.md)', () => {
  it('stores a percentage commission with its hold, approval and minimum payout, and refuses a percentage out of 0.01..100', async () => {
    const { apiKey } = await newAccount();
    const res = await api('POST', '/v1/campaigns/', {
      key: apiKey,
      body: {
        name: 'Pct',
        allows_commission: true,
        commission_type: 'percentage',
        commission_percent: '12.5',
        hold_days: 14,
        approval: 'manual',
        min_payout: '50',
      },
    });
    expect(res.status).toBe(201);
    expect(res.body).toEqual(
      campaignShape({
        name: 'Pct',
        allows_commission: true,
        commission_type: 'percentage',
        commission_percent: '12.50',
        hold_days: 14,
        approval: 'manual',
        min_payout: '50.00',
      }),
    );
    for (const [body, field, message] of [
      [{ commission_percent: '100.01' }, 'commission_percent', 'Ensure this value is less than or equal to 100.'],
      [
        { commission_percent: '0' },
        'commission_percent',
        'Ensure this value is greater than or equal to 0.01 for a percentage commission.',
      ],
      [{ commission_type: 'share' }, 'commission_type', '"share" is not a valid choice.'],
      [{ hold_days: 366 }, 'hold_days', 'Ensure this value is less than or equal to 365.'],
      [{ approval: null }, 'approval', 'This field may not be null.'],
    ] as [Record<string, unknown>, string, string][]) {
      const base: Record<string, unknown> = {
        name: `bad-${field}-${Math.random()}`,
        allows_commission: true,
        commission_type: 'percentage',
        commission_percent: '10',
      };
      const bad = await api('POST', '/v1/campaigns/', { key: apiKey, body: { ...base, ...body } });
      expect({ field, status: bad.status, body: bad.body }).toEqual({ field, status: 400, body: { [field]: [message] } });
    }
    const patched = await api('PATCH', `/v1/campaigns/${res.body.id}/`, { key: apiKey, body: { commission_percent: '200' } });
    expect(patched.status).toBe(400);
  });
});
