// Affiliate login to the hosted portal through the real handlers (docs/portal.md "Affiliate login"): the
// login page by slug or id, POST /portal/v1/login-links/ (always the same 202; a message for the email
// worker only for a member of the account; silent past the limits), affiliateLoginUrl's single-use,
// 15-minute links, POST /portal/v1/login-sessions/ (the cookie's attributes), the 12-hour sliding expiry,
// log out, the same-origin check on cookie writes, and a portal cookie that opens nothing under /v1/.
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { resetConfig } from '../../shared/config';
import { COOKIE_SESSION_SECONDS, LOGIN_LINK_SENT, PORTAL_COOKIE } from '../../shared/domain/portal';
import { tokenHash } from '../../shared/domain/team';
import { affiliateLoginUrl } from '../../shared/flows/affiliate-login';
import { db, tableName } from '../../shared/store/client';
import { getItem, nowSeconds } from '../../shared/store/ops';
import { portalKeys } from '../../shared/store/portal';
import { keys, programmeKeys } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { API_ORIGIN, loginAs } from '../support/dashboard';
import { newAccount } from '../support/fixtures';
import { startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
beforeAll(async () => {
  resetConfig();
  queues = await startTestQueues();
});
afterAll(async () => {
  await queues?.stop();
});

let seq = 0;
const unique = (p: string) => `${p}-${++seq}-${Date.now().toString(36)}`;

type Tenant = { accountId: string; apiKey: string };

/** An account with a slug (the account item's `slug` and its global lookup item, as PATCH /v1/account/ writes them). */
async function tenantWithSlug(): Promise<Tenant & { slug: string }> {
  const t = await newAccount();
  const slug = `acme-${Math.random().toString(36).slice(2, 10)}`;
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.account(t.accountId),
      UpdateExpression: 'SET slug = :s',
      ExpressionAttributeValues: { ':s': slug },
    }),
  );
  await db().send(
    new PutCommand({ TableName: tableName(), Item: { ...programmeKeys.accountSlug(slug), type: 'AccountSlug', account_id: t.accountId } }),
  );
  return { ...t, slug };
}

async function member(t: Tenant): Promise<{ id: string; email: string }> {
  const who = unique('aff');
  const res = await api('POST', '/v1/members/', {
    key: t.apiKey,
    body: { identifier: who, email: `${who}@example.com`, first_name: 'Ada' },
  });
  expect(res.status).toBe(201);
  return res.body;
}

const tokenOf = (url: string) => new URL(url).hash.replace(/^#token=/, '');

/** A cookie session for the member: a link from affiliateLoginUrl traded at POST /portal/v1/login-sessions/. */
async function login(t: Tenant, memberId: string): Promise<{ cookie: string; res: ApiResponse }> {
  const url = await affiliateLoginUrl(t.accountId, memberId);
  expect(url).not.toBeNull();
  const res = await api('POST', '/portal/v1/login-sessions/', { body: { token: tokenOf(url as string) }, headers: { origin: API_ORIGIN } });
  expect(res.status).toBe(201);
  const set = res.cookies.find((c) => c.startsWith(`${PORTAL_COOKIE}=`)) as string;
  return { cookie: set.split(';')[0] as string, res };
}

const asCookie = (method: string, path: string, cookie: string, extra: { body?: unknown; origin?: string | null } = {}) =>
  api(method, path, {
    headers: { cookie, ...(extra.origin === null ? {} : { origin: extra.origin ?? API_ORIGIN }) },
    ...(extra.body !== undefined ? { body: extra.body } : {}),
  });

async function queued(): Promise<any[]> {
  return (await queues.receiveAll('member-emails', { waitMs: 200 })).map((m) => m.json);
}

describe('the login page', () => {
  it('serves the portal page at /portal/<slug>/login/ and /portal/<id>/login/, with the account theme; 404 for an unknown account', async () => {
    const t = await tenantWithSlug();
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.account(t.accountId),
        UpdateExpression: 'SET theme = :t',
        ExpressionAttributeValues: { ':t': { accent: '#0B6E4F', radius: '12px', font: '"><script>' } },
      }),
    );
    for (const path of [`/portal/${t.slug}/login/`, `/portal/${t.accountId}/login/`, `/portal/${t.slug}/`]) {
      const res = await api('GET', path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.text).toContain(`<meta name="refloop-portal" content="${t.slug}">`);
      // The stored theme, checked: the font that is not a font list is dropped.
      expect(res.text).toContain('<meta name="refloop-theme" content="accent=%230b6e4f&amp;radius=12px">');
    }
    // The slug's page is the login view's (the portal app shows it by path).
    expect((await api('GET', `/portal/${t.slug}/login/`)).headers['content-security-policy']).toContain("frame-ancestors 'none'");
    for (const path of ['/portal/no-such-programme/login/', '/portal/0123456789abcdef/login/']) {
      const res = await api('GET', path);
      expect({ path, status: res.status }).toEqual({ path, status: 404 });
    }
  });
});

describe('POST /portal/v1/login-links/', () => {
  it('answers the same 202 for a member, an unknown address and an unknown account; only the member gets a message', async () => {
    const t = await tenantWithSlug();
    const m = await member(t);
    await queued(); // anything left by other tests
    const answers: ApiResponse[] = [];
    answers.push(
      await api('POST', '/portal/v1/login-links/', { body: { account: t.slug, email: m.email.toUpperCase() }, sourceIp: '198.51.100.7' }),
    );
    answers.push(
      await api('POST', '/portal/v1/login-links/', { body: { account: t.slug, email: 'nobody@example.com' }, sourceIp: '198.51.100.7' }),
    );
    answers.push(
      await api('POST', '/portal/v1/login-links/', { body: { account: 'no-such-programme', email: m.email }, sourceIp: '198.51.100.7' }),
    );
    answers.push(
      await api('POST', '/portal/v1/login-links/', { body: { account: t.accountId, email: m.email }, sourceIp: '198.51.100.7' }),
    );
    for (const res of answers) expect({ status: res.status, body: res.body }).toEqual({ status: 202, body: { detail: LOGIN_LINK_SENT } });
    const messages = await queued();
    expect(messages).toEqual([
      { kind: 'affiliate-email', template: 'portal-login', account_id: t.accountId, email: m.email.toLowerCase(), member_id: m.id },
      { kind: 'affiliate-email', template: 'portal-login', account_id: t.accountId, email: m.email.toLowerCase(), member_id: m.id },
    ]);
  });

  it('400 for a body that is not an account and an email', async () => {
    for (const body of [{}, { account: 'acme' }, { account: 'acme', email: 'not-an-email' }, { account: 42, email: [] }]) {
      const res = await api('POST', '/portal/v1/login-links/', { body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
  });

  it('past the per-email limit it still answers 202 and queues nothing more', async () => {
    const t = await tenantWithSlug();
    const m = await member(t);
    await queued();
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) {
      const res = await api('POST', '/portal/v1/login-links/', {
        body: { account: t.slug, email: m.email },
        sourceIp: `203.0.113.${i + 1}`,
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([202, 202, 202, 202, 202, 202, 202]);
    expect((await queued()).length).toBe(5);
  });

  it('past the per-address limit it still answers 202 and queues nothing more', async () => {
    const t = await tenantWithSlug();
    const members = await Promise.all(Array.from({ length: 3 }, () => member(t)));
    await queued();
    const ip = `192.0.2.${Math.floor(Math.random() * 200) + 20}`;
    let sent = 0;
    for (let i = 0; i < 32; i++) {
      const res = await api('POST', '/portal/v1/login-links/', {
        body: { account: t.slug, email: (members[i % 3] as { email: string }).email },
        sourceIp: ip,
      });
      expect(res.status).toBe(202);
      sent++;
    }
    expect(sent).toBe(32);
    // 30 per 15 minutes from one address; each address is asked for at most 5 times an hour (15 allowed here).
    expect((await queued()).length).toBe(15);
  });
});

describe('affiliate login links and cookie sessions', () => {
  it('affiliateLoginUrl: /portal/<slug>/login/#token=…, 15 minutes, single use, only the digest stored; null for a removed member', async () => {
    const t = await tenantWithSlug();
    const m = await member(t);
    const before = nowSeconds();
    const url = (await affiliateLoginUrl(t.accountId, m.id)) as string;
    expect(url).toMatch(new RegExp(`^https://api\\.test/portal/${t.slug}/login/#token=rpl_[A-Za-z0-9_-]{43}$`));
    const item = await getItem(portalKeys.link(tokenHash(tokenOf(url))));
    expect(item).toMatchObject({ type: 'PortalLink', mode: 'cookie', account_id: t.accountId, member_id: m.id });
    expect(Number(item?.expires_at)).toBeGreaterThanOrEqual(before + 900);
    expect(Number(item?.expires_at)).toBeLessThanOrEqual(nowSeconds() + 900);
    expect(JSON.stringify(item)).not.toContain(tokenOf(url));

    const first = await api('POST', '/portal/v1/login-sessions/', { body: { token: tokenOf(url) } });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({ expires_at: expect.any(Number), portal: t.slug });
    const again = await api('POST', '/portal/v1/login-sessions/', { body: { token: tokenOf(url) } });
    expect(again.status).toBe(401);
    expect(again.cookies).toEqual([]);

    // Without a slug (an account from before slugs), the account id names the portal.
    const plain = await newAccount();
    await db().send(new UpdateCommand({ TableName: tableName(), Key: keys.account(plain.accountId), UpdateExpression: 'REMOVE slug' }));
    const other = await member(plain);
    expect(await affiliateLoginUrl(plain.accountId, other.id)).toMatch(new RegExp(`/portal/${plain.accountId}/login/#token=rpl_`));
    expect((await api('DELETE', `/v1/members/${other.id}/`, { key: plain.apiKey })).status).toBe(204);
    expect(await affiliateLoginUrl(plain.accountId, other.id)).toBeNull();
    expect(await affiliateLoginUrl(plain.accountId, 'not-an-id')).toBeNull();
  });

  it('an expired link answers 401; a login link does not open a bearer session, nor an embedded link a cookie', async () => {
    const t = await newAccount();
    const m = await member(t);
    const url = (await affiliateLoginUrl(t.accountId, m.id)) as string;
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: portalKeys.link(tokenHash(tokenOf(url))),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': nowSeconds() - 1 },
      }),
    );
    expect((await api('POST', '/portal/v1/login-sessions/', { body: { token: tokenOf(url) } })).status).toBe(401);

    const fresh = (await affiliateLoginUrl(t.accountId, m.id)) as string;
    expect((await api('POST', '/portal/v1/sessions/', { body: { token: tokenOf(fresh) } })).status).toBe(401);
    // Refused without being used: it still logs in.
    expect((await api('POST', '/portal/v1/login-sessions/', { body: { token: tokenOf(fresh) } })).status).toBe(201);

    const embedded = await api('POST', `/v1/members/${m.id}/portal-sessions/`, { key: t.apiKey, body: {} });
    expect((await api('POST', '/portal/v1/login-sessions/', { body: { token: tokenOf(embedded.body.url) } })).status).toBe(401);
    for (const token of ['', 'rpl_short', 'x'.repeat(100)]) {
      expect((await api('POST', '/portal/v1/login-sessions/', { body: { token } })).status).toBeGreaterThanOrEqual(400);
    }
  });

  it('sets refloop_portal: HttpOnly, SameSite=Strict, Path=/portal/, Secure on https; the cookie opens /portal/v1/', async () => {
    const t = await newAccount();
    const m = await member(t);
    const { res, cookie } = await login(t, m.id);
    const set = res.cookies.find((c) => c.startsWith(`${PORTAL_COOKIE}=`)) as string;
    expect(set).toMatch(/^refloop_portal=rps_[A-Za-z0-9_-]{43}; Path=\/portal\/; HttpOnly; SameSite=Strict; Secure$/);
    expect(res.body.expires_at).toBeGreaterThanOrEqual(nowSeconds() + COOKIE_SESSION_SECONDS - 5);
    const me = await asCookie('GET', '/portal/v1/me/', cookie, { origin: null });
    expect(me.status).toBe(200);
    expect(me.body.member.email).toBe(m.email);
    expect(me.body.session.mode).toBe('cookie');
    // The cookie's token as a bearer is refused: a cookie session travels only in its cookie.
    expect((await api('GET', '/portal/v1/me/', { key: cookie.slice(PORTAL_COOKIE.length + 1) })).status).toBe(401);
  });

  it('a cookie write needs this site as its Origin; a bearer write does not', async () => {
    const t = await newAccount();
    const m = await member(t);
    const { cookie } = await login(t, m.id);
    const body = { email_opt_out: true };
    expect((await asCookie('PATCH', '/portal/v1/me/', cookie, { body, origin: null })).status).toBe(403);
    expect((await asCookie('PATCH', '/portal/v1/me/', cookie, { body, origin: 'https://evil.example' })).status).toBe(403);
    const ok = await asCookie('PATCH', '/portal/v1/me/', cookie, { body });
    expect(ok.status).toBe(200);
    expect(ok.body.member.email_opt_out).toBe(true);
  });

  it('slides: a use after five minutes moves expires_at to 12 hours from now; a use within five minutes writes nothing', async () => {
    const t = await newAccount();
    const m = await member(t);
    const { cookie } = await login(t, m.id);
    const key = portalKeys.session(tokenHash(cookie.slice(PORTAL_COOKIE.length + 1)));
    const opened = await getItem(key);
    // A use right away: no write.
    expect((await asCookie('GET', '/portal/v1/me/', cookie)).status).toBe(200);
    expect((await getItem(key))?.expires_at).toBe(opened?.expires_at);
    // As if the session were last extended 6 minutes ago, with 2 hours left.
    const now = nowSeconds();
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET slid_at = :s, expires_at = :e',
        ExpressionAttributeValues: { ':s': now - 360, ':e': now + 7200 },
      }),
    );
    expect((await asCookie('GET', '/portal/v1/me/', cookie)).status).toBe(200);
    const slid = await getItem(key);
    expect(Number(slid?.expires_at)).toBeGreaterThanOrEqual(now + COOKIE_SESSION_SECONDS);
    expect(Number(slid?.slid_at)).toBeGreaterThanOrEqual(now);
    // Ended: expired sessions are refused whatever the TTL has not deleted yet.
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET expires_at = :e',
        ExpressionAttributeValues: { ':e': now - 1 },
      }),
    );
    expect((await asCookie('GET', '/portal/v1/me/', cookie)).status).toBe(401);
  });

  it('log out: deletes the session and clears the cookie; 204 without a session; a cross-site log out is refused', async () => {
    const t = await newAccount();
    const m = await member(t);
    const { cookie } = await login(t, m.id);
    expect((await asCookie('DELETE', '/portal/v1/sessions/current/', cookie, { origin: 'https://evil.example' })).status).toBe(403);
    expect((await asCookie('GET', '/portal/v1/me/', cookie)).status).toBe(200);
    const out = await asCookie('DELETE', '/portal/v1/sessions/current/', cookie);
    expect(out.status).toBe(204);
    expect(out.cookies).toEqual([`${PORTAL_COOKIE}=; Path=/portal/; HttpOnly; SameSite=Strict; Max-Age=0; Secure`]);
    expect((await asCookie('GET', '/portal/v1/me/', cookie)).status).toBe(401);
    expect(await getItem(portalKeys.ref(t.accountId, m.id, 'SESSION', tokenHash(cookie.slice(PORTAL_COOKIE.length + 1))))).toBeUndefined();
    // Again, and with no cookie at all: 204.
    expect((await asCookie('DELETE', '/portal/v1/sessions/current/', cookie)).status).toBe(204);
    expect((await api('DELETE', '/portal/v1/sessions/current/')).status).toBe(204);
  });

  it('the operator ends every session of the member, cookie sessions included', async () => {
    const t = await newAccount();
    const m = await member(t);
    const { cookie } = await login(t, m.id);
    expect((await api('DELETE', `/v1/members/${m.id}/portal-sessions/`, { key: t.apiKey })).status).toBe(204);
    expect((await asCookie('GET', '/portal/v1/me/', cookie)).status).toBe(401);
  });

  it('a portal cookie opens nothing under /v1/ (the dashboard reads refloop_session only), nor does a dashboard cookie open /portal/v1/', async () => {
    const t = await newAccount();
    const m = await member(t);
    const { cookie } = await login(t, m.id);
    for (const path of [
      '/v1/members/',
      '/v1/account/',
      `/v1/members/${m.id}/`,
      '/v1/exports/tax-details.csv/',
      '/auth/sessions/current/',
    ]) {
      const res = await asCookie('GET', path, cookie);
      expect({ path, status: res.status }).toEqual({ path, status: 401 });
    }
    // The same token under the dashboard's cookie name is no dashboard session either.
    const token = cookie.slice(PORTAL_COOKIE.length + 1);
    expect((await api('GET', '/v1/members/', { headers: { cookie: `refloop_session=${token}` } })).status).toBe(401);
    const owner = await loginAs(t.accountId, 'owner');
    expect((await api('GET', '/portal/v1/me/', { headers: owner.headers })).status).toBe(401);
  });
});
