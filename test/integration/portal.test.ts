// The member portal through the real handlers (docs/portal.md): portal
// links (single use, 10 minutes, the token in the fragment), portal sessions (60 minutes, expiry checked on
// every read, revocable), the /portal/v1/ API scoped to its member (masked referred users, rewards with the
// credit's standing, payouts, the member's two settings), the per-session rate limit, the portal page's
// frame-ancestors from the account's embed origins, and the widget script. The browser side (framing,
// postMessage, refresh without reload) is test/e2e/portal.test.ts.
import { ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { LINK_REFUSED, PORTAL_ONLY, PORTAL_REQUESTS_PER_MINUTE, PORTAL_SESSION_ENDED } from '../../shared/domain/portal';
import { tokenHash } from '../../shared/domain/team';
import { approveReward } from '../../shared/flows/lifecycle';
import { db, tableName } from '../../shared/store/client';
import { verificationClient, closeVerificationClient } from '../support/dynamo-calls';
import { getItem, nowSeconds } from '../../shared/store/ops';
import { portalKeys } from '../../shared/store/portal';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { newAccount } from '../support/fixtures';
import { useOwnTable } from '../support/own-table';

// This file Scans the table to check what requests wrote: a table of its own keeps those Scans small.
beforeAll(useOwnTable);

const BASE = 'https://api.test';

afterAll(() => closeVerificationClient());
const NOT_FOUND = { detail: 'Not found.' };
let seq = 0;
const unique = (p: string) => `${p}-${++seq}-${Date.now().toString(36)}`;

type Tenant = { accountId: string; apiKey: string };

async function member(t: Tenant, extra: Record<string, unknown> = {}): Promise<any> {
  const who = unique('m');
  const res = await api('POST', '/v1/members/', {
    key: t.apiKey,
    body: { identifier: who, email: `${who}@example.com`, first_name: 'Alice', ...extra },
  });
  expect(res.status).toBe(201);
  return res.body;
}

/** POST /v1/members/{id}/portal-sessions/ that must succeed: the link's token from the URL fragment. */
async function portalLink(
  t: Tenant,
  memberId: string,
  body: unknown = {},
): Promise<{ id: string; url: string; token: string; expires_at: number }> {
  const res = await api('POST', `/v1/members/${memberId}/portal-sessions/`, { key: t.apiKey, body });
  expect(res.status).toBe(201);
  const token = new URL(res.body.url).hash.replace(/^#token=/, '');
  return { ...res.body, token };
}

async function open(token: string, sourceIp?: string): Promise<ApiResponse> {
  return api('POST', '/portal/v1/sessions/', { body: { token }, ...(sourceIp ? { sourceIp } : {}) });
}

/** A portal session token for the member. */
async function portalSession(t: Tenant, memberId: string): Promise<string> {
  const res = await open((await portalLink(t, memberId)).token);
  expect(res.status).toBe(201);
  return res.body.token as string;
}

const portal = (method: string, path: string, token: string | null, body?: unknown) =>
  api(method, path, { key: token, ...(body !== undefined ? { body } : {}) });

describe('portal links', () => {
  it('answers 201 with a single-use URL of the portal page (token in the fragment, 10 minutes) for a member of the account', async () => {
    const t = await newAccount();
    const m = await member(t);
    const before = nowSeconds();
    const link = await portalLink(t, m.id, { return_url: 'https://app.example.com/settings' });
    expect(link.id).toMatch(/^ps_[0-9a-f]{24}$/);
    expect(link.url).toMatch(new RegExp(`^${BASE}/portal/${t.accountId}/#token=rpl_[A-Za-z0-9_-]{43}$`));
    expect(link.expires_at).toBeGreaterThanOrEqual(before + 600);
    expect(link.expires_at).toBeLessThanOrEqual(nowSeconds() + 600);
    // Only the digest is stored; the item carries the return URL.
    const item = await getItem(portalKeys.link(tokenHash(link.token)));
    expect(item).toMatchObject({
      type: 'PortalLink',
      account_id: t.accountId,
      member_id: m.id,
      return_url: 'https://app.example.com/settings',
      expires_at: link.expires_at,
    });
    expect(JSON.stringify(item)).not.toContain(link.token);
  });

  it("404 for an unknown member and for another account's member; 400 for a return_url that is not http(s)", async () => {
    const [a, b] = await Promise.all([newAccount(), newAccount()]);
    const other = await member(b);
    expect([
      (await api('POST', `/v1/members/${other.id}/portal-sessions/`, { key: a.apiKey, body: {} })).status,
      (await api('POST', `/v1/members/${other.id}/portal-sessions/`, { key: a.apiKey, body: {} })).body,
    ]).toEqual([404, NOT_FOUND]);
    expect((await api('POST', '/v1/members/0190a1b2c3d47e5f8a6b1c2d3e4f5a6b/portal-sessions/', { key: a.apiKey, body: {} })).status).toBe(
      404,
    );
    const m = await member(a);
    for (const bad of ['javascript:alert(1)', 'not a url', 42, 'ftp://example.com/']) {
      const res = await api('POST', `/v1/members/${m.id}/portal-sessions/`, { key: a.apiKey, body: { return_url: bad } });
      expect({ bad, status: res.status, field: Object.keys(res.body ?? {}) }).toEqual({ bad, status: 400, field: ['return_url'] });
    }
    // No body at all is fine (return_url is optional).
    expect((await api('POST', `/v1/members/${m.id}/portal-sessions/`, { key: a.apiKey })).status).toBe(201);
  });

  it('an Idempotency-Key replay answers the same id with url null: the token is shown once and never stored', async () => {
    const t = await newAccount();
    const m = await member(t);
    const headers = { 'idempotency-key': unique('portal') };
    const first = await api('POST', `/v1/members/${m.id}/portal-sessions/`, { key: t.apiKey, body: {}, headers });
    const again = await api('POST', `/v1/members/${m.id}/portal-sessions/`, { key: t.apiKey, body: {}, headers });
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual({ ...first.body, url: null });
  });
});

describe('portal sessions', () => {
  it('a link opens one 60-minute session; a second opening of it is refused', async () => {
    const t = await newAccount();
    const m = await member(t);
    const link = await portalLink(t, m.id);
    const opened = await open(link.token);
    expect(opened.status).toBe(201);
    expect(opened.headers['cache-control']).toBe('no-store');
    expect(opened.body.token).toMatch(/^rps_[A-Za-z0-9_-]{43}$/);
    expect(opened.body.expires_at).toBeGreaterThanOrEqual(nowSeconds() + 3600 - 5);
    expect(await open(link.token)).toMatchObject({ status: 401, body: { detail: LINK_REFUSED } });
    // The session item holds the digest, not the token; the link is gone.
    expect(await getItem(portalKeys.link(tokenHash(link.token)))).toBeUndefined();
    expect(await getItem(portalKeys.session(tokenHash(opened.body.token)))).toMatchObject({
      type: 'PortalSession',
      account_id: t.accountId,
      member_id: m.id,
      id: link.id,
    });
  });

  it('refuses an expired link (TTL deletion is lazy: the expiry is checked), an unknown one and malformed ones', async () => {
    const t = await newAccount();
    const m = await member(t);
    const link = await portalLink(t, m.id);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: portalKeys.link(tokenHash(link.token)),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': nowSeconds() - 1 },
      }),
    );
    expect(await open(link.token)).toMatchObject({ status: 401, body: { detail: LINK_REFUSED } });
    expect(await open(`rpl_${'A'.repeat(43)}`)).toMatchObject({ status: 401, body: { detail: LINK_REFUSED } });
    for (const bad of ['', 'rps_x', `rfl_live_${'a'.repeat(40)}`, 'x'.repeat(101)]) {
      const res = await open(bad);
      expect({ bad: bad.slice(0, 12), status: res.status }).toEqual({
        bad: bad.slice(0, 12),
        status: bad.length > 100 || bad === '' ? 400 : 401,
      });
    }
    expect((await api('POST', '/portal/v1/sessions/', { body: {} })).status).toBe(400);
  });

  it('a session ends at its expiry although its item is still there, and a revoked session stops at once', async () => {
    const t = await newAccount();
    const m = await member(t);
    const token = await portalSession(t, m.id);
    expect((await portal('GET', '/portal/v1/me/', token)).status).toBe(200);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: portalKeys.session(tokenHash(token)),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': nowSeconds() - 1 },
      }),
    );
    expect(await portal('GET', '/portal/v1/me/', token)).toMatchObject({ status: 401, body: { detail: PORTAL_SESSION_ENDED } });
    expect(await getItem(portalKeys.session(tokenHash(token)))).toBeDefined();

    const live = await portalSession(t, m.id);
    const unopened = await portalLink(t, m.id);
    expect((await portal('GET', '/portal/v1/me/', live)).status).toBe(200);
    const revoked = await api('DELETE', `/v1/members/${m.id}/portal-sessions/`, { key: t.apiKey });
    expect(revoked.status).toBe(204);
    expect(await portal('GET', '/portal/v1/me/', live)).toMatchObject({ status: 401, body: { detail: PORTAL_SESSION_ENDED } });
    expect(await open(unopened.token)).toMatchObject({ status: 401, body: { detail: LINK_REFUSED } });
    // Revoking again is 204 (nothing left); another account's member is 404.
    expect((await api('DELETE', `/v1/members/${m.id}/portal-sessions/`, { key: t.apiKey })).status).toBe(204);
    const other = await newAccount();
    expect(await api('DELETE', `/v1/members/${m.id}/portal-sessions/`, { key: other.apiKey })).toMatchObject({
      status: 404,
      body: NOT_FOUND,
    });
  });

  it("a member deleted since the session opened ends it: 401, never another member's data", async () => {
    const t = await newAccount();
    const m = await member(t);
    const token = await portalSession(t, m.id);
    expect((await api('DELETE', `/v1/members/${m.id}/`, { key: t.apiKey })).status).toBe(204);
    expect(await portal('GET', '/portal/v1/me/', token)).toMatchObject({ status: 401, body: { detail: PORTAL_SESSION_ENDED } });
    expect(await portal('PATCH', '/portal/v1/me/', token, { email_opt_out: true })).toMatchObject({
      status: 401,
      body: { detail: PORTAL_SESSION_ENDED },
    });
    expect((await portal('GET', '/portal/v1/referrals/', token)).body).toMatchObject({ count: 0, results: [] });
  });

  it('a portal token opens nothing under /v1/, and an API key, a publishable key or nothing opens nothing under /portal/v1/', async () => {
    const t = await newAccount();
    const m = await member(t);
    const token = await portalSession(t, m.id);
    for (const path of ['/v1/members/', `/v1/members/${m.id}/`, '/v1/account/'])
      expect({ path, status: (await api('GET', path, { key: token })).status }).toEqual({ path, status: 401 });
    for (const path of ['/portal/v1/me/', '/portal/v1/referrals/', '/portal/v1/rewards/', '/portal/v1/payouts/', '/portal/v1/stats/']) {
      expect({ path, res: await portal('GET', path, t.apiKey).then((r) => [r.status, r.body]) }).toEqual({
        path,
        res: [401, { detail: PORTAL_ONLY }],
      });
      expect({ path, status: (await portal('GET', path, (t as { publishableKey?: string }).publishableKey ?? null)).status }).toEqual({
        path,
        status: 401,
      });
      expect({ path, status: (await portal('GET', path, null)).status }).toEqual({ path, status: 401 });
      expect({ path, status: (await api('GET', path, { headers: { authorization: `Token ${token}` } })).status }).toEqual({
        path,
        status: 401,
      });
    }
    expect((await portal('PATCH', '/portal/v1/me/', t.apiKey, { email_opt_out: true })).status).toBe(401);
  });

  it("rate limits each session (429 with Retry-After past the limit), not the member's other sessions", async () => {
    const t = await newAccount();
    const m = await member(t);
    const [busy, calm] = [await portalSession(t, m.id), await portalSession(t, m.id)];
    let refused: ApiResponse | null = null;
    // Windows are fixed minutes: a run that crosses a minute's end starts counting again, and meets the
    // limit within the next window (hence up to twice the limit).
    for (let i = 0; i <= 2 * PORTAL_REQUESTS_PER_MINUTE + 5 && !refused; i++) {
      const res = await portal('GET', '/portal/v1/payouts/', busy);
      if (res.status === 429) refused = res;
      else expect(res.status).toBe(200);
    }
    expect(refused).not.toBeNull();
    expect(Number(refused?.headers['retry-after'])).toBeGreaterThan(0);
    expect((await portal('GET', '/portal/v1/payouts/', calm)).status).toBe(200);
  });
});

describe('the portal API', () => {
  async function programme() {
    const t = await newAccount();
    const campaign = await api('POST', '/v1/campaigns/', {
      key: t.apiKey,
      body: {
        name: unique('Partners'),
        allows_commission: true,
        commission_type: 'percentage',
        commission_percent: '20.00',
        commission_months: 12,
        commission_currency: 'USD',
        hold_days: 0,
        min_payout: '0.00',
      },
    });
    expect(campaign.status).toBe(201);
    const m = await member(t, { campaign: { id: campaign.body.id } });
    const otherMember = await member(t, { campaign: { id: campaign.body.id } });
    return { t, campaign: campaign.body, m, otherMember };
  }

  it('GET me: the member, their link once the account sets its referral_url, the terms in words, totals and the session', async () => {
    const { t, m } = await programme();
    const token = await portalSession(t, m.id);
    const me = await portal('GET', '/portal/v1/me/', token);
    expect(me.status).toBe(200);
    expect(me.headers['cache-control']).toBe('no-store');
    expect(me.body.member).toMatchObject({
      first_name: 'Alice',
      email: m.email,
      code: m.code,
      link: null,
      email_opt_out: false,
      payout_email: null,
      has_subscription: false,
    });
    expect(me.body.campaign).toMatchObject({
      reward_type: 'commission',
      reward_percent: '20.00',
      reward_amount: null,
      currency: 'USD',
      commission_months: 12,
    });
    expect(me.body.campaign.description).toBe(
      'Earn 20% of what they pay for every payment of each customer you refer, for their first 12 months.',
    );
    expect(me.body.stats).toMatchObject({ link_clicks: 0, referrals: 0, conversions: 0, currency: 'USD' });
    expect(me.body.session.expires_at).toBeGreaterThan(nowSeconds());
    expect(JSON.stringify(me.body)).not.toContain(m.id);

    const set = await api('PATCH', '/v1/account/', { key: t.apiKey, body: { referral_url: 'https://acme.example/pricing?plan=pro' } });
    expect(set).toMatchObject({ status: 200, body: { referral_url: 'https://acme.example/pricing?plan=pro' } });
    expect((await portal('GET', '/portal/v1/me/', token)).body.member.link).toBe(`https://acme.example/pricing?plan=pro&via=${m.code}`);
    expect((await api('PATCH', '/v1/account/', { key: t.apiKey, body: { referral_url: 'javascript:alert(1)' } })).status).toBe(400);
  });

  it("referrals: only the member's own, newest first, the referred users masked, paged with cursors", async () => {
    const { t, m, otherMember } = await programme();
    const emails = ['jane.doe@example.com', 'bob@mail.example.org', 'user_1234567'];
    for (const user of emails)
      expect((await api('POST', '/v1/referrals/', { key: t.apiKey, body: { user_identifier: user, member_code: m.code } })).status).toBe(
        200,
      );
    expect(
      (
        await api('POST', '/v1/referrals/', {
          key: t.apiKey,
          body: { user_identifier: 'someone@else.example', member_code: otherMember.code },
        })
      ).status,
    ).toBe(200);
    const token = await portalSession(t, m.id);
    const first = await portal('GET', '/portal/v1/referrals/?page_size=2', token);
    expect(first.status).toBe(200);
    expect(first.body.count).toBe(3);
    expect(first.body.results.map((r: any) => r.user)).toEqual(['us***67', 'b***@m***.org']);
    expect(first.body.results[0]).toMatchObject({ status: 'signed_up', converted_at: null, earned: '0.00' });
    const next = await portal('GET', first.body.next.replace(BASE, ''), token);
    expect(next.body.results.map((r: any) => r.user)).toEqual(['j***@e***.com']);
    expect(JSON.stringify([first.body, next.body])).not.toMatch(/jane|doe@|bob@|someone/);
    // The other member's session sees only theirs.
    const theirs = await portal('GET', '/portal/v1/referrals/', await portalSession(t, otherMember.id));
    expect(theirs.body.results.map((r: any) => r.user)).toEqual(['s***@e***.example']);
    expect((await portal('GET', '/portal/v1/referrals/?page_size=0', token)).status).toBe(400);
  });

  it("rewards with their status (and a credit's standing at the provider) and payouts, only the member's own", async () => {
    const { t, m, otherMember } = await programme();
    const referral = await api('POST', '/v1/referrals/', { key: t.apiKey, body: { user_identifier: unique('u'), member_code: m.code } });
    const stored = toReferral(await getItem(keys.referral(t.accountId, referral.body.id)));
    if (!stored) throw new Error('fixture referral missing');
    const [commission] = (
      await recordRewards(
        t.accountId,
        stored,
        [{ payment_id: Date.now() * 100 + ++seq, type: 'commission', amount: 400, currency: 'USD' }],
        false,
        true,
      )
    ).rewards;
    const again = toReferral(await getItem(keys.referral(t.accountId, referral.body.id)));
    const credit = (
      await recordRewards(
        t.accountId,
        again!,
        [{ payment_id: Date.now() * 100 + ++seq, type: 'credit', amount: 1000, currency: 'USD' }],
        false,
        true,
      )
    ).rewards.at(-1);
    await api('PATCH', `/v1/members/${m.id}/`, { key: t.apiKey, body: { payout_email: 'alice@pay.example' } });
    const payoutId = (await approveReward(t.accountId, commission!.id)).payout_id;
    // A reward of the other member, which this member must not see.
    const theirReferral = await api('POST', '/v1/referrals/', {
      key: t.apiKey,
      body: { user_identifier: unique('u'), member_code: otherMember.code },
    });
    const theirs = toReferral(await getItem(keys.referral(t.accountId, theirReferral.body.id)));
    await recordRewards(
      t.accountId,
      theirs!,
      [{ payment_id: Date.now() * 100 + ++seq, type: 'commission', amount: 999, currency: 'USD' }],
      false,
      true,
    );

    const token = await portalSession(t, m.id);
    const rewards = await portal('GET', '/portal/v1/rewards/', token);
    expect(rewards.status).toBe(200);
    expect(rewards.body.count).toBe(2);
    const byType = Object.fromEntries(rewards.body.results.map((r: any) => [r.type, r]));
    expect(byType.commission).toMatchObject({
      id: commission!.id,
      amount: '4.00',
      status: 'approved',
      credit_standing: null,
      is_clawback: false,
    });
    expect(byType.credit).toMatchObject({ id: credit!.id, amount: '10.00', status: 'pending', credit_standing: 'needs_subscription' });
    const payouts = await portal('GET', '/portal/v1/payouts/', token);
    expect(payouts.body).toMatchObject({
      count: 1,
      results: [{ id: payoutId, amount: '4.00', currency: 'USD', status: 'due', payout_email: null }],
    });
    const me = await portal('GET', '/portal/v1/me/', token);
    expect(me.body.stats).toMatchObject({ referrals: 1, commission_earned: '4.00', commission_approved: '4.00', credit_earned: '10.00' });
  });

  it("PATCH me: the payout email and the email opt-out, nothing else; field errors in the contract's shape", async () => {
    const { t, m } = await programme();
    const token = await portalSession(t, m.id);
    const res = await portal('PATCH', '/portal/v1/me/', token, {
      payout_email: 'alice@pay.example',
      email_opt_out: true,
      email: 'evil@example.com',
      code: 'HIJACK',
      commission_paid: '999.00',
    });
    expect(res.status).toBe(200);
    expect(res.body.member).toMatchObject({ payout_email: 'alice@pay.example', email_opt_out: true, email: m.email, code: m.code });
    const seen = await api('GET', `/v1/members/${m.id}/`, { key: t.apiKey });
    expect(seen.body).toMatchObject({ payout_email: 'alice@pay.example', email_opt_out: true, email: m.email, code: m.code });
    expect(await portal('PATCH', '/portal/v1/me/', token, { payout_email: 'not an email' })).toMatchObject({
      status: 400,
      body: { payout_email: [expect.any(String)] },
    });
    expect(await portal('PATCH', '/portal/v1/me/', token, { email_opt_out: 'maybe' })).toMatchObject({
      status: 400,
      body: { email_opt_out: [expect.any(String)] },
    });
    expect((await portal('PATCH', '/portal/v1/me/', token, { payout_email: null })).body.member.payout_email).toBeNull();
  });

  it("stats: the member's clicks, referrals and conversions per bucket (30 days, 12 weeks, 12 months)", async () => {
    const { t, m, otherMember } = await programme();
    for (let i = 0; i < 2; i++)
      await api('POST', '/v1/referrals/', { key: t.apiKey, body: { user_identifier: unique('u'), member_code: m.code } });
    await api('POST', '/v1/referrals/', { key: t.apiKey, body: { user_identifier: unique('u'), member_code: otherMember.code } });
    const token = await portalSession(t, m.id);
    const month = await portal('GET', '/portal/v1/stats/', token);
    expect(month.status).toBe(200);
    expect(month.body.interval).toBe('month');
    expect(month.body.buckets.length).toBeGreaterThanOrEqual(12);
    expect(month.body.buckets.length).toBeLessThanOrEqual(13);
    expect(month.body.buckets.at(-1)).toMatchObject({ referrals: 2, conversions: 0 });
    expect(month.body.buckets.reduce((a: number, b: any) => a + b.referrals, 0)).toBe(2);
    const day = await portal('GET', '/portal/v1/stats/?interval=day', token);
    expect(day.body.buckets).toHaveLength(30);
    expect(day.body.buckets.at(-1).referrals).toBe(2);
    const week = await portal('GET', '/portal/v1/stats/?interval=week', token);
    expect(week.body.buckets.length).toBeGreaterThanOrEqual(12);
    expect((await portal('GET', '/portal/v1/stats/?interval=year', token)).status).toBe(400);
  });
});

describe('the portal page and the widget script', () => {
  it("serves the page with frame-ancestors from the account's embed origins (none without any), and 404 for an unknown account", async () => {
    const t = await newAccount();
    const page = await api('GET', `/portal/${t.accountId}/`);
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(page.headers['content-security-policy']).toContain("script-src 'self'");
    expect(page.headers['cache-control']).toBe('no-store');
    expect(page.text).toContain('<meta name="refloop-embed-origins" content="">');
    await api('PATCH', '/v1/account/', { key: t.apiKey, body: { embed_origins: ['https://app.acme.example', 'http://localhost:5173'] } });
    const framed = await api('GET', `/portal/${t.accountId}/`);
    expect(framed.headers['content-security-policy']).toMatch(/frame-ancestors https:\/\/app\.acme\.example http:\/\/localhost:5173$/);
    expect(framed.text).toContain('<meta name="refloop-embed-origins" content="https://app.acme.example http://localhost:5173">');
    for (const path of ['/portal/0000000000000000/', '/portal/not-an-account/']) {
      const res = await api('GET', path);
      expect({ path, status: res.status, ancestors: res.headers['content-security-policy']?.includes("frame-ancestors 'none'") }).toEqual({
        path,
        status: 404,
        ancestors: true,
      });
    }
  });

  it('serves /js/refloop-embed.js: cacheable, gzipped when asked, 304 on its ETag', async () => {
    const plain = await api('GET', '/js/refloop-embed.js');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=3600');
    expect(plain.text).toContain('Refloop');
    const zipped = await api('GET', '/js/refloop-embed.js', { headers: { 'accept-encoding': 'gzip' } });
    expect(zipped.headers['content-encoding']).toBe('gzip');
    const again = await api('GET', '/js/refloop-embed.js', { headers: { 'if-none-match': plain.headers.etag as string } });
    expect(again.status).toBe(304);
  });

  it('stores no portal token in plaintext', async () => {
    const t = await newAccount();
    const m = await member(t);
    const link = await portalLink(t, m.id);
    const opened = await open(link.token);
    const unopened = await portalLink(t, m.id);
    const items: unknown[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await verificationClient().send(
        new ScanCommand({
          TableName: tableName(),
          FilterExpression: 'account_id = :a OR begins_with(pk, :p)',
          ExpressionAttributeValues: { ':a': t.accountId, ':p': `A#${t.accountId}` },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      items.push(...(page.Items ?? []));
      start = page.LastEvaluatedKey;
    } while (start);
    const all = JSON.stringify(items);
    expect(all).toContain(tokenHash(opened.body.token));
    for (const secret of [link.token, opened.body.token, unopened.token]) expect(all).not.toContain(secret);
  });
});
