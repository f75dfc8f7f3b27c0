// Outgoing webhooks (issue 7, item 3): endpoint CRUD, a local receiver gets signed events exactly as the
// README documents them, failures retried with exponential backoff (time moved by the test's clock, the
// sweep run by hand), give-up and disabling after 3 days, SSRF targets refused at registration and at
// delivery, the outbox healing path, no second event for a replayed request, and the purge of a deleted
// endpoint's deliveries.
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Pollers } from '../../infra/local/pollers';
import { resetConfig } from '../../shared/config';
import { clock } from '../../shared/domain/clock';
import { EVENT_TYPES } from '../../shared/domain/events';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../shared/store/client';
import { getItem, queryAll } from '../../shared/store/ops';
import { applyProviderUpdate } from '../../shared/store/subscriptions';
import { edgeKeys, SWEEP_SHARDS, webhookKeys } from '../../shared/store/table';
import { dueDeliveries } from '../../shared/store/webhooks';
import { publishAll } from '../../shared/queue/publish';
import { sweepDeliveries, sweepOutbox, sweepPurges, GRACE_MS } from '../../shared/webhooks/sweep';
import { verifyWebhook } from '../../shared/webhooks/verify';
import { api, type ApiResponse } from '../support/api';
import { newAccount, pollUntil as pollFor } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** A local receiver: records every request; answers the statuses queued in `plan` (then 200). */
class Receiver {
  readonly received: Received[] = [];
  /** Statuses to answer per path, in order; 200 once a path's list is empty. */
  readonly plan = new Map<string, number[]>();
  private server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        this.received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        const status = this.plan.get(req.url ?? '')?.shift() ?? 200;
        if (status === 0) return; // hang: never answer
        // A redirect names a target that must never be followed.
        res.writeHead(status, {
          'content-type': 'text/plain',
          ...(status >= 300 && status < 400 ? { location: `${this.url}/followed` } : {}),
        });
        res.end('ok');
      });
    });
    await new Promise<void>((ok) => this.server?.listen(0, '127.0.0.1', () => ok()));
    this.url = `http://127.0.0.1:${(this.server?.address() as AddressInfo).port}`;
  }

  of(path: string): Received[] {
    return this.received.filter((r) => r.path === path);
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((ok) => this.server?.close(() => ok()));
  }
}

// Every wait in this file crosses the real path (the queue, the poller, the worker, the receiver), which a
// busy 2-core machine running the whole suite slows three- or fourfold: generous deadlines, no fixed sleeps.
jest.setTimeout(60_000);
const pollUntil: typeof pollFor = (fn, options) => pollFor(fn, { timeoutMs: 30_000, ...options });

let queues: TestQueues;
let pollers: Pollers;
const receiver = new Receiver();
let key: string;
let serial = 0;
const unique = (p: string) => `${p}-${++serial}-${Date.now().toString(36)}`;
const realNow = clock.now;

beforeAll(async () => {
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  process.env.WEBHOOK_TIMEOUT_MS = '1500';
  resetConfig();
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
  await receiver.start();
  ({ apiKey: key } = await newAccount('unlimited'));
});

afterAll(async () => {
  clock.now = realNow;
  await pollers?.stop();
  await queues?.stop();
  await receiver.stop();
  delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  delete process.env.WEBHOOK_TIMEOUT_MS;
  resetConfig();
});

afterEach(() => {
  clock.now = realNow;
});

const call = (method: string, path: string, body?: unknown, k: string = key) =>
  api(method, path, { key: k, ...(body === undefined ? {} : { body }) });

async function ok(res: Promise<ApiResponse>, status = 200): Promise<any> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r.body;
}

async function endpoint(path: string, events?: string[], k = key): Promise<{ id: string; secret: string }> {
  return ok(call('POST', '/v1/webhook-endpoints/', { url: `${receiver.url}${path}`, ...(events ? { events } : {}) }, k), 201);
}

async function newMember(k = key): Promise<any> {
  const name = unique('member');
  return ok(call('POST', '/v1/members/', { identifier: name, email: `${name}@example.com` }, k), 201);
}

const deliveries = async (endpointId: string) => ok(call('GET', `/v1/webhook-endpoints/${endpointId}/deliveries/`));

/**
 * What sweepDeliveries does (the same Query of the due partitions, the same `deliver` messages), limited
 * to one account. With the clock days ahead, the real sweep would find every retrying delivery in the
 * shared test table due (this file's SSRF endpoints, and other files' running at the same time), and this
 * file's worker would attempt all of them at every step: slow on a busy machine, and foreign to those
 * files' tests.
 */
async function sweepDeliveriesOf(accountId: string, nowMs: number): Promise<number> {
  const due = (await Promise.all(Array.from({ length: SWEEP_SHARDS }, (_, shard) => dueDeliveries(shard, nowMs))))
    .flat()
    .filter((d) => d.account_id === accountId);
  await publishAll(
    'webhook-deliveries',
    due.map((d) => ({ kind: 'deliver' as const, ...d })),
  );
  return due.length;
}

describe('webhook endpoints: CRUD', () => {
  it('creates (201, secret shown once), reads, lists, updates and deletes an endpoint', async () => {
    const { accountId: acct, apiKey } = await newAccount('regular');
    const created = await ok(call('POST', '/v1/webhook-endpoints/', { url: `${receiver.url}/crud`, description: 'Ours' }, apiKey), 201);
    expect(created).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      url: `${receiver.url}/crud`,
      description: 'Ours',
      events: [...EVENT_TYPES],
      enabled: true,
      disabled_reason: null,
      failing_since: null,
      created_at: expect.any(Number),
      secret: expect.stringMatching(/^whsec_[A-Za-z0-9_-]{43}$/),
    });
    const { secret, ...shown } = created;
    const got = await ok(call('GET', `/v1/webhook-endpoints/${created.id}/`, undefined, apiKey));
    expect(got).toEqual(shown);
    const list = await ok(call('GET', '/v1/webhook-endpoints/', undefined, apiKey));
    expect(list).toEqual({ count: 1, next: null, previous: null, results: [shown] });
    expect(JSON.stringify([got, list])).not.toContain(secret);
    // The secret is stored apart from the endpoint (the worker needs it to sign), never in the endpoint item.
    expect(JSON.stringify(await getItem(webhookKeys.webhookEndpoint(acct, created.id)))).not.toContain(secret);

    const patched = await ok(
      call('PATCH', `/v1/webhook-endpoints/${created.id}/`, { events: ['referral.created', 'referral.created'], enabled: false }, apiKey),
    );
    expect(patched).toMatchObject({ events: ['referral.created'], enabled: false });
    const bad = await call('PATCH', `/v1/webhook-endpoints/${created.id}/`, { events: ['referral.deleted'], url: 'ftp://x' }, apiKey);
    expect({ status: bad.status, body: bad.body }).toEqual({
      status: 400,
      body: { url: ['Enter a valid URL.'], events: ['"referral.deleted" is not a valid choice.'] },
    });
    expect((await call('POST', '/v1/webhook-endpoints/', { events: [] }, apiKey)).body).toEqual({
      url: ['This field is required.'],
      events: ['This list may not be empty.'],
    });

    expect((await call('DELETE', `/v1/webhook-endpoints/${created.id}/`, undefined, apiKey)).status).toBe(204);
    expect((await call('GET', `/v1/webhook-endpoints/${created.id}/`, undefined, apiKey)).status).toBe(404);
    expect((await call('GET', `/v1/webhook-endpoints/${created.id}/deliveries/`, undefined, apiKey)).status).toBe(404);
    expect(await getItem(webhookKeys.webhookSecret(acct, created.id))).toBeUndefined();
    expect((await ok(call('GET', '/v1/webhook-endpoints/', undefined, apiKey))).count).toBe(0);
  });

  it('an Idempotency-Key replay of the create does not show (nor store) the secret again', async () => {
    const { accountId: acct, apiKey } = await newAccount('regular');
    const idem = { 'idempotency-key': unique('hook') };
    const body = { url: `${receiver.url}/idem` };
    const first = await api('POST', '/v1/webhook-endpoints/', { key: apiKey, body, headers: idem });
    expect(first.status).toBe(201);
    expect(first.body.secret).toMatch(/^whsec_/);
    const again = await api('POST', '/v1/webhook-endpoints/', { key: apiKey, body, headers: idem });
    expect({ status: again.status, replayed: again.headers['idempotent-replayed'], body: again.body }).toEqual({
      status: 201,
      replayed: 'true',
      body: { ...first.body, secret: null },
    });
    expect((await ok(call('GET', '/v1/webhook-endpoints/', undefined, apiKey))).count).toBe(1);
    const record = await getItem(edgeKeys.idempotency(acct, createHash('sha256').update(idem['idempotency-key']).digest('hex')));
    expect(record?.state).toBe('completed');
    expect(JSON.stringify(record)).not.toContain(first.body.secret);
  });

  it("another account's endpoint is 404", async () => {
    const other = await newAccount('regular');
    const theirs = await endpoint('/theirs', undefined, other.apiKey);
    for (const [method, path] of [
      ['GET', `/v1/webhook-endpoints/${theirs.id}/`],
      ['PATCH', `/v1/webhook-endpoints/${theirs.id}/`],
      ['DELETE', `/v1/webhook-endpoints/${theirs.id}/`],
      ['GET', `/v1/webhook-endpoints/${theirs.id}/deliveries/`],
    ] as const) {
      const res = await call(method, path, method === 'PATCH' ? { enabled: false } : undefined);
      expect({ path, method, status: res.status }).toEqual({ path, method, status: 404 });
    }
  });
});

describe('SSRF', () => {
  const refused = (message: string) => ({ status: 400, body: { url: [message] } });
  const PRIVATE = "The URL's host resolves to a private, loopback, link-local or reserved address.";

  it('refuses non-https URLs and private, link-local, CGNAT, multicast, unspecified and IPv6 ULA/link-local hosts', async () => {
    const cases: [string, ReturnType<typeof refused>][] = [
      ['http://example.com/hook', refused('The URL must use https.')],
      ['https://10.0.0.1/hook', refused(PRIVATE)],
      ['https://172.16.5.4/hook', refused(PRIVATE)],
      ['https://192.168.1.1/hook', refused(PRIVATE)],
      ['https://169.254.169.254/latest/meta-data/', refused(PRIVATE)],
      ['https://100.64.0.1/', refused(PRIVATE)],
      ['https://0.0.0.0/', refused(PRIVATE)],
      ['https://224.0.0.1/', refused(PRIVATE)],
      ['https://[fd00::1]/', refused(PRIVATE)],
      ['https://[fe80::1]/', refused(PRIVATE)],
      ['https://[::]/', refused(PRIVATE)],
      ['https://[::ffff:10.0.0.1]/', refused(PRIVATE)],
      ['https://user:pass@example.com/', refused('The URL must not contain credentials.')],
      ['javascript:alert(1)', refused('Enter a valid URL.')],
    ];
    for (const [url, expected] of cases) {
      const res = await call('POST', '/v1/webhook-endpoints/', { url });
      expect({ url, status: res.status, body: res.body }).toEqual({ url, ...expected });
    }
  });

  // Issue 11 item 8: IPv6 forms that carry a private IPv4 address, or that are refused whatever they carry.
  const EMBEDDED = [
    '[::a9fe:a9fe]',
    '[::10.0.0.1]',
    '[::ffff:0:a9fe:a9fe]',
    '[64:ff9b:1::a9fe:a9fe]',
    '[0:0:0:0:0:0:a9fe:a9fe]',
    '[::A9FE:A9FE]',
    '[::169.254.169.254]',
    '[::8.8.8.8]',
    '[0:0:0:0:ffff:0:169.254.169.254]',
    '[::FFFF:0:A9FE:A9FE]',
    '[::ffff:0:8.8.8.8]',
    '[0064:ff9b:0001:0000:0000:0000:a9fe:a9fe]',
    '[64:FF9B:1::10.0.0.1]',
    '[64:ff9b:1::8.8.8.8]',
    '[::ffff:169.254.169.254]',
    '[0:0:0:0:0:FFFF:A9FE:A9FE]',
    '[64:ff9b::a9fe:a9fe]',
    '[64:ff9b::10.0.0.1]',
  ];

  it('refuses IPv6 hosts that carry an IPv4 address (compatible, mapped, translated, NAT64) in every notation', async () => {
    for (const host of EMBEDDED) {
      const res = await call('POST', '/v1/webhook-endpoints/', { url: `https://${host}/hook` });
      expect({ host, status: res.status, body: res.body }).toEqual({ host, ...refused(PRIVATE) });
    }
  });

  it('refuses those hosts again at delivery (an endpoint stored before the filter knew them)', async () => {
    const { accountId: acct, apiKey } = await newAccount('regular');
    const registered: { id: string; host: string }[] = [];
    for (const host of EMBEDDED.slice(0, 8)) {
      const { id } = await endpoint(`/embedded-${registered.length}`, ['member.created'], apiKey);
      // What an older filter let through: the stored URL is changed under the API's feet.
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: webhookKeys.webhookEndpoint(acct, id),
          UpdateExpression: 'SET #url = :url',
          ExpressionAttributeNames: { '#url': 'url' },
          ExpressionAttributeValues: { ':url': `https://${host}/hook` },
        }),
      );
      registered.push({ id, host });
    }
    await newMember(apiKey);
    for (const { id, host } of registered) {
      const [delivery] = (await pollUntil(async () => {
        const d = await ok(call('GET', `/v1/webhook-endpoints/${id}/deliveries/`, undefined, apiKey));
        return d.results[0]?.attempt_count === 1 ? d.results : null;
      })) as any[];
      expect({ host, delivery }).toMatchObject({
        host,
        delivery: { status: 'retrying', attempts: [{ attempt: 1, status_code: null, error: `refused: ${PRIVATE}` }] },
      });
    }
  });

  it('loopback is refused outside local mode, at registration and again at delivery', async () => {
    const { apiKey } = await newAccount('regular');
    const registered = await endpoint('/rebind', ['member.created'], apiKey);
    process.env.WEBHOOK_ALLOW_LOOPBACK = '0';
    resetConfig();
    try {
      for (const url of [`${receiver.url}/x`, 'https://127.0.0.1/x', 'https://localhost/x', 'https://[::1]/x']) {
        const res = await call('POST', '/v1/webhook-endpoints/', { url }, apiKey);
        expect({ url, status: res.status }).toEqual({ url, status: 400 });
      }
      // The endpoint registered while loopback was allowed: its deliveries are refused now, nothing is sent.
      await newMember(apiKey);
      const [delivery] = (await pollUntil(async () => {
        const d = await ok(call('GET', `/v1/webhook-endpoints/${registered.id}/deliveries/`, undefined, apiKey));
        return d.results[0]?.attempt_count === 1 ? d.results : null;
      })) as any[];
      expect(delivery).toMatchObject({
        status: 'retrying',
        attempts: [{ attempt: 1, status_code: null, error: expect.stringMatching(/^refused: /) }],
      });
      expect(receiver.of('/rebind')).toHaveLength(0);
    } finally {
      process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
      resetConfig();
    }
  });
});

describe('delivery', () => {
  it('a receiver gets signed events exactly as documented; a replayed request sends no second event', async () => {
    const hook = await endpoint('/signed', ['member.created', 'referral.created']);
    const member = await newMember();
    const body = { user_identifier: unique('user'), member_code: member.code };
    const referral = await ok(call('POST', '/v1/referrals/', body));
    const got = await pollUntil(() => (receiver.of('/signed').length >= 2 ? receiver.of('/signed') : null));

    const events = got.map((r) => ({ r, event: JSON.parse(r.body) }));
    const memberEvent = events.find((e) => e.event.type === 'member.created');
    const referralEvent = events.find((e) => e.event.type === 'referral.created');
    expect(memberEvent?.event).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'member.created',
      created_at: expect.any(Number),
      data: member,
    });
    expect(referralEvent?.event).toEqual({
      id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
      type: 'referral.created',
      created_at: referral.created_at,
      data: referral,
    });
    for (const { r, event } of events) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers['refloop-event-id']).toBe(event.id);
      expect(r.headers['refloop-event-type']).toBe(event.type);
      const signature = String(r.headers['refloop-signature']);
      expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
      expect(verifyWebhook(r.body, signature, hook.secret)).toEqual({ ok: true, timestamp: expect.any(Number) });
      expect(verifyWebhook(r.body, signature, 'whsec_wrong').ok).toBe(false);
    }

    // The same referral again (a replay of the pair) and the member with an Idempotency-Key replay: no new events.
    expect((await call('POST', '/v1/referrals/', body)).status).toBe(200);
    const list = await pollUntil(async () => {
      const d = await deliveries(hook.id);
      return d.results.every((x: { status: string }) => x.status === 'succeeded') ? d : null;
    });
    expect(list.count).toBe(2);
    expect(list.results.map((d: { event_type: string }) => d.event_type).sort()).toEqual(['member.created', 'referral.created']);
    expect(list.results[0]).toMatchObject({
      status: 'succeeded',
      attempt_count: 1,
      next_retry_at: null,
      attempts: [{ attempt: 1, status_code: 200, duration_ms: expect.any(Number), error: null }],
    });
    // Not subscribed: referral.converted etc. never reach it; nothing else arrived meanwhile.
    expect(receiver.of('/signed')).toHaveLength(2);
  });

  it('subscription.updated, referral.converted and reward.created reach the receiver from the workers and the conversion', async () => {
    const { accountId: acct, apiKey } = await newAccount('regular');
    const hook = await endpoint('/lifecycle', ['subscription.updated', 'referral.converted', 'reward.created'], apiKey);
    const campaign = await ok(call('POST', '/v1/campaigns/', { name: 'Credit', allows_credit: true, credit_amount: '5.00' }, apiKey), 201);
    const name = unique('referrer');
    const referrer = await ok(
      call('POST', '/v1/members/', { identifier: name, email: `${name}@example.com`, campaign: { id: campaign.id } }, apiKey),
      201,
    );
    const referral = await ok(call('POST', '/v1/referrals/', { user_identifier: unique('buyer'), member_code: referrer.code }, apiKey));
    // The provider's copy with its first paid payment, as the subscription-sync worker stores it.
    const subscriptionId = 91_000_000 + (Date.now() % 1_000_000);
    await applyProviderUpdate(acct, {
      subscriptionId,
      asOfMs: Date.now(),
      fields: {
        status: 'active',
        currency: 'USD',
        email: 'buyer@example.com',
        unit_price: '10.00',
        next_bill_date: '2031-01-01',
        last_bill_date: '2030-12-01',
        plan: { id: 9001, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' },
      },
      payment: {
        id: 5_000_001,
        subscription_id: subscriptionId,
        order_id: null,
        amount: 1000,
        currency: 'USD',
        paid_at: Math.floor(Date.now() / 1000),
        status: 'paid',
      },
    });
    const converted = await ok(call('POST', `/v1/referrals/${referral.id}/conversion/`, { subscription_id: subscriptionId }, apiKey));
    const events = await pollUntil(() => {
      const got = receiver.of('/lifecycle').map((r) => JSON.parse(r.body));
      return ['subscription.updated', 'referral.converted', 'reward.created'].every((t) => got.some((e) => e.type === t)) ? got : null;
    });
    const byType = (t: string) => events.filter((e: { type: string }) => e.type === t);
    expect(byType('referral.converted').map((e: { data: unknown }) => e.data)).toEqual([converted]);
    expect(byType('subscription.updated')[0].data).toMatchObject({
      id: subscriptionId,
      status: 'active',
      plan: { descriptor: '$10.00 / month' },
    });
    const reward = (await ok(call('GET', `/v1/referrals/${referral.id}/`, undefined, apiKey))).rewards[0];
    expect(byType('reward.created').map((e: { data: unknown }) => e.data)).toEqual([
      { ...reward, referral_id: referral.id, member_id: referrer.id },
    ]);
    // The rewards worker evaluates again later (a replay, a later alert): the same reward, no second event.
    await ok(call('POST', `/v1/referrals/${referral.id}/conversion/`, { subscription_id: subscriptionId }, apiKey));
    const list = await pollUntil(async () => {
      const d = await ok(call('GET', `/v1/webhook-endpoints/${hook.id}/deliveries/`, undefined, apiKey));
      return d.results.every((x: { status: string }) => x.status === 'succeeded') ? d : null;
    });
    expect(list.count).toBe(events.length);
    expect(byType('reward.created')).toHaveLength(1);

    // Deleting the endpoint removes its deliveries too (the sweep drives the purge, page by page).
    expect((await call('DELETE', `/v1/webhook-endpoints/${hook.id}/`, undefined, apiKey)).status).toBe(204);
    expect((await queryAll({ partitionValue: webhookKeys.webhookDeliveriesOf(acct, hook.id), consistent: true })).length).toBe(
      events.length,
    );
    await pollUntil(
      async () => {
        await sweepPurges();
        const left = await queryAll({ partitionValue: webhookKeys.webhookDeliveriesOf(acct, hook.id), consistent: true });
        return left.length === 0 && (await getItem(webhookKeys.webhookPurge(acct, hook.id))) === undefined;
      },
      { intervalMs: 300 },
    );
  });

  it('failures are retried with exponential backoff until a success', async () => {
    const hook = await endpoint('/flaky', ['member.created']);
    receiver.plan.set('/flaky', [500, 503]);
    await newMember();
    const first = await pollUntil(async () =>
      (await deliveries(hook.id)).results[0]?.attempt_count === 1 ? (await deliveries(hook.id)).results[0] : null,
    );
    expect(first).toMatchObject({ status: 'retrying', attempts: [{ attempt: 1, status_code: 500, error: 'HTTP 500' }] });
    expect(first.next_retry_at - first.attempts[0].attempted_at).toBeGreaterThanOrEqual(59);
    expect(first.next_retry_at - first.attempts[0].attempted_at).toBeLessThanOrEqual(61);
    expect((await ok(call('GET', `/v1/webhook-endpoints/${hook.id}/`))).failing_since).toEqual(expect.any(Number));

    // Not due yet: a sweep now sends nothing to it.
    await sweepDeliveries();
    expect(receiver.of('/flaky')).toHaveLength(1);

    // One minute later the sweep finds it due: attempt 2 fails, the next wait doubles.
    let offset = 61_000;
    clock.now = () => realNow() + offset;
    await sweepDeliveries(clock.now());
    const second = await pollUntil(async () =>
      (await deliveries(hook.id)).results[0]?.attempt_count === 2 ? (await deliveries(hook.id)).results[0] : null,
    );
    expect(second).toMatchObject({
      status: 'retrying',
      attempts: [
        { attempt: 2, status_code: 503 },
        { attempt: 1, status_code: 500 },
      ],
    });
    const wait = second.next_retry_at - second.attempts[0].attempted_at;
    expect(wait).toBeGreaterThanOrEqual(119);
    expect(wait).toBeLessThanOrEqual(121);

    offset += 121_000;
    await sweepDeliveries(clock.now());
    const third = await pollUntil(async () =>
      (await deliveries(hook.id)).results[0]?.status === 'succeeded' ? (await deliveries(hook.id)).results[0] : null,
    );
    expect(third).toMatchObject({
      attempt_count: 3,
      next_retry_at: null,
      attempts: [{ attempt: 3, status_code: 200, error: null }, { attempt: 2 }, { attempt: 1 }],
    });
    expect(receiver.of('/flaky')).toHaveLength(3);
    // The three bodies are the same event; each attempt is signed afresh.
    expect(new Set(receiver.of('/flaky').map((r) => r.body)).size).toBe(1);
    expect((await ok(call('GET', `/v1/webhook-endpoints/${hook.id}/`))).failing_since).toBeNull();
  });

  // About 20 attempts, each a real round through the queue, the worker and the receiver: about 10 s alone,
  // three or four times that on a busy 2-core machine running the whole suite. Hence its own timeout.
  it('an endpoint failing for 3 days: the delivery is given up and the endpoint disabled', async () => {
    const { accountId: acct, apiKey } = await newAccount('regular');
    const hook = await endpoint('/down', ['member.created'], apiKey);
    receiver.plan.set(
      '/down',
      Array.from({ length: 60 }, () => 500),
    );
    await newMember(apiKey);
    const list = () => ok(call('GET', `/v1/webhook-endpoints/${hook.id}/deliveries/`, undefined, apiKey));
    // The first attempt, made by the fan-out's own message.
    let last: any = await pollUntil(async () => {
      const d = (await list()).results[0];
      return d && d.attempt_count > 0 && d.status !== 'pending' ? d : null;
    });
    // The service's own decision after each failed attempt: the wait it scheduled (next_retry_at - attempted_at,
    // one write, one clock). The observed gaps between attempts add the sweep's and the queue's real latency.
    const scheduled: number[] = [];
    for (let step = 0; step < 40 && last.status === 'retrying'; step++) {
      scheduled.push(last.next_retry_at - Math.max(...last.attempts.map((a: { attempted_at: number }) => a.attempted_at)));
      const attempts = last.attempt_count;
      const offset = last.next_retry_at * 1000 - realNow() + 1000;
      clock.now = () => realNow() + offset;
      expect(await sweepDeliveriesOf(acct, clock.now())).toBe(1);
      // The attempt count grows when the outcome is recorded (the count is the history's length).
      last = await pollUntil(async () => {
        const d = (await list()).results[0];
        return d?.attempt_count > attempts ? d : null;
      });
    }
    expect(last.status).toBe('failed');
    // Backoff: every wait doubled from 1 minute up to the 6-hour ceiling, over 3 days.
    const times = [...last.attempts].reverse().map((a: { attempted_at: number }) => a.attempted_at);
    const waits = times.slice(1).map((t: number, i: number) => t - (times[i] as number));
    expect(waits[0]).toBeGreaterThanOrEqual(60);
    expect(waits[1]).toBeGreaterThanOrEqual(120);
    // The doubling reaches the 6-hour ceiling and never passes it. The wait runs from the attempt's end and
    // the view shows whole seconds of its start: a POST that crosses a second boundary adds 1 s (a run saw 21,601).
    expect(Math.max(...scheduled)).toBeGreaterThanOrEqual(6 * 3600);
    expect(Math.max(...scheduled)).toBeLessThanOrEqual(6 * 3600 + 2);
    expect((times[times.length - 1] as number) - (times[0] as number)).toBeLessThanOrEqual(3 * 24 * 3600);
    const disabled = await ok(call('GET', `/v1/webhook-endpoints/${hook.id}/`, undefined, apiKey));
    expect(disabled).toMatchObject({ enabled: false, disabled_reason: 'failing' });

    // Disabled: later events are not delivered to it; enabling it again clears the failure state.
    await newMember(apiKey);
    const enabled = await ok(call('PATCH', `/v1/webhook-endpoints/${hook.id}/`, { enabled: true }, apiKey));
    expect(enabled).toMatchObject({ enabled: true, disabled_reason: null, failing_since: null });
    receiver.plan.delete('/down');
  }, 120_000);

  it('a redirect is a failure and is not followed; a receiver that does not answer times out', async () => {
    const { apiKey } = await newAccount('regular');
    const moved = await endpoint('/moved', ['member.created'], apiKey);
    const silent = await endpoint('/silent', ['member.created'], apiKey);
    receiver.plan.set('/moved', [302]);
    receiver.plan.set('/silent', [0]);
    await newMember(apiKey);
    const firstAttempt = async (id: string) =>
      pollUntil(async () => (await ok(call('GET', `/v1/webhook-endpoints/${id}/deliveries/`, undefined, apiKey))).results[0]?.attempts[0]);
    expect(await firstAttempt(moved.id)).toMatchObject({ status_code: 302, error: 'HTTP 302' });
    expect(await firstAttempt(silent.id)).toMatchObject({ status_code: null, error: 'timeout after 1500 ms' });
    expect(receiver.of('/followed')).toHaveLength(0);
  });

  it('the outbox heals a hand-off that did not happen: the sweep dispatches the committed event', async () => {
    await endpoint('/healed', ['member.created']);
    const url = process.env.WEBHOOK_EVENTS_QUEUE_URL;
    delete process.env.WEBHOOK_EVENTS_QUEUE_URL;
    resetConfig();
    let member: any;
    const since = realNow();
    try {
      member = await newMember();
    } finally {
      process.env.WEBHOOK_EVENTS_QUEUE_URL = url;
      resetConfig();
    }
    // Committed with the member, still in the outbox: nothing was delivered.
    expect(receiver.of('/healed')).toHaveLength(0);
    // A sweep 30 s later (the grace period) re-queues it. Limited to this test's window: the shared test
    // table holds other files' undispatched events (files that run no fan-out), which are not this test's.
    expect(await sweepOutbox(realNow() + GRACE_MS + 1000, since)).toBeGreaterThanOrEqual(1);
    await pollUntil(() => receiver.of('/healed').length === 1);
    expect(JSON.parse(receiver.of('/healed')[0]?.body ?? '{}')).toMatchObject({ type: 'member.created', data: { id: member.id } });
  });
});
