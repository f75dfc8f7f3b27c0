// Fault injection on the Paddle Billing and Stripe APIs (Classic's is in fault-injection.test.ts): the
// adapter's calls go through a proxy that delays (past the call timeout: a slow provider), fails (5xx),
// drops, or drops the answer of a committed write, and the emulator answers 429 with Retry-After. Whatever happens, every webhook ends applied: one
// conversion, one reward, one credit object at the provider, and the credit applied exactly once.
import type { Pollers } from '../../infra/local/pollers';
import { resetConfig } from '../../shared/config';
import { api } from '../support/api';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { newAccount, pollUntil } from '../support/fixtures';
import { deliver, PROVIDER_HARNESSES, type ProviderHarness } from '../support/provider-harness';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let pollers: Pollers;

beforeAll(async () => {
  // Short attempts: the proxy's delays (100-500 ms) then also time calls out (a slow provider), and a
  // faulted record is retried within the test's deadline.
  process.env.PROVIDER_TIMEOUT_MS = '300';
  resetConfig();
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  delete process.env.PROVIDER_TIMEOUT_MS;
  resetConfig();
});

const JSON_PROVIDERS = PROVIDER_HARNESSES.filter((h) => h.kind !== 'paddle-classic');

describe.each(JSON_PROVIDERS.map((h) => [h.kind, h] as const))('%s API under faults', (_kind, provider: ProviderHarness) => {
  let proxy: FaultProxy;
  beforeAll(async () => {
    await provider.start();
    proxy = await startFaultProxy({ target: provider.apiUrl(), flavour: 'paddle', seed: 20261124, faultRate: 0 });
  });
  afterAll(async () => {
    await proxy?.stop();
    await provider.stop();
  });

  it('applies every webhook once and the credit exactly once through 429s, 5xx, drops, lost answers and delays', async () => {
    const { accountId, apiKey: key } = await newAccount();
    await provider.connect(accountId, proxy.url);
    const json = (method: string, path: string, body?: unknown) => api(method, path, { key, ...(body === undefined ? {} : { body }) });
    const campaign = await json('POST', '/v1/campaigns/', {
      name: `faults-${provider.kind}`,
      allows_credit: true,
      credit_amount: '5.00',
      credit_currency: 'USD',
    });
    const own = await provider.checkout('faulty-referrer@example.com');
    for (const d of own.deliveries) expect((await deliver(accountId, d)).status).toBe(200);
    await pollUntil(async () => ((await json('GET', `/v1/subscriptions/${own.subscriptionId}/`)).status === 200 ? true : null), {
      timeoutMs: 30_000,
    });
    const member = await json('POST', '/v1/members/', {
      identifier: 'faulty',
      email: 'faulty@example.com',
      campaign: { id: campaign.body.id },
      subscription: { id: own.subscriptionId },
    });
    const ref = await json('POST', '/v1/referrals/', { user_identifier: 'faulty-buyer', member_code: member.body.code });
    const before = provider.creditObjects();

    // From here on, half the API calls fail one way or another, and the first three are rate limited.
    proxy.setFaultRate(0.5);
    provider.failNext(3, 429);
    const out = await provider.checkout('faulty-buyer@example.com', ref.body.id);
    for (const d of out.deliveries) expect((await deliver(accountId, d)).status).toBe(200);
    for (const d of out.deliveries) expect((await deliver(accountId, d)).status).toBe(200);

    const rewarded = await pollUntil(
      async () => {
        const body = (await json('GET', `/v1/referrals/${ref.body.id}/`)).body;
        return body.rewards?.length === 1 ? body : null;
      },
      { timeoutMs: 60_000 },
    );
    expect(rewarded).toMatchObject({ is_converted: true, rewards: [{ type: 'credit', amount: '5.00' }] });
    await pollUntil(async () => (provider.creditOn(own.subscriptionId) === 500 ? true : null), { timeoutMs: 60_000 });
    proxy.setFaultRate(0);
    // Settled: still one credit, one provider-side credit object, one reward.
    await pollUntil(async () => ((await queues.count('rewards')) === 0 && (await queues.count('provider-events')) === 0 ? true : null), {
      timeoutMs: 30_000,
    });
    expect(provider.creditOn(own.subscriptionId)).toBe(500);
    expect(provider.creditObjects() - before).toBe(1);
    expect((await json('GET', `/v1/referrals/${ref.body.id}/`)).body.rewards).toHaveLength(1);
    const stats = proxy.stats();
    expect(stats.dropped + stats.errored + stats.responseDropped + stats.delayed).toBeGreaterThan(0);
  });
});
