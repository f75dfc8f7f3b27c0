// Issue 23 item 2: behind CloudFront, API Gateway's sourceIp is an edge's address, shared by every viewer the
// edge serves. With the distribution's origin secret configured (as in AWS), the per-IP limits key on the
// viewer's address (CloudFront-Viewer-Address) of requests that carry the secret, and a request without the
// secret (straight to the execute-api URL) is refused before any handler runs.
import { resetConfig } from '../../shared/config';
import { generateApiKey } from '../../shared/domain/api-keys';
import { secondsUntilNextWindow } from '../../shared/domain/rate-limits';
import { clearAuthCaches } from '../../shared/http/auth';
import { DIRECT_ACCESS_REFUSED, ORIGIN_VERIFY_ENV, ORIGIN_VERIFY_HEADER } from '../../shared/http/client-ip';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';

const SECRET = 'integration-origin-secret-5f1c2b7a9d3e4c6b8a0f';
/** One CloudFront edge, in front of every viewer below. */
const EDGE = '130.176.99.7';
const saved = { secret: process.env[ORIGIN_VERIFY_ENV], limit: process.env.AUTH_FAILURES_PER_IP_PER_MINUTE };

beforeEach(() => {
  process.env[ORIGIN_VERIFY_ENV] = SECRET;
  process.env.AUTH_FAILURES_PER_IP_PER_MINUTE = '5';
  resetConfig();
  clearAuthCaches();
});
afterEach(() => {
  for (const [name, value] of [
    [ORIGIN_VERIFY_ENV, saved.secret],
    ['AUTH_FAILURES_PER_IP_PER_MINUTE', saved.limit],
  ] as const) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetConfig();
  clearAuthCaches();
});

/** Through the distribution: the secret and the viewer's address, from the edge. */
const viaCloudFront = (viewer: string) => ({
  sourceIp: EDGE,
  headers: { [ORIGIN_VERIFY_HEADER]: SECRET, 'cloudfront-viewer-address': viewer },
});

async function freshWindow() {
  if (secondsUntilNextWindow(Date.now(), 60) < 20) {
    const start = Math.floor(Date.now() / 60_000);
    await pollUntil(() => Math.floor(Date.now() / 60_000) > start, { timeoutMs: 25_000, intervalMs: 200 });
  }
}

it('failed authentications are limited per viewer address, not per edge: another viewer behind the same edge is not refused', async () => {
  const { apiKey } = await newAccount();
  await freshWindow();
  const abuser = '203.0.113.201:51000';
  for (let i = 0; i < 5; i++)
    expect((await api('GET', '/v1/campaigns/', { key: generateApiKey(), ...viaCloudFront(abuser) })).status).toBe(401);
  // The abuser is refused, from any source port (the port is not part of the address).
  const refused = await api('GET', '/v1/campaigns/', { key: generateApiKey(), ...viaCloudFront('203.0.113.201:61000') });
  expect(refused.status).toBe(429);
  // Other viewers behind the same edge (IPv4 and IPv6 forms) are unaffected: a wrong key is 401, a right one 200.
  expect((await api('GET', '/v1/campaigns/', { key: generateApiKey(), ...viaCloudFront('198.51.100.202:40000') })).status).toBe(401);
  expect((await api('GET', '/v1/campaigns/', { key: generateApiKey(), ...viaCloudFront('2001:db8::202:443') })).status).toBe(401);
  expect((await api('GET', '/v1/campaigns/', { key: apiKey, ...viaCloudFront('198.51.100.203:40000') })).status).toBe(200);
});

it('a forged CloudFront-Viewer-Address without the secret is refused (403, no handler runs), so it cannot dodge or aim a limit', async () => {
  const { apiKey } = await newAccount();
  for (const headers of <Record<string, string>[]>[
    { 'cloudfront-viewer-address': '198.51.100.9:1234' },
    { [ORIGIN_VERIFY_HEADER]: 'guess', 'cloudfront-viewer-address': '198.51.100.9:1234' },
    {},
  ]) {
    const res = await api('GET', '/v1/campaigns/', { key: apiKey, sourceIp: '192.0.2.50', headers });
    expect([res.status, res.body]).toEqual([403, { detail: DIRECT_ACCESS_REFUSED }]);
  }
  // Public routes too (the bypass is closed for every route, the fallback included).
  for (const path of ['/health', '/docs/', '/v1/nothing-here/'])
    expect((await api('GET', path, { sourceIp: '192.0.2.50' })).status).toBe(403);
  // Through the distribution it answers as usual.
  expect((await api('GET', '/v1/campaigns/', { key: apiKey, ...viaCloudFront('198.51.100.9:1234') })).status).toBe(200);
});

it('without a configured secret (npm start), the socket address is the client and the viewer header is ignored', async () => {
  delete process.env[ORIGIN_VERIFY_ENV];
  await freshWindow();
  // Five failures from one source address, each claiming another viewer: the claims do not spread the count.
  for (let i = 0; i < 5; i++) {
    expect(
      (
        await api('GET', '/v1/campaigns/', {
          key: generateApiKey(),
          sourceIp: '192.0.2.61',
          headers: { 'cloudfront-viewer-address': `198.51.100.${i + 1}:80` },
        })
      ).status,
    ).toBe(401);
  }
  expect(
    (
      await api('GET', '/v1/campaigns/', {
        key: generateApiKey(),
        sourceIp: '192.0.2.61',
        headers: { 'cloudfront-viewer-address': '198.51.100.99:80' },
      })
    ).status,
  ).toBe(429);
});
