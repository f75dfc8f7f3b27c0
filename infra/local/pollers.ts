// Local Lambda event source mappings: one poller per queue consumer of functions/workers.ts plays what
// Lambda does in AWS with `reportBatchItemFailures`:
// - receives a batch (up to the worker's batchSize) and invokes the handler with a real-looking SQSEvent;
// - deletes the records not listed in `batchItemFailures`; the listed ones reappear after the
//   visibility timeout. A handler that throws (or times out, or names a message that is not in the
//   batch, or answers a `batchItemFailures` that is not a list) fails the whole batch;
// - a message that keeps failing moves to the queue's DLQ after maxReceiveCount receives. local-aws-sqs
//   does that itself (see sqs.ts); should a queue have no redrive policy, the poller does it: a message
//   received more than maxReceiveCount times goes to the DLQ instead of the handler.
// Scheduled jobs (the EventBridge rules in AWS) are plain intervals here, see startSchedules.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { join } from 'node:path';
import {
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { Context, ScheduledEvent, SQSBatchResponse, SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { scheduledJobs, workers as workerTable, type QueueWorker, type ScheduledJob } from '../../functions/workers';
import type { QueueName } from '../../shared/queue/queues';
import { errorFields, log } from '../../shared/log';
import { inBatchOf } from './call-log';
import { inProcessEndpoints, localQueueEmpty, sendsAnswered, sqsActivity } from './sqs';

const REPO_ROOT = join(__dirname, '..', '..');
const ACCOUNT_ID = '000000000000';
/** Pause after an empty short poll (waitTimeSeconds 0); local-aws-sqs itself answers after ~40 ms. */
const IDLE_MS = 50;
/**
 * The same pause when the queue server runs in this process: a send to it ends the pause at once
 * (infra/local/sqs.ts sqsActivity), so the pause only bounds how late a message made visible again
 * (a visibility timeout ended) is seen.
 */
const IDLE_IN_PROCESS_MS = 500;
/**
 * The same pause when that queue holds nothing at all (none visible, in flight, delayed or held: infra/local/sqs.ts
 * localQueueEmpty): only a send or a feed can bring a message, and both end the pause, so the timer is a safety
 * net. Idle pollers then cost next to nothing: a test file's ten idle pollers took 40 CPU-ms a second at 500 ms.
 */
const IDLE_EMPTY_QUEUE_MS = 5_000;
/** Empty receives in a row after which a lane other than the first waits for work (see startPollers). */
const IDLE_AFTER_EMPTY_RECEIVES = 3;
/** Pause after a failed receive or a handler that would not load. */
const BACKOFF_MS = 2_000;

export type SqsHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse | void> | SQSBatchResponse | void;
export type ScheduledHandler = (event: ScheduledEvent, context: Context) => Promise<unknown> | unknown;

export interface PollerOptions {
  /** Default: every queue consumer of functions/workers.ts. */
  workers?: readonly QueueWorker[];
  queueUrls: Record<QueueName, string>;
  dlqUrls: Record<QueueName, string>;
  /** The local SQS endpoint. */
  endpoint: string;
  /**
   * Long-poll wait per receive, default 1 s. local-aws-sqs answers a long poll when the batch is full
   * or the wait is over, like an event source mapping with a 1 s batching window. Keep it below the
   * queue's visibility timeout; 0 = short polls (lowest latency, for tests with 1 s visibility).
   */
  waitTimeSeconds?: number;
  /** Receives before the poller moves a message to the DLQ itself (default 5, like the queues). */
  maxReceiveCount?: number;
  /** Handler overrides by worker name (tests); others are loaded from the worker's entry. */
  handlers?: Record<string, SqsHandler>;
  /** Batches of one worker in flight at once (Lambda runs several); default 1. */
  concurrency?: number;
  /** Region in the records' awsRegion; default AWS_REGION or us-east-1. */
  region?: string;
}

export interface Pollers {
  /** Stops receiving, lets the batches in flight finish (their deletes included), then resolves. */
  stop(): Promise<void>;
}

function defaultRegion(): string {
  return process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1';
}

const modules = new Map<string, unknown>();

/** Requires a handler module on first use (like the gateway: works under tsx and ts-jest); a failed load is retried next time. */
function loadHandler<H>(entry: string): H {
  let handler = modules.get(entry);
  if (!handler) {
    const mod = require(join(REPO_ROOT, entry)) as { handler?: unknown };
    if (typeof mod.handler !== 'function') throw new Error(`${entry} does not export a handler function`);
    handler = mod.handler;
    modules.set(entry, handler);
  }
  return handler as H;
}

function lambdaContext(functionName: string, timeoutMs: number, region: string): Context {
  const startedAt = Date.now();
  const unsupported = () => {
    throw new Error('Use the handler result, not context.done/fail/succeed');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:${region}:${ACCOUNT_ID}:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, timeoutMs - (Date.now() - startedAt)),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

class InvocationTimeoutError extends Error {
  override readonly name = 'InvocationTimeout';
}

/** Runs a handler within its Lambda timeout; past it the invocation counts as failed (the work may go on). */
async function invokeWithTimeout<T>(run: () => Promise<T> | T, timeoutMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, fail) => {
    timer = setTimeout(() => fail(new InvocationTimeoutError(`Task timed out after ${timeoutMs / 1000} seconds`)), timeoutMs);
  });
  try {
    return await Promise.race([Promise.resolve().then(run), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function toRecord(message: Message, eventSourceARN: string, awsRegion: string): SQSRecord {
  const messageAttributes: SQSMessageAttributes = {};
  for (const [name, value] of Object.entries(message.MessageAttributes ?? {})) {
    messageAttributes[name] = {
      ...(value.StringValue !== undefined ? { stringValue: value.StringValue } : {}),
      ...(value.BinaryValue !== undefined ? { binaryValue: Buffer.from(value.BinaryValue).toString('base64') } : {}),
      stringListValues: [],
      binaryListValues: [],
      dataType: value.DataType ?? 'String',
    };
  }
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ...attributes,
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? ACCOUNT_ID,
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes,
    md5OfBody: message.MD5OfBody ?? '',
    ...(message.MD5OfMessageAttributes ? { md5OfMessageAttributes: message.MD5OfMessageAttributes } : {}),
    eventSource: 'aws:sqs',
    eventSourceARN,
    awsRegion,
  };
}

/**
 * The message ids Lambda would treat as failed, given the handler's answer: none for no answer or no
 * `batchItemFailures`; all of them when the list is malformed or names a message not in the batch.
 */
export function failedIds(result: unknown, batchIds: readonly string[]): { failed: Set<string>; invalid?: string } {
  const all = () => new Set(batchIds);
  if (result === null || result === undefined || typeof result !== 'object') return { failed: new Set() };
  const list = (result as { batchItemFailures?: unknown }).batchItemFailures;
  if (list === null || list === undefined) return { failed: new Set() };
  if (!Array.isArray(list)) return { failed: all(), invalid: 'batchItemFailures is not a list' };
  const failed = new Set<string>();
  for (const item of list as unknown[]) {
    const id = typeof item === 'object' && item !== null ? (item as { itemIdentifier?: unknown }).itemIdentifier : undefined;
    if (typeof id !== 'string' || !batchIds.includes(id)) {
      return { failed: all(), invalid: `batchItemFailures names ${JSON.stringify(id)}, which is not in the batch` };
    }
    failed.add(id);
  }
  return { failed };
}

/**
 * Workers held by name (the bench's drain from a backlog): their pollers receive nothing until released.
 * Empty unless a caller holds one, so every poller runs as before. Process-wide: it holds that worker's
 * pollers of every startPollers in this process.
 */
const held = new Set<string>();
/** Lanes per worker inside a receive or a batch. */
const busy = new Map<string, number>();

/** Holds a worker's pollers: resolves once none of its lanes is inside a receive or a batch. */
export async function holdPoller(workerName: string): Promise<void> {
  held.add(workerName);
  while ((busy.get(workerName) ?? 0) > 0) await new Promise((r) => setTimeout(r, 10));
}

/** Lets a held worker's pollers receive again (at once: a held lane looks every 10 ms). */
export function releasePoller(workerName: string): void {
  held.delete(workerName);
}

export function startPollers(options: PollerOptions): Pollers {
  const list = options.workers ?? workerTable;
  const waitTimeSeconds = options.waitTimeSeconds ?? 1;
  const maxReceiveCount = options.maxReceiveCount ?? 5;
  const concurrency = Math.max(1, options.concurrency ?? 1);
  const region = options.region ?? defaultRegion();
  const client = new SQSClient({
    region,
    endpoint: options.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  // As the service's clients (shared/tracing.ts traceClient): no logger middleware masking fields for dropped lines.
  client.middlewareStack.remove('loggerMiddleware');
  const stopping = new AbortController();
  // Every worker's lanes wait on it (one listener per worker, and one per sleeping lane).
  setMaxListeners(0, stopping.signal);
  const sleep = (ms: number) =>
    new Promise<void>((ok) => {
      if (stopping.signal.aborted) return ok();
      const done = () => {
        clearTimeout(timer);
        stopping.signal.removeEventListener('abort', done);
        ok();
      };
      const timer = setTimeout(done, ms);
      stopping.signal.addEventListener('abort', done);
    });

  /** After an empty short poll: IDLE_MS, or until the in-process queue server takes a message. */
  const idle = (sendsBefore: number, queueUrl: string): Promise<void> => {
    if (!inProcessEndpoints.has(options.endpoint)) return sleep(IDLE_MS);
    // A send answered while the empty receive was under way: poll again now.
    if (sendsAnswered(options.endpoint) !== sendsBefore) return Promise.resolve();
    return new Promise<void>((ok) => {
      const done = () => {
        sqsActivity.off(options.endpoint, done);
        clearTimeout(timer);
        stopping.signal.removeEventListener('abort', done);
        ok();
      };
      const timer = setTimeout(
        done,
        localQueueEmpty(options.endpoint, queueUrl.slice(queueUrl.lastIndexOf('/') + 1)) ? IDLE_EMPTY_QUEUE_MS : IDLE_IN_PROCESS_MS,
      );
      sqsActivity.on(options.endpoint, done);
      if (stopping.signal.aborted) return done();
      stopping.signal.addEventListener('abort', done);
    });
  };

  function poller(worker: QueueWorker) {
    const queueUrl = options.queueUrls[worker.queue];
    const dlqUrl = options.dlqUrls[worker.queue];
    const base = { worker: worker.name, queue: worker.queue };
    let arn: string | undefined;

    async function queueArn(): Promise<string> {
      if (!arn) {
        const out = await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
        arn = out.Attributes?.QueueArn ?? `arn:aws:sqs:${region}:${ACCOUNT_ID}:${worker.queue}`;
      }
      return arn;
    }

    async function deleteAll(messages: Message[]): Promise<void> {
      for (let i = 0; i < messages.length; i += 10) {
        const chunk = messages.slice(i, i + 10);
        const command = new DeleteMessageBatchCommand({
          QueueUrl: queueUrl,
          Entries: chunk.map((m, j) => ({ Id: String(j), ReceiptHandle: m.ReceiptHandle ?? '' })),
        });
        // A delete is safe to repeat (a receipt handle deleted twice is no error), unlike a receive: on a
        // busy machine the local SQS drops a connection now and then, and a lost delete brings its messages
        // back only after the visibility timeout (6x the worker's), applied again as duplicates.
        const out = await (async () => {
          for (let attempt = 1; ; attempt++) {
            try {
              return await client.send(command);
            } catch (err) {
              if (attempt >= 3 || stopping.signal.aborted) throw err;
              await sleep(100 * attempt);
            }
          }
        })();
        for (const f of out.Failed ?? []) {
          log('warn', 'poller: delete failed, the message will be redelivered', {
            ...base,
            message_id: chunk[Number(f.Id)]?.MessageId,
            reason: f.Message ?? f.Code,
          });
        }
      }
    }

    /** The fallback redrive: only when the queue itself did not move the message (no redrive policy). */
    async function moveToDlq(message: Message): Promise<void> {
      await client.send(
        new SendMessageCommand({
          QueueUrl: dlqUrl,
          MessageBody: message.Body ?? '',
          // The fair-queue group stays with the message (SQS's own redrive keeps it too).
          MessageGroupId: message.Attributes?.MessageGroupId,
          ...(message.MessageAttributes && Object.keys(message.MessageAttributes).length > 0
            ? { MessageAttributes: message.MessageAttributes }
            : {}),
        }),
      );
      await client.send(new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle ?? '' }));
      log('error', 'poller: message moved to the DLQ', {
        ...base,
        message_id: message.MessageId,
        receive_count: message.Attributes?.ApproximateReceiveCount,
      });
    }

    async function runBatch(received: Message[]): Promise<void> {
      // A long poll longer than the visibility timeout can return one message twice: keep the last receive.
      const byId = new Map<string, Message>();
      for (const m of received) byId.set(m.MessageId ?? '', m);
      const messages: Message[] = [];
      for (const m of byId.values()) {
        if (Number(m.Attributes?.ApproximateReceiveCount ?? '1') > maxReceiveCount) await moveToDlq(m);
        else messages.push(m);
      }
      if (messages.length === 0) return;

      const timeoutMs = worker.timeoutSeconds * 1000;
      const ids = messages.map((m) => m.MessageId ?? '');
      let failed: Set<string>;
      try {
        const handler = options.handlers?.[worker.name] ?? loadHandler<SqsHandler>(worker.entry);
        const eventSourceARN = await queueArn();
        const event: SQSEvent = { Records: messages.map((m) => toRecord(m, eventSourceARN, region)) };
        const result = await invokeWithTimeout(() => handler(event, lambdaContext(worker.name, timeoutMs, region)), timeoutMs);
        const verdict = failedIds(result, ids);
        failed = verdict.failed;
        if (verdict.invalid) {
          log('error', 'poller: batch failed', { ...base, records: ids.length, error: 'InvalidBatchResponse', reason: verdict.invalid });
        } else if (failed.size > 0) {
          log('error', 'poller: records failed', { ...base, records: ids.length, failed: [...failed] });
        }
      } catch (err) {
        failed = new Set(ids);
        log('error', 'poller: batch failed', { ...base, records: ids.length, message_ids: ids, ...errorFields(err) });
      }
      await deleteAll(messages.filter((m) => !failed.has(m.MessageId ?? '')));
    }

    // Lanes scale with the backlog, as an event source mapping's pollers do: the first lane always polls, the
    // others until IDLE_AFTER_EMPTY_RECEIVES receives in a row came back empty, then wait until a lane receives
    // some (in a drain, lanes competing for the fair queue's window see a stray empty receive: one was not
    // enough to idle them, which cost a Stripe drain 8% of its rate). An
    // idle worker then makes one receive a second instead of one per lane (with 5 lanes and 15 workers, 75
    // long polls a second cost npm start 150 ms of CPU a second doing nothing).
    let idleLanes: Array<() => void> = [];
    const workArrived = () => {
      const waking = idleLanes;
      idleLanes = [];
      for (const wake of waking) wake();
    };
    stopping.signal.addEventListener('abort', workArrived);
    const untilWork = () =>
      new Promise<void>((ok) => {
        if (stopping.signal.aborted) return ok();
        idleLanes.push(ok);
      });

    async function lane(index: number): Promise<void> {
      let emptyInARow = 0;
      while (!stopping.signal.aborted) {
        if (held.has(worker.name)) {
          await sleep(10);
          continue;
        }
        busy.set(worker.name, (busy.get(worker.name) ?? 0) + 1);
        let received = 0;
        try {
          received = await turn();
        } finally {
          busy.set(worker.name, (busy.get(worker.name) ?? 1) - 1);
        }
        if (received > 0) {
          emptyInARow = 0;
          workArrived();
        } else if (index > 0 && ++emptyInARow >= IDLE_AFTER_EMPTY_RECEIVES) {
          emptyInARow = 0;
          await untilWork();
        }
      }
    }

    /** One receive and its batch; how many messages it received. */
    async function turn(): Promise<number> {
      let received: Message[];
      const sendsBefore = sendsAnswered(options.endpoint);
      const receive = async (max: number, wait: number) =>
        (
          await client.send(
            new ReceiveMessageCommand({
              QueueUrl: queueUrl,
              MaxNumberOfMessages: Math.min(10, Math.max(1, max)),
              WaitTimeSeconds: wait,
              AttributeNames: ['All'],
              MessageSystemAttributeNames: ['All'],
              MessageAttributeNames: ['All'],
            }),
          )
        ).Messages ?? [];
      // A worker without a batching window (functions/workers.ts batchingWindowSeconds 0) is invoked as soon as
      // one message is there, as Lambda does: a long poll for one message (local-aws-sqs answers a long poll once
      // its batch is full), then the rest of what is visible, below.
      const noWindow = waitTimeSeconds > 0 && worker.batchingWindowSeconds === 0;
      try {
        received = await receive(noWindow ? 1 : worker.batchSize, waitTimeSeconds);
      } catch (err) {
        if (stopping.signal.aborted) return 0;
        log('error', 'poller: receive failed', { ...base, ...errorFields(err) });
        await sleep(BACKOFF_MS);
        return 0;
      }
      // A batch larger than one receive (SQS answers at most 10): Lambda's poller gathers up to the batch
      // size within the batching window; here, receives without waiting while each comes back full. One
      // that fails ends the batch with what it has.
      for (
        let asked = noWindow ? 1 : 10, last = received.length;
        last === asked && received.length < worker.batchSize && !stopping.signal.aborted;
      ) {
        try {
          asked = Math.min(10, worker.batchSize - received.length);
          const more = await receive(asked, 0);
          received.push(...more);
          last = more.length;
        } catch {
          break;
        }
      }
      // Received messages are in flight: they are handled even when stop() came meanwhile.
      if (received.length > 0) {
        try {
          // Named for REFLOOP_CALL_LOG (./call-log.ts) while it runs.
          await inBatchOf(worker.name, () => runBatch(received));
        } catch (err) {
          // A delete or DLQ move that failed: the messages come back after the visibility timeout.
          log('error', 'poller: batch bookkeeping failed', { ...base, ...errorFields(err) });
          await sleep(BACKOFF_MS);
        }
      } else if (waitTimeSeconds === 0) {
        await idle(sendsBefore, queueUrl);
      }
      return received.length;
    }

    return Array.from({ length: concurrency }, (_, index) => lane(index));
  }

  const running = list.flatMap((w) => poller(w));
  let stopped: Promise<void> | undefined;
  return {
    // No abort of the open long poll: local-aws-sqs would still hand the messages of that poll to no
    // one, hidden for a visibility timeout. It ends within waitTimeSeconds.
    stop: () => {
      stopped ??= (async () => {
        stopping.abort();
        await Promise.all(running);
        client.destroy();
      })();
      return stopped;
    },
  };
}

function scheduledEvent(job: ScheduledJob, region: string): ScheduledEvent {
  return {
    version: '0',
    id: randomUUID(),
    'detail-type': 'Scheduled Event',
    source: 'aws.events',
    account: ACCOUNT_ID,
    time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    region,
    resources: [`arn:aws:events:${region}:${ACCOUNT_ID}:rule/${job.name}`],
    detail: {},
  };
}

async function invokeJob(job: ScheduledJob, handler: ScheduledHandler, context?: Context): Promise<unknown> {
  const region = defaultRegion();
  const timeoutMs = job.timeoutSeconds * 1000;
  return invokeWithTimeout(() => handler(scheduledEvent(job, region), context ?? lambdaContext(job.name, timeoutMs, region)), timeoutMs);
}

/** Runs a scheduled job once, as its EventBridge rule would: its handler with a scheduled event. */
export async function runScheduledJob(job: ScheduledJob, context?: Context): Promise<unknown> {
  return invokeJob(job, loadHandler<ScheduledHandler>(job.entry), context);
}

export interface ScheduleOptions {
  /** Default: scheduledJobs of functions/workers.ts. */
  jobs?: readonly ScheduledJob[];
  /** Minutes between runs for every job instead of each job's everyMinutes (fractions allowed). */
  everyMinutesOverride?: number;
  /** Handler overrides by job name (tests). */
  handlers?: Record<string, ScheduledHandler>;
}

/**
 * Runs each job every `everyMinutes` (first run after one interval, as a new rule does). A run that is
 * still going when the next is due skips that one. Failures are logged as JSON lines on stderr.
 */
export function startSchedules(options: ScheduleOptions = {}): { stop(): Promise<void> } {
  const inFlight = new Set<Promise<void>>();
  const timers = (options.jobs ?? scheduledJobs).map((job) => {
    let current: Promise<void> | undefined;
    const ms = Math.max(1, Math.round((options.everyMinutesOverride ?? job.everyMinutes) * 60_000));
    const timer = setInterval(() => {
      if (current) {
        log('warn', 'schedule: previous run still going, skipped', { job: job.name });
        return;
      }
      const run = (async () => {
        try {
          const handler = options.handlers?.[job.name] ?? loadHandler<ScheduledHandler>(job.entry);
          await invokeJob(job, handler);
        } catch (err) {
          log('error', 'schedule: run failed', { job: job.name, ...errorFields(err) });
        }
      })();
      current = run;
      inFlight.add(run);
      void run.finally(() => {
        current = undefined;
        inFlight.delete(run);
      });
    }, ms);
    timer.unref();
    return timer;
  });
  return {
    stop: async () => {
      for (const t of timers) clearInterval(t);
      await Promise.all([...inFlight]);
    },
  };
}
