// The public /js/v1/ endpoints and the script, through the real handlers on DynamoDB Local: publishable
// keys (and never secret ones), CORS, click counting once per visitor per day, `js` referrals with the API's
// rules, and the per-IP / per-key rate limits.
import { gunzipSync } from 'node:zlib';
import { resetConfig } from '../../shared/config';
import { secondsUntilNextWindow } from '../../shared/domain/rate-limits';
import { JS_REFERRALS_OFF } from '../../shared/http/js-referrals';
import { ensurePublishableKey, getAccount, revokeApiKey, setJsReferralMode } from '../../shared/store/accounts';
import { MAX_VISITORS_PER_IP } from '../../shared/store/clicks';
import { api, type ApiResponse } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';

/** Every click's answer: recorded, with the account's attribution (docs/attribution.md; the defaults here). */
const RECORDED = { recorded: true, attribution: { model: 'first_click', days: 60 } };

type Account = Awaited<ReturnType<typeof newAccount>>;

const click = (a: Pick<Account, 'publishableKey'>, body: unknown, extra: { sourceIp?: string; headers?: Record<string, string> } = {}) =>
  api('POST', '/js/v1/clicks/', { key: a.publishableKey, body, ...extra });
const jsReferral = (a: Pick<Account, 'publishableKey'>, body: unknown, extra: { sourceIp?: string } = {}) =>
  api('POST', '/js/v1/referrals/', { key: a.publishableKey, body, ...extra });

async function member(a: Account, code: string, identifier = `m-${code}`) {
  const res = await api('POST', '/v1/members/', { key: a.apiKey, body: { identifier, email: `${code.toLowerCase()}@example.com`, code } });
  expect(res.status).toBe(201);
  return res.body as { id: string; code: string };
}

const clicksOf = async (a: Account, memberId: string) =>
  (await api('GET', `/v1/members/${memberId}/`, { key: a.apiKey })).body.stats.link_clicks as number;

function expectCors(res: ApiResponse) {
  expect(res.headers['access-control-allow-origin']).toBe('*');
}

describe('keys', () => {
  it('a publishable key opens /js/v1/ and a secret key does not; a publishable key never opens /v1/', async () => {
    const a = await newAccount();
    await member(a, 'KEYS1');
    expect(a.publishableKey).toMatch(/^rfl_pub_[A-Za-z0-9_-]{32}$/);
    expect((await click(a, { code: 'KEYS1' })).status).toBe(200);

    const secret = await api('POST', '/js/v1/clicks/', { key: a.apiKey, body: { code: 'KEYS1' } });
    expect(secret.status).toBe(401);
    expect(secret.body).toEqual({ detail: 'Secret API keys are not accepted here; use the publishable key (rfl_pub_...).' });
    expectCors(secret);

    for (const path of ['/v1/members/', '/v1/referrals/', '/v1/campaigns/']) {
      const res = await api('GET', path, { key: a.publishableKey });
      expect({ path, status: res.status, body: res.body }).toEqual({ path, status: 401, body: { detail: 'Invalid token.' } });
    }
  });

  it('no key, a malformed key, an unknown key and a revoked key: 401 with CORS headers', async () => {
    const a = await newAccount();
    const none = await api('POST', '/js/v1/referrals/', { body: { member_code: 'X', user_identifier: 'u' } });
    expect([none.status, none.body]).toEqual([401, { detail: 'Authentication credentials were not provided.' }]);
    expectCors(none);
    for (const key of ['rfl_pub_', 'rfl_pub_unknown00000000000000000000000', 'nonsense']) {
      const res = await api('POST', '/js/v1/clicks/', { key, body: { code: 'X' } });
      expect({ key, status: res.status, body: res.body }).toEqual({ key, status: 401, body: { detail: 'Invalid token.' } });
    }
    await revokeApiKey(a.publishableKey);
    const revoked = await click(a, { code: 'X' });
    expect([revoked.status, revoked.body]).toEqual([401, { detail: 'Invalid token.' }]);
  });
});

describe('CORS', () => {
  it('answers the preflight of both endpoints with 204 and the CORS headers, without a key', async () => {
    const headers = {
      origin: 'https://app.example.com',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type',
    };
    for (const res of [await api('OPTIONS', '/js/v1/clicks/', { headers }), await api('OPTIONS', '/js/v1/referrals/', { headers })]) {
      expect(res.status).toBe(204);
      expect(res.text).toBe('');
      expect(res.headers).toMatchObject({
        'access-control-allow-origin': '*',
        'access-control-allow-methods': 'POST, OPTIONS',
        'access-control-allow-headers': 'Authorization, Content-Type',
        'access-control-max-age': '7200',
      });
    }
  });

  it('puts the CORS headers on successes and on 400s', async () => {
    const a = await newAccount();
    const okRes = await click(a, { code: 'NOBODY' });
    expectCors(okRes);
    const bad = await click(a, { visitor_id: 'v1' });
    expect([bad.status, bad.body]).toEqual([400, { code: ['This field is required.'] }]);
    expectCors(bad);
  });
});

describe('POST /js/v1/clicks/', () => {
  it('counts a click once per visitor per day; unknown codes answer the same and count nothing', async () => {
    const a = await newAccount();
    const m = await member(a, 'Clicky');
    const other = await member(a, 'OTHER1');

    const first = await click(a, { code: 'Clicky', visitor_id: 'visitor-a' });
    expect([first.status, first.body]).toEqual([200, RECORDED]);
    expect(await clicksOf(a, m.id)).toBe(1);
    // The same visitor again (a reload), with the code in another case: still one.
    expect((await click(a, { code: 'clicky', visitor_id: 'visitor-a' })).status).toBe(200);
    expect(await clicksOf(a, m.id)).toBe(1);
    // Another visitor counts.
    expect((await click(a, { code: 'CLICKY', visitor_id: 'visitor-b' })).status).toBe(200);
    expect(await clicksOf(a, m.id)).toBe(2);
    // Without a visitor id, the IP and user agent stand in for it.
    expect((await click(a, { code: 'CLICKY' }, { sourceIp: '198.51.100.7' })).status).toBe(200);
    expect((await click(a, { code: 'CLICKY' }, { sourceIp: '198.51.100.7' })).status).toBe(200);
    expect(await clicksOf(a, m.id)).toBe(3);

    // Unknown and impossible codes: the same answer, nothing counted anywhere.
    for (const code of ['NOSUCHCODE', 'has space', 'x'.repeat(100), 'ü']) {
      const res = await click(a, { code, visitor_id: 'visitor-c' });
      expect({ code, status: res.status, body: res.body }).toEqual({ code, status: 200, body: RECORDED });
    }
    expect(await clicksOf(a, m.id)).toBe(3);
    expect(await clicksOf(a, other.id)).toBe(0);
  });

  // Issue 11 item 6: visitor ids are the client's choice; one IP cannot count a click per made-up id.
  it('one IP counts at most MAX_VISITORS_PER_IP distinct visitors per link per day, whatever visitor ids it sends', async () => {
    const a = await newAccount();
    const m = await member(a, 'FLOODME');
    const other = await member(a, 'OTHERLINK');
    const answers = new Set<string>();
    for (let i = 0; i < MAX_VISITORS_PER_IP + 15; i++) {
      const res = await click(a, { code: 'FLOODME', visitor_id: `made-up-${i}` }, { sourceIp: '203.0.113.50' });
      answers.add(JSON.stringify([res.status, res.body]));
    }
    // The same answer throughout: the cap is not observable from outside.
    expect([...answers]).toEqual([JSON.stringify([200, RECORDED])]);
    expect(await clicksOf(a, m.id)).toBe(MAX_VISITORS_PER_IP);
    // Without visitor ids (IP + user agent stand in) the same cap holds.
    for (let i = 0; i < 5; i++) await click(a, { code: 'FLOODME' }, { sourceIp: '203.0.113.50', headers: { 'user-agent': `agent-${i}` } });
    expect(await clicksOf(a, m.id)).toBe(MAX_VISITORS_PER_IP);
    // Another IP, and another link from the same IP, have their own budgets.
    expect((await click(a, { code: 'FLOODME', visitor_id: 'elsewhere' }, { sourceIp: '198.51.100.60' })).status).toBe(200);
    expect(await clicksOf(a, m.id)).toBe(MAX_VISITORS_PER_IP + 1);
    expect((await click(a, { code: 'OTHERLINK', visitor_id: 'made-up-0' }, { sourceIp: '203.0.113.50' })).status).toBe(200);
    expect(await clicksOf(a, other.id)).toBe(1);
  });

  it('a code of another account counts nothing in either account', async () => {
    const a = await newAccount();
    const b = await newAccount();
    const mine = await member(a, 'MINE01');
    const theirs = await member(b, 'THEIRS');
    expect((await click(a, { code: 'THEIRS', visitor_id: 'v' })).status).toBe(200);
    expect(await clicksOf(b, theirs.id)).toBe(0);
    expect(await clicksOf(a, mine.id)).toBe(0);
  });

  it('refuses bad bodies with 400/415 in the contract shape', async () => {
    const a = await newAccount();
    const cases: [unknown, number, unknown][] = [
      [{ code: 5 }, 200, RECORDED],
      [{ code: '' }, 400, { code: ['This field may not be blank.'] }],
      [{ code: null }, 400, { code: ['This field may not be null.'] }],
      [{ code: 'A', visitor_id: 'has space' }, 400, { visitor_id: ['Use only letters, digits, "-" and "_".'] }],
      [{ code: 'A', visitor_id: 'x'.repeat(65) }, 400, { visitor_id: ['Ensure this field has no more than 64 characters.'] }],
      [[1], 400, { non_field_errors: ['Invalid data. Expected a dictionary, but got list.'] }],
    ];
    for (const [body, status, answer] of cases) {
      const res = await click(a, body);
      expect({ body, status: res.status, answer: res.body }).toEqual({ body, status, answer });
    }
    const form = await api('POST', '/js/v1/clicks/', {
      key: a.publishableKey,
      rawBody: 'code=A',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(form.status).toBe(415);
    const broken = await api('POST', '/js/v1/clicks/', {
      key: a.publishableKey,
      rawBody: '{"code":',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expect(broken.body.detail).toMatch(/^JSON parse error - /);
  });
});

describe('POST /js/v1/referrals/', () => {
  const ID = /^[0-9a-f]{32}$/;

  it('creates a js referral with the API rules and answers only its id', async () => {
    const a = await newAccount();
    const alice = await member(a, 'ALICEJS', 'alice-id');
    const bob = await member(a, 'BOBJS');

    const res = await jsReferral(a, { member_code: 'alicejs', user_identifier: 'user-1' });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body)).toEqual(['id']);
    expectCors(res);
    const full = await api('GET', `/v1/referrals/${res.body.id}/`, { key: a.apiKey });
    expect(full.body).toMatchObject({ id: res.body.id, member_id: alice.id, user_identifier: 'user-1', source: 'js' });

    const missing = await jsReferral(a, {});
    expect([missing.status, missing.body]).toEqual([
      400,
      { user_identifier: ['This field is required.'], member_code: ['This field is required.'] },
    ]);
    expect((await api('GET', '/v1/referrals/', { key: a.apiKey })).body.count).toBe(1);
    expect((await api('GET', `/v1/members/${alice.id}/`, { key: a.apiKey })).body.stats.referrals).toBe(1);
    expect((await api('GET', `/v1/members/${bob.id}/`, { key: a.apiKey })).body.stats.referrals).toBe(0);
  });

  // Issue 11 item 6: the publishable key is public; its answers must not tell codes, referred users or ids.
  it('answers unknown codes, referred users, repeats and self-referrals exactly like a success, with a decoy id', async () => {
    const a = await newAccount();
    await member(a, 'ALICEJS', 'alice-id');
    await member(a, 'BOBJS');
    await member(a, 'KELVIN');
    const real = await jsReferral(a, { member_code: 'ALICEJS', user_identifier: 'user-1' });
    expect(real.status).toBe(200);
    const viaApi = await api('POST', '/v1/referrals/', { key: a.apiKey, body: { member_code: 'BOBJS', user_identifier: 'user-api' } });
    expect(viaApi.status).toBe(200);

    const probes = [
      { member_code: 'ALICEJS', user_identifier: 'user-1' }, // the same pair again
      { member_code: 'BOBJS', user_identifier: 'user-1' }, // referred by another member
      { member_code: 'BOBJS', user_identifier: 'user-api' }, // referred through the API
      { member_code: 'ALICEJS', user_identifier: 'alice-id' }, // self-referral
      { member_code: 'NOPE', user_identifier: 'user-2' }, // no such code
      { member_code: '\u212AELVIN', user_identifier: 'user-3' }, // Kelvin sign: not an ASCII code (item 10)
      { member_code: 'has space', user_identifier: 'user-4' },
    ];
    const ids = new Set<string>([real.body.id, viaApi.body.id]);
    for (const body of probes) {
      const res = await jsReferral(a, body);
      expect({ body, status: res.status, keys: Object.keys(res.body), headers: Object.keys(res.headers).sort() }).toEqual({
        body,
        status: 200,
        keys: ['id'],
        headers: Object.keys(real.headers).sort(),
      });
      expect(res.body.id).toMatch(ID);
      // Never an existing referral's id, never the same decoy twice.
      expect({ body, repeated: ids.has(res.body.id) }).toEqual({ body, repeated: false });
      ids.add(res.body.id);
      expect((await api('GET', `/v1/referrals/${res.body.id}/`, { key: a.apiKey })).status).toBe(404);
    }
    expect((await api('GET', '/v1/referrals/', { key: a.apiKey })).body.count).toBe(2);
  });

  it('the account chooses: confirm creates nothing until the backend does, off is a 403; open again creates', async () => {
    const a = await newAccount();
    const alice = await member(a, 'ALICEJS', 'alice-id');
    const count = async () => (await api('GET', '/v1/referrals/', { key: a.apiKey })).body.count as number;

    await setJsReferralMode(a.accountId, 'confirm');
    const pending = await jsReferral(a, { member_code: 'ALICEJS', user_identifier: 'user-c' });
    expect([pending.status, Object.keys(pending.body)]).toEqual([200, ['id']]);
    expect(pending.body.id).toMatch(ID);
    expect(await count()).toBe(0);
    expect((await api('GET', `/v1/members/${alice.id}/`, { key: a.apiKey })).body.stats.referrals).toBe(0);
    // The user id is not pre-claimed: the backend, with the secret key, creates the referral.
    const confirmed = await api('POST', '/v1/referrals/', { key: a.apiKey, body: { member_code: 'ALICEJS', user_identifier: 'user-c' } });
    expect([confirmed.status, confirmed.body.member_id]).toEqual([200, alice.id]);
    expect(await count()).toBe(1);

    await setJsReferralMode(a.accountId, 'off');
    const off = await jsReferral(a, { member_code: 'ALICEJS', user_identifier: 'user-o' });
    expect([off.status, off.body]).toEqual([403, { detail: JS_REFERRALS_OFF }]);
    expectCors(off);
    // Clicks still count, and bad bodies are still 400 first.
    expect((await click(a, { code: 'ALICEJS', visitor_id: 'v1' })).status).toBe(200);
    expect(await count()).toBe(1);

    await setJsReferralMode(a.accountId, 'open');
    const open = await jsReferral(a, { member_code: 'ALICEJS', user_identifier: 'user-o' });
    expect((await api('GET', `/v1/referrals/${open.body.id}/`, { key: a.apiKey })).body).toMatchObject({
      user_identifier: 'user-o',
      source: 'js',
    });
    expect(await count()).toBe(2);
  });

  it('the mode survives a new publishable key (revoked and reissued)', async () => {
    const a = await newAccount();
    await member(a, 'ALICEJS', 'alice-id');
    await setJsReferralMode(a.accountId, 'off');
    await revokeApiKey(a.publishableKey);
    const fresh = await ensurePublishableKey(a.accountId);
    expect(fresh.jsReferrals).toBe('off');
    const res = await jsReferral({ publishableKey: fresh.publishableKey as string }, { member_code: 'ALICEJS', user_identifier: 'u' });
    expect(res.status).toBe(403);
    expect((await getAccount(a.accountId))?.jsReferrals).toBe('off');
  });
});

describe('GET /js/refloop.js', () => {
  it('serves the script without a key: JavaScript, cacheable, gzipped on request, 304 on a matching ETag', async () => {
    const plain = await api('GET', '/js/refloop.js');
    expect(plain.status).toBe(200);
    expect(plain.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(plain.headers['cache-control']).toBe('public, max-age=3600');
    expect(plain.text).toContain('window');
    expect(plain.text).toContain("'refloop-ref'");
    const etag = plain.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]+"$/);

    const { dispatch } = await import('../../infra/local/gateway');
    const gz = await dispatch({ method: 'GET', rawPath: '/js/refloop.js', rawQueryString: '', headers: { 'accept-encoding': 'gzip, br' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gz.isBase64Encoded).toBe(true);
    expect(gunzipSync(Buffer.from(gz.body, 'base64')).toString('utf8')).toBe(plain.text);

    const cached = await api('GET', '/js/refloop.js', { headers: { 'if-none-match': etag } });
    expect([cached.status, cached.text]).toEqual([304, '']);
  });
});

describe('rate limits', () => {
  const saved = { ip: process.env.JS_RATE_LIMIT_PER_IP, key: process.env.JS_RATE_LIMIT_PER_KEY };
  afterEach(() => {
    for (const [name, value] of [
      ['JS_RATE_LIMIT_PER_IP', saved.ip],
      ['JS_RATE_LIMIT_PER_KEY', saved.key],
    ] as const) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
    resetConfig();
  });

  /** The limits use one-minute windows: start a burst well inside one so it cannot straddle two. */
  async function freshWindow() {
    if (secondsUntilNextWindow(Date.now(), 60) < 15) {
      const start = Math.floor(Date.now() / 60_000);
      await pollUntil(() => Math.floor(Date.now() / 60_000) > start, { timeoutMs: 20_000, intervalMs: 200 });
    }
  }

  it('per IP: past the limit 429 with Retry-After; another IP and another account are unaffected', async () => {
    process.env.JS_RATE_LIMIT_PER_IP = '3';
    process.env.JS_RATE_LIMIT_PER_KEY = '1000';
    resetConfig();
    const a = await newAccount();
    const b = await newAccount();
    await freshWindow();
    for (let i = 0; i < 3; i++) expect((await click(a, { code: 'X' }, { sourceIp: '203.0.113.1' })).status).toBe(200);
    const refused = await click(a, { code: 'X' }, { sourceIp: '203.0.113.1' });
    expect(refused.status).toBe(429);
    expect(refused.body.detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(refused.body.detail).toContain(`in ${retryAfter} second`);
    expectCors(refused);
    // Referrals share the IP's budget.
    expect((await jsReferral(a, { member_code: 'X', user_identifier: 'u' }, { sourceIp: '203.0.113.1' })).status).toBe(429);
    expect((await click(a, { code: 'X' }, { sourceIp: '203.0.113.2' })).status).toBe(200);
    expect((await click(b, { code: 'X' }, { sourceIp: '203.0.113.1' })).status).toBe(200);
  });

  it('per key: past the limit 429 from any IP; another account is unaffected', async () => {
    process.env.JS_RATE_LIMIT_PER_IP = '1000';
    process.env.JS_RATE_LIMIT_PER_KEY = '4';
    resetConfig();
    const a = await newAccount();
    const b = await newAccount();
    await freshWindow();
    for (let i = 0; i < 4; i++) expect((await click(a, { code: 'X' }, { sourceIp: `192.0.2.${i + 1}` })).status).toBe(200);
    const refused = await click(a, { code: 'X' }, { sourceIp: '192.0.2.99' });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await click(b, { code: 'X' }, { sourceIp: '192.0.2.99' })).status).toBe(200);
  });
});
