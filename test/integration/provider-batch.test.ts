// The provider-events batch path (shared/flows/provider-batch.ts): whole SQS batches of Paddle Classic
// webhooks, queued by the real intake, handed to the subscription-sync worker's handler at once. Each
// event is applied exactly once whatever the batch holds (two events of one subscription in either order,
// a duplicate inside the batch or of an earlier batch, a refund, a conversion, two accounts, a write that
// races the batch between its read and its transaction), and the counters and report buckets are exact.
import { handler } from '../../functions/workers/subscription-sync';
import { providerBatchHooks } from '../../shared/flows/provider-batch';
import { processProviderWebhook } from '../../shared/flows/subscription-sync';
import type { ProviderWebhookMessage } from '../../shared/queue/queues';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../shared/store/client';
import { endpointCounterKey } from '../../shared/store/endpoint-counts';
import { clearProviderCache } from '../../shared/store/provider';
import { batchGet, getItem, readCounter } from '../../shared/store/ops';
import { readDays } from '../../shared/store/reports';
import { keys, webhookKeys } from '../../shared/store/table';
import { emailKeyPart, unattributedKeys } from '../../shared/store/unattributed';
import { eventId } from '../../shared/domain/events';
import { resetConfig } from '../../shared/config';
import { api } from '../support/api';
import { recordDynamoCalls } from '../support/dynamo-calls';
import { newAccount } from '../support/fixtures';
import { deliver, PROVIDER_HARNESSES, type Checkout, type Delivery, type ProviderHarness } from '../support/provider-harness';
import { sqsEventOf, startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
const classic = PROVIDER_HARNESSES.find((h) => h.kind === 'paddle-classic') as ProviderHarness;
const stripe = PROVIDER_HARNESSES.find((h) => h.kind === 'stripe') as ProviderHarness;
let serial = 0;

beforeAll(async () => {
  // Endpoints on loopback (never called here: nothing polls webhook-events).
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  resetConfig();
  queues = await startTestQueues();
  await classic.start();
  await stripe.start();
});

afterAll(async () => {
  providerBatchHooks.beforeRecord = undefined;
  await classic.stop();
  await stripe.stop();
  await queues?.stop();
});

afterEach(() => {
  providerBatchHooks.beforeRecord = undefined;
});

async function connectedAccount(): Promise<{ accountId: string; key: string }> {
  const { accountId, apiKey } = await newAccount('unlimited');
  await classic.connect(accountId);
  return { accountId, key: apiKey };
}

/** The deliveries through the real intake: the `provider-webhook` messages it queued, in order. */
async function queued(accountId: string, deliveries: Delivery[]): Promise<ProviderWebhookMessage[]> {
  const out: ProviderWebhookMessage[] = [];
  for (const d of deliveries) {
    expect((await deliver(accountId, d)).status).toBe(200);
    const [m] = await queues.receiveAll('provider-events');
    out.push(m?.json as ProviderWebhookMessage);
  }
  return out;
}

/** One SQS batch of these messages through the worker's handler: the ids of the records that failed. */
async function runBatch(messages: ProviderWebhookMessage[]): Promise<string[]> {
  const event = sqsEventOf(messages, 'provider-events');
  const out = await handler(event);
  return out.batchItemFailures.map((f) => f.itemIdentifier);
}

async function checkouts(_accountId: string, n: number, referralIds: string[] = []): Promise<Checkout[]> {
  const out: Checkout[] = [];
  for (let i = 0; i < n; i++) out.push(await classic.checkout(`batch-${++serial}@example.com`, referralIds[i]));
  return out;
}

async function expectApplied(accountId: string, list: Checkout[]) {
  const found = await batchGet([
    ...list.map((c) => keys.subscription(accountId, c.subscriptionId)),
    ...list.map((c) => keys.payment(accountId, c.subscriptionId, c.paymentId)),
  ]);
  expect(found.size).toBe(list.length * 2);
  for (const c of list) {
    const sub = await getItem(keys.subscription(accountId, c.subscriptionId));
    expect(sub).toMatchObject({ status: 'active' });
  }
  expect(await readCounter(accountId, 'subscriptions')).toBe(list.length);
  expect(await readCounter(accountId, 'subscriptions#active')).toBe(list.length);
}

const today = () => new Date().toISOString().slice(0, 10);

/** The `subscription.updated` event of the version of the checkout's subscription the table holds. */
async function subscriptionEvent(accountId: string, c: Checkout) {
  const sub = await getItem(keys.subscription(accountId, c.subscriptionId));
  return getItem(keys.event(accountId, eventId('subscription.updated', `${c.subscriptionId}:${Number(sub?.version)}`)));
}

describe('provider events applied a batch at a time', () => {
  it('two events of one subscription in order and in reverse order, a duplicate inside the batch, then the batch again: each applied once', async () => {
    const { accountId } = await connectedAccount();
    const [a, b, c] = await checkouts(accountId, 3);
    const inOrder = await queued(accountId, (a as Checkout).deliveries);
    const reversed = await queued(accountId, [...(b as Checkout).deliveries].reverse());
    const third = await queued(accountId, (c as Checkout).deliveries);
    // The third checkout's payment twice in the batch (SQS may deliver a message twice).
    const batch = [...inOrder, ...reversed, ...third, third[1] as ProviderWebhookMessage];
    expect(await runBatch(batch)).toEqual([]);
    await expectApplied(accountId, [a, b, c] as Checkout[]);
    // A redelivery of the whole batch writes nothing and changes nothing.
    expect(await runBatch(batch)).toEqual([]);
    await expectApplied(accountId, [a, b, c] as Checkout[]);
    for (const m of batch) {
      const id = new URLSearchParams(m.raw_body).get('alert_id') as string;
      expect(await getItem(keys.alert(accountId, id))).toMatchObject({ type: 'Alert' });
    }
    // One subscription.updated event per stored version (version 1 each).
    await queues.receiveAll('webhook-events');
  });

  it('a payment that converts a referral, then its refund: the conversion, the evaluations, and the report buckets once each', async () => {
    const { accountId, key } = await connectedAccount();
    const json = (method: string, path: string, body?: unknown) => api(method, path, { key, ...(body === undefined ? {} : { body }) });
    const campaign = await json('POST', '/v1/campaigns/', {
      name: `batch-${serial}`,
      allows_commission: true,
      commission_amount: '2.00',
      commission_currency: 'USD',
    });
    expect(campaign.status).toBe(201);
    const member = await json('POST', '/v1/members/', {
      identifier: `batch-m-${serial}`,
      email: `batch-m-${serial}@example.com`,
      campaign: { id: campaign.body.id },
    });
    expect(member.status).toBe(201);
    const ref = await json('POST', '/v1/referrals/', { user_identifier: `batch-u-${serial}`, member_code: member.body.code });
    expect(ref.status).toBe(200);
    const referralId = ref.body.id as string;
    const [referred, plain] = (await checkouts(accountId, 2, [referralId])) as [Checkout, Checkout];
    await queues.receiveAll('rewards');
    const batch = [...(await queued(accountId, referred.deliveries)), ...(await queued(accountId, plain.deliveries))];
    expect(await runBatch(batch)).toEqual([]);
    await expectApplied(accountId, [referred, plain]);
    const converted = await json('GET', `/v1/referrals/${referralId}/`);
    expect(converted.body).toMatchObject({ is_converted: true, subscription: { id: referred.subscriptionId, status: 'active' } });
    // The payment's evaluation was queued (the conversion may queue its own too).
    const evaluations = (await queues.receiveAll('rewards')).map((m) => m.json as { kind: string; referral_id: string });
    expect(evaluations.filter((e) => e.kind === 'evaluate-referral' && e.referral_id === referralId).length).toBeGreaterThanOrEqual(1);
    const revenue = async () => (await readDays(accountId, 'T', today(), today())).get(today()) ?? {};
    expect(await revenue()).toMatchObject({ revenue_USD: 1000 });

    // The refund, in a batch with its own duplicate: counted once, evaluated once more.
    const refund = await queued(accountId, await classic.refund(referred.refundable));
    expect(refund.length).toBeGreaterThanOrEqual(1);
    expect(await runBatch([...refund, ...refund])).toEqual([]);
    const buckets = await revenue();
    expect(buckets).toMatchObject({ revenue_USD: 1000, refunds_USD: 1000 });
    const again = (await queues.receiveAll('rewards')).map((m) => m.json as { referral_id: string });
    expect(again.filter((e) => e.referral_id === referralId)).toHaveLength(1);
    expect(await getItem(keys.payment(accountId, referred.subscriptionId, referred.paymentId))).toMatchObject({ status: 'refunded' });
    // A redelivered refund adds nothing.
    expect(await runBatch(refund)).toEqual([]);
    expect(await revenue()).toMatchObject({ revenue_USD: 1000, refunds_USD: 1000 });
  });

  it('a batch stores what the per-event path stores: the subscription, the event of its stored version, the payment, the sighting', async () => {
    const perEvent = await connectedAccount();
    const batched = await connectedAccount();
    const list = await checkouts(perEvent.accountId, 2);
    const deliveries = [...(list[0] as Checkout).deliveries, ...[...(list[1] as Checkout).deliveries].reverse()];
    for (const m of await queued(perEvent.accountId, deliveries)) await processProviderWebhook(m);
    expect(await runBatch(await queued(batched.accountId, deliveries))).toEqual([]);
    const strip = (item: Record<string, unknown> | undefined) => {
      const { pk: _pk, gsi1pk: _g1, gsi2pk: _g2, created_at: _c, created_ms: _cm, gsi1sk: _s1, gsi2sk: _s2, ...rest } = item ?? {};
      return { ...rest, payer_ids: rest.payer_ids instanceof Set ? [...rest.payer_ids].sort() : rest.payer_ids };
    };
    for (const c of list) {
      const [a, b] = await Promise.all([perEvent, batched].map((x) => getItem(keys.subscription(x.accountId, c.subscriptionId))));
      expect(strip(b)).toEqual(strip(a));
      const version = Number(a?.version);
      const held: number[] = [];
      for (let v = 1; v <= version; v++) {
        const id = eventId('subscription.updated', `${c.subscriptionId}:${v}`);
        const [ea, eb] = await Promise.all([perEvent, batched].map((x) => getItem(keys.event(x.accountId, id))));
        // The per-event path stores every version, each with its event.
        expect({ v, a: ea?.type }).toEqual({ v, a: 'Event' });
        if (eb) {
          held.push(v);
          expect(JSON.parse(String(eb.payload)).data).toEqual(JSON.parse(String(ea?.payload)).data);
        }
      }
      // The batch holds the event of the version it stored; a fold's version in between, never stored, has none.
      expect(held).toEqual([version]);
      const [pa, pb] = await Promise.all([perEvent, batched].map((x) => getItem(keys.payment(x.accountId, c.subscriptionId, c.paymentId))));
      expect(strip(pb)).toEqual(strip(pa));
      const email = String(a?.email);
      const [sa, sb] = await Promise.all(
        [perEvent, batched].map((x) => getItem(unattributedKeys.item(x.accountId, emailKeyPart(email), c.subscriptionId))),
      );
      const sighting = (i: Record<string, unknown> | undefined) => ({
        reason: i?.reason,
        event_id: i?.event_id,
        sub_status: i?.sub_status,
        plan_name: i?.plan_name,
        checkout_id: i?.checkout_id,
      });
      expect(sighting(sb)).toEqual(sighting(sa));
      expect(sighting(sa).reason).toBe('no_referral_hint');
    }
    // The first checkout's two events, in order, were folded: two versions, one event in the batch.
    expect(Number((await getItem(keys.subscription(batched.accountId, (list[0] as Checkout).subscriptionId)))?.version)).toBe(2);
    for (const x of [perEvent, batched]) {
      expect(await readCounter(x.accountId, 'subscriptions')).toBe(2);
      expect(await readCounter(x.accountId, 'subscriptions#active')).toBe(2);
    }
  });

  it('a full batch of 25 checkouts (50 events, more items than one transaction takes): split into several transactions, none refused', async () => {
    const { accountId } = await connectedAccount();
    const list = await checkouts(accountId, 25);
    const batch = await queued(
      accountId,
      list.flatMap((c) => c.deliveries),
    );
    const recording = recordDynamoCalls();
    try {
      expect(await runBatch(batch)).toEqual([]);
    } finally {
      recording.stop();
    }
    const writes = recording.calls.filter((c) => c.command === 'TransactWriteItems');
    // 25 × (two markers, the subscription, the payment, its event, the sighting) and the counters: 150 and more.
    expect(writes.length).toBeGreaterThanOrEqual(2);
    expect(writes.filter((c) => c.error)).toEqual([]);
    await expectApplied(accountId, list);
  });

  it('events of two accounts in one batch', async () => {
    const one = await connectedAccount();
    const two = await connectedAccount();
    const a = await checkouts(one.accountId, 2);
    const b = await checkouts(two.accountId, 1);
    const batch = [
      ...(await queued(one.accountId, (a[0] as Checkout).deliveries)),
      ...(await queued(two.accountId, (b[0] as Checkout).deliveries)),
      ...(await queued(one.accountId, (a[1] as Checkout).deliveries)),
    ];
    expect(await runBatch(batch)).toEqual([]);
    await expectApplied(one.accountId, a);
    await expectApplied(two.accountId, b);
  });

  it('a write between the load and the record (a concurrent copy of one event): the batch falls back and applies each event once', async () => {
    const { accountId } = await connectedAccount();
    const list = await checkouts(accountId, 2);
    const batch = [
      ...(await queued(accountId, (list[0] as Checkout).deliveries)),
      ...(await queued(accountId, (list[1] as Checkout).deliveries)),
    ];
    let raced = 0;
    providerBatchHooks.beforeRecord = async () => {
      // The first transaction of the batch races a copy of its first event applied on its own.
      if (raced++ === 0) await processProviderWebhook(batch[0] as ProviderWebhookMessage);
    };
    const recording = recordDynamoCalls();
    try {
      expect(await runBatch(batch)).toEqual([]);
    } finally {
      recording.stop();
    }
    expect(raced).toBeGreaterThanOrEqual(1);
    // The raced transaction was cancelled (its marker's condition), then the raced event went the per-event
    // way (a duplicate now) and the others were planned again: more than the batch's two transactions.
    expect(recording.calls.filter((c) => c.command === 'TransactWriteItems').length).toBeGreaterThan(2);
    await expectApplied(accountId, list);
    for (const m of batch) {
      const id = new URLSearchParams(m.raw_body).get('alert_id') as string;
      expect(await getItem(keys.alert(accountId, id))).toMatchObject({ type: 'Alert' });
    }
  });
});

describe('an account without webhook endpoints: its events are written already dispatched', () => {
  const dispatched = async () => (await queues.receiveAll('webhook-events')).map((m) => (m.json as { event_id: string }).event_id);

  it('no endpoint: the event is stored without its outbox entry and nothing is queued for the fan-out', async () => {
    const { accountId } = await connectedAccount();
    const [c] = await checkouts(accountId, 1);
    const batch = await queued(accountId, (c as Checkout).deliveries);
    await dispatched();
    expect(await runBatch(batch)).toEqual([]);
    const event = await subscriptionEvent(accountId, c as Checkout);
    expect(event).toMatchObject({ type: 'Event', event_type: 'subscription.updated' });
    expect(event?.gsi2pk).toBeUndefined();
    expect(Number(event?.dispatched_at)).toBeGreaterThan(0);
    expect(await dispatched()).toEqual([]);
  });

  it('with an endpoint: the event keeps its outbox entry and is queued', async () => {
    const { accountId, key } = await connectedAccount();
    expect((await api('POST', '/v1/webhook-endpoints/', { key, body: { url: 'http://127.0.0.1:9/refloop' } })).status).toBe(201);
    const [c] = await checkouts(accountId, 1);
    const batch = await queued(accountId, (c as Checkout).deliveries);
    await dispatched();
    expect(await runBatch(batch)).toEqual([]);
    const event = await subscriptionEvent(accountId, c as Checkout);
    expect(String(event?.gsi2pk)).toMatch(/^OUTBOX#/);
    expect(await dispatched()).toContain(String(event?.id));
  });

  it('an endpoint created between the load and the record: the transaction is cancelled and the per-event path queues the event', async () => {
    const { accountId, key } = await connectedAccount();
    const [c] = await checkouts(accountId, 1);
    const batch = await queued(accountId, (c as Checkout).deliveries);
    await dispatched();
    let created = 0;
    providerBatchHooks.beforeRecord = async () => {
      if (created++ > 0) return;
      expect((await api('POST', '/v1/webhook-endpoints/', { key, body: { url: 'http://127.0.0.1:9/late' } })).status).toBe(201);
    };
    expect(await runBatch(batch)).toEqual([]);
    expect(created).toBeGreaterThanOrEqual(1);
    const event = await subscriptionEvent(accountId, c as Checkout);
    expect(String(event?.gsi2pk)).toMatch(/^OUTBOX#/);
    expect(await dispatched()).toContain(String(event?.id));
    await expectApplied(accountId, [c as Checkout]);
  });
});

describe('endpoints that do not want an event type: its events are written already dispatched', () => {
  const dispatched = async () => (await queues.receiveAll('webhook-events')).map((m) => (m.json as { event_id: string }).event_id);
  const endpoint = async (key: string, events?: string[]) => {
    const res = await api('POST', '/v1/webhook-endpoints/', {
      key,
      body: { url: 'http://127.0.0.1:9/typed', ...(events ? { events } : {}) },
    });
    expect(res.status).toBe(201);
    return String((res.body as { id: string }).id);
  };
  const patch = async (key: string, id: string, events: string[]) =>
    expect((await api('PATCH', `/v1/webhook-endpoints/${id}/`, { key, body: { events } })).status).toBe(200);
  /** One checkout's webhooks through a batch: whether its subscription.updated event kept its outbox entry (and was queued). */
  const outboxed = async (accountId: string): Promise<boolean> => {
    const [c] = await checkouts(accountId, 1);
    const batch = await queued(accountId, (c as Checkout).deliveries);
    await dispatched();
    expect(await runBatch(batch)).toEqual([]);
    expect(await getItem(keys.subscription(accountId, (c as Checkout).subscriptionId))).toMatchObject({ status: 'active' });
    const event = await subscriptionEvent(accountId, c as Checkout);
    expect(event).toMatchObject({ type: 'Event', event_type: 'subscription.updated' });
    const queuedIds = await dispatched();
    if (event?.gsi2pk === undefined) {
      expect(Number(event?.dispatched_at)).toBeGreaterThan(0);
      expect(queuedIds).not.toContain(String(event?.id));
      return false;
    }
    expect(String(event.gsi2pk)).toMatch(/^OUTBOX#/);
    expect(queuedIds).toContain(String(event.id));
    return true;
  };
  /**
   * The endpoint as if created before the counts were kept (an endpoint wanting only referral.created): no
   * types_counted on it, and neither typed nor its type's count on the counter item.
   */
  const uncount = async (accountId: string, id: string) => {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: webhookKeys.webhookEndpoint(accountId, id),
        UpdateExpression: 'REMOVE types_counted',
      }),
    );
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: endpointCounterKey(accountId),
        UpdateExpression: 'ADD typed :minus, #s :minus',
        ExpressionAttributeNames: { '#s': 'subscribed#referral.created' },
        ExpressionAttributeValues: { ':minus': -1 },
      }),
    );
  };
  const counts = async (accountId: string) => {
    const item = (await getItem(endpointCounterKey(accountId))) ?? {};
    return Object.fromEntries(Object.entries(item).filter(([k]) => k === 'n' || k === 'typed' || k.startsWith('subscribed#')));
  };

  it('endpoints that want only referral.created: subscription.updated goes straight to the log', async () => {
    const { accountId, key } = await connectedAccount();
    await endpoint(key, ['referral.created']);
    await endpoint(key, ['referral.created', 'reward.created']);
    expect(await counts(accountId)).toEqual({ n: 2, typed: 2, 'subscribed#referral.created': 2, 'subscribed#reward.created': 1 });
    expect(await outboxed(accountId)).toBe(false);
  });

  it('an endpoint updated to want subscription.updated gets its events again; once deleted, they go straight to the log', async () => {
    const { accountId, key } = await connectedAccount();
    await endpoint(key, ['referral.created']);
    const wanting = await endpoint(key, ['referral.created']);
    await patch(key, wanting, ['subscription.updated', 'referral.created']);
    expect(await counts(accountId)).toMatchObject({
      n: 2,
      typed: 2,
      'subscribed#subscription.updated': 1,
      'subscribed#referral.created': 2,
    });
    expect(await outboxed(accountId)).toBe(true);
    expect((await api('DELETE', `/v1/webhook-endpoints/${wanting}/`, { key })).status).toBe(204);
    expect(await counts(accountId)).toMatchObject({
      n: 1,
      typed: 1,
      'subscribed#subscription.updated': 0,
      'subscribed#referral.created': 1,
    });
    expect(await outboxed(accountId)).toBe(false);
  });

  it('an endpoint stored before the counts (its types not counted): every event keeps its entry until an update counts it', async () => {
    const { accountId, key } = await connectedAccount();
    const id = await endpoint(key, ['referral.created']);
    await uncount(accountId, id);
    expect(await outboxed(accountId)).toBe(true);
    await patch(key, id, ['referral.created', 'reward.created']);
    expect(await counts(accountId)).toEqual({ n: 1, typed: 1, 'subscribed#referral.created': 1, 'subscribed#reward.created': 1 });
    expect(await outboxed(accountId)).toBe(false);
    // A second such endpoint leaves the counts incomplete again (typed 1 of n 2) until it too is updated.
    const other = await endpoint(key, ['referral.created']);
    await uncount(accountId, other);
    expect(await outboxed(accountId)).toBe(true);
    // Deleting an uncounted endpoint takes it off n only.
    expect((await api('DELETE', `/v1/webhook-endpoints/${other}/`, { key })).status).toBe(204);
    expect(await counts(accountId)).toEqual({ n: 1, typed: 1, 'subscribed#referral.created': 1, 'subscribed#reward.created': 1 });
    expect(await outboxed(accountId)).toBe(false);
  });

  it('an endpoint updated to want the type between the load and the record: the transaction is cancelled and the per-event path queues the event', async () => {
    const { accountId, key } = await connectedAccount();
    const id = await endpoint(key, ['referral.created']);
    const [c] = await checkouts(accountId, 1);
    const batch = await queued(accountId, (c as Checkout).deliveries);
    await dispatched();
    let updated = 0;
    providerBatchHooks.beforeRecord = async () => {
      if (updated++ > 0) return;
      await patch(key, id, ['referral.created', 'subscription.updated']);
    };
    expect(await runBatch(batch)).toEqual([]);
    expect(updated).toBeGreaterThanOrEqual(1);
    const event = await subscriptionEvent(accountId, c as Checkout);
    expect(String(event?.gsi2pk)).toMatch(/^OUTBOX#/);
    expect(await dispatched()).toContain(String(event?.id));
    await expectApplied(accountId, [c as Checkout]);
  });
});

describe('Stripe events applied a batch at a time: what the batch tells needs no lookup', () => {
  /** The emulator's calls made by `run`, by route. */
  async function callsOf(run: () => Promise<unknown>): Promise<Record<string, number>> {
    const before = stripe.apiCalls();
    await run();
    const after = stripe.apiCalls();
    return Object.fromEntries(
      Object.entries(after)
        .map(([route, n]) => [route, n - (before[route] ?? 0)] as const)
        .filter(([, n]) => n > 0),
    );
  }

  async function stripeAccount(): Promise<string> {
    const { accountId } = await newAccount('unlimited');
    await stripe.connect(accountId);
    return accountId;
  }

  it("a checkout's webhooks in one batch: its email from the invoice, its Checkout Session from its own event, the product read once", async () => {
    const accountId = await stripeAccount();
    const emails = [`stripe-batch-${++serial}a@example.com`, `stripe-batch-${serial}b@example.com`];
    const list = [await stripe.checkout(emails[0] as string), await stripe.checkout(emails[1] as string)];
    const batch = await queued(
      accountId,
      list.flatMap((c) => c.deliveries),
    );
    expect(batch.map((m) => (JSON.parse(m.raw_body) as { type: string }).type).sort()).toEqual(
      [
        'checkout.session.completed',
        'customer.subscription.created',
        'invoice.paid',
        'checkout.session.completed',
        'customer.subscription.created',
        'invoice.paid',
      ].sort(),
    );
    let failed: string[] = [];
    // Both checkouts buy the default price's product: one lookup, shared by the events parsed concurrently.
    // Each subscription event is read again (its whole-second time cannot order it, and the read brings the
    // card that pays it, which fraud rules compare).
    expect(await callsOf(async () => (failed = await runBatch(batch)))).toEqual({
      'GET /v1/products/{id}': 1,
      'GET /v1/subscriptions/{id}': 2,
    });
    expect(failed).toEqual([]);
    for (const [i, c] of list.entries()) {
      const sub = await getItem(keys.subscription(accountId, String(c.subscriptionId)));
      expect(sub).toMatchObject({ status: 'active', email: emails[i] });
      const sighting = await getItem(unattributedKeys.item(accountId, emailKeyPart(String(sub?.email)), String(c.subscriptionId)));
      expect(String(sighting?.checkout_id)).toMatch(/^cs_/);
    }
    expect(await readCounter(accountId, 'subscriptions#active')).toBe(2);
  });
});

describe("the worker's connection from the container's cache", () => {
  const credentialReads = (calls: { command: string }[]) => calls.filter((c) => c.command === 'BatchGetItem').length;

  /** One Stripe checkout's webhooks through the intake, then through the worker as one batch: its BatchGets. */
  async function checkoutBatch(accountId: string): Promise<{ checkout: Checkout; batchGets: number; failed: string[] }> {
    const checkout = await stripe.checkout(`stripe-cache-${++serial}@example.com`);
    const batch = await queued(accountId, checkout.deliveries);
    const recording = recordDynamoCalls();
    let failed: string[];
    try {
      failed = await runBatch(batch);
    } finally {
      recording.stop();
    }
    return { checkout, batchGets: credentialReads(recording.calls), failed };
  }

  it('a warm worker reads the connection once; a changed settings item makes the batch start over on a fresh read', async () => {
    const { accountId } = await newAccount('unlimited');
    await stripe.connect(accountId);
    clearProviderCache();
    const cold = await checkoutBatch(accountId);
    const warm = await checkoutBatch(accountId);
    expect([cold.failed, warm.failed]).toEqual([[], []]);
    // The same batch shape: the warm one skips the connection's BatchGet (settings and secret).
    expect(cold.batchGets - warm.batchGets).toBe(1);
    // An operator's change to the settings: the LOAD read finds another item than the cached one, and the
    // batch starts over (the connection read again, then LOAD again), before anything is written.
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.providerSettings(accountId),
        UpdateExpression: 'SET #n = :n',
        ExpressionAttributeNames: { '#n': 'test_note' },
        ExpressionAttributeValues: { ':n': 'changed' },
      }),
    );
    const changed = await checkoutBatch(accountId);
    expect(changed.failed).toEqual([]);
    expect(changed.batchGets - warm.batchGets).toBe(2);
    // And the next batch is warm again.
    const again = await checkoutBatch(accountId);
    expect(again.batchGets).toBe(warm.batchGets);
    for (const b of [cold, warm, changed, again])
      expect(await getItem(keys.subscription(accountId, String(b.checkout.subscriptionId)))).toMatchObject({ status: 'active' });
    expect(await readCounter(accountId, 'subscriptions#active')).toBe(4);
  });

  it('an account disconnected while its connection is cached: the batch reads again and drops its events, as a cold one does', async () => {
    const { accountId } = await newAccount('unlimited');
    await stripe.connect(accountId);
    const first = await checkoutBatch(accountId);
    expect(first.failed).toEqual([]);
    const checkout = await stripe.checkout(`stripe-cache-${++serial}@example.com`);
    const batch = await queued(accountId, checkout.deliveries);
    await db().send(new DeleteCommand({ TableName: tableName(), Key: keys.providerSettings(accountId) }));
    expect(await runBatch(batch)).toEqual([]);
    expect(await getItem(keys.subscription(accountId, String(checkout.subscriptionId)))).toBeUndefined();
    expect(await readCounter(accountId, 'subscriptions#active')).toBe(1);
  });
});
