// Local SQS (`local-aws-sqs`, pure JS, speaks the SQS JSON protocol) with the same queues and DLQs as
// the CDK stack, for `npm start` and the tests. Everything is in memory: a restart loses the messages.
//
// Redrive: local-aws-sqs moves a message to its DLQ by itself, like SQS: when the visibility timeout
// of its maxReceiveCount-th receive expires without a delete (checked: infra/local/pollers.ts keeps a
// fallback anyway). Two quirks to know:
// - a long poll returns only when the batch is full or the wait time is over (SQS returns as soon as
//   it has messages), which is what a Lambda event source with a 1 s batching window does;
// - a message whose visibility timeout ends during a long poll is received twice by that poll, so
//   keep the poll's wait time below the visibility timeout (the pollers also de-duplicate a batch).
//
// Fair queues: local-aws-sqs serves a standard queue in arrival order; ./fair-queue.ts makes each queue
// fair across MessageGroupIds (the account, shared/queue/queues.ts messageGroupId) as SQS fair queues are.
import { EventEmitter } from 'node:events';
import { createServer } from 'node:http';
import { createRequestHandler } from 'local-aws-sqs';
import { workers } from '../../functions/workers';
import { resetConfig } from '../../shared/config';
import { resetQueueClient } from '../../shared/queue/publish';
import { QUEUE_NAMES, QUEUES, type QueueName } from '../../shared/queue/queues';
import { type FairQueue, makeFair } from './fair-queue';

export interface LocalSqsOptions {
  /** 0 (the default) picks a free port. */
  port?: number;
  /** Every queue's visibility timeout; default, like the stack, 6x the timeout of the queue's worker. */
  visibilityTimeoutSeconds?: number;
  /** Receives before a message moves to its DLQ; default 5, like the stack. */
  maxReceiveCount?: number;
  /** Region in the queue ARNs; default AWS_REGION or us-east-1. */
  region?: string;
  /**
   * Fair queues (./fair-queue.ts): the visible messages a queue holds at most while messages with a group
   * wait their turn. Default fairWindow(batchSize, 1): twice what one poller lane takes per receive.
   */
  fairWindow?: number | ((queue: QueueName) => number);
}

export interface LocalSqs {
  /** `http://127.0.0.1:<port>`, for SQS_ENDPOINT. */
  endpoint: string;
  queueUrls: Record<QueueName, string>;
  dlqUrls: Record<QueueName, string>;
  /** Drops every message of every queue at once, held ones included (SQS's PurgeQueue takes 60 s, also here). */
  purge(): void;

  stop(): Promise<void>;
}

/** SQS keeps a message 14 days at most: the DLQ keeps them that long. */
export const DLQ_RETENTION_SECONDS = 14 * 24 * 3600;
export const DEFAULT_MAX_RECEIVE_COUNT = 5;
const ACCOUNT_ID = '000000000000';

export const dlqName = (queue: QueueName): string => `${queue}-dlq`;

/**
 * The local fair queues' window: 2 x the worker's batch size x its poller lanes. Enough visible messages for
 * every lane's next receive, and a quiet group's message waits behind at most this many.
 */
export const fairWindow = (batchSize: number, lanes = 1): number => 2 * Math.max(1, batchSize) * Math.max(1, lanes);

/**
 * Sends to a local SQS of this process: an event named by the queue server's endpoint after each
 * SendMessage(Batch) it answered. Pollers of the same process wait on it between short polls instead
 * of polling every few milliseconds (which kept a core a fifth busy in every test file with pollers).
 */
export const sqsActivity = new EventEmitter().setMaxListeners(0);
/** Endpoints of the local SQS servers running in this process (their sends are announced on sqsActivity). */
export const inProcessEndpoints = new Set<string>();
const sendCounts = new Map<string, number>();
/** Sends answered so far by this process's local SQS at `endpoint`: a poller compares it across a receive. */
export const sendsAnswered = (endpoint: string): number => sendCounts.get(endpoint) ?? 0;
/**
 * Counts a send to the queue server at `endpoint` and wakes the pollers waiting on it: the server's own sends,
 * and in npm start's workers process (./workers-process.ts) the sends its parent's server answered.
 */
export function noteSend(endpoint: string): void {
  sendCounts.set(endpoint, (sendCounts.get(endpoint) ?? 0) + 1);
  sqsActivity.emit(endpoint);
}

const fairQueues = new Map<string, Record<QueueName, FairQueue>>();
/** Each in-process server's queue counts: visible or in flight, and delayed (local-aws-sqs's own attributes). */
const queueCounts = new Map<string, (name: string) => { present: number; delayed: number } | undefined>();

/**
 * Whether queue `name` of this process's local SQS at `endpoint` holds no message at all: none visible, in
 * flight, delayed or held by its fair layer. Such a queue gets a message only from a send or a feed, and both
 * wake the idle pollers (sqsActivity), so they may wait for one instead of polling. Undefined when that server
 * is not in this process (npm start's workers process) or has no such queue.
 */
export function localQueueEmpty(endpoint: string, name: string): boolean | undefined {
  const counts = queueCounts.get(endpoint)?.(name);
  if (!counts) return undefined;
  const held = fairQueues.get(endpoint)?.[name as QueueName]?.held() ?? 0;
  return counts.present === 0 && counts.delayed === 0 && held === 0;
}
/** The fairness layers (./fair-queue.ts) of this process's local SQS at `endpoint`: held messages, each group's share. */
export const localFairQueues = (endpoint: string): Record<QueueName, FairQueue> | undefined => fairQueues.get(endpoint);

export async function startLocalSqs(options: LocalSqsOptions = {}): Promise<LocalSqs> {
  const region = options.region ?? (process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION || 'us-east-1');
  const maxReceiveCount = options.maxReceiveCount ?? DEFAULT_MAX_RECEIVE_COUNT;
  const visibilityTimeout = (queue: QueueName) =>
    options.visibilityTimeoutSeconds ?? 6 * (workers.find((w) => w.queue === queue)?.timeoutSeconds ?? 5);
  // Each DLQ before its queue: the redrive policy's target must exist.
  const queues = QUEUE_NAMES.flatMap((name) => [
    { QueueName: dlqName(name), Attributes: { MessageRetentionPeriod: DLQ_RETENTION_SECONDS } },
    {
      QueueName: name,
      Attributes: {
        VisibilityTimeout: visibilityTimeout(name),
        RedrivePolicy: JSON.stringify({
          deadLetterTargetArn: `arn:aws:sqs:${region}:${ACCOUNT_ID}:${dlqName(name)}`,
          maxReceiveCount,
        }),
      },
    },
  ]);
  // createRequestHandler rather than createSqsServer: a busy port then rejects instead of crashing the
  // process, and the service object gives an immediate purge.
  const { service, requestHandler } = createRequestHandler({
    port: options.port ?? 0,
    hostname: '127.0.0.1',
    region,
    accountId: ACCOUNT_ID,
    emulateQueueCreationLifecycle: false,
    queues,
  });
  const server = createServer((req, res) => {
    // A message sent wakes this process's idle short-poll pollers (infra/local/pollers.ts) at once.
    const target = req.headers['x-amz-target'];
    if (typeof target === 'string' && target.startsWith('AmazonSQS.SendMessage')) res.once('finish', () => noteSend(endpoint));
    void requestHandler(req, res);
  });
  // Pollers hold keep-alive sockets; they must not keep a test process alive.
  server.unref();
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', fail);
      ok();
    });
  });
  const address = server.address();
  if (!address || typeof address !== 'object') throw new Error('local SQS: no listening address');
  // Queue URLs are built from the service's port, which is 0 until now when a free port was asked for.
  service.PORT = address.port;
  const endpoint = `http://127.0.0.1:${address.port}`;
  inProcessEndpoints.add(endpoint);
  const fairWindowOf = (queue: QueueName): number => {
    const option = options.fairWindow;
    if (typeof option === 'number') return option;
    if (option) return option(queue);
    return fairWindow(workers.find((w) => w.queue === queue)?.batchSize ?? 10);
  };
  const byName = (name: string) => service.Queues.find((q) => q.QueueName === name);
  const fair = Object.fromEntries(
    QUEUE_NAMES.map((name) => {
      const queue = byName(name);
      if (!queue) throw new Error(`local SQS: queue ${name} was not created`);
      return [
        name,
        makeFair(queue, byName(dlqName(name)), {
          window: fairWindowOf(name),
          // A held message fed into the queue wakes idle pollers like a send does.
          onFeed: () => noteSend(endpoint),
        }),
      ];
    }),
  ) as Record<QueueName, FairQueue>;
  fairQueues.set(endpoint, fair);
  queueCounts.set(endpoint, (name) => {
    const queue = byName(name);
    if (!queue) return undefined;
    // local-aws-sqs counts in ApproximateNumberOfMessages every message not delayed, in flight ones included.
    const a = queue.getAttributes(['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesDelayed']) as Record<string, string>;
    return { present: Number(a.ApproximateNumberOfMessages ?? 0), delayed: Number(a.ApproximateNumberOfMessagesDelayed ?? 0) };
  });
  const url = (name: string) => `${endpoint}/${ACCOUNT_ID}/${name}`;
  const queueUrls = Object.fromEntries(QUEUE_NAMES.map((q) => [q, url(q)])) as Record<QueueName, string>;
  const dlqUrls = Object.fromEntries(QUEUE_NAMES.map((q) => [q, url(dlqName(q))])) as Record<QueueName, string>;

  let stopped: Promise<void> | undefined;
  return {
    endpoint,
    queueUrls,
    dlqUrls,
    purge: () => {
      for (const queue of service.Queues) queue.clearRecords();
    },
    stop: () => {
      stopped ??= new Promise<void>((ok) => {
        inProcessEndpoints.delete(endpoint);
        fairQueues.delete(endpoint);
        queueCounts.delete(endpoint);
        for (const f of Object.values(fair)) f.stop();
        service.resetAll();
        server.close(() => ok());
        // Open long polls and idle keep-alive sockets would hold close() up.
        server.closeAllConnections();
      });
      return stopped;
    },
  };
}

/**
 * Points the publisher (and config()) at a local SQS: SQS_ENDPOINT and every queue's URL variable,
 * then drops the cached configuration and SQS client so the next publish uses them.
 */
export function setQueueEnvironment(sqs: Pick<LocalSqs, 'endpoint' | 'queueUrls'>): void {
  process.env.SQS_ENDPOINT = sqs.endpoint;
  for (const q of QUEUE_NAMES) process.env[QUEUES[q].envVar] = sqs.queueUrls[q];
  resetConfig();
  resetQueueClient();
}
