// The /v1/ rate limit per API key (issue 7, item 4): the plan's rate over 10-second windows, counted in
// DynamoDB; 429 with Retry-After past it; other keys and accounts unaffected; a refused write writes nothing.
import { resetConfig } from '../../shared/config';
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
  await pollUntil(async () => (await api('GET', '/v1/campaigns/', { key: a.apiKey })).status === 200, { timeoutMs: 15_000, intervalMs: 500 });
});

it('the rate follows the plan, and 0 turns it off', async () => {
  process.env.API_RATE_LIMITS = 'small=3,unlimited=0';
  resetConfig();
  const small = await newAccount('small');
  const unlimited = await newAccount('unlimited');
  await freshWindow();
  const statuses = await Promise.all(Array.from({ length: 32 }, () => api('GET', '/v1/referrals/', { key: small.apiKey }).then((r) => r.status)));
  expect(statuses.filter((s) => s === 200)).toHaveLength(30);
  expect(statuses.filter((s) => s === 429)).toHaveLength(2);
  const free = await Promise.all(Array.from({ length: 40 }, () => api('GET', '/v1/referrals/', { key: unlimited.apiKey }).then((r) => r.status)));
  expect(free.every((s) => s === 200)).toBe(true);
});
