// Issue 23 #11, #13, #14: search on the members and referrals lists, unknown query parameters refused,
// rewards filters that combine (with exact counts), and the payout batches list.
import { DEFAULT_FRAUD_SETTINGS, FRAUD_RULES, type FraudSettings } from '../../shared/domain/fraud';
import { recordFinding } from '../../shared/flows/fraud-flags';
import { approveReward } from '../../shared/flows/lifecycle';
import { createBatch, markBatchPaid, markPayoutPaid } from '../../shared/flows/payouts';
import { getItem } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { recordDynamoCalls } from '../support/dynamo-calls';
import { loginAs } from '../support/dashboard';
import { newAccount } from '../support/fixtures';

let accountId: string;
let key: string;
let serial = 0;
const unique = (prefix: string) => `${prefix}${++serial}${Date.now().toString(36)}`;

const call = async (method: string, path: string, body?: unknown): Promise<ApiResponse> =>
  api(method, path, { key, ...(body === undefined ? {} : { body }) });
async function ok(
  method: string,
  path: string,
  body?: unknown,
  status = method === 'POST' && !path.startsWith('/v1/referrals/') ? 201 : 200,
) {
  const res = await call(method, path, body);
  if (res.status !== status) throw new Error(`${method} ${path} answered ${res.status}: ${res.text}`);
  return res.body;
}

/** Every page of a list, following `next`; also checks that every page's `count` agrees. */
async function all(path: string): Promise<{ count: number; ids: string[] }> {
  const ids: string[] = [];
  let count: number | undefined;
  let next: string | null = path;
  while (next) {
    const url: URL = new URL(next, 'https://api.test');
    const page = await ok('GET', `${url.pathname}${url.search}`);
    if (count !== undefined) expect(page.count).toBe(count);
    count = page.count;
    ids.push(...page.results.map((r: { id: string }) => r.id));
    next = page.next;
  }
  return { count: count ?? 0, ids };
}

beforeAll(async () => {
  ({ accountId, apiKey: key } = await newAccount('unlimited'));
});

describe('unknown query parameters (docs/api.md "Query parameters")', () => {
  const LISTS: [string, string][] = [
    ['/v1/members/', 'page_size, cursor, campaign, search'],
    ['/v1/referrals/', 'page_size, cursor, member, sub, search'],
    ['/v1/campaigns/', 'page_size, cursor'],
    ['/v1/subscriptions/', 'page_size, cursor, status'],
    ['/v1/rewards/', 'page_size, cursor, status, member, campaign, type'],
    ['/v1/payouts/', 'page_size, cursor, status, member, currency, batch_id'],
    ['/v1/payout-batches/', 'page_size, cursor, status'],
    ['/v1/webhook-endpoints/', 'page_size, cursor'],
    ['/v1/fraud-flags/', 'page_size, cursor, rule, status, member'],
  ];

  it.each(LISTS)('%s answers 400 naming ?email= (it used to be ignored)', async (path, accepted) => {
    const res = await call('GET', `${path}?email=a@example.com`);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { email: [`Unknown query parameter. This list takes: ${accepted}.`] },
    });
  });

  it("the specification's own parameters are all accepted: member=, campaign=, status=, and the page", async () => {
    for (const path of [
      '/v1/referrals/?member=x',
      '/v1/members/?campaign=x',
      '/v1/subscriptions/?status=trialling',
      '/v1/campaigns/?page_size=5',
      '/v1/members/?page_size=5&cursor=',
      '/v1/campaigns/?=&page_size=1',
      '/v1/referrals/?&&',
      '/v1/fraud-flags/?rule=velocity&status=open&member=x',
      '/v1/rewards/?status=held&type=commission',
    ]) {
      expect({ path, status: (await call('GET', path)).status }).toEqual({ path, status: 200 });
    }
  });

  it('the team and API key lists (whole lists, session only) take no parameter at all', async () => {
    const owner = await loginAs(accountId, 'owner');
    for (const path of ['/v1/team/', '/v1/api-keys/']) {
      expect((await api('GET', path, { headers: owner.headers })).status).toBe(200);
      const res = await api('GET', `${path}?role=owner`, { headers: owner.headers });
      expect({ path, status: res.status, body: res.body }).toEqual({
        path,
        status: 400,
        body: { role: ['Unknown query parameter. This list takes none.'] },
      });
    }
  });

  it('exports refuse an unknown parameter too', async () => {
    const res = await call('GET', '/v1/exports/members.csv?search=alice');
    expect(res.status).toBe(400);
    expect(Object.keys(res.body)).toEqual(['search']);
  });
});

describe('?search= on members', () => {
  let campaignId: string;
  let otherCampaignId: string;
  const m: Record<string, { id: string; identifier: string; email: string; code: string }> = {};

  beforeAll(async () => {
    campaignId = (await ok('POST', '/v1/campaigns/', { name: unique('Search') })).id;
    otherCampaignId = (await ok('POST', '/v1/campaigns/', { name: unique('Other') })).id;
    const tag = unique('s');
    m.ada = await ok('POST', '/v1/members/', {
      identifier: `ada-${tag}`,
      email: `Ada.${tag}@Example.com`,
      code: `ADA${tag}`.toUpperCase().slice(0, 20),
      campaign: { id: campaignId },
    });
    m.bob = await ok('POST', '/v1/members/', {
      identifier: `User-${tag}`,
      email: `bob.${tag}@example.com`,
      campaign: { id: otherCampaignId },
    });
    // Another member whose email is ada's identifier: one search finds both.
    m.cyd = await ok('POST', '/v1/members/', { identifier: `cyd-${tag}`, email: `ada-${tag}@example.org` });
    m.dee = await ok('POST', '/v1/members/', {
      identifier: `dee-${tag}`,
      email: `dee-${tag}@example.com`,
      code: `cyd-${tag}`.slice(0, 20),
    });
  });

  const search = async (term: string, extra = '') => {
    const page = await ok('GET', `/v1/members/?search=${encodeURIComponent(term)}${extra}`);
    return { count: page.count, ids: page.results.map((r: { id: string }) => r.id), next: page.next, previous: page.previous };
  };

  it('finds a member by exact email in any case, by code in any case, and by identifier', async () => {
    expect(await search(m.ada!.email.toUpperCase())).toEqual({ count: 1, ids: [m.ada!.id], next: null, previous: null });
    expect(await search(` ${m.ada!.email.toLowerCase()} `)).toMatchObject({ count: 1, ids: [m.ada!.id] });
    expect(await search(m.ada!.code.toLowerCase())).toMatchObject({ count: 1, ids: [m.ada!.id] });
    expect(await search(m.ada!.identifier)).toMatchObject({ count: 1, ids: [m.ada!.id] });
    // An identifier as stored, or typed in another case when it is stored in lower case.
    expect(await search(m.bob!.identifier)).toMatchObject({ count: 1, ids: [m.bob!.id] });
    expect(await search(m.ada!.identifier.toUpperCase())).toMatchObject({ count: 1, ids: [m.ada!.id] });
  });

  it('is exact: no substring, no prefix, nothing for an unknown term', async () => {
    expect(await search(m.ada!.email.slice(0, 6))).toEqual({ count: 0, ids: [], next: null, previous: null });
    expect(await search('nobody@example.com')).toMatchObject({ count: 0, ids: [] });
    expect(await search('%')).toMatchObject({ count: 0, ids: [] });
  });

  it('one term matching several members lists them all, newest first, and pages them with an exact count', async () => {
    // cyd's code... no: dee's code is `cyd-…`, cyd's identifier is `cyd-…`.
    const both = await search(m.cyd!.identifier);
    expect(both).toMatchObject({ count: 2, ids: [m.dee!.id, m.cyd!.id] });
    const first = await search(m.cyd!.identifier, '&page_size=1');
    expect(first).toMatchObject({ count: 2, ids: [m.dee!.id], previous: null });
    expect(first.next).toEqual(expect.stringContaining('search='));
    const url = new URL(first.next);
    const second = await ok('GET', `${url.pathname}${url.search}`);
    expect({ count: second.count, ids: second.results.map((r: { id: string }) => r.id), next: second.next }).toEqual({
      count: 2,
      ids: [m.cyd!.id],
      next: null,
    });
    expect(second.previous).toEqual(expect.any(String));
    // The cursor belongs to this search: it refuses another one.
    const other = await call(
      'GET',
      `/v1/members/?search=${encodeURIComponent(m.ada!.email)}&page_size=1&cursor=${url.searchParams.get('cursor')}`,
    );
    expect(other.status).toBe(400);
    expect(other.body).toEqual({ cursor: ['Invalid cursor.'] });
  });

  it('combines with ?campaign=', async () => {
    expect(await search(m.ada!.email, `&campaign=${campaignId}`)).toMatchObject({ count: 1, ids: [m.ada!.id] });
    expect(await search(m.ada!.email, `&campaign=${otherCampaignId}`)).toMatchObject({ count: 0, ids: [] });
    expect(await search(m.ada!.email, '&campaign=nope')).toMatchObject({ count: 0, ids: [] });
  });

  it('results are whole members (campaign nested), and cost three BatchGets, never a Query over the members', async () => {
    const recording = recordDynamoCalls();
    let page;
    try {
      page = await ok('GET', `/v1/members/?search=${encodeURIComponent(m.ada!.code)}`);
    } finally {
      recording.stop();
    }
    expect(page.results[0]).toMatchObject({ id: m.ada!.id, campaign: { id: campaignId } });
    const commands = recording.calls.map((c) => c.command).filter((c) => c !== 'UpdateItem' && c !== 'GetItem');
    expect(commands).toEqual(['BatchGetItem', 'BatchGetItem', 'BatchGetItem']);
    expect(recording.depth()).toBeLessThanOrEqual(4);
  });

  it('an empty or blank search lists everything; a search over 320 characters is a 400', async () => {
    const everything = await ok('GET', '/v1/members/?page_size=1');
    expect((await ok('GET', '/v1/members/?search=&page_size=1')).count).toBe(everything.count);
    expect((await ok('GET', '/v1/members/?search=%20%20&page_size=1')).count).toBe(everything.count);
    const long = await call('GET', `/v1/members/?search=${'a'.repeat(321)}`);
    expect({ status: long.status, body: long.body }).toEqual({
      status: 400,
      body: { search: ['Ensure this field has no more than 320 characters.'] },
    });
  });
});

describe('?search= on referrals', () => {
  it('finds the referral of one referred user, exactly; combines with ?member=', async () => {
    const tag = unique('r');
    const a = await ok('POST', '/v1/members/', { identifier: `ra-${tag}`, email: `ra-${tag}@example.com` });
    const b = await ok('POST', '/v1/members/', { identifier: `rb-${tag}`, email: `rb-${tag}@example.com` });
    const r1 = await ok('POST', '/v1/referrals/', { user_identifier: `User-${tag}`, member_code: a.code });
    await ok('POST', '/v1/referrals/', { user_identifier: `other-${tag}`, member_code: b.code });
    const search = async (q: string) => {
      const page = await ok('GET', `/v1/referrals/?${q}`);
      return { count: page.count, ids: page.results.map((r: { id: string }) => r.id) };
    };
    expect(await search(`search=${encodeURIComponent(`User-${tag}`)}`)).toEqual({ count: 1, ids: [r1.id] });
    expect(await search(`search=${encodeURIComponent(`user-${tag}`)}`)).toEqual({ count: 0, ids: [] });
    expect(await search(`search=User-`)).toEqual({ count: 0, ids: [] });
    expect(await search(`search=${encodeURIComponent(`User-${tag}`)}&member=${a.id}`)).toEqual({ count: 1, ids: [r1.id] });
    expect(await search(`search=${encodeURIComponent(`User-${tag}`)}&member=${b.id}`)).toEqual({ count: 0, ids: [] });
  });
});

describe('rewards filters combine (exact counts)', () => {
  let memberA: string;
  let memberB: string;
  let campaignX: string;
  let campaignY: string;

  /** One referral of `member` (in its campaign at the time) with rewards of the given types, recorded as the worker does. */
  async function rewards(memberCode: string, types: ('credit' | 'commission')[], approveFirst = false): Promise<string[]> {
    const ref = await ok('POST', '/v1/referrals/', { user_identifier: unique('u'), member_code: memberCode });
    const stored = toReferral(await getItem(keys.referral(accountId, ref.id)))!;
    const recorded = await recordRewards(
      accountId,
      stored,
      types.map((type, i) => ({ payment_id: 1000 + i, type, amount: 100, currency: 'USD' })),
      false,
      true,
    );
    const ids = recorded.rewards.map((r) => r.id);
    if (approveFirst) await approveReward(accountId, ids[types.indexOf('commission')]!);
    return ids;
  }

  beforeAll(async () => {
    const terms = {
      allows_commission: true,
      commission_amount: '1.00',
      allows_credit: true,
      credit_amount: '1.00',
      credit_currency: 'USD',
      hold_days: 0,
    };
    campaignX = (await ok('POST', '/v1/campaigns/', { name: unique('X'), ...terms })).id;
    campaignY = (await ok('POST', '/v1/campaigns/', { name: unique('Y'), ...terms })).id;
    const a = await ok('POST', '/v1/members/', {
      identifier: unique('a'),
      email: `${unique('a')}@example.com`,
      campaign: { id: campaignX },
      payout_email: 'a@pay.example.com',
    });
    const b = await ok('POST', '/v1/members/', {
      identifier: unique('b'),
      email: `${unique('b')}@example.com`,
      campaign: { id: campaignX },
    });
    memberA = a.id;
    memberB = b.id;
    // A in X: 2 commissions (one approved) + 1 credit; B in X: 1 commission + 2 credits.
    await rewards(a.code, ['commission', 'commission', 'credit'], true);
    await rewards(b.code, ['commission', 'credit', 'credit']);
    // A moves to Y: 1 commission + 1 credit there.
    await ok('PATCH', `/v1/members/${memberA}/`, { campaign: { id: campaignY } });
    await rewards(a.code, ['commission', 'credit']);
  });

  const CASES: [string, () => string, number][] = [
    ['member + type', () => `member=${memberA}&type=commission`, 3],
    ['member + type (credit)', () => `member=${memberA}&type=credit`, 2],
    ['campaign + type', () => `campaign=${campaignX}&type=credit`, 3],
    ['member + type + status', () => `member=${memberA}&type=commission&status=approved`, 1],
    ['campaign + type + status', () => `campaign=${campaignX}&type=commission&status=pending`, 2],
    ['member + type + status (credit)', () => `member=${memberB}&type=credit&status=pending`, 2],
    ['campaign + type (none)', () => `campaign=${campaignY}&type=credit&status=voided`, 0],
  ];

  it.each(CASES)('%s: 200 (it was a 400), results and count agree on every page', async (_label, query, expected) => {
    const res = await call('GET', `/v1/rewards/?${query()}`);
    expect(res.status).toBe(200);
    const listed = await all(`/v1/rewards/?${query()}&page_size=1`);
    expect(listed).toEqual({ count: expected, ids: expect.any(Array) });
    expect(listed.ids).toHaveLength(expected);
    // Each listed reward really matches every filter.
    const params = new URLSearchParams(query());
    for (const id of listed.ids) {
      const r = await ok('GET', `/v1/rewards/${id}/`);
      if (params.get('member')) expect(r.member_id).toBe(params.get('member'));
      if (params.get('campaign')) expect(r.campaign_id).toBe(params.get('campaign'));
      if (params.get('type')) expect(r.type).toBe(params.get('type'));
      if (params.get('status')) expect(r.status).toBe(params.get('status'));
    }
  });

  it('counts follow a status change (a void) in every combination', async () => {
    const before = (await ok('GET', `/v1/rewards/?member=${memberB}&type=commission&status=pending`)).count;
    const listed = await ok('GET', `/v1/rewards/?member=${memberB}&type=commission&status=pending`);
    await ok('POST', `/v1/rewards/${listed.results[0].id}/void/`, { reason: 'fraud' }, 200);
    expect((await ok('GET', `/v1/rewards/?member=${memberB}&type=commission&status=pending`)).count).toBe(before - 1);
    expect((await ok('GET', `/v1/rewards/?campaign=${campaignX}&type=commission&status=voided`)).count).toBe(1);
    expect((await ok('GET', `/v1/rewards/?member=${memberB}&type=commission`)).count).toBe(1);
  });

  it('held (docs/fraud.md "Holds"): counted in every combination as a hold takes commissions, a release and a void give them back', async () => {
    const campaign = (
      await ok('POST', '/v1/campaigns/', {
        name: unique('H'),
        allows_commission: true,
        commission_amount: '1.00',
        allows_credit: true,
        credit_amount: '1.00',
        credit_currency: 'USD',
        hold_days: 30,
      })
    ).id;
    const m = await ok('POST', '/v1/members/', {
      identifier: unique('h'),
      email: `${unique('h')}@example.com`,
      campaign: { id: campaign },
    });
    const ref = await ok('POST', '/v1/referrals/', { user_identifier: unique('u'), member_code: m.code });
    const stored = toReferral(await getItem(keys.referral(accountId, ref.id)))!;
    await recordRewards(
      accountId,
      stored,
      (['commission', 'commission', 'credit'] as const).map((type, i) => ({ payment_id: 2000 + i, type, amount: 100, currency: 'USD' })),
      false,
      true,
    );
    const hold = Object.fromEntries(
      FRAUD_RULES.map((rule) => [rule, { ...DEFAULT_FRAUD_SETTINGS[rule], action: 'hold' }]),
    ) as unknown as FraudSettings;
    const flag = await recordFinding(
      accountId,
      {
        rule: 'duplicate_ip',
        subject: { type: 'referral', id: ref.id },
        member_id: m.id,
        detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
        evidence: { referral_ids: [ref.id] },
        dedupe_key: `duplicate_ip#referral#${ref.id}`,
      },
      hold,
    );
    expect(flag).toMatchObject({ held_count: 2 });
    const counts = async () => {
      const out: Record<string, number> = {};
      for (const [label, query] of [
        ['member held', `member=${m.id}&status=held`],
        ['member commission held', `member=${m.id}&type=commission&status=held`],
        ['campaign held', `campaign=${campaign}&status=held`],
        ['campaign commission pending', `campaign=${campaign}&type=commission&status=pending`],
        ['member pending', `member=${m.id}&status=pending`],
        ['member voided', `member=${m.id}&status=voided`],
      ] as const) {
        const listed = await all(`/v1/rewards/?${query}&page_size=1`);
        expect({ label, ids: listed.ids.length }).toEqual({ label, ids: listed.count });
        out[label] = listed.count;
      }
      return out;
    };
    // The credit is no commission: a hold leaves it pending.
    expect(await counts()).toEqual({
      'member held': 2,
      'member commission held': 2,
      'campaign held': 2,
      'campaign commission pending': 0,
      'member pending': 1,
      'member voided': 0,
    });
    const held = await ok('GET', `/v1/rewards/?member=${m.id}&status=held`);
    await ok('POST', `/v1/rewards/${held.results[0].id}/release/`, undefined, 200);
    expect(await counts()).toEqual({
      'member held': 1,
      'member commission held': 1,
      'campaign held': 1,
      'campaign commission pending': 1,
      'member pending': 2,
      'member voided': 0,
    });
    await ok('POST', `/v1/fraud-flags/${flag?.id}/void/`, {}, 200);
    expect(await counts()).toEqual({
      'member held': 0,
      'member commission held': 0,
      'campaign held': 0,
      'campaign commission pending': 1,
      'member pending': 2,
      'member voided': 1,
    });
  });

  it('member and campaign together stay a 400 (no counter counts them; docs/data-model.md)', async () => {
    const res = await call('GET', `/v1/rewards/?member=${memberA}&campaign=${campaignX}&type=commission`);
    expect({ status: res.status, body: res.body }).toEqual({
      status: 400,
      body: { detail: 'Filter by member or by campaign, not both (each may be combined with type and status).' },
    });
  });

  it('a payout of 20 rewards from 20 referrals in three campaigns is paid in one chunk: the counters fit one transaction', async () => {
    // The most counters one paid chunk carries (docs/data-model.md): 6 filters for the first campaign and 2
    // more per other one, each moving between two statuses, beside 20 rewards, 20 referral copies and 20 events.
    const terms = { allows_commission: true, commission_amount: '1.00', hold_days: 0 };
    const campaigns = [];
    for (let i = 0; i < 3; i++) campaigns.push((await ok('POST', '/v1/campaigns/', { name: unique('Chunk'), ...terms })).id as string);
    const member = await ok('POST', '/v1/members/', {
      identifier: unique('chunk'),
      email: `${unique('chunk')}@example.com`,
      payout_email: 'chunk@pay.example.com',
    });
    let payoutId = '';
    for (let i = 0; i < 20; i++) {
      if (i % 7 === 0) await ok('PATCH', `/v1/members/${member.id}/`, { campaign: { id: campaigns[i / 7]! } });
      const ref = await ok('POST', '/v1/referrals/', { user_identifier: unique('cu'), member_code: member.code });
      const stored = toReferral(await getItem(keys.referral(accountId, ref.id)))!;
      const recorded = await recordRewards(
        accountId,
        stored,
        [{ payment_id: 1, type: 'commission', amount: 100, currency: 'USD' }],
        false,
        true,
      );
      payoutId = (await approveReward(accountId, recorded.rewards[0]!.id)).payout_id!;
    }
    const paid = await markPayoutPaid(accountId, payoutId, { reference: 'chunk' });
    expect({ status: paid.status, rewards: paid.reward_ids.length }).toEqual({ status: 'paid', rewards: 20 });
    expect((await ok('GET', `/v1/rewards/?member=${member.id}&type=commission&status=paid`)).count).toBe(20);
    for (const c of campaigns)
      expect((await ok('GET', `/v1/rewards/?campaign=${c}&type=commission&status=paid`)).count).toBe(c === campaigns[2] ? 6 : 7);
  }, 120_000);

  it('the CSV export takes the same combinations', async () => {
    const res = await call('GET', `/v1/exports/rewards.csv?member=${memberA}&type=commission`);
    expect(res.status).toBe(200);
    expect(res.headers['x-row-count']).toBe('3');
  });
});

describe('GET /v1/payout-batches/', () => {
  it('lists batches newest first with an exact count per status; a paid batch shows its date and reference', async () => {
    const { accountId: acct, apiKey } = await newAccount('unlimited');
    const get = async (path: string) => {
      const res = await api('GET', path, { key: apiKey });
      if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
      return res.body;
    };
    const post = async (path: string, body: unknown) => (await api('POST', path, { key: apiKey, body })).body;
    expect(await get('/v1/payout-batches/')).toEqual({ count: 0, next: null, previous: null, results: [] });

    const campaign = await post('/v1/campaigns/', { name: 'Pay', allows_commission: true, commission_amount: '2.00', hold_days: 0 });
    const batches: string[] = [];
    for (let i = 0; i < 3; i++) {
      const member = await post('/v1/members/', {
        identifier: `p${i}`,
        email: `p${i}@example.com`,
        campaign: { id: campaign.id },
        payout_email: `p${i}@pay.example.com`,
      });
      const ref = await post('/v1/referrals/', { user_identifier: `pu${i}`, member_code: member.code });
      const stored = toReferral(await getItem(keys.referral(acct, ref.id)))!;
      const recorded = await recordRewards(
        acct,
        stored,
        [{ payment_id: 1, type: 'commission', amount: 250 + i, currency: 'USD' }],
        false,
        true,
      );
      const approved = await approveReward(acct, recorded.rewards[0]!.id);
      batches.push((await createBatch(acct, { format: 'csv', currency: 'USD', payout_ids: [approved.payout_id!] })).id);
    }
    await markBatchPaid(acct, batches[0]!, { paidAt: 1767225600, reference: 'WISE-77' });

    const page = await get('/v1/payout-batches/?page_size=2');
    expect(page.count).toBe(3);
    expect(page.results.map((b: { id: string }) => b.id)).toEqual([batches[2], batches[1]]);
    const rest = new URL(page.next);
    const second = await get(`${rest.pathname}${rest.search}`);
    expect(second.results).toEqual([
      expect.objectContaining({
        id: batches[0],
        status: 'paid',
        paid_at: 1767225600,
        reference: 'WISE-77',
        amount: '2.50',
        payout_count: 1,
      }),
    ]);
    expect(page.results[0]).toMatchObject({
      status: 'processing',
      paid_at: null,
      reference: null,
      amount: '2.52',
      currency: 'USD',
      format: 'csv',
    });

    const paid = await get('/v1/payout-batches/?status=paid');
    expect({ count: paid.count, ids: paid.results.map((b: { id: string }) => b.id) }).toEqual({ count: 1, ids: [batches[0]] });
    const processing = await get('/v1/payout-batches/?status=processing');
    expect({ count: processing.count, ids: processing.results.map((b: { id: string }) => b.id) }).toEqual({
      count: 2,
      ids: [batches[2], batches[1]],
    });
    // GET of one batch shows the same.
    expect(await get(`/v1/payout-batches/${batches[0]}/`)).toMatchObject({ status: 'paid', paid_at: 1767225600, reference: 'WISE-77' });
    // Marking paid again changes nothing (the counters move once).
    await markBatchPaid(acct, batches[0]!, { paidAt: 1767300000, reference: 'again' });
    expect((await get('/v1/payout-batches/?status=paid')).count).toBe(1);
    expect(await get(`/v1/payout-batches/${batches[0]}/`)).toMatchObject({ paid_at: 1767225600, reference: 'WISE-77' });
    // Without a reference, the batch id is the reference (as on its payouts).
    await markBatchPaid(acct, batches[1]!, {});
    expect(await get(`/v1/payout-batches/${batches[1]}/`)).toMatchObject({
      status: 'paid',
      reference: batches[1],
      paid_at: expect.any(Number),
    });
    expect((await get('/v1/payout-batches/?status=processing')).count).toBe(1);
    const bad = await api('GET', '/v1/payout-batches/?status=open', { key: apiKey });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body)).toEqual(['status']);
  });
});

describe('GET /v1/payouts/?batch_id=', () => {
  it("lists exactly a batch's payouts, newest first and paged with an exact count; an unknown, malformed or other account's batch is an empty list; batch_id is not combined", async () => {
    const { accountId: acct, apiKey } = await newAccount('unlimited');
    const other = await newAccount('unlimited');
    const get = async (path: string, k = apiKey) => api('GET', path, { key: k });
    const post = async (path: string, body: unknown) => (await api('POST', path, { key: apiKey, body })).body;
    const campaign = await post('/v1/campaigns/', { name: 'Batched', allows_commission: true, commission_amount: '2.00', hold_days: 0 });
    const payouts: string[] = [];
    for (let i = 0; i < 3; i++) {
      const member = await post('/v1/members/', {
        identifier: `b${i}`,
        email: `b${i}@example.com`,
        campaign: { id: campaign.id },
        payout_email: `b${i}@pay.example.com`,
      });
      const ref = await post('/v1/referrals/', { user_identifier: `bu${i}`, member_code: member.code });
      const stored = toReferral(await getItem(keys.referral(acct, ref.id)))!;
      const recorded = await recordRewards(
        acct,
        stored,
        [{ payment_id: 1, type: 'commission', amount: 300 + i, currency: 'USD' }],
        false,
        true,
      );
      payouts.push((await approveReward(acct, recorded.rewards[0]!.id)).payout_id!);
    }
    const two = (await createBatch(acct, { format: 'csv', currency: 'USD', payout_ids: [payouts[0]!, payouts[2]!] })).id;
    const one = (await createBatch(acct, { format: 'csv', currency: 'USD', payout_ids: [payouts[1]!] })).id;

    // Every page (page_size=1) names the same exact count; the payout ids come newest first.
    const ids: string[] = [];
    let next: string | null = `/v1/payouts/?batch_id=${two}&page_size=1`;
    while (next) {
      const url: URL = new URL(next, 'https://api.test');
      const recording = recordDynamoCalls();
      const page = await get(`${url.pathname}${url.search}`).finally(() => recording.stop());
      expect(page.status).toBe(200);
      expect(page.body.count).toBe(2);
      expect(page.body.results).toHaveLength(1);
      expect(page.body.results[0]).toMatchObject({ batch_id: two, status: 'processing' });
      // The batch's GetItem and one BatchGet of the page's payouts (beside the key's lookup, uncached in this
      // suite, and its rate limit): no Scan, no Query.
      const commands = recording.calls.map((c) => c.command);
      expect({
        scans: commands.filter((c) => c === 'Scan' || c === 'Query'),
        batchGets: commands.filter((c) => c === 'BatchGetItem'),
      }).toEqual({
        scans: [],
        batchGets: ['BatchGetItem'],
      });
      ids.push(page.body.results[0].id);
      next = page.body.next;
    }
    expect(ids).toEqual([payouts[2], payouts[0]]);
    const single = (await get(`/v1/payouts/?batch_id=${one}`)).body;
    expect({ count: single.count, ids: single.results.map((p: { id: string }) => p.id) }).toEqual({ count: 1, ids: [payouts[1]] });

    const empty = { count: 0, next: null, previous: null, results: [] };
    for (const id of [`pb_${'0'.repeat(26)}`, 'pb_nope', 'not-a-batch', ''])
      expect({ id, body: (await get(`/v1/payouts/?batch_id=${encodeURIComponent(id)}`)).body }).toEqual({ id, body: empty });
    // Another account's key sees none of this account's batch.
    expect((await get(`/v1/payouts/?batch_id=${two}`, other.apiKey)).body).toEqual(empty);
    for (const extra of ['status=processing', `member=${payouts[0]}`, 'currency=USD']) {
      const res = await get(`/v1/payouts/?batch_id=${two}&${extra}`);
      expect({ extra, status: res.status, detail: res.body.detail }).toEqual({
        extra,
        status: 400,
        detail: 'Filter by batch_id alone (it is not combined with status, member or currency).',
      });
    }
  });
});
