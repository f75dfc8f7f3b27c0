// The /v1/ rate limit per API key (issue 7, item 4): the plan's rate over 10-second windows, counted in
// DynamoDB; 429 with Retry-After past it; other keys and accounts unaffected; a refused write writes nothing.
import { createHash } from 'node:crypto';
import { resetConfig } from '../../shared/config';
import { fingerprint } from '../../shared/http/idempotency';
import { claimKey } from '../../shared/store/idempotency';
import { edgeKeys } from '../../shared/store/table';
import { secondsUntilNextWindow } from '../../shared/domain/rate-limits';
import { API_WINDOW_SECONDS } from '../../shared/http/rate-limits';
import { createApiKey } from '../../shared/store/accounts';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';

const saved = process.env.API_RATE_LIMITS;
afterAll(() => {
  if (saved === undefined) delete process.env.API_RATE_LIMITS;
  else process.env.API_RATE_LIMITS = saved;
  resetConfig();
});

/** Start a burst early in a window, so it cannot straddle two. */
async function freshWindow() {
  if (secondsUntilNextWindow(Date.now(), API_WINDOW_SECONDS) < 5) {
    const start = Math.floor(Date.now() / (API_WINDOW_SECONDS * 1000));
    await pollUntil(() => Math.floor(Date.now() / (API_WINDOW_SECONDS * 1000)) > start, { timeoutMs: 10_000, intervalMs: 100 });
  }
}

it('past the plan rate: 429 with Retry-After on reads and writes; another key and another account are unaffected', async () => {
  // regular: 1 request/s = 10 per 10-second window; small: 3/s = 30.
  process.env.API_RATE_LIMITS = 'regular=1,small=3';
  resetConfig();
  const a = await newAccount('regular');
  const b = await newAccount('regular');
  const secondKey = await createApiKey(a.accountId);
  await freshWindow();

  for (let i = 0; i < 10; i++) expect((await api('GET', '/v1/campaigns/', { key: a.apiKey })).status).toBe(200);
  const read = await api('GET', '/v1/campaigns/', { key: a.apiKey });
  expect(read.status).toBe(429);
  expect(read.body.detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
  const wait = Number(read.headers['retry-after']);
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(API_WINDOW_SECONDS);
  expect(read.body.detail).toContain(`in ${wait} second`);

  // A refused write changes nothing.
  const write = await api('POST', '/v1/campaigns/', { key: a.apiKey, body: { name: 'refused' } });
  expect(write.status).toBe(429);
  // The account's other key and another account have their own windows.
  expect((await api('GET', '/v1/campaigns/', { key: secondKey })).body.count).toBe(0);
  expect((await api('GET', '/v1/campaigns/', { key: b.apiKey })).status).toBe(200);

  // The next window admits the key again.
  await pollUntil(async () => (await api('GET', '/v1/campaigns/', { key: a.apiKey })).status === 200, {
    timeoutMs: 15_000,
    intervalMs: 500,
  });
});

it('the rate follows the plan, and 0 turns it off', async () => {
  process.env.API_RATE_LIMITS = 'small=3,unlimited=0';
  resetConfig();
  const small = await newAccount('small');
  const unlimited = await newAccount('unlimited');
  await freshWindow();
  const statuses = await Promise.all(
    Array.from({ length: 32 }, () => api('GET', '/v1/referrals/', { key: small.apiKey }).then((r) => r.status)),
  );
  expect(statuses.filter((s) => s === 200)).toHaveLength(30);
  expect(statuses.filter((s) => s === 429)).toHaveLength(2);
  const free = await Promise.all(
    Array.from({ length: 40 }, () => api('GET', '/v1/referrals/', { key: unlimited.apiKey }).then((r) => r.status)),
  );
  expect(free.every((s) => s === 200)).toBe(true);
});

// Issue 11 item 7: answers an Idempotency-Key gives without running the request (replays, 422 reused key,
// 409 in progress) are counted like any request, so retries cannot multiply writes past the limit.
it('Idempotency-Key replays, 422s and 409s count against the key rate; past it they are 429', async () => {
  process.env.API_RATE_LIMITS = 'regular=1';
  resetConfig();
  const a = await newAccount('regular');
  await freshWindow();
  const body = { name: 'idem-limited' };
  const keyed = (key: string, b: unknown = body) =>
    api('POST', '/v1/campaigns/', { key: a.apiKey, body: b, headers: { 'idempotency-key': key } });

  expect((await keyed('k1')).status).toBe(201); // 1
  for (let i = 0; i < 3; i++) {
    const replay = await keyed('k1'); // 2..4
    expect([replay.status, replay.headers['idempotent-replayed']]).toEqual([201, 'true']);
  }
  for (let i = 0; i < 3; i++) expect((await keyed('k1', { name: `other-${i}` })).status).toBe(422); // 5..7
  // A request holding `k2` right now (claimed with this request's fingerprint, never finished).
  const claimed = await claimKey(
    edgeKeys.idempotency(a.accountId, createHash('sha256').update('k2').digest('hex')),
    fingerprint({
      routeKey: 'POST /v1/campaigns/',
      rawPath: '/v1/campaigns/',
      requestContext: { http: { method: 'POST' } },
      body: JSON.stringify(body),
      isBase64Encoded: false,
    } as never),
    'someone-else',
    { method: 'POST', path: '/v1/campaigns/' },
  );
  expect(claimed.kind).toBe('claimed');
  for (let i = 0; i < 3; i++) expect((await keyed('k2')).status).toBe(409); // 8..10

  // The window is spent: a replay, a 422 and a 409 are now refused like any other request.
  const statuses = [(await keyed('k1')).status, (await keyed('k1', { name: 'x' })).status, (await keyed('k2')).status];
  expect(statuses).toEqual([429, 429, 429]);
  expect((await api('GET', '/v1/campaigns/', { key: a.apiKey })).status).toBe(429);
  // The stored answer is still there for the retry after Retry-After.
  const later = await pollUntil(
    async () => {
      const r = await keyed('k1');
      return r.status === 201 ? r : null;
    },
    { timeoutMs: 15_000, intervalMs: 500 },
  );
  expect(later.headers['idempotent-replayed']).toBe('true');
});
