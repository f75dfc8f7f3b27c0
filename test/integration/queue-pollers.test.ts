// The local event source mapping (infra/local/pollers.ts) against the real local-aws-sqs and the real
// SQS client: partial batch failures, whole-batch failures, redelivery after the visibility timeout,
// redrive to the DLQ after maxReceiveCount receives, and the scheduled-job runner.
import { randomBytes } from 'node:crypto';
import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { QueueWorker, ScheduledJob } from '../../functions/workers';
import { failedIds, holdPoller, releasePoller, startSchedules, type Pollers, type SqsHandler } from '../../infra/local/pollers';
import { localQueueEmpty, setQueueEnvironment } from '../../infra/local/sqs';
import { setLogLevel } from '../../shared/log';
import { sqsWorker } from '../../shared/queue/worker';
import { pollUntil } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

type Mode = 'ok' | 'fail-once' | 'always-fail' | 'throw-batch-once' | 'unknown-id-once';
interface TestMessage {
  key: string;
  mode: Mode;
}

// Entries are never loaded: every worker here has a handler override.
const worker = (name: string, queue: QueueWorker['queue']): QueueWorker => ({
  name,
  entry: 'functions/workers/does-not-exist.ts',
  queue,
  timeoutSeconds: 5,
  batchSize: 10,
  sends: [],
  providerSecrets: false,
});
const PARTIAL = worker('PartialWorker', 'provider-events');
const WHOLE = worker('WholeBatchWorker', 'rewards');
/** A batch larger than one receive (SQS answers at most 10 messages). */
const LARGE = { ...worker('LargeBatchWorker', 'webhook-events'), batchSize: 25 };

/** Per message key: the receive count of every attempt, and the attempts that succeeded. */
const attempts = new Map<string, number[]>();
const done = new Map<string, number[]>();
/** Every invocation's message ids, per worker. */
const batches: Record<string, string[][]> = { [PARTIAL.name]: [], [WHOLE.name]: [], [LARGE.name]: [] };
const push = (m: Map<string, number[]>, key: string, n: number) => m.set(key, [...(m.get(key) ?? []), n]);

// The real wrapper every worker uses: a record that throws is reported in batchItemFailures.
const partialHandler = sqsWorker<TestMessage>('test-partial', async (message, record) => {
  const receive = Number(record.attributes.ApproximateReceiveCount);
  push(attempts, message.key, receive);
  if (message.mode === 'always-fail' || (message.mode === 'fail-once' && receive === 1)) {
    throw new Error(`failing ${message.key} on receive ${receive}`);
  }
  push(done, message.key, receive);
});

// A raw handler that sometimes answers for the whole batch: throws, or names a message not in it.
const wholeBatchHandler = async (event: SQSEvent): Promise<SQSBatchResponse> => {
  const first = event.Records.some((r) => r.attributes.ApproximateReceiveCount === '1');
  const modes = event.Records.map((r) => (JSON.parse(r.body) as TestMessage).mode);
  if (first && modes.includes('throw-batch-once')) throw new Error('the whole invocation fails');
  if (first && modes.includes('unknown-id-once')) return { batchItemFailures: [{ itemIdentifier: 'not-in-this-batch' }] };
  for (const r of event.Records) push(done, (JSON.parse(r.body) as TestMessage).key, Number(r.attributes.ApproximateReceiveCount));
  return { batchItemFailures: [] };
};

const recording =
  (name: string, handler: SqsHandler): SqsHandler =>
  async (event, context) => {
    batches[name]?.push(event.Records.map((r) => r.messageId));
    return handler(event, context);
  };

let queues: TestQueues;
let pollers: Pollers;
let stderr: jest.SpyInstance;
let consoleError: jest.SpyInstance;
/** The pollers' JSON log lines (stderr). */
const logged = () =>
  stderr.mock.calls
    .map(([chunk]) => String(chunk))
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

beforeAll(async () => {
  // Failures are logged by design (JSON lines on stderr); this file asserts on them, silently.
  setLogLevel('DEBUG');
  stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  consoleError = jest.spyOn(console, 'error').mockImplementation(() => undefined);
  queues = await startTestQueues({ visibilityTimeoutSeconds: 1, maxReceiveCount: 3 });
  pollers = startTestPollers(queues, {
    workers: [PARTIAL, WHOLE, LARGE],
    maxReceiveCount: 3,
    handlers: {
      [PARTIAL.name]: recording(PARTIAL.name, partialHandler),
      [WHOLE.name]: recording(WHOLE.name, wholeBatchHandler),
      [LARGE.name]: recording(LARGE.name, wholeBatchHandler),
    },
  });
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  stderr?.mockRestore();
  consoleError?.mockRestore();
});

const newKey = () => randomBytes(6).toString('hex');

/** Sends the messages in one SendMessageBatch, so a poller gets them in one receive; returns their ids. */
async function sendBatch(queue: 'provider-events' | 'rewards' | 'webhook-events', bodies: (TestMessage | string)[]): Promise<string[]> {
  const out = await queues.client.send(
    new SendMessageBatchCommand({
      QueueUrl: queues.queueUrls[queue],
      Entries: bodies.map((b, i) => ({ Id: String(i), MessageBody: typeof b === 'string' ? b : JSON.stringify(b) })),
    }),
  );
  expect(out.Failed ?? []).toEqual([]);
  return (out.Successful ?? []).map((s) => s.MessageId ?? '');
}

describe('queue pollers (local event source mapping)', () => {
  it('deletes the records that succeeded and redelivers only the one that failed', async () => {
    const [a, b, c] = [newKey(), newKey(), newKey()];
    const ids = await sendBatch('provider-events', [
      { key: a, mode: 'ok' },
      { key: b, mode: 'fail-once' },
      { key: c, mode: 'ok' },
    ]);
    // The failed record succeeds on its second receive, after the 1 s visibility timeout ...
    await pollUntil(() => done.get(b)?.length === 1);
    expect(done.get(b)).toEqual([2]);
    expect(attempts.get(b)).toEqual([1, 2]);
    // ... by which time the others would have come back too, had they not been deleted.
    expect(attempts.get(a)).toEqual([1]);
    expect(attempts.get(c)).toEqual([1]);
    // The three arrived in one batch; the redelivery carried the failed record alone.
    const mine = (batches[PARTIAL.name] ?? []).filter((batch) => batch.some((id) => ids.includes(id)));
    expect(mine).toEqual([expect.arrayContaining(ids), [ids[1]]]);
    await pollUntil(async () => (await queues.count('provider-events')) === 0);
  });

  it('moves a poison message to the DLQ after maxReceiveCount receives and stops handling it', async () => {
    const failing = newKey();
    const [failingId, notJsonId] = await sendBatch('provider-events', [{ key: failing, mode: 'always-fail' }, 'not json {']);
    const dead = await pollUntil(
      async () => {
        const got = await queues.receiveAll('provider-events-dlq', { keep: true });
        return got.length >= 2 ? got : undefined;
      },
      { timeoutMs: 15_000 },
    );
    expect(dead.map((m) => m.body).sort()).toEqual([JSON.stringify({ key: failing, mode: 'always-fail' }), 'not json {'].sort());
    for (const m of dead) expect(m.attributes.DeadLetterQueueSourceArn).toMatch(/:provider-events$/);
    // Three receives each, then nothing: the source queue is empty.
    expect(attempts.get(failing)).toEqual([1, 2, 3]);
    const seen = (id: string) => (batches[PARTIAL.name] ?? []).filter((batch) => batch.includes(id)).length;
    expect(seen(failingId as string)).toBe(3);
    expect(seen(notJsonId as string)).toBe(3);
    expect(await queues.count('provider-events')).toBe(0);
    await queues.purge();
  }, 25_000);

  it('redelivers the whole batch when the handler throws', async () => {
    const [a, b] = [newKey(), newKey()];
    await sendBatch('rewards', [
      { key: a, mode: 'throw-batch-once' },
      { key: b, mode: 'ok' },
    ]);
    await pollUntil(() => done.has(a) && done.has(b));
    // Neither was deleted after the failed invocation: both were handled on their second receive.
    expect(done.get(a)).toEqual([2]);
    expect(done.get(b)).toEqual([2]);
    expect(logged()).toContainEqual(
      expect.objectContaining({ message: 'poller: batch failed', worker: WHOLE.name, records: 2, reason: 'the whole invocation fails' }),
    );
  });

  it('fails the whole batch when batchItemFailures names a message that is not in it', async () => {
    const [a, b] = [newKey(), newKey()];
    await sendBatch('rewards', [
      { key: a, mode: 'unknown-id-once' },
      { key: b, mode: 'ok' },
    ]);
    await pollUntil(() => done.has(a) && done.has(b));
    expect(done.get(a)).toEqual([2]);
    expect(done.get(b)).toEqual([2]);
  });

  it('gathers a batch larger than one receive: 25 waiting messages reach a worker of batch size 25 in one invocation', async () => {
    await holdPoller(LARGE.name);
    const ids: string[] = [];
    try {
      for (let i = 0; i < 25; i += 10)
        ids.push(
          ...(await sendBatch(
            'webhook-events',
            Array.from({ length: Math.min(10, 25 - i) }, () => ({ key: newKey(), mode: 'ok' as Mode })),
          )),
        );
    } finally {
      releasePoller(LARGE.name);
    }
    await pollUntil(async () => (await queues.count('webhook-events')) === 0);
    const mine = (batches[LARGE.name] ?? []).filter((batch) => batch.some((id) => ids.includes(id)));
    expect(mine.map((b) => b.length)).toEqual([25]);
    expect(new Set(mine[0])).toEqual(new Set(ids));
  });

  // An idle poller on a queue that holds nothing waits for a send (infra/local/pollers.ts IDLE_EMPTY_QUEUE_MS)
  // instead of polling every 500 ms; a message in flight keeps the short pause (its redelivery is timed).
  it('knows an empty queue from one holding a message in flight, and an idle poller handles a send at once', async () => {
    await pollUntil(async () => (await queues.count('provider-events')) === 0);
    expect(localQueueEmpty(queues.endpoint, 'provider-events')).toBe(true);
    expect(localQueueEmpty('http://127.0.0.1:9', 'provider-events')).toBeUndefined();
    expect(localQueueEmpty(queues.endpoint, 'no-such-queue')).toBeUndefined();
    // Idle long enough for every lane to be in its long pause, then one message: handled well before the
    // 5 s timer would have woken the poller.
    await new Promise((r) => setTimeout(r, 1_500));
    const key = newKey();
    const sentAt = Date.now();
    await sendBatch('provider-events', [{ key, mode: 'ok' }]);
    await pollUntil(() => done.get(key)?.length === 1, { timeoutMs: 10_000, intervalMs: 20 });
    expect(Date.now() - sentAt).toBeLessThan(3_000);
    await pollUntil(() => localQueueEmpty(queues.endpoint, 'provider-events'));
    // A message that failed is in flight until its visibility timeout ends: the queue is not empty meanwhile.
    const retried = newKey();
    await sendBatch('provider-events', [{ key: retried, mode: 'fail-once' }]);
    await pollUntil(() => attempts.get(retried)?.length === 1, { intervalMs: 10 });
    expect(localQueueEmpty(queues.endpoint, 'provider-events')).toBe(false);
    await pollUntil(() => done.get(retried)?.length === 1);
    expect(attempts.get(retried)).toEqual([1, 2]);
  });

  it('reads batch responses as Lambda does', () => {
    const ids = ['m1', 'm2'];
    expect(failedIds(undefined, ids).failed.size).toBe(0);
    expect(failedIds({}, ids).failed.size).toBe(0);
    expect(failedIds({ batchItemFailures: [] }, ids).failed.size).toBe(0);
    expect([...failedIds({ batchItemFailures: [{ itemIdentifier: 'm2' }] }, ids).failed]).toEqual(['m2']);
    expect(failedIds({ batchItemFailures: [{ itemIdentifier: '' }] }, ids)).toMatchObject({ failed: new Set(ids) });
    expect(failedIds({ batchItemFailures: [{ id: 'm1' }] }, ids)).toMatchObject({ failed: new Set(ids) });
    expect(failedIds({ batchItemFailures: 'm1' }, ids)).toMatchObject({ failed: new Set(ids) });
  });
});

describe('poller fallback redrive (queue without a low enough maxReceiveCount)', () => {
  it('sends a message received more than maxReceiveCount times to the DLQ without handling it', async () => {
    // Queues that would keep the message for 10 receives; the poller gives up after 1.
    const own = await startTestQueues({ visibilityTimeoutSeconds: 1, maxReceiveCount: 10 });
    const seen: number[] = [];
    const fallback = startTestPollers(own, {
      workers: [PARTIAL],
      maxReceiveCount: 1,
      handlers: {
        [PARTIAL.name]: async (event) => {
          for (const r of event.Records) seen.push(Number(r.attributes.ApproximateReceiveCount));
          return { batchItemFailures: event.Records.map((r) => ({ itemIdentifier: r.messageId })) };
        },
      },
    });
    try {
      await own.client.send(
        new SendMessageBatchCommand({ QueueUrl: own.queueUrls['provider-events'], Entries: [{ Id: '0', MessageBody: '{"x":1}' }] }),
      );
      const dead = await pollUntil(async () => {
        const got = await own.receiveAll('provider-events-dlq');
        return got.length > 0 ? got : undefined;
      });
      expect(dead.map((m) => m.json)).toEqual([{ x: 1 }]);
      expect(seen).toEqual([1]);
      expect(await own.count('provider-events')).toBe(0);
    } finally {
      await fallback.stop();
      await own.stop();
      // The other tests' queues again.
      setQueueEnvironment(queues);
    }
  });
});

describe('scheduled jobs', () => {
  it('runs each job on its interval with an EventBridge scheduled event', async () => {
    const job: ScheduledJob = {
      name: 'TestJob',
      entry: 'functions/workers/does-not-exist.ts',
      everyMinutes: 360,
      timeoutSeconds: 5,
      sends: [],
      providerSecrets: false,
    };
    const events: unknown[] = [];
    const schedules = startSchedules({
      jobs: [job],
      everyMinutesOverride: 0.001, // 60 ms
      handlers: { TestJob: async (event) => void events.push(event) },
    });
    try {
      await pollUntil(() => events.length >= 2);
    } finally {
      await schedules.stop();
    }
    expect(events[0]).toMatchObject({
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      resources: [expect.stringMatching(/:rule\/TestJob$/)],
      detail: {},
    });
  });
});

describe('batching windows with long polls (as npm start polls)', () => {
  it('a worker without one is invoked as soon as a message is there; the rest of what is visible comes with it', async () => {
    // 5 s long polls: a worker with a window (a batch of 10) waits for the poll to end when fewer are there, so
    // three messages sent 2.6 s apart would not each be invoked within 2.5 s.
    const own = await startTestQueues({ visibilityTimeoutSeconds: 30, maxReceiveCount: 3 });
    const NOW = { ...worker('NoWindowWorker', 'rewards'), batchingWindowSeconds: 0 as const };
    const invoked: { at: number; keys: string[] }[] = [];
    const eager = startTestPollers(own, {
      workers: [NOW],
      waitTimeSeconds: 5,
      handlers: {
        [NOW.name]: async (event) => {
          invoked.push({ at: performance.now(), keys: event.Records.map((r) => (JSON.parse(r.body) as TestMessage).key) });
          return { batchItemFailures: [] };
        },
      },
    });
    try {
      const send = (bodies: TestMessage[]) =>
        own.client.send(
          new SendMessageBatchCommand({
            QueueUrl: own.queueUrls.rewards,
            Entries: bodies.map((b, i) => ({ Id: String(i), MessageBody: JSON.stringify(b) })),
          }),
        );
      for (let i = 0; i < 3; i++) {
        const key = newKey();
        const sent = performance.now();
        await send([{ key, mode: 'ok' }]);
        const got = await pollUntil(() => invoked.find((b) => b.keys.includes(key)), { timeoutMs: 2_500 });
        expect(got.at - sent).toBeLessThan(2_500);
        await new Promise((r) => setTimeout(r, 2_600 - (performance.now() - sent)));
      }
      // Twelve at once: the first receive takes one, the gathering receives the rest up to the batch size.
      const twelve = Array.from({ length: 12 }, () => newKey());
      await send(twelve.slice(0, 10).map((key) => ({ key, mode: 'ok' as const })));
      await send(twelve.slice(10).map((key) => ({ key, mode: 'ok' as const })));
      await pollUntil(() => twelve.every((k) => invoked.some((b) => b.keys.includes(k))), { timeoutMs: 10_000 });
      const sizes = invoked.filter((b) => b.keys.some((k) => twelve.includes(k))).map((b) => b.keys.length);
      expect(Math.max(...sizes)).toBeLessThanOrEqual(10);
      expect(Math.max(...sizes)).toBeGreaterThan(1);
      expect(sizes.reduce((a, b) => a + b, 0)).toBe(12);
    } finally {
      await eager.stop();
      await own.stop();
      setQueueEnvironment(queues);
    }
  }, 40_000);
});
