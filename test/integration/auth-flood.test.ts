// A flood of unknown keys (issue 11 item 11): a well-formed unknown key costs one GetItem, then none while
// the container remembers it (negative cache); failed authentications are limited per client IP (429 with
// Retry-After, then no read at all), while other IPs and valid keys are unaffected.
import { resetConfig } from '../../shared/config';
import { generateApiKey, generatePublishableKey } from '../../shared/domain/api-keys';
import { secondsUntilNextWindow } from '../../shared/domain/rate-limits';
import { clearAuthCaches } from '../../shared/http/auth';
import { revokeApiKey } from '../../shared/store/accounts';
import { api } from '../support/api';
import { recordDynamoCalls } from '../support/dynamo-calls';
import { newAccount, pollUntil } from '../support/fixtures';

const saved = { limit: process.env.AUTH_FAILURES_PER_IP_PER_MINUTE, negative: process.env.AUTH_NEGATIVE_CACHE_SECONDS };
afterEach(() => {
  for (const [name, value] of [
    ['AUTH_FAILURES_PER_IP_PER_MINUTE', saved.limit],
    ['AUTH_NEGATIVE_CACHE_SECONDS', saved.negative],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetConfig();
  clearAuthCaches();
});

/** The one-minute windows: start a burst well inside one so it cannot straddle two. */
async function freshWindow() {
  if (secondsUntilNextWindow(Date.now(), 60) < 20) {
    const start = Math.floor(Date.now() / 60_000);
    await pollUntil(() => Math.floor(Date.now() / 60_000) > start, { timeoutMs: 25_000, intervalMs: 200 });
  }
}

async function readsOf(fn: () => Promise<void>): Promise<string[]> {
  const rec = recordDynamoCalls();
  try {
    await fn();
  } finally {
    rec.stop();
  }
  return rec.calls.map((c) => c.command);
}

it('an unknown key is read once, then answered from the negative cache (secret and publishable keys)', async () => {
  process.env.AUTH_FAILURES_PER_IP_PER_MINUTE = '0';
  resetConfig();
  const secret = generateApiKey();
  const publishable = generatePublishableKey();
  const calls = await readsOf(async () => {
    for (let i = 0; i < 20; i++) {
      const v1 = await api('GET', '/v1/campaigns/', { key: secret });
      expect([v1.status, v1.body]).toEqual([401, { detail: 'Invalid token.' }]);
      const js = await api('POST', '/js/v1/clicks/', { key: publishable, body: { code: 'X' } });
      expect([js.status, js.body]).toEqual([401, { detail: 'Invalid token.' }]);
    }
  });
  expect(calls).toEqual(['GetItem', 'GetItem']);

  // Off: every request reads.
  process.env.AUTH_NEGATIVE_CACHE_SECONDS = '0';
  resetConfig();
  clearAuthCaches();
  const uncached = await readsOf(async () => {
    for (let i = 0; i < 5; i++) expect((await api('GET', '/v1/campaigns/', { key: secret })).status).toBe(401);
  });
  expect(uncached).toEqual(Array(5).fill('GetItem'));
});

it('a revoked key is refused at once, and then remembered: its repeats read nothing', async () => {
  const { apiKey } = await newAccount();
  expect((await api('GET', '/v1/campaigns/', { key: apiKey })).status).toBe(200);
  await revokeApiKey(apiKey);
  expect((await api('GET', '/v1/campaigns/', { key: apiKey })).status).toBe(401);
  const calls = await readsOf(async () => {
    for (let i = 0; i < 5; i++) expect((await api('GET', '/v1/campaigns/', { key: apiKey })).status).toBe(401);
  });
  expect(calls).toEqual([]);
});

it('failed authentications per IP: past the limit 429 with Retry-After and no read; other IPs and valid keys unaffected', async () => {
  process.env.AUTH_FAILURES_PER_IP_PER_MINUTE = '5';
  resetConfig();
  const { apiKey, publishableKey } = await newAccount();
  await freshWindow();
  const flooder = '203.0.113.77';
  for (let i = 0; i < 5; i++) {
    // Distinct keys each time: the negative cache cannot help, the limit must.
    const res = await api('GET', '/v1/campaigns/', { key: generateApiKey(), sourceIp: flooder });
    expect(res.status).toBe(401);
  }
  const refused = await api('GET', '/v1/campaigns/', { key: generateApiKey(), sourceIp: flooder });
  expect(refused.status).toBe(429);
  expect(refused.body.detail).toMatch(/^Request was throttled\. Expected available in \d+ seconds?\.$/);
  const wait = Number(refused.headers['retry-after']);
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(60);

  // From now on the flooding IP costs nothing: no GetItem, no UpdateItem, on either kind of key.
  const calls = await readsOf(async () => {
    for (let i = 0; i < 20; i++) {
      expect((await api('GET', '/v1/campaigns/', { key: generateApiKey(), sourceIp: flooder })).status).toBe(429);
      expect((await api('POST', '/js/v1/clicks/', { key: generatePublishableKey(), body: { code: 'X' }, sourceIp: flooder })).status).toBe(
        429,
      );
    }
  });
  expect(calls).toEqual([]);

  // Another IP is unaffected, with unknown and valid keys alike; the flooding IP's window ends.
  expect((await api('GET', '/v1/campaigns/', { key: generateApiKey(), sourceIp: '198.51.100.5' })).status).toBe(401);
  expect((await api('GET', '/v1/campaigns/', { key: apiKey, sourceIp: '198.51.100.5' })).status).toBe(200);
  expect((await api('POST', '/js/v1/clicks/', { key: publishableKey, body: { code: 'X' }, sourceIp: '198.51.100.5' })).status).toBe(200);
});
