// The webhook fan-out's batch path (shared/webhooks/fanout-batch.ts): the outbox events of one SQS batch,
// queued by real API writes, handed to the fan-out worker's handler at once. Their deliveries, the endpoints'
// delivery counts and the events' marks commit in one transaction per account; the `deliver` messages follow
// it and the screenings precede it. A redelivered batch writes nothing, and an event whose delivery exists
// already (an earlier run that died half way) falls back to the per-event path without counting it twice.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { SQSEvent } from 'aws-lambda';
import { handler } from '../../functions/workers/webhook-fanout';
import { handler as deliveryHandler } from '../../functions/workers/webhook-delivery';
import { resetConfig } from '../../shared/config';
import type { QueueMessages } from '../../shared/queue/queues';
import { getItem } from '../../shared/store/ops';
import { keys, webhookKeys } from '../../shared/store/table';
import { createDelivery, deliverySk } from '../../shared/store/webhooks';
import { fanoutBatchHooks } from '../../shared/webhooks/fanout-batch';
import { api } from '../support/api';
import { describeCalls, recordDynamoCalls } from '../support/dynamo-calls';
import { newAccount } from '../support/fixtures';
import { sqsEventOf, startTestQueues, type TestQueues } from '../support/queues';

type FanoutMessage = QueueMessages['webhook-events'];

let queues: TestQueues;
let serial = 0;

beforeAll(async () => {
  // Endpoints on loopback (never called here: nothing polls webhook-deliveries).
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  resetConfig();
  queues = await startTestQueues();
});

afterAll(async () => {
  await queues?.stop();
});

/** An account with a member, and `endpoints` webhook endpoints subscribed to `referral.created` (at `urls[i]` when given). */
async function account(endpoints: number, urls: string[] = []) {
  const { accountId, apiKey } = await newAccount('unlimited');
  const json = (method: string, path: string, body?: unknown) =>
    api(method, path, { key: apiKey, ...(body === undefined ? {} : { body }) });
  const ids: string[] = [];
  for (let i = 0; i < endpoints; i++) {
    const e = await json('POST', '/v1/webhook-endpoints/', {
      url: urls[i] ?? `http://127.0.0.1:9/hook-${i}`,
      events: ['referral.created'],
    });
    expect(e.status).toBe(201);
    ids.push(e.body.id as string);
  }
  const code = `FAN${++serial}X${Date.now() % 100000}`;
  expect(
    (await json('POST', '/v1/members/', { identifier: `fan-member-${serial}`, email: `fan-${serial}@example.com`, code })).status,
  ).toBe(201);
  // The member's own event is not the test's: drained before the referrals.
  await queues.receiveAll('webhook-events');
  return { accountId, json, endpointIds: ids, code };
}

/** `n` referrals created through the API: the `webhook-events` messages their commits queued. */
async function referrals(a: Awaited<ReturnType<typeof account>>, n: number): Promise<{ ids: string[]; messages: FanoutMessage[] }> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await a.json('POST', '/v1/referrals/', { user_identifier: `fan-user-${++serial}`, member_code: a.code });
    expect(r.status).toBe(200);
    ids.push(r.body.id as string);
  }
  const messages = (await queues.receiveAll('webhook-events')).map((m) => m.json as FanoutMessage);
  expect(messages).toHaveLength(n);
  return { ids, messages };
}

/** One SQS batch of these messages through the fan-out's handler (or `run`'s): the ids of the records that failed. */
async function runBatch(
  messages: unknown[],
  run: (event: SQSEvent) => Promise<{ batchItemFailures: { itemIdentifier: string }[] } | undefined> = handler,
): Promise<string[]> {
  const event = sqsEventOf(messages, run === handler ? 'webhook-events' : 'webhook-deliveries');
  const out = await run(event);
  return (out?.batchItemFailures ?? []).map((f) => f.itemIdentifier);
}

const eventIdOf = (m: FanoutMessage) => (m.kind === 'dispatch-event' ? m.event_id : '');

async function eventItem(accountId: string, m: FanoutMessage) {
  return getItem(keys.event(accountId, eventIdOf(m)));
}

async function deliveryCount(accountId: string, endpointId: string): Promise<number> {
  return Number((await getItem(webhookKeys.webhookEndpoint(accountId, endpointId)))?.delivery_count ?? 0);
}

describe('webhook fan-out, a batch at a time', () => {
  it('5 events to 2 endpoints: 1 BatchGet + 1 Query + 1 TransactWriteItems; 10 deliveries, counted once each; the screenings and the deliver messages sent', async () => {
    const a = await account(2);
    const { messages } = await referrals(a, 5);
    const recording = recordDynamoCalls();
    try {
      expect(await runBatch(messages)).toEqual([]);
    } finally {
      recording.stop();
    }
    const calls = recording.calls.map((c) => c.command);
    expect({ calls, described: describeCalls(recording.calls) }).toMatchObject({
      calls: ['BatchGetItem', 'Query', 'TransactWriteItems'],
    });
    for (const m of messages) {
      const event = await eventItem(a.accountId, m);
      expect(event?.dispatched_at).toEqual(expect.any(Number));
      expect(event?.gsi2pk).toBeUndefined();
      for (const endpointId of a.endpointIds) {
        const delivery = await getItem(
          webhookKeys.webhookDelivery(a.accountId, endpointId, deliverySk(Number(event?.created_ms), eventIdOf(m))),
        );
        expect(delivery).toMatchObject({ type: 'WebhookDelivery', state: 'pending', attempts: 0, event_type: 'referral.created' });
      }
    }
    for (const endpointId of a.endpointIds) expect(await deliveryCount(a.accountId, endpointId)).toBe(5);
    const delivers = (await queues.receiveAll('webhook-deliveries')).map((m) => m.json as { endpoint_id: string; delivery: string });
    expect(delivers).toHaveLength(10);
    expect(new Set(delivers.map((d) => `${d.endpoint_id} ${d.delivery}`)).size).toBe(10);
    const screenings = (await queues.receiveAll('fraud')).map((m) => m.json as { event_type: string; account_id: string });
    expect(screenings.filter((s) => s.account_id === a.accountId && s.event_type === 'referral.created')).toHaveLength(5);

    // The same batch again (SQS redelivered it): the events are dispatched, so nothing is written or sent.
    const again = recordDynamoCalls();
    try {
      expect(await runBatch(messages)).toEqual([]);
    } finally {
      again.stop();
    }
    expect(again.calls.map((c) => c.command)).toEqual(['BatchGetItem']);
    expect(await queues.receiveAll('webhook-deliveries', { waitMs: 300 })).toEqual([]);
    for (const endpointId of a.endpointIds) expect(await deliveryCount(a.accountId, endpointId)).toBe(5);
  });

  it('two accounts in one batch: one Query of endpoints each, one transaction for both', async () => {
    const one = await account(1);
    const two = await account(1);
    const a = await referrals(one, 2);
    const b = await referrals(two, 2);
    const recording = recordDynamoCalls();
    try {
      expect(await runBatch([...a.messages, ...b.messages])).toEqual([]);
    } finally {
      recording.stop();
    }
    expect(recording.calls.map((c) => c.command)).toEqual(['BatchGetItem', 'Query', 'Query', 'TransactWriteItems']);
    expect(await deliveryCount(one.accountId, one.endpointIds[0] as string)).toBe(2);
    expect(await deliveryCount(two.accountId, two.endpointIds[0] as string)).toBe(2);
    for (const m of [...a.messages, ...b.messages]) {
      const owner = a.messages.includes(m) ? one : two;
      expect((await eventItem(owner.accountId, m))?.gsi2pk).toBeUndefined();
    }
    const delivers = (await queues.receiveAll('webhook-deliveries')).map((m) => m.json as { account_id: string });
    expect(delivers.filter((d) => d.account_id === one.accountId)).toHaveLength(2);
    expect(delivers.filter((d) => d.account_id === two.accountId)).toHaveLength(2);
    await queues.receiveAll('fraud');
  });

  it('an event whose delivery exists already (a run that died before its mark): the batch falls back per event, each delivery made and counted once', async () => {
    const a = await account(2);
    const { messages } = await referrals(a, 3);
    const first = messages[0] as FanoutMessage;
    const event = await eventItem(a.accountId, first);
    // The per-event path made (and counted) the first event's delivery to the first endpoint, then died.
    expect(
      await createDelivery(
        a.accountId,
        a.endpointIds[0] as string,
        { id: eventIdOf(first), type: 'referral.created', created_ms: Number(event?.created_ms) },
        Date.now(),
      ),
    ).toBe(true);
    expect(await runBatch(messages)).toEqual([]);
    for (const m of messages) expect((await eventItem(a.accountId, m))?.gsi2pk).toBeUndefined();
    for (const endpointId of a.endpointIds) expect(await deliveryCount(a.accountId, endpointId)).toBe(3);
    const delivers = (await queues.receiveAll('webhook-deliveries')).map((m) => m.json as { endpoint_id: string; delivery: string });
    expect(new Set(delivers.map((d) => `${d.endpoint_id} ${d.delivery}`)).size).toBe(6);
    await queues.receiveAll('fraud');
  });

  it('an endpoint deleted after the batch read the endpoints: the other endpoint gets its deliveries, the deleted one none', async () => {
    const a = await account(2);
    const { messages } = await referrals(a, 2);
    const gone = a.endpointIds[1] as string;
    // The batch's Query of the endpoints sees both; the delete lands between it and the transaction.
    fanoutBatchHooks.beforeCommit = async () => {
      fanoutBatchHooks.beforeCommit = undefined;
      expect((await a.json('DELETE', `/v1/webhook-endpoints/${gone}/`)).status).toBe(204);
    };
    try {
      expect(await runBatch(messages)).toEqual([]);
    } finally {
      fanoutBatchHooks.beforeCommit = undefined;
    }
    for (const m of messages) {
      const event = await eventItem(a.accountId, m);
      expect(event?.gsi2pk).toBeUndefined();
      const sk = deliverySk(Number(event?.created_ms), eventIdOf(m));
      expect(await getItem(webhookKeys.webhookDelivery(a.accountId, a.endpointIds[0] as string, sk))).toMatchObject({ state: 'pending' });
      expect(await getItem(webhookKeys.webhookDelivery(a.accountId, gone, sk))).toBeUndefined();
    }
    expect(await deliveryCount(a.accountId, a.endpointIds[0] as string)).toBe(2);
    const delivers = (await queues.receiveAll('webhook-deliveries')).map((m) => m.json as { endpoint_id: string });
    expect(delivers.map((d) => d.endpoint_id)).toEqual([a.endpointIds[0], a.endpointIds[0]]);
    await queues.receiveAll('fraud');
    await queues.receiveAll('webhook-events');
  });
});

describe('webhook deliveries, a batch at a time', () => {
  let server: Server;
  let url = '';
  /** Event ids the receiver got, per path; a path under /fail/ answers 500. */
  const got = new Map<string, string[]>();
  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const id = (JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id: string }).id;
        got.set(req.url ?? '', [...(got.get(req.url ?? '') ?? []), id]);
        res.writeHead(req.url?.startsWith('/fail/') ? 500 : 204).end();
      });
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((ok) => server.close(() => ok()));
  });

  /** The `deliver` messages of `n` referrals' events (fanned out), for an account whose endpoints are at these paths. */
  async function delivers(paths: string[], n: number) {
    const a = await account(
      paths.length,
      paths.map((p) => url + p),
    );
    const { messages } = await referrals(a, n);
    expect(await runBatch(messages)).toEqual([]);
    await queues.receiveAll('fraud');
    const out = (await queues.receiveAll('webhook-deliveries')).map((m) => m.json as { endpoint_id: string; delivery: string });
    expect(out).toHaveLength(paths.length * n);
    return { a, out };
  }

  const deliveryOf = (accountId: string, m: { endpoint_id: string; delivery: string }) =>
    getItem(webhookKeys.webhookDelivery(accountId, m.endpoint_id, m.delivery));

  it('5 deliveries in one batch: every POST once, their reads in 1 BatchGet, their claims in 1 transaction and their outcomes in 1', async () => {
    const { a, out } = await delivers(['/ok-a/'], 5);
    const recording = recordDynamoCalls();
    try {
      expect(await runBatch(out, deliveryHandler)).toEqual([]);
    } finally {
      recording.stop();
    }
    const writes = recording.calls.filter((c) => c.command !== 'BatchGetItem' && c.command !== 'GetItem');
    expect({ writes: writes.map((c) => c.command), described: describeCalls(writes) }).toMatchObject({
      writes: ['TransactWriteItems', 'TransactWriteItems'],
    });
    // Their deliveries, endpoint, secret and events in one BatchGet (shared/store/prefetch.ts), not one each.
    expect(recording.calls.filter((c) => c.command === 'BatchGetItem' || c.command === 'GetItem').map((c) => c.command)).toEqual([
      'BatchGetItem',
    ]);
    expect(got.get('/ok-a/')).toHaveLength(5);
    for (const m of out) expect(await deliveryOf(a.accountId, m)).toMatchObject({ state: 'succeeded', attempts: 1 });
  });

  it('two copies of one delivery in a batch: it is sent once (the gathered claim falls back to one claim each, and one wins)', async () => {
    const { a, out } = await delivers(['/ok-b/'], 2);
    expect(await runBatch([out[0], out[0], out[1]], deliveryHandler)).toEqual([]);
    expect(got.get('/ok-b/')).toHaveLength(2);
    expect(new Set(got.get('/ok-b/')).size).toBe(2);
    for (const m of out) {
      const d = await deliveryOf(a.accountId, m);
      expect(d).toMatchObject({ state: 'succeeded', attempts: 1 });
      expect(d?.history).toHaveLength(1);
    }
  });

  it('a failing endpoint and a working one in one batch: the failure is recorded on its own with the endpoint failing, the successes together', async () => {
    const { a, out } = await delivers(['/ok-c/', '/fail/c/'], 2);
    expect(await runBatch(out, deliveryHandler)).toEqual([]);
    expect(got.get('/ok-c/')).toHaveLength(2);
    expect(got.get('/fail/c/')).toHaveLength(2);
    const failing = a.endpointIds[1] as string;
    for (const m of out) {
      const d = await deliveryOf(a.accountId, m);
      expect(d).toMatchObject(m.endpoint_id === failing ? { state: 'retrying', attempts: 1 } : { state: 'succeeded', attempts: 1 });
    }
    expect((await getItem(webhookKeys.webhookEndpoint(a.accountId, failing)))?.failing_since).toEqual(expect.any(Number));
    // The same batch again: every attempt is recorded, none is due yet, so nothing is sent or written.
    const again = recordDynamoCalls();
    try {
      expect(await runBatch(out, deliveryHandler)).toEqual([]);
    } finally {
      again.stop();
    }
    expect(again.calls.filter((c) => c.command !== 'BatchGetItem')).toEqual([]);
    expect(got.get('/ok-c/')).toHaveLength(2);
  });
});
