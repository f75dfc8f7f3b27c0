// Fault injection (issue 4, item 6). The app talks to every dependency through a fault proxy
// (test/support/fault-proxy.ts): DynamoDB Local, the local SQS (the publisher and the pollers, so the
// real workers too) and the Paddle emulator. With 20% of the calls dropped, delayed, failed, or
// forwarded with their answer dropped, a mix of API requests and signed webhooks must get 2xx/4xx or
// 503 with Retry-After (never 500) and leave no partial write; once the faults stop, every webhook
// that got a 200 is applied (or parked in the DLQ), and after the clients' retries every reward
// exists exactly once, with at most one credit modifier each at the provider. Then Chargebee's own faults:
// a credit whose answer is lost, and 429/503 retried within the budget (its emulator's failAfterApply and
// failNext).
import { isAppliedType } from '../../shared/providers/chargebee/events';
import { format } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { startPaddleEmulator, type DeliveredAlert, type PaddleEmulator } from '../../infra/local/emulators/paddle-classic';
import type { Pollers } from '../../infra/local/pollers';
import { resetConfig } from '../../shared/config';
import { setLogLevel } from '../../shared/log';
import { resetQueueClient } from '../../shared/queue/publish';
import { createAccount } from '../../shared/store/accounts';
import { resetClients } from '../../shared/store/client';
import { saveProviderSettings } from '../../shared/store/provider';
import { keys } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { pollUntil } from '../support/fixtures';
import { startFaultProxy, type FaultProxy, type FaultStats } from '../support/fault-proxy';
import { chargebee, deliver, type Delivery as HarnessDelivery } from '../support/provider-harness';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

const FAULT_RATE = 0.2;
/** A shorter second phase with more faults, so more requests reach the 503 and half-written paths. */
const BURST_RATE = 0.5;
const SEED = Number(process.env.FAULT_SEED) || 20_240_917;
const STORM_USERS = 12;
const BURST_USERS = 6;

const directDynamo = process.env.DYNAMODB_ENDPOINT as string;
const tableName = process.env.TABLE_NAME as string;
// The test's own view of the table: straight to DynamoDB Local, never through the proxy or the app's client.
const direct = DynamoDBDocumentClient.from(
  new DynamoDBClient({
    endpoint: directDynamo,
    region: process.env.AWS_REGION || 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  }),
);

let dynamoProxy: FaultProxy;
let sqsProxy: FaultProxy;
let paddleProxy: FaultProxy;
let queues: TestQueues;
let pollers: Pollers;
let paddle: PaddleEmulator;
const proxies = () => [dynamoProxy, sqsProxy, paddleProxy];
const setFaultRate = (rate: number) => proxies().forEach((p) => p.setFaultRate(rate));

let accountId: string;
let key: string;

// Faults make the app and the workers log a lot (each 503, each failed record): kept, counted, not printed.
const logLines: string[] = [];
function captureLogs(): void {
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    jest.spyOn(console, method).mockImplementation((...args: unknown[]) => {
      logLines.push(format(...args));
    });
  }
  // The logger writes straight to the streams (info to stdout, warnings and errors to stderr).
  const writer = (chunk: unknown): boolean => {
    logLines.push(String(chunk));
    return true;
  };
  jest.spyOn(process.stdout, 'write').mockImplementation(writer as unknown as typeof process.stdout.write);
  jest.spyOn(process.stderr, 'write').mockImplementation(writer as unknown as typeof process.stderr.write);
}

beforeAll(async () => {
  captureLogs();
  // The logger is silent under Jest (global setup); this file reads every line it writes.
  setLogLevel('DEBUG');
  dynamoProxy = await startFaultProxy({ target: directDynamo, flavour: 'dynamodb', seed: SEED });
  process.env.DYNAMODB_ENDPOINT = dynamoProxy.url;
  resetConfig();
  resetClients();

  queues = await startTestQueues({ maxReceiveCount: 10 });
  sqsProxy = await startFaultProxy({ target: queues.endpoint, flavour: 'sqs', seed: SEED + 1 });
  process.env.SQS_ENDPOINT = sqsProxy.url;
  resetConfig();
  resetQueueClient();
  // The pollers receive and delete through the proxy too; their handlers use the app's clients.
  pollers = startTestPollers({ endpoint: sqsProxy.url, queueUrls: queues.queueUrls, dlqUrls: queues.dlqUrls }, { maxReceiveCount: 10 });

  paddle = await startPaddleEmulator({ webhookUrl: null });
  paddleProxy = await startFaultProxy({ target: paddle.url, flavour: 'paddle', seed: SEED + 2 });

  const { account, apiKey } = await createAccount({ name: 'fault-injection', plan: 'unlimited' });
  accountId = account.accountId;
  key = apiKey;
  await saveProviderSettings(accountId, {
    vendorId: paddle.vendorId,
    authCode: paddle.authCode,
    publicKey: paddle.publicKeyPem,
    vendorsApiUrl: `${paddleProxy.url}/vendors/api`,
    checkoutApiUrl: `${paddleProxy.url}/checkout/api`,
  });
}, 30_000);

afterAll(async () => {
  report();
  jest.restoreAllMocks();
  await pollers?.stop();
  process.env.DYNAMODB_ENDPOINT = directDynamo;
  process.env.SQS_ENDPOINT = queues?.endpoint ?? '';
  resetConfig();
  resetClients();
  resetQueueClient();
  await queues?.stop();
  for (const p of [dynamoProxy, sqsProxy, paddleProxy]) await p?.stop();
  await paddle?.stop();
  direct.destroy();
});

// ---- requests, and what each kind may answer -----------------------------------------------------------

interface Outcome {
  label: string;
  status: number;
  retryAfter: string | undefined;
  body: string;
  /** The same request again (the client's retry of a 503). */
  again?: () => Promise<ApiResponse>;
}
const outcomes: Outcome[] = [];

async function request(label: string, method: string, path: string, body?: unknown): Promise<ApiResponse> {
  const send = () => api(method, path, { key, ...(body === undefined ? {} : { body }) });
  const res = await send();
  outcomes.push({ label, status: res.status, retryAfter: res.headers['retry-after'], body: res.text.slice(0, 300), again: send });
  return res;
}

async function postAlert(label: string, fields: Record<string, string>): Promise<ApiResponse> {
  const res = await api('POST', `/webhooks/paddle/${accountId}/`, {
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  outcomes.push({ label, status: res.status, retryAfter: res.headers['retry-after'], body: res.text.slice(0, 300) });
  return res;
}

/** Statuses a request may answer under faults besides 503 (per label prefix). */
const ALLOWED: Record<string, number[]> = {
  'referral:create': [200],
  'referral:convert': [200],
  'referral:get': [200],
  'referral:by-user': [200],
  // The create answered 503: 404 when it wrote nothing, 200 when it wrote before failing.
  'referral:by-user-unconfirmed': [200, 404],
  'referral:list': [200],
  'referral:delete': [204],
  'member:create': [201],
  'member:get': [200],
  'member:patch': [200],
  'member:delete': [204],
  'member:list': [200],
  'campaign:create': [201],
  'campaign:list': [200],
  'campaign:delete': [204],
  'subscription:get': [200, 404],
  'subscription:list': [200],
  webhook: [200],
};

// ---- the account's fixed cast: two campaigns, four referrers with their own subscriptions -------------

interface Referrer {
  id: string;
  code: string;
  reward: 'credit' | 'commission';
  subscriptionId: number;
}
interface User {
  name: string;
  phase: 'storm' | 'burst';
  referrer: Referrer;
  checkout: { checkout_id: string; subscriptionId: number; alerts: DeliveredAlert[] };
  /** Renewal alerts, in the order Paddle sent them. */
  renewals: DeliveredAlert[];
  referralId?: string;
  convertedAt?: number;
}
const referrers: Referrer[] = [];
const users: User[] = [];
/** Every alert posted, and whether it ever got a 200 (and whether while faults were on). */
const alerts = new Map<string, { fields: Record<string, string>; ok200: boolean; okDuringFaults: boolean }>();

async function ok(res: Promise<ApiResponse>, status = 200): Promise<any> {
  const r = await res;
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${r.text}`);
  return r.body;
}

async function deliverAlert(label: string, fields: Record<string, string>, faults: boolean): Promise<boolean> {
  const id = fields.alert_id as string;
  const entry = alerts.get(id) ?? { fields, ok200: false, okDuringFaults: false };
  alerts.set(id, entry);
  const res = await postAlert(`webhook ${label}`, fields);
  if (res.status === 200) {
    entry.ok200 = true;
    if (faults) entry.okDuringFaults = true;
  }
  return res.status === 200;
}

async function waitForSubscription(subscriptionId: number): Promise<void> {
  await pollUntil(
    async () => {
      const { Item } = await direct.send(new GetCommand({ TableName: tableName, Key: keys.subscription(accountId, subscriptionId) }));
      return Item?.status === 'active';
    },
    { timeoutMs: 15_000 },
  );
}

/**
 * The traffic of a fault phase, each request tried once: per user (6 lanes) a referral, the checkout's
 * alerts (some twice, as Paddle does), the conversion (by subscription_id or checkout_id), the renewal
 * alerts and reads; meanwhile creates, updates, deletes and lists of other resources.
 */
async function traffic(list: User[], tag: string, extra: () => Promise<void> = async () => undefined): Promise<void> {
  const userScript = async (u: User, i: number) => {
    const created = await request('referral:create', 'POST', '/v1/referrals/', { user_identifier: u.name, member_code: u.referrer.code });
    if (created.status === 200) u.referralId = created.body.id;
    for (const alert of u.checkout.alerts) await deliverAlert(u.name, alert.fields, true);
    if (i % 3 === 0) for (const alert of u.checkout.alerts) await deliverAlert(`${u.name} again`, alert.fields, true);
    if (u.referralId) {
      const body = i % 2 === 0 ? { subscription_id: u.checkout.subscriptionId } : { checkout_id: u.checkout.checkout_id };
      const converted = await request('referral:convert', 'POST', `/referrals/${u.referralId}/conversion/`, body);
      if (converted.status === 200) u.convertedAt = converted.body.converted_at;
      await request('referral:get', 'GET', `/v1/referrals/${u.referralId}/`);
    }
    for (const alert of u.renewals) await deliverAlert(`${u.name} renewal`, alert.fields, true);
    // 404 is right when the create answered 503 without writing; 200 when it wrote before failing.
    await request(u.referralId ? 'referral:by-user' : 'referral:by-user-unconfirmed', 'GET', `/v1/referrals/user/${u.name}/`);
    await request('referral:list', 'GET', `/v1/referrals/?member=${u.referrer.id}&page_size=5`);
    await request('member:get', 'GET', `/v1/members/${u.referrer.id}/`);
    await request('subscription:get', 'GET', `/v1/subscriptions/${u.checkout.subscriptionId}/`);
  };

  const noise = async () => {
    for (let j = 0; j < 4; j++) {
      const n = `${tag}-${j}`;
      const c = await request('campaign:create', 'POST', '/v1/campaigns/', {
        name: `noise ${n}`,
        allows_credit: true,
        credit_amount: '1.00',
      });
      const m = await request('member:create', 'POST', '/v1/members/', {
        identifier: `noise-${n}`,
        email: `noise-${n}@example.com`,
        ...(c.status === 201 ? { campaign: { id: c.body.id } } : {}),
      });
      if (m.status === 201) {
        // Every third member is deleted at the end: a retry of its updates may find it gone (404).
        const doomed = j % 3 === 0 ? ' doomed' : '';
        // A new code moves the code claim (unknown after a 503: the update may or may not have landed).
        const patched = await request(`member:patch${doomed}`, 'PATCH', `/v1/members/${m.body.id}/`, {
          first_name: `Noise ${j}`,
          code: `N${tag.toUpperCase()}${j}`,
        });
        if (patched.status === 200) {
          const tmp = await request('referral:create', 'POST', '/v1/referrals/', {
            user_identifier: `tmp-${n}`,
            member_code: patched.body.code,
          });
          if (tmp.status === 200) await request('referral:delete', 'DELETE', `/v1/referrals/${tmp.body.id}/`);
        }
        // Deleting the campaign leaves the member pointing at a tombstone, dropped on its next update.
        if (c.status === 201 && j % 2 === 0) {
          await request('campaign:delete', 'DELETE', `/v1/campaigns/${c.body.id}/`);
          await request(`member:patch${doomed}`, 'PATCH', `/v1/members/${m.body.id}/`, { last_name: 'After' });
        }
        if (doomed) await request('member:delete', 'DELETE', `/v1/members/${m.body.id}/`);
      }
      await request('member:patch', 'PATCH', `/v1/members/${referrers[j % 4]!.id}/`, { last_name: `${tag} ${j}` });
      await request('referral:list', 'GET', '/v1/referrals/?page_size=3');
      await request('member:list', 'GET', '/v1/members/?page_size=3');
      await request('campaign:list', 'GET', '/v1/campaigns/');
      await request('subscription:list', 'GET', '/v1/subscriptions/?status=active&page_size=3');
    }
  };

  const queue = list.map((u) => [u, users.indexOf(u)] as const);
  await Promise.all([
    noise(),
    extra(),
    ...Array.from({ length: 6 }, async () => {
      for (let next = queue.shift(); next; next = queue.shift()) await userScript(next[0], next[1]);
    }),
  ]);
}

function expectNoBadAnswers(): void {
  const bad = outcomes.filter((o) => {
    if (o.status === 503) return !/^\d+$/.test(o.retryAfter ?? '');
    const kind = o.label.split(' ')[0] as string;
    return !(ALLOWED[kind] ?? []).includes(o.status);
  });
  expect(bad).toEqual([]);
}

/** Every alert that got a 200 while faults were on is applied (its marker is stored) or parked in the DLQ. */
async function checkAcceptedAlerts(minimum: number): Promise<void> {
  const accepted = [...alerts.entries()].filter(([, a]) => a.okDuringFaults);
  expect(accepted.length).toBeGreaterThan(minimum);
  await pollUntil(
    async () => {
      for (const m of await queues.receiveAll('provider-events-dlq')) {
        const id = (m.json as { fields?: { alert_id?: string } } | undefined)?.fields?.alert_id;
        if (id) parked.add(id);
        // The operator's redrive: back to the queue, now that the faults are over.
        await queues.client.send(new SendMessageCommand({ QueueUrl: queues.urlOf('provider-events'), MessageBody: m.body }));
      }
      const missing: string[] = [];
      for (const [id] of accepted) {
        if (parked.has(id)) continue;
        const { Item } = await direct.send(new GetCommand({ TableName: tableName, Key: keys.alert(accountId, id) }));
        if (!Item) missing.push(id);
      }
      if (missing.length > 0) throw new Error(`alerts accepted with 200 but not applied yet: ${missing.join(', ')}`);
      return true;
    },
    { timeoutMs: 40_000, intervalMs: 250 },
  );
  // Their effects: each accepted payment alert's payment is recorded, each created subscription stored.
  for (const [, a] of accepted) {
    if (parked.has(a.fields.alert_id as string)) continue;
    const subscriptionId = Number(a.fields.subscription_id);
    if (a.fields.alert_name === 'subscription_payment_succeeded') {
      const { Item } = await direct.send(
        new GetCommand({ TableName: tableName, Key: keys.payment(accountId, subscriptionId, Number(a.fields.subscription_payment_id)) }),
      );
      expect(Item).toMatchObject({ type: 'Payment', status: 'paid', subscription_id: subscriptionId });
    }
    if (a.fields.alert_name === 'subscription_created') {
      const { Item } = await direct.send(new GetCommand({ TableName: tableName, Key: keys.subscription(accountId, subscriptionId) }));
      expect(Item).toMatchObject({ type: 'Subscription', id: subscriptionId, email: a.fields.email });
    }
  }
}

describe('with 20% of the calls to DynamoDB, SQS and Paddle faulted', () => {
  it('setup without faults: campaigns, referrers with subscriptions, checkouts waiting to be reported', async () => {
    const credit = await ok(
      request('campaign:create', 'POST', '/v1/campaigns/', {
        name: 'Credit',
        allows_credit: true,
        credit_amount: '5.00',
        credit_currency: 'USD',
      }),
      201,
    );
    const commission = await ok(
      request('campaign:create', 'POST', '/v1/campaigns/', {
        name: 'Commission',
        allows_commission: true,
        commission_amount: '1.50',
        commission_currency: 'USD',
      }),
      201,
    );
    const cast = await Promise.all(
      [0, 1, 2, 3].map(async (i): Promise<Referrer> => {
        const out = await paddle.checkout({ plan_id: 9001, email: `referrer-${i}@example.com`, deliver: false });
        for (const alert of out.alerts) expect(await deliverAlert(`referrer-${i}`, alert.fields, false)).toBe(true);
        await waitForSubscription(out.subscription.subscription_id);
        const reward = i < 2 ? 'credit' : 'commission';
        const m = await ok(
          request('member:create', 'POST', '/v1/members/', {
            identifier: `referrer-${i}`,
            email: `referrer-${i}@example.com`,
            campaign: { id: reward === 'credit' ? credit.id : commission.id },
            subscription: { id: out.subscription.subscription_id },
          }),
          201,
        );
        return { id: m.id, code: m.code, reward, subscriptionId: out.subscription.subscription_id };
      }),
    );
    referrers.push(...cast);
    // The users' checkouts and one renewal each happen at Paddle now; their alerts reach us under faults.
    for (let i = 0; i < STORM_USERS + BURST_USERS; i++) {
      const name = `user-${i}`;
      const out = await paddle.checkout({ plan_id: 9001, email: `${name}@example.com`, deliver: false });
      const renewal = await paddle.renew(out.subscription.subscription_id, { deliver: false });
      users.push({
        name,
        phase: i < STORM_USERS ? 'storm' : 'burst',
        referrer: referrers[i % referrers.length] as Referrer,
        checkout: { checkout_id: out.checkout_id, subscriptionId: out.subscription.subscription_id, alerts: out.alerts },
        renewals: renewal.alerts,
      });
    }
    outcomes.length = 0;
    proxies().forEach((p) => p.resetStats());
  }, 30_000);

  it(`the storm at ${FAULT_RATE * 100}%: every answer is 2xx/4xx or 503 with Retry-After, never 500`, async () => {
    setFaultRate(FAULT_RATE);
    const started = Date.now();
    await traffic(
      users.filter((u) => u.phase === 'storm'),
      'storm',
    );
    setFaultRate(0);
    phases.storm = {
      ms: Date.now() - started,
      stats: proxies().map((p) => p.stats()),
      byOperation: proxies().map((p) => p.faultsByOperation()),
      answers503: outcomes.filter((o) => o.status === 503).length,
    };
    expectNoBadAnswers();
    for (const p of proxies()) {
      const s = p.stats();
      expect(s.dropped + s.errored + s.responseDropped + s.delayed).toBeGreaterThan(0);
    }
  }, 60_000);

  it('once the faults stop, every webhook that got a 200 is applied or parked in the DLQ', async () => {
    await checkAcceptedAlerts(STORM_USERS);
  }, 60_000);

  it('no partial write: the stored items are consistent right after the storm', async () => {
    await drained();
    expect(await violations()).toEqual([]);
  }, 60_000);

  it(`a burst at ${BURST_RATE * 100}%: still never 500; accepted webhooks applied or parked; no partial write`, async () => {
    proxies().forEach((p) => p.resetStats());
    const before = outcomes.length;
    // More renewals of the storm's commission users arrive during the burst too.
    const renewed = users.filter((u) => u.phase === 'storm' && u.referrer.reward === 'commission');
    const late = new Map<User, DeliveredAlert[]>();
    for (const u of renewed) {
      const more = (await paddle.renew(u.checkout.subscriptionId, { deliver: false })).alerts;
      u.renewals.push(...more);
      late.set(u, more);
    }
    setFaultRate(BURST_RATE);
    const started = Date.now();
    await traffic(
      users.filter((u) => u.phase === 'burst'),
      'burst',
      async () => {
        for (const [u, more] of late) for (const alert of more) await deliverAlert(`${u.name} late renewal`, alert.fields, true);
      },
    );
    setFaultRate(0);
    phases.burst = {
      ms: Date.now() - started,
      stats: proxies().map((p) => p.stats()),
      byOperation: proxies().map((p) => p.faultsByOperation()),
      answers503: outcomes.slice(before).filter((o) => o.status === 503).length,
    };
    expectNoBadAnswers();
    await checkAcceptedAlerts(BURST_USERS);
    await drained();
    expect(await violations()).toEqual([]);
  }, 80_000);

  it('after the clients retry, every reward exists exactly once and each credit has at most one modifier', async () => {
    // Paddle redelivers the alerts that did not get a 200; the app retries its 503s.
    for (const [id, a] of alerts) {
      if (!a.ok200) expect(await deliverAlert(`redelivery ${id}`, a.fields, false)).toBe(true);
    }
    for (const u of users) {
      const created = await ok(
        request('referral:create', 'POST', '/v1/referrals/', { user_identifier: u.name, member_code: u.referrer.code }),
      );
      if (u.referralId) expect(created.id).toBe(u.referralId); // idempotent: the same referral
      u.referralId = created.id;
      const converted = await ok(
        request('referral:convert', 'POST', `/v1/referrals/${u.referralId}/conversion/`, { subscription_id: u.checkout.subscriptionId }),
      );
      expect(converted.is_converted).toBe(true);
      if (u.convertedAt !== undefined) expect(converted.converted_at).toBe(u.convertedAt); // replay: unchanged
      u.convertedAt = converted.converted_at;
      // The other conversion input of the same subscription is a replay too.
      // The same subscription by its checkout: 200 unchanged when the conversion was recorded with that
      // checkout, else 400 "already converted" (the contract's "another" conversion input).
      const again = await request('referral:convert', 'POST', `/referrals/${u.referralId}/conversion/`, {
        checkout_id: u.checkout.checkout_id,
      });
      if (again.status === 200) expect(again.body.converted_at).toBe(u.convertedAt);
      else
        expect({ status: again.status, body: again.body }).toEqual({
          status: 400,
          body: { non_field_errors: [`Referral ${u.referralId} is already converted`] },
        });
    }

    // Rewards settle: credit = one reward for one of the subscription's payments; commission = one per paid payment.
    // Every other request that answered 503 is retried as a client would: a 503 changed nothing, so the
    // retry succeeds as the first attempt would have (no "already in use", no 404 for a delete).
    const retried = outcomes.filter(
      (o) => o.status === 503 && o.again && !/^(webhook|referral:create|referral:convert|referral:by-user)/.test(o.label),
    );
    for (const o of retried) {
      const res = await (o.again as () => Promise<ApiResponse>)();
      const kind = o.label.split(' ')[0] as string;
      const want = kind === 'subscription:get' ? 200 : (ALLOWED[kind] ?? [])[0];
      const fine = res.status === want || (o.label.endsWith('doomed') && res.status === 404);
      expect({ retry: o.label, status: res.status, body: fine ? '' : res.text }).toEqual({
        retry: o.label,
        status: fine ? res.status : want,
        body: '',
      });
    }
    retries503 = retried.length;

    const final = await pollUntil(
      async () => {
        await redriveDlqs();
        const problems: string[] = [];
        const out: Record<string, any> = {};
        for (const u of users) {
          const r = await ok(request('referral:get', 'GET', `/v1/referrals/${u.referralId}/`));
          out[u.name] = r;
          const paid = paddle
            .payments(u.checkout.subscriptionId)
            .filter((p) => p.is_paid === 1)
            .map((p) => p.id)
            .sort();
          const got = (r.rewards as { payment_id: number }[]).map((w) => w.payment_id).sort();
          if (u.referrer.reward === 'credit') {
            if (got.length !== 1 || !paid.includes(got[0] as number) || !r.rewards_completed)
              problems.push(`${u.name}: credit rewards ${JSON.stringify(got)}`);
          } else if (JSON.stringify(got) !== JSON.stringify(paid)) {
            problems.push(`${u.name}: commission rewards ${JSON.stringify(got)} for payments ${JSON.stringify(paid)}`);
          }
        }
        for (const ref of referrers.filter((x) => x.reward === 'credit')) {
          const rewardIds = users
            .filter((u) => u.referrer === ref)
            .flatMap((u) => (out[u.name].rewards as { id: string }[]).map((w) => w.id));
          const modifiers = paddle.modifiers(ref.subscriptionId);
          for (const id of rewardIds) {
            const n = modifiers.filter((m) => m.description.includes(id)).length;
            if (n > 1) throw new Error(`reward ${id} has ${n} modifiers`); // never: not even transiently
            if (n !== 1) problems.push(`reward ${id}: ${n} modifiers`);
          }
          if (modifiers.length !== rewardIds.length)
            problems.push(`referrer ${ref.id}: ${modifiers.length} modifiers for ${rewardIds.length} credits`);
        }
        if (problems.length > 0) throw new Error(problems.join('; '));
        return out;
      },
      { timeoutMs: 45_000, intervalMs: 500 },
    );

    // Stable: with the queues drained nothing more appears.
    await drained();
    for (const u of users) {
      const r = await ok(request('referral:get', 'GET', `/v1/referrals/${u.referralId}/`));
      expect(r.rewards).toEqual(final[u.name].rewards);
      const ids = (r.rewards as { id: string; payment_id: number }[]).map((w) => w.payment_id);
      expect(new Set(ids).size).toBe(ids.length);
    }
    for (const ref of referrers.filter((x) => x.reward === 'credit')) {
      const credits = users.filter((u) => u.referrer === ref).length;
      expect(paddle.modifiers(ref.subscriptionId)).toHaveLength(credits);
      expect(paddle.modifiers(ref.subscriptionId).every((m) => m.amount === '-5.000')).toBe(true);
    }

    // One referral per user, one conversion each, and the member stats add up.
    for (const ref of referrers) {
      const mine = users.filter((u) => u.referrer === ref);
      const member = await ok(request('member:get', 'GET', `/v1/members/${ref.id}/`));
      const rewards = mine.flatMap((u) => final[u.name].rewards as { amount: string }[]);
      const sum = rewards.reduce((a, w) => a + Math.round(Number(w.amount) * 100), 0);
      expect(member.stats).toMatchObject({
        referrals: mine.length,
        conversions: mine.length,
        [ref.reward === 'credit' ? 'credit_earned' : 'commission_earned']: (sum / 100).toFixed(2),
      });
      const listed = await ok(request('referral:list', 'GET', `/v1/referrals/?member=${ref.id}&page_size=100`));
      expect(listed.count).toBe(mine.length);
      expect(listed.results.map((r: { user_identifier: string }) => r.user_identifier).sort()).toEqual(mine.map((u) => u.name).sort());
    }
    expect(await violations()).toEqual([]);
    expect(await queues.count('provider-events-dlq')).toBe(0);
    expect(await queues.count('rewards-dlq')).toBe(0);
  }, 90_000);

  it('a status alert whose reward evaluation could not be queued: the redelivery queues it, the referral completes', async () => {
    // A commission referral completes when its subscription is cancelled, which only a reward evaluation
    // records. Here the cancellation is applied, then every send of an evaluation fails once.
    const u = users.find((x) => x.referrer.reward === 'commission') as User;
    const before = await ok(request('referral:get', 'GET', `/v1/referrals/${u.referralId}/`));
    expect(before.rewards_completed).toBe(false);
    const { alerts: cancelled } = await paddle.cancel(u.checkout.subscriptionId, { deliver: false });
    const alertId = cancelled[0]!.fields.alert_id as string;
    sqsProxy.resetStats();
    sqsProxy.setEligible((req) => req.body.includes('evaluate-referral'));
    sqsProxy.setModes(['error']);
    sqsProxy.setFaultRate(1);
    try {
      for (const alert of cancelled) expect(await deliverAlert(`${u.name} cancel`, alert.fields, false)).toBe(true);
      // Applied (its marker is stored), and the evaluation's send failed all its attempts.
      await pollUntil(
        async () => {
          const { Item } = await direct.send(new GetCommand({ TableName: tableName, Key: keys.alert(accountId, alertId) }));
          return Item !== undefined && sqsProxy.stats().errored >= 3;
        },
        { timeoutMs: 15_000 },
      );
    } finally {
      sqsProxy.setFaultRate(0);
      sqsProxy.setEligible(undefined);
      sqsProxy.setModes(['drop', 'delay', 'error', 'drop-response']);
    }
    const done = await pollUntil(
      async () => {
        const r = await ok(request('referral:get', 'GET', `/v1/referrals/${u.referralId}/`));
        return r.rewards_completed ? r : null;
      },
      { timeoutMs: 20_000 },
    );
    expect(done.subscription.status).toBe('deleted');
    expect(done.rewards).toEqual(before.rewards);
    await drained();
    expect(await violations()).toEqual([]);
  }, 40_000);

  it('a create whose every answer is lost: written once and answered 201, not 503 (then 400 "already in use" on retry)', async () => {
    // The first 16 TransactWriteItems of this member (all with the same ClientRequestToken) reach DynamoDB
    // and their answers are dropped: more than five full rounds of the SDK's three attempts, which was all
    // shared/store/ops.ts tried before a CI run answered a delete 503 after its write had landed.
    const LOST = 16;
    let lost = 0;
    dynamoProxy.setEligible((req) => {
      const hit =
        String(req.headers['x-amz-target']).endsWith('TransactWriteItems') && req.body.includes('lost-answer@example.com') && lost < LOST;
      if (hit) lost++;
      return hit;
    });
    dynamoProxy.setModes(['drop-response']);
    dynamoProxy.setFaultRate(1);
    try {
      const res = await request('member:create', 'POST', '/v1/members/', { identifier: 'lost-answer', email: 'lost-answer@example.com' });
      expect(lost).toBe(LOST);
      expect(res.status).toBe(201);
      expect((await ok(request('member:get', 'GET', `/v1/members/${res.body.id}/`))).identifier).toBe('lost-answer');
    } finally {
      dynamoProxy.setFaultRate(0);
      dynamoProxy.setEligible(undefined);
      dynamoProxy.setModes(['drop', 'delay', 'error', 'drop-response']);
    }
    expect(await violations()).toEqual([]);
  });

  it('no request was answered 500 and no unexpected error was logged', () => {
    expect(outcomes.filter((o) => o.status >= 500 && o.status !== 503)).toEqual([]);
    expect(logLines.filter((l) => l.includes('unhandled error'))).toEqual([]);
  });
});

// ---- Chargebee: a credit whose answer is lost, and rate limits within the retry budget ---------------
//
// The emulator's own faults (infra/local/emulators/chargebee/server.ts): `failAfterApply` applies the next
// POST and answers 500 (the change is saved, the answer lost); `failNext` answers the next calls 429 (with
// Retry-After: 1) or 503 before doing anything. The faults above are off by now (rate 0).
describe('Chargebee: a lost answer after a promotional credit was added, and 429/503 retried within the budget', () => {
  const cb = chargebee();
  let cbAccount: string;
  let cbKey: string;
  let serial = 0;
  const call = (method: string, path: string, body?: unknown) => api(method, path, { key: cbKey, ...(body === undefined ? {} : { body }) });
  const send = async (deliveries: HarnessDelivery[]) => {
    for (const d of deliveries) expect((await deliver(cbAccount, d)).status).toBe(200);
  };
  const rewardsOf = async (referralId: string, count: number) =>
    pollUntil(
      async () => {
        const r = (await call('GET', `/v1/referrals/${referralId}/`)).body;
        // A credit counts once it is applied at the provider (a commission stays pending until approved).
        const settled = r.rewards.every((w: { type: string; status: string }) => w.type !== 'credit' || w.status === 'applied');
        return r.rewards.length === count && settled ? r.rewards : null;
      },
      { timeoutMs: 25_000 },
    );

  /** A campaign, a referrer (with their own Chargebee subscription when `subscribed`) and a referral. */
  async function programme(terms: Record<string, unknown>, subscribed: boolean) {
    const n = ++serial;
    const campaign = await call('POST', '/v1/campaigns/', { name: `chargebee-faults-${n}`, ...terms });
    expect(campaign.status).toBe(201);
    let own: string | null = null;
    if (subscribed) {
      const out = await cb.checkout(`cb-referrer-${n}@example.com`);
      await send(out.deliveries);
      own = String(out.subscriptionId);
      await pollUntil(async () => ((await call('GET', `/v1/subscriptions/${own}/`)).status === 200 ? true : null), { timeoutMs: 20_000 });
    }
    const member = await call('POST', '/v1/members/', {
      identifier: `cb-m-${n}`,
      email: `cb-m-${n}@example.com`,
      campaign: { id: campaign.body.id },
      ...(own ? { subscription: { id: own } } : {}),
    });
    expect(member.status).toBe(201);
    const referral = await call('POST', '/v1/referrals/', { user_identifier: `cb-user-${n}`, member_code: member.body.code });
    expect(referral.status).toBe(200);
    return { referralId: referral.body.id as string, own };
  }

  beforeAll(async () => {
    setFaultRate(0);
    await cb.start();
    const { account, apiKey } = await createAccount({ name: 'fault-injection-chargebee', plan: 'unlimited' });
    cbAccount = account.accountId;
    cbKey = apiKey;
    await cb.connect(cbAccount);
  });
  afterAll(() => cb.stop());

  it("the credit's add is applied and its answer lost (500): the retry replays it, one promotional credit, one applied reward", async () => {
    const em = cb.emulator();
    const { referralId, own } = await programme({ allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' }, true);
    const customerId = em.ledger.subscriptions.get(own as string)?.customer_id as string;
    const out = await cb.checkout(`cb-buyer-${serial}@example.com`, referralId);
    const addsBefore = em.callCounts()['POST /api/v2/promotional_credits/add'] ?? 0;
    // Every POST until then is the credit's add: the checkout's webhooks only read (events, item prices).
    em.failAfterApply(1, 500);
    await send(out.deliveries);
    const [reward] = await rewardsOf(referralId, 1);
    expect(reward).toMatchObject({ type: 'credit', amount: '5.00', status: 'applied' });
    const adds = (em.callCounts()['POST /api/v2/promotional_credits/add'] ?? 0) - addsBefore;
    expect(adds).toBeGreaterThanOrEqual(2); // the lost answer, then its retry (replayed: same idempotency key)
    const mine = em
      .promotionalCredits(customerId)
      .filter((pc) => pc.type === 'increment' && pc.reference === `refloop:reward:${reward.id}`);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ amount: 500, credit_type: 'referral_rewards' });
    expect(em.balanceOf(customerId, 'USD')).toBe(500);
    expect(em.idempotencyKeysSeen().filter((k) => k === `refloop-credit-${reward.id}`).length).toBe(adds);

    // Redelivered, and the reward evaluated again: still one credit, still one reward.
    await send(out.deliveries);
    await pollUntil(async () => ((await queues.count('provider-events')) + (await queues.count('rewards')) === 0 ? true : null));
    expect((await call('GET', `/v1/referrals/${referralId}/`)).body.rewards).toHaveLength(1);
    expect(cb.creditObjects()).toBe(1);
    expect(em.balanceOf(customerId, 'USD')).toBe(500);
  }, 40_000);

  it("429s (Retry-After: 1) and 503s on the worker's calls are retried within the call budget: applied once", async () => {
    const em = cb.emulator();
    // A commission: the re-fetches of the checkout's events meet two 429s first.
    const commission = await programme({ allows_commission: true, commission_amount: '2.00', commission_currency: 'USD' }, false);
    const bought = await cb.checkout(`cb-buyer-${serial}@example.com`, commission.referralId);
    const fetchesBefore = em.callCounts()['GET /api/v2/events/{id}'] ?? 0;
    cb.failNext(2, 429);
    await send(bought.deliveries);
    const [earned] = await rewardsOf(commission.referralId, 1);
    expect(earned).toMatchObject({ type: 'commission', amount: '2.00', payment_id: bought.paymentId });
    // Each applied event was fetched again, and the two calls answered 429 were made again after their
    // Retry-After (1 s, well inside the 20 s budget of one call; the fetches run concurrently, so the wall
    // time says nothing).
    const applied = bought.deliveries.filter((d) => isAppliedType(String((JSON.parse(d.rawBody) as { event_type?: unknown }).event_type)));
    expect((em.callCounts()['GET /api/v2/events/{id}'] ?? 0) - fetchesBefore).toBeGreaterThanOrEqual(applied.length + 2);

    // A credit: the worker's next calls meet two 503s first.
    const credit = await programme({ allows_credit: true, credit_amount: '3.00', credit_currency: 'USD' }, true);
    const customerId = em.ledger.subscriptions.get(credit.own as string)?.customer_id as string;
    const out = await cb.checkout(`cb-buyer-${serial}@example.com`, credit.referralId);
    cb.failNext(2, 503);
    await send(out.deliveries);
    const [reward] = await rewardsOf(credit.referralId, 1);
    expect(reward).toMatchObject({ type: 'credit', amount: '3.00', status: 'applied' });
    expect(em.promotionalCredits(customerId).filter((pc) => pc.reference === `refloop:reward:${reward.id}`)).toHaveLength(1);
    expect(em.balanceOf(customerId, 'USD')).toBe(300);
    expect(await queues.count('provider-events-dlq')).toBe(0);
    expect(await queues.count('rewards-dlq')).toBe(0);
    expect(logLines.filter((l) => l.includes('unhandled error'))).toEqual([]);
  }, 40_000);
});

// ---- helpers: draining, DLQ redrive, the consistency check --------------------------------------------

const phases: Record<string, { ms: number; stats: FaultStats[]; byOperation: Record<string, number>[]; answers503: number }> = {};
/** Alerts found in the provider-events DLQ (and redriven). */
const parked = new Set<string>();
let redriven = 0;
let retries503 = 0;

async function redriveDlqs(): Promise<void> {
  for (const q of ['provider-events', 'rewards'] as const) {
    for (const m of await queues.receiveAll(`${q}-dlq`)) {
      redriven++;
      await queues.client.send(new SendMessageCommand({ QueueUrl: queues.urlOf(q), MessageBody: m.body }));
    }
  }
}

/** Waits until both queues are empty (nothing visible or in flight) twice in a row. */
async function drained(): Promise<void> {
  let empties = 0;
  await pollUntil(
    async () => {
      await redriveDlqs();
      const n = (await queues.count('provider-events')) + (await queues.count('rewards'));
      empties = n === 0 ? empties + 1 : 0;
      return empties >= 2;
    },
    { timeoutMs: 40_000, intervalMs: 300 },
  );
}

async function scanAccount(): Promise<Record<string, any>[]> {
  const items: Record<string, any>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await direct.send(
      new ScanCommand({
        TableName: tableName,
        FilterExpression: 'begins_with(pk, :p)',
        ExpressionAttributeValues: { ':p': `A#${accountId}` },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Every broken invariant of the account's items (empty = consistent). */
async function violations(): Promise<string[]> {
  const items = await scanAccount();
  const out: string[] = [];
  const p = `A#${accountId}`;
  const ofType = (t: string) => items.filter((i) => i.type === t);
  // A counter is the sum of its shards (shared/store/shards.ts): `A#<acct>` and `A#<acct>#COUNT#<name>#<s>`.
  const counter = (name: string) =>
    items
      .filter((i) => i.sk === `COUNT#${name}` && (i.pk === p || String(i.pk).startsWith(`${p}#COUNT#${name}#`)))
      .reduce((n, i) => n + Number(i.n ?? 0), 0);
  const claims = (kind: string) => items.filter((i) => i.type === 'Claim' && String(i.pk).startsWith(`${p}#${kind}#`));

  const referrals = ofType('Referral');
  const members = ofType('Member');
  const campaigns = ofType('Campaign').filter((c) => c.deleted_at === undefined);
  const subscriptions = ofType('Subscription');

  // Referrals and their referred-user claims, both ways.
  const userClaims = claims('REFERRED_USER');
  for (const r of referrals) {
    const claim = userClaims.find((c) => c.pk === `${p}#REFERRED_USER#${r.user_identifier}`);
    if (!claim || claim.referral_id !== r.id || claim.member_id !== r.member_id)
      out.push(`referral ${r.id} (${r.user_identifier}) has no matching claim`);
  }
  for (const c of userClaims) {
    if (!referrals.some((r) => r.id === c.referral_id && c.pk === `${p}#REFERRED_USER#${r.user_identifier}`))
      out.push(`orphan claim ${c.pk}`);
  }
  const perUser = new Map<string, number>();
  for (const r of referrals) perUser.set(r.user_identifier, (perUser.get(r.user_identifier) ?? 0) + 1);
  for (const [user, n] of perUser) if (n > 1) out.push(`user ${user} has ${n} referrals`);

  // Counters equal item counts.
  const expectCount = (name: string, actual: number) => {
    if (counter(name) !== actual) out.push(`counter ${name} is ${counter(name)}, items ${actual}`);
  };
  expectCount('referrals', referrals.length);
  expectCount('members', members.length);
  expectCount('campaigns', campaigns.length);
  expectCount('subscriptions', subscriptions.length);
  for (const status of ['active', 'trialling', 'past_due', 'paused', 'deleted']) {
    expectCount(`subscriptions#${status}`, subscriptions.filter((s) => s.status === status).length);
  }

  // Member stats from the referrals and their rewards; member claims both ways; campaign member counts.
  for (const m of members) {
    const mine = referrals.filter((r) => r.member_id === m.id);
    const rewards = mine.flatMap((r) => (r.rewards ?? []) as { type: string; amount: number }[]);
    const sum = (t: string) => rewards.filter((w) => w.type === t).reduce((a, w) => a + Number(w.amount), 0);
    const stats = {
      referrals: Number(m.referrals ?? 0),
      conversions: Number(m.conversions ?? 0),
      credit: Number(m.credit_earned ?? 0),
      commission: Number(m.commission_earned ?? 0),
    };
    const want = {
      referrals: mine.length,
      conversions: mine.filter((r) => r.converted_at != null).length,
      credit: sum('credit'),
      commission: sum('commission'),
    };
    if (JSON.stringify(stats) !== JSON.stringify(want))
      out.push(`member ${m.id} stats ${JSON.stringify(stats)} != ${JSON.stringify(want)}`);
    const code = items.find((i) => i.pk === `${p}#MEMBER_CODE#${String(m.code).toLowerCase()}`);
    if (!code || code.member_id !== m.id || (code.campaign_id ?? null) !== (m.campaign_id ?? null))
      out.push(`member ${m.id} code claim ${JSON.stringify(code)}`);
    if (items.find((i) => i.pk === `${p}#MEMBER_EMAIL#${String(m.email).toLowerCase()}`)?.member_id !== m.id)
      out.push(`member ${m.id} has no email claim`);
    if (items.find((i) => i.pk === `${p}#MEMBER_IDENTIFIER#${m.identifier}`)?.member_id !== m.id)
      out.push(`member ${m.id} has no identifier claim`);
    if (m.subscription_id !== undefined && subscriptions.find((s) => s.id === m.subscription_id)?.member_id !== m.id)
      out.push(`member ${m.id} subscription not linked back`);
  }
  for (const kind of ['MEMBER_CODE', 'MEMBER_EMAIL', 'MEMBER_IDENTIFIER']) {
    for (const c of claims(kind)) if (!members.some((m) => m.id === c.member_id)) out.push(`orphan claim ${c.pk}`);
  }
  for (const c of campaigns) {
    const n = members.filter((m) => m.campaign_id === c.id).length;
    if (Number(c.member_count ?? 0) !== n) out.push(`campaign ${c.id} member_count ${String(c.member_count)} != ${n}`);
    if (items.find((i) => i.pk === `${p}#CAMPAIGN_NAME#${String(c.name).trim().toLowerCase()}`)?.campaign_id !== c.id)
      out.push(`campaign ${c.id} has no name claim`);
  }
  for (const c of claims('CAMPAIGN_NAME')) if (!campaigns.some((x) => x.id === c.campaign_id)) out.push(`orphan claim ${c.pk}`);

  // Conversions: the referral and its subscription point at each other; rewards are unique per payment.
  for (const r of referrals) {
    if (r.converted_at != null) {
      const s = subscriptions.find((x) => x.id === r.subscription?.id);
      if (!s || s.referral_id !== r.id) out.push(`referral ${r.id} converted with ${String(r.subscription?.id)} not linked back`);
    }
    const paymentIds = ((r.rewards ?? []) as { payment_id: number }[]).map((w) => w.payment_id);
    if (new Set(paymentIds).size !== paymentIds.length) out.push(`referral ${r.id} has duplicate rewards ${JSON.stringify(paymentIds)}`);
  }
  for (const s of subscriptions) {
    if (s.referral_id && !referrals.some((r) => r.id === s.referral_id && r.subscription?.id === s.id && r.converted_at != null))
      out.push(`subscription ${s.id} points at referral ${s.referral_id}`);
    if (s.member_id && !members.some((m) => m.id === s.member_id && m.subscription_id === s.id))
      out.push(`subscription ${s.id} points at member ${s.member_id}`);
  }
  return out;
}

function report(): void {
  const statuses: Record<string, number> = {};
  for (const o of outcomes) {
    const k = `${o.label.split(' ')[0]} ${o.status}`;
    statuses[k] = (statuses[k] ?? 0) + 1;
  }
  const names = ['dynamodb', 'sqs', 'paddle'];
  const lines = [`fault injection (seed ${SEED})`];
  for (const [phase, p] of Object.entries(phases)) {
    lines.push(`  ${phase} at ${(phase === 'storm' ? FAULT_RATE : BURST_RATE) * 100}%: ${p.ms} ms, ${p.answers503} answers 503`);
    p.stats.forEach((st, i) => lines.push(`    ${names[i]}: ${JSON.stringify(st)}`));
    p.byOperation.forEach((ops, i) => lines.push(`    ${names[i]} faults: ${JSON.stringify(ops)}`));
  }
  lines.push(`  answers: ${JSON.stringify(statuses)}`);
  lines.push(
    `  503s retried: ${retries503}; alerts parked in the DLQ: ${parked.size}; messages redriven: ${redriven}; log lines: ${logLines.length}`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}
