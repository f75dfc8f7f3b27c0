// The metric contract end to end (shared/metrics.ts): with REFLOOP_METRICS=1 the handlers and the workers
// (run by the test pollers in this process) print their EMF lines on stdout, captured here. Each business
// event is counted exactly once: a referral created (not its replay), a conversion (not its replay, by the
// API or by a provider event delivered twice) and the reward its evaluation writes, a credit applied at the
// provider, a provider call that fails for good after its retries (one call, one error, not one per
// attempt), a provider webhook's lag from the intake to the worker, and a failed attempt to deliver an
// outgoing webhook.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pollers } from '../../infra/local/pollers';
import { freePort } from '../../infra/local/dynamodb';
import { resetConfig } from '../../shared/config';
import { resetMetrics } from '../../shared/metrics';
import { saveProviderConnection } from '../../shared/store/provider';
import { applyProviderUpdate } from '../../shared/store/subscriptions';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';
import { deliver, PROVIDER_HARNESSES } from '../support/provider-harness';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

interface Emf {
  _aws: { CloudWatchMetrics: { Namespace: string; Dimensions: string[][]; Metrics: { Name: string; Unit: string }[] }[] };
  [key: string]: unknown;
}

const written: string[] = [];
let queues: TestQueues;
let pollers: Pollers;
let receiver: Server;
let receiverUrl = '';
let received = 0;
let serial = 0;
const unique = (p: string) => `${p}-${++serial}-${Date.now().toString(36)}`;

beforeAll(async () => {
  process.env.REFLOOP_METRICS = '1';
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  process.env.WEBHOOK_TIMEOUT_MS = '1500';
  resetConfig();
  resetMetrics();
  jest.spyOn(process.stdout, 'write').mockImplementation(((chunk: unknown) => {
    written.push(Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk));
    return true;
  }) as unknown as typeof process.stdout.write);
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
  // A customer's endpoint that is down: every delivery attempt fails with a 500.
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(500).end('down');
    });
  });
  await new Promise<void>((ok) => receiver.listen(0, '127.0.0.1', () => ok()));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  receiver?.closeAllConnections();
  await new Promise<void>((ok) => receiver?.close(() => ok()));
  jest.restoreAllMocks();
  delete process.env.REFLOOP_METRICS;
  delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  delete process.env.WEBHOOK_TIMEOUT_MS;
  resetConfig();
  resetMetrics();
});

/** EMF lines printed since `from` (an index into `written`). */
function emfSince(from: number): Emf[] {
  return written
    .slice(from)
    .join('')
    .split('\n')
    .filter((line) => line.startsWith('{"_aws"'))
    .map((line) => JSON.parse(line) as Emf);
}

/** The lines holding metric `name` whose dimensions include `dims`. */
function linesOf(lines: Emf[], name: string, dims: Record<string, string> = {}): Emf[] {
  return lines.filter((l) => name in l && Object.entries(dims).every(([k, v]) => l[k] === v));
}

/** The sum of metric `name` (a value or an EMF value array) over those lines. */
function total(lines: Emf[], name: string, dims: Record<string, string> = {}): number {
  return linesOf(lines, name, dims).reduce((sum, l) => sum + [l[name]].flat().reduce((a: number, v) => a + Number(v), 0), 0);
}

/** How many values metric `name` has (one per emission) over those lines. */
function emissions(lines: Emf[], name: string, dims: Record<string, string> = {}): number {
  return linesOf(lines, name, dims).reduce((n, l) => n + [l[name]].flat().length, 0);
}

const settled = () =>
  pollUntil(
    async () =>
      (await queues.count('rewards')) +
        (await queues.count('provider-events')) +
        (await queues.count('webhook-events')) +
        (await queues.count('webhook-deliveries')) ===
      0
        ? true
        : null,
    { timeoutMs: 20_000 },
  );

async function ok(res: Promise<{ status: number; body: any; text: string }>, status = 200): Promise<any> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r.body;
}

describe('business events are counted once', () => {
  let key: string;
  let accountId: string;
  let campaignId: string;
  beforeAll(async () => {
    ({ accountId, apiKey: key } = await newAccount('unlimited'));
    campaignId = (
      await ok(
        api('POST', '/v1/campaigns/', {
          key,
          body: { name: 'metrics', allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' },
        }),
        201,
      )
    ).id;
  });
  const call = (method: string, path: string, body?: unknown) => api(method, path, { key, ...(body === undefined ? {} : { body }) });

  it('a referral created: one ReferralsCreated, in the contract shape; its replay: none', async () => {
    const member = await ok(
      call('POST', '/v1/members/', { identifier: unique('referrer'), email: `${unique('r')}@example.com`, campaign: { id: campaignId } }),
      201,
    );
    const from = written.length;
    const input = { user_identifier: unique('buyer'), member_code: member.code };
    await ok(call('POST', '/v1/referrals/', input));
    const lines = emfSince(from);
    expect(linesOf(lines, 'ReferralsCreated')).toEqual([
      {
        _aws: {
          Timestamp: expect.any(Number),
          CloudWatchMetrics: [{ Namespace: 'Refloop', Dimensions: [['service']], Metrics: [{ Name: 'ReferralsCreated', Unit: 'Count' }] }],
        },
        service: 'refloop',
        ReferralsCreated: 1,
      },
    ]);
    const replayFrom = written.length;
    await ok(call('POST', '/v1/referrals/', input)); // the same pair: answered with the same referral
    expect(emissions(emfSince(replayFrom), 'ReferralsCreated')).toBe(0);
  });

  it('a conversion: one Conversions, then one credit reward from the evaluation; replaying the conversion counts nothing', async () => {
    await settled();
    const member = await ok(
      call('POST', '/v1/members/', { identifier: unique('referrer'), email: `${unique('r')}@example.com`, campaign: { id: campaignId } }),
      201,
    );
    const referral = await ok(call('POST', '/v1/referrals/', { user_identifier: unique('buyer'), member_code: member.code }));
    const subscriptionId = 93_000_000 + (Date.now() % 1_000_000);
    await applyProviderUpdate(accountId, {
      subscriptionId,
      asOfMs: Date.now(),
      fields: {
        status: 'active',
        currency: 'USD',
        email: `${unique('buyer')}@example.com`,
        unit_price: '10.00',
        next_bill_date: '2031-01-01',
        last_bill_date: '2030-12-01',
        plan: { id: 9001, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' },
      },
      payment: {
        id: 6_000_000 + (Date.now() % 1_000_000),
        subscription_id: subscriptionId,
        order_id: null,
        amount: 1000,
        currency: 'USD',
        paid_at: Math.floor(Date.now() / 1000),
        status: 'paid',
      },
    });
    const from = written.length;
    await ok(call('POST', `/v1/referrals/${referral.id}/conversion/`, { subscription_id: subscriptionId }));
    await ok(call('POST', `/v1/referrals/${referral.id}/conversion/`, { subscription_id: subscriptionId })); // replay
    await pollUntil(async () => ((await call('GET', `/v1/referrals/${referral.id}/`)).body.rewards.length === 1 ? true : null), {
      timeoutMs: 15_000,
    });
    await settled();
    const lines = emfSince(from);
    expect(emissions(lines, 'Conversions')).toBe(1);
    expect(total(lines, 'Conversions')).toBe(1);
    expect(emissions(lines, 'RewardsCreated', { RewardType: 'credit' })).toBe(1);
    expect(total(lines, 'RewardsCreated', { RewardType: 'credit' })).toBe(1);
    expect(linesOf(lines, 'RewardsCreated')[0]?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service', 'RewardType']]);
    expect(emissions(lines, 'RewardsCreated', { RewardType: 'commission' })).toBe(0);
  });
});

describe('provider calls', () => {
  it('a call that fails for good after its retries: one ProviderCalls, one ProviderErrors, one ProviderErrorsByCall', async () => {
    const { accountId, apiKey: key } = await newAccount();
    // Stripe at an address nobody listens on: every attempt is refused, the client retries within its budget.
    await saveProviderConnection(accountId, {
      kind: 'stripe',
      secretKey: 'sk_test_metrics',
      apiUrl: `http://127.0.0.1:${await freePort()}`,
      webhookSecret: 'whsec_metrics',
    });
    const member = await ok(
      api('POST', '/v1/members/', { key, body: { identifier: unique('referrer'), email: `${unique('r')}@example.com` } }),
      201,
    );
    const referral = await ok(api('POST', '/v1/referrals/', { key, body: { user_identifier: unique('buyer'), member_code: member.code } }));
    const from = written.length;
    const res = await api('POST', `/v1/referrals/${referral.id}/conversion/`, { key, body: { checkout_id: 'cs_test_metrics' } });
    expect(res.status).toBe(503);
    const lines = emfSince(from);
    expect(total(lines, 'ProviderCalls', { Provider: 'stripe' })).toBe(1);
    expect(total(lines, 'ProviderErrors', { Provider: 'stripe' })).toBe(1);
    expect(linesOf(lines, 'ProviderErrorsByCall')).toEqual([
      expect.objectContaining({
        _aws: expect.objectContaining({
          CloudWatchMetrics: [
            {
              Namespace: 'Refloop',
              Dimensions: [['service', 'Call', 'Provider']],
              Metrics: [{ Name: 'ProviderErrorsByCall', Unit: 'Count' }],
            },
          ],
        }),
        Provider: 'stripe',
        Call: 'retrieve-checkout-session',
        ProviderErrorsByCall: 1,
      }),
    ]);
    expect(emissions(lines, 'Conversions')).toBe(0);
  }, 30_000);
});

describe('webhook lag', () => {
  const classic = PROVIDER_HARNESSES.find((h) => h.kind === 'paddle-classic');
  beforeAll(() => classic?.start());
  afterAll(() => classic?.stop());

  it('one WebhookLag per provider event, from the intake to the worker, in milliseconds', async () => {
    if (!classic) throw new Error('no Classic harness');
    await settled();
    const { accountId, apiKey: key } = await newAccount();
    await classic.connect(accountId);
    const checkout = await classic.checkout(`${unique('buyer')}@example.com`);
    const from = written.length;
    for (const d of checkout.deliveries) expect((await deliver(accountId, d)).status).toBe(200);
    await pollUntil(
      async () => ((await api('GET', `/v1/subscriptions/${checkout.subscriptionId}/`, { key })).status === 200 ? true : null),
      { timeoutMs: 15_000 },
    );
    await settled();
    const lines = emfSince(from);
    expect(emissions(lines, 'WebhookLag', { Provider: 'paddle-classic' })).toBe(checkout.deliveries.length);
    const lag = linesOf(lines, 'WebhookLag')[0] as Emf;
    // Metrics with the same dimension set share a line (here the plan lookup's ProviderCalls may join it).
    expect(lag._aws.CloudWatchMetrics[0]).toEqual({
      Namespace: 'Refloop',
      Dimensions: [['service', 'Provider']],
      Metrics: expect.arrayContaining([{ Name: 'WebhookLag', Unit: 'Milliseconds' }]),
    });
    for (const v of [lag.WebhookLag].flat()) expect(Number(v)).toBeGreaterThanOrEqual(0);
    for (const v of [lag.WebhookLag].flat()) expect(Number(v)).toBeLessThan(15_000);
  }, 30_000);
});

describe('a referral converted by a provider event, then credited at the provider (Paddle Classic emulator)', () => {
  const classic = PROVIDER_HARNESSES.find((h) => h.kind === 'paddle-classic');
  beforeAll(() => classic?.start());
  afterAll(() => classic?.stop());

  it('one Conversions, one credit RewardsCreated and one CreditsApplied, however often the alerts come', async () => {
    if (!classic) throw new Error('no Classic harness');
    await settled();
    const { accountId, apiKey: key } = await newAccount();
    await classic.connect(accountId);
    const json = (method: string, path: string, body?: unknown) => api(method, path, { key, ...(body === undefined ? {} : { body }) });
    const campaign = await ok(
      json('POST', '/v1/campaigns/', { name: 'credited', allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' }),
      201,
    );
    const own = await classic.checkout(`${unique('referrer')}@example.com`);
    for (const d of own.deliveries) expect((await deliver(accountId, d)).status).toBe(200);
    await pollUntil(async () => ((await json('GET', `/v1/subscriptions/${own.subscriptionId}/`)).status === 200 ? true : null), {
      timeoutMs: 15_000,
    });
    const member = await ok(
      json('POST', '/v1/members/', {
        identifier: unique('referrer'),
        email: `${unique('r')}@example.com`,
        campaign: { id: campaign.id },
        subscription: { id: own.subscriptionId },
      }),
      201,
    );
    const referral = await ok(json('POST', '/v1/referrals/', { user_identifier: unique('buyer'), member_code: member.code }));
    await settled();

    const from = written.length;
    const bought = await classic.checkout(`${unique('buyer')}@example.com`, referral.id);
    for (const d of bought.deliveries) expect((await deliver(accountId, d)).status).toBe(200);
    for (const d of bought.deliveries) expect((await deliver(accountId, d)).status).toBe(200); // Paddle retries its alerts
    await pollUntil(async () => (classic.creditOn(own.subscriptionId) === 500 ? true : null), { timeoutMs: 20_000 });
    await settled();
    const lines = emfSince(from);
    expect(total(lines, 'Conversions')).toBe(1);
    expect(total(lines, 'RewardsCreated', { RewardType: 'credit' })).toBe(1);
    expect(emissions(lines, 'CreditsApplied')).toBe(1);
    expect(linesOf(lines, 'CreditsApplied')[0]?._aws.CloudWatchMetrics[0]?.Dimensions).toEqual([['service']]);
    expect(emissions(lines, 'WebhookLag', { Provider: 'paddle-classic' })).toBe(2 * bought.deliveries.length);
    expect(total(lines, 'ProviderErrors')).toBe(0);
    expect(total(lines, 'ProviderCalls', { Provider: 'paddle-classic' })).toBeGreaterThan(0); // the modifier, its lookups, the plan
  }, 60_000);
});

describe('outgoing webhooks', () => {
  it('a failed delivery attempt: one OutgoingWebhookFailures (its retry waits for the sweep)', async () => {
    await settled();
    const { apiKey: key } = await newAccount('unlimited');
    await ok(api('POST', '/v1/webhook-endpoints/', { key, body: { url: `${receiverUrl}/down`, events: ['member.created'] } }), 201);
    const before = received;
    const from = written.length;
    await ok(api('POST', '/v1/members/', { key, body: { identifier: unique('hooked'), email: `${unique('h')}@example.com` } }), 201);
    await pollUntil(() => (received > before ? true : null), { timeoutMs: 15_000 });
    await pollUntil(() => (emissions(emfSince(from), 'OutgoingWebhookFailures') > 0 ? true : null), { timeoutMs: 10_000 });
    await settled();
    const lines = emfSince(from);
    expect(received - before).toBe(1);
    expect(linesOf(lines, 'OutgoingWebhookFailures')).toEqual([
      {
        _aws: {
          Timestamp: expect.any(Number),
          CloudWatchMetrics: [
            { Namespace: 'Refloop', Dimensions: [['service']], Metrics: [{ Name: 'OutgoingWebhookFailures', Unit: 'Count' }] },
          ],
        },
        service: 'refloop',
        OutgoingWebhookFailures: 1,
      },
    ]);
  }, 30_000);
});
