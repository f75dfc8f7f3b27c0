// The fraud review queue (docs/fraud.md "Flags") through the real handlers and DynamoDB Local, with findings
// built by hand (the rules and the screening are test/integration/fraud-screen.test.ts's): a finding recorded
// once on its subject and in the queue, the list's filters with exact counts and cursors, a flag's
// resolutions (release, void, review; again; another final status), and 404 for malformed or other
// accounts' ids.
import { randomBytes } from 'node:crypto';
import { DEFAULT_FRAUD_SETTINGS, type FraudFinding, type FraudRule } from '../../shared/domain/fraud';
import { eventId } from '../../shared/domain/events';
import { flagItems, newFraudFlagId, recordFinding } from '../../shared/flows/fraud-flags';
import { getItem, transact } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { fraudKeys, keys } from '../../shared/store/table';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';

interface Tenant {
  accountId: string;
  key: string;
}

const run = randomBytes(3).toString('hex');
let serial = 0;

async function tenant(): Promise<Tenant> {
  const { accountId, apiKey } = await newAccount();
  return { accountId, key: apiKey };
}

const call = (t: Tenant, method: string, path: string, body?: unknown) =>
  api(method, path, { key: t.key, ...(body === undefined ? {} : { body }) });

async function member(t: Tenant): Promise<{ id: string; code: string }> {
  const n = `${run}-${++serial}`;
  const res = await call(t, 'POST', '/v1/members/', { identifier: `m-${n}`, email: `m-${n}@example.com` });
  expect(res.status).toBe(201);
  return res.body;
}

async function referral(t: Tenant, code: string): Promise<{ id: string; member_id: string }> {
  const res = await call(t, 'POST', '/v1/referrals/', { user_identifier: `u-${run}-${++serial}`, member_code: code });
  expect(res.status).toBe(200);
  return res.body;
}

const referralFinding = (rule: FraudRule, r: { id: string; member_id: string }, detail = `${rule} about ${r.id}`): FraudFinding => ({
  rule,
  subject: { type: 'referral', id: r.id },
  member_id: r.member_id,
  detail,
  evidence: { referral_ids: [r.id], figures: { referrals: 4 } },
  dedupe_key: `${rule}#referral#${r.id}`,
});

const memberFinding = (rule: FraudRule, memberId: string, day = '2026-01-01'): FraudFinding => ({
  rule,
  subject: { type: 'member', id: memberId },
  member_id: memberId,
  detail: `${rule} about the member`,
  evidence: { figures: { clicks: 1200, conversions: 1 } },
  dedupe_key: `${rule}#member#${memberId}#${day}`,
});

/** Every flag flagged as `flag` (no rewards are held here). */
const FLAG_ALL = Object.fromEntries(
  Object.entries(DEFAULT_FRAUD_SETTINGS).map(([rule, s]) => [rule, { ...s, action: 'flag' }]),
) as unknown as typeof DEFAULT_FRAUD_SETTINGS;

/** Every page of a list, following `next`; answers the ids and the count each page said. */
async function walk(t: Tenant, query: string, pageSize = 2): Promise<{ ids: string[]; counts: number[] }> {
  const ids: string[] = [];
  const counts: number[] = [];
  let path: string | null = `/v1/fraud-flags/?page_size=${pageSize}${query ? `&${query}` : ''}`;
  while (path) {
    const res = await call(t, 'GET', path);
    expect(res.status).toBe(200);
    ids.push(...res.body.results.map((f: { id: string }) => f.id));
    counts.push(res.body.count);
    path = res.body.next ? new URL(res.body.next).pathname + new URL(res.body.next).search : null;
  }
  return { ids, counts };
}

describe('a finding recorded', () => {
  it('is a flag in the queue, on its subject and in the outbox once; a repeat records nothing', async () => {
    const t = await tenant();
    const m = await member(t);
    const r = await referral(t, m.code);
    const finding = referralFinding('duplicate_ip', r, '4 referrals from one network in 2 hours (more than 3 in 24 hours).');
    const flag = await recordFinding(t.accountId, finding, FLAG_ALL);
    expect(flag).toEqual({
      id: expect.stringMatching(/^ff_[0-9a-f]{32}$/),
      rule: 'duplicate_ip',
      action: 'flag',
      status: 'open',
      subject_type: 'referral',
      subject_id: r.id,
      member_id: m.id,
      detail: '4 referrals from one network in 2 hours (more than 3 in 24 hours).',
      evidence: { referral_ids: [r.id], figures: { referrals: 4 } },
      held_reward_ids: [],
      held_count: 0,
      created_at: expect.any(Number),
      resolved_at: null,
      note: null,
    });
    const id = flag?.id as string;

    const got = await call(t, 'GET', `/v1/fraud-flags/${id}/`);
    expect(got.status).toBe(200);
    expect(got.body).toEqual(flag);
    const listed = await call(t, 'GET', '/v1/fraud-flags/');
    expect(listed.body).toMatchObject({ count: 1, next: null, previous: null, results: [flag] });
    const onReferral = (await call(t, 'GET', `/v1/referrals/${r.id}/`)).body;
    expect(onReferral.fraud_flags).toEqual([{ rule: 'duplicate_ip', at: flag?.created_at, detail: flag?.detail }]);
    const event = await getItem(keys.event(t.accountId, eventId('fraud.flagged', id)));
    expect(JSON.parse(String(event?.payload))).toMatchObject({ type: 'fraud.flagged', data: flag });
    expect(await getItem(fraudKeys.flagClaim(t.accountId, finding.dedupe_key))).toMatchObject({ flag_id: id });

    // The same finding again (a redelivered screening): nothing new anywhere.
    expect(await recordFinding(t.accountId, finding, FLAG_ALL)).toBeNull();
    expect((await call(t, 'GET', '/v1/fraud-flags/')).body.count).toBe(1);
    expect((await call(t, 'GET', `/v1/referrals/${r.id}/`)).body.fraud_flags).toHaveLength(1);

    // A member-level finding goes on the member; a rule that is off records nothing.
    const mf = await recordFinding(t.accountId, memberFinding('click_spam', m.id), FLAG_ALL);
    expect(mf).toMatchObject({ subject_type: 'member', subject_id: m.id, member_id: m.id, action: 'flag' });
    expect((await call(t, 'GET', `/v1/members/${m.id}/`)).body.fraud_flags).toEqual([
      { rule: 'click_spam', at: mf?.created_at, detail: 'click_spam about the member' },
    ]);
    const off = { ...FLAG_ALL, velocity: { ...FLAG_ALL.velocity, action: 'off' as const } };
    expect(await recordFinding(t.accountId, memberFinding('velocity', m.id), off)).toBeNull();
    expect((await call(t, 'GET', '/v1/fraud-flags/')).body.count).toBe(2);
  });

  it('about a subject that is gone records nothing', async () => {
    const t = await tenant();
    const ghost = { id: '0190a3c1e2f37b4c8d9e0f1a2b3c4d5e', member_id: '0190a3c1e2f37b4c8d9e0f1a2b3c4d5f' };
    expect(await recordFinding(t.accountId, referralFinding('disposable_email', ghost), FLAG_ALL)).toBeNull();
    expect((await call(t, 'GET', '/v1/fraud-flags/')).body).toMatchObject({ count: 0, results: [] });
  });
});

describe('the list', () => {
  it('filters by rule, status and member in any combination, newest first, with exact counts and cursors', async () => {
    const t = await tenant();
    const [a, b] = [await member(t), await member(t)];
    const made: { id: string; rule: string; member: string; status: string }[] = [];
    const add = async (rule: FraudRule, m: { id: string; code: string }) => {
      const r = await referral(t, m.code);
      const f = await recordFinding(t.accountId, referralFinding(rule, r), FLAG_ALL);
      made.unshift({ id: f?.id as string, rule, member: m.id, status: 'open' });
    };
    await add('duplicate_ip', a);
    await add('disposable_email', a);
    await add('duplicate_ip', b);
    await add('duplicate_ip', a);
    await add('disposable_email', b);
    // Two resolved: one reviewed, one voided (nothing held: only the status moves).
    const reviewed = made[1] as (typeof made)[number];
    const voided = made[3] as (typeof made)[number];
    expect((await call(t, 'POST', `/v1/fraud-flags/${reviewed.id}/review/`, {})).status).toBe(200);
    expect((await call(t, 'POST', `/v1/fraud-flags/${voided.id}/void/`, { note: 'checked' })).status).toBe(200);
    reviewed.status = 'reviewed';
    voided.status = 'voided';

    const filters: Record<string, string | undefined>[] = [];
    for (const rule of [undefined, 'duplicate_ip', 'disposable_email'])
      for (const status of [undefined, 'open', 'reviewed', 'voided', 'released'])
        for (const m of [undefined, a.id, b.id]) filters.push({ rule, status, member: m });
    for (const f of filters) {
      const expected = made
        .filter((x) => (!f.rule || x.rule === f.rule) && (!f.status || x.status === f.status) && (!f.member || x.member === f.member))
        .map((x) => x.id);
      const query = Object.entries(f)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${k}=${v}`)
        .join('&');
      const { ids, counts } = await walk(t, query);
      expect({ query, ids }).toEqual({ query, ids: expected });
      for (const c of counts) expect({ query, count: c }).toEqual({ query, count: expected.length });
    }
    // Newest first: ids are time-ordered.
    expect(made.map((x) => x.id)).toEqual([...made.map((x) => x.id)].sort().reverse());
  });

  it('answers 400 for a bad filter and an empty page for a malformed or unknown member', async () => {
    const t = await tenant();
    for (const q of ['rule=nope', 'status=closed', 'page_size=0', 'cursor=%%%']) {
      const res = await call(t, 'GET', `/v1/fraud-flags/?${q}`);
      expect({ q, status: res.status }).toEqual({ q, status: 400 });
    }
    for (const m of ['nope', '0190a3c1e2f37b4c8d9e0f1a2b3c4d5e']) {
      const res = await call(t, 'GET', `/v1/fraud-flags/?member=${m}`);
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ count: 0, results: [] });
    }
  });
});

describe('a resolution', () => {
  it('moves an open flag once: the same again answers it as it is, another final status 409', async () => {
    const t = await tenant();
    const m = await member(t);
    const flags = [];
    for (let i = 0; i < 3; i++)
      flags.push(await recordFinding(t.accountId, referralFinding('duplicate_ip', await referral(t, m.code)), FLAG_ALL));
    const [f1, f2, f3] = flags.map((f) => f?.id as string);

    const released = await call(t, 'POST', `/v1/fraud-flags/${f1}/release/`, { note: 'Same office network.' });
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ id: f1, status: 'released', note: 'Same office network.', resolved_at: expect.any(Number) });
    const again = await call(t, 'POST', `/v1/fraud-flags/${f1}/release/`, {});
    expect(again.status).toBe(200);
    expect(again.body).toEqual(released.body);
    for (const verb of ['void', 'review']) {
      const res = await call(t, 'POST', `/v1/fraud-flags/${f1}/${verb}/`, {});
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/released already/);
    }

    expect((await call(t, 'POST', `/v1/fraud-flags/${f2}/void/`)).body).toMatchObject({ status: 'voided', note: null });
    expect((await call(t, 'POST', `/v1/fraud-flags/${f3}/review/`, { note: null })).body).toMatchObject({ status: 'reviewed' });
    expect((await call(t, 'POST', `/v1/fraud-flags/${f3}/release/`, {})).status).toBe(409);

    // Two racing reviews of one open flag: both answer the reviewed flag, counted once.
    const f4 = (await recordFinding(t.accountId, referralFinding('disposable_email', await referral(t, m.code)), FLAG_ALL))?.id;
    const raced = await Promise.all([1, 2].map(() => call(t, 'POST', `/v1/fraud-flags/${f4}/review/`, {})));
    expect(raced.map((r) => [r.status, r.body.status])).toEqual([
      [200, 'reviewed'],
      [200, 'reviewed'],
    ]);
    const counts = async (q: string) => (await call(t, 'GET', `/v1/fraud-flags/?${q}`)).body.count;
    expect([
      await counts(''),
      await counts('status=open'),
      await counts('status=reviewed'),
      await counts(`status=reviewed&member=${m.id}`),
    ]).toEqual([4, 0, 2, 2]);
    expect(await counts('status=released&rule=duplicate_ip')).toBe(1);
  });

  it("refuses a bad body (400) and answers 404 for malformed, unknown and other accounts' ids", async () => {
    const t = await tenant();
    const other = await tenant();
    const m = await member(t);
    const flag = await recordFinding(t.accountId, referralFinding('duplicate_ip', await referral(t, m.code)), FLAG_ALL);
    const id = flag?.id as string;
    expect((await call(t, 'POST', `/v1/fraud-flags/${id}/release/`, { note: ['x'] })).status).toBe(400);
    expect((await call(t, 'POST', `/v1/fraud-flags/${id}/release/`, { note: 'x'.repeat(501) })).status).toBe(400);
    expect(
      (await api('POST', `/v1/fraud-flags/${id}/release/`, { key: t.key, rawBody: '{', headers: { 'content-type': 'application/json' } }))
        .status,
    ).toBe(400);
    for (const bad of ['nope', 'ff_123', `ff_${'0'.repeat(32)}`, id.toUpperCase()]) {
      expect((await call(t, 'GET', `/v1/fraud-flags/${bad}/`)).status).toBe(404);
      expect((await call(t, 'POST', `/v1/fraud-flags/${bad}/void/`, {})).status).toBe(404);
    }
    expect((await call(other, 'GET', `/v1/fraud-flags/${id}/`)).status).toBe(404);
    for (const verb of ['release', 'void', 'review'])
      expect((await call(other, 'POST', `/v1/fraud-flags/${id}/${verb}/`, {})).status).toBe(404);
    expect((await call(other, 'GET', '/v1/fraud-flags/')).body.count).toBe(0);
    // Untouched by all that.
    expect((await call(t, 'GET', `/v1/fraud-flags/${id}/`)).body).toEqual(flag);
  });
});

describe('a hold', () => {
  it("holds the referral's commission; a repeat after the process died before holding finishes the hold, once", async () => {
    const t = await tenant();
    const c = await call(t, 'POST', '/v1/campaigns/', {
      name: `holds-${run}`,
      allows_commission: true,
      commission_amount: '1.00',
      commission_currency: 'USD',
    });
    expect(c.status).toBe(201);
    const n = `${run}-${++serial}`;
    const m = (await call(t, 'POST', '/v1/members/', { identifier: `m-${n}`, email: `m-${n}@example.com`, campaign: { id: c.body.id } }))
      .body;
    const r = await referral(t, m.code);
    const stored = toReferral(await getItem(keys.referral(t.accountId, r.id)));
    await recordRewards(
      t.accountId,
      stored as NonNullable<typeof stored>,
      [{ payment_id: 1, type: 'commission', amount: 400, currency: 'USD' }],
      false,
      true,
    );
    const rewardId = (await call(t, 'GET', `/v1/referrals/${r.id}/`)).body.rewards[0].id as string;
    const HOLD = { ...FLAG_ALL, duplicate_ip: { ...FLAG_ALL.duplicate_ip, action: 'hold' as const } };

    // The flag's transaction committed, then the process died before holding (as recordFinding writes it).
    const finding = referralFinding('duplicate_ip', r);
    const flagId = newFraudFlagId();
    await transact(flagItems(t.accountId, finding, 'hold', flagId, Math.floor(Date.now() / 1000)));
    expect((await call(t, 'GET', `/v1/rewards/${rewardId}/`)).body.status).toBe('pending');

    // The screening again: nothing new is recorded, and the hold is finished.
    expect(await recordFinding(t.accountId, finding, HOLD)).toBeNull();
    expect((await call(t, 'GET', `/v1/rewards/${rewardId}/`)).body).toMatchObject({ status: 'held', held_by: flagId });
    expect((await call(t, 'GET', `/v1/fraud-flags/${flagId}/`)).body).toMatchObject({ held_reward_ids: [rewardId], held_count: 1 });
    expect(await recordFinding(t.accountId, finding, HOLD)).toBeNull();
    expect((await call(t, 'GET', `/v1/fraud-flags/${flagId}/`)).body).toMatchObject({ held_reward_ids: [rewardId], held_count: 1 });
    expect((await call(t, 'GET', '/v1/fraud-flags/')).body.count).toBe(1);
    expect((await call(t, 'GET', `/v1/members/${m.id}/`)).body.stats).toMatchObject({
      commission_held: '4.00',
      commission_pending: '0.00',
    });

    // Review is refused while it holds; void voids the commission as fraud and ends the hold.
    expect((await call(t, 'POST', `/v1/fraud-flags/${flagId}/review/`, {})).status).toBe(409);
    expect((await call(t, 'POST', `/v1/fraud-flags/${flagId}/void/`, {})).body).toMatchObject({ status: 'voided', held_count: 0 });
    expect((await call(t, 'GET', `/v1/rewards/${rewardId}/`)).body).toMatchObject({ status: 'voided', void_reason: 'fraud' });
    expect((await call(t, 'GET', `/v1/members/${m.id}/`)).body.stats).toMatchObject({ commission_held: '0.00' });

    // A hold recorded in one go: the flag's transaction sets the referral's fraud_hold, removed by its release.
    const r2 = await referral(t, m.code);
    const flag2 = await recordFinding(t.accountId, referralFinding('disposable_email', r2), {
      ...FLAG_ALL,
      disposable_email: { action: 'hold' },
    });
    expect(flag2).toMatchObject({ action: 'hold', held_count: 0 });
    expect((await getItem(keys.referral(t.accountId, r2.id)))?.fraud_hold).toBe(flag2?.id);
    expect((await call(t, 'POST', `/v1/fraud-flags/${flag2?.id}/release/`, {})).body).toMatchObject({ status: 'released' });
    expect((await getItem(keys.referral(t.accountId, r2.id)))?.fraud_hold).toBeUndefined();
  });
});
