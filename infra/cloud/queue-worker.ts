// The one queue + worker construct: every queue consumer of functions/workers.ts gets its queue, its
// DLQ, its function with the event source, and an alarm, with the defaults held here and nowhere else.
import { Duration } from 'aws-cdk-lib';
import type { Alarm } from 'aws-cdk-lib/aws-cloudwatch';
import type { ITable } from 'aws-cdk-lib/aws-dynamodb';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import { Queue, QueueEncryption } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import type { QueueWorker as QueueWorkerSpec } from '../../functions/workers';
import { deadLetterAlarm } from './alarms';
import { RefloopFunction, type TableBinding } from './function';

/** Receives before SQS moves a message to the DLQ: transient failures (throttling, a provider hiccup) get retries. */
export const MAX_RECEIVE_COUNT = 5;
/** The longest SQS keeps a message: time to look at a poison message and redrive it. */
export const DLQ_RETENTION = Duration.days(14);
/**
 * AWS's advice for Lambda consumers: at least 6x the function timeout, so a batch that is retried
 * within the event source (throttled invocations) is not redelivered while still being processed.
 */
export const VISIBILITY_TIMEOUT_FACTOR = 6;
/**
 * Lambda waits up to this long to fill a batch (fewer invocations under load; the local pollers do the same),
 * unless the worker says otherwise (functions/workers.ts batchingWindowSeconds).
 */
export const MAX_BATCHING_WINDOW = Duration.seconds(1);

/** The worker's batching window; Lambda refuses a window under 1 s for batches of more than 10 records. */
export function batchingWindowOf(worker: Pick<QueueWorkerSpec, 'name' | 'batchSize' | 'batchingWindowSeconds'>): Duration {
  const seconds = worker.batchingWindowSeconds ?? MAX_BATCHING_WINDOW.toSeconds();
  if (worker.batchSize > 10 && seconds < 1)
    throw new Error(`${worker.name}: a batch of ${worker.batchSize} records needs a batching window of at least 1 s (Lambda's rule)`);
  return Duration.seconds(seconds);
}
/**
 * The most concurrent invocations each worker's SQS event source makes by default (no reservation, no
 * `workerMaxConcurrency` context): a backlog cannot take more than this of the account's unreserved pool, and
 * the provider APIs and the hot counter items see a bounded number of writers. Eight workers at 5 stay within
 * 40 executions, and a new account's low quota slows them (throttles) rather than failing the deploy:
 * MaximumConcurrency reserves nothing. docs/operations.md "Fair queues and worker concurrency" says how to
 * raise it and what account quota a setting needs.
 */
export const DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY = 5;
/** Lambda's bounds for an SQS event source's MaximumConcurrency. */
export const EVENT_SOURCE_MAX_CONCURRENCY_RANGE = { min: 2, max: 1000 } as const;
/** CDK context: `-c workerMaxConcurrency=10` (every worker), `-c workerMaxConcurrency.SubscriptionSync=20` (one worker, by its name). */
export const WORKER_MAX_CONCURRENCY_CONTEXT = 'workerMaxConcurrency';

/**
 * The MaximumConcurrency asked for a worker in CDK context: `workerMaxConcurrency.<WorkerName>`, else
 * `workerMaxConcurrency`, else undefined (the default applies). Throws on a value Lambda would refuse.
 */
export function maxConcurrencyFromContext(scope: Construct, workerName: string): number | undefined {
  for (const key of [`${WORKER_MAX_CONCURRENCY_CONTEXT}.${workerName}`, WORKER_MAX_CONCURRENCY_CONTEXT]) {
    const raw: unknown = scope.node.tryGetContext(key);
    if (raw === undefined) continue;
    const n = Number(raw);
    const { min, max } = EVENT_SOURCE_MAX_CONCURRENCY_RANGE;
    if (typeof raw === 'boolean' || raw === '' || !Number.isInteger(n) || n < min || n > max)
      throw new Error(
        `context ${key} must be a whole number from ${min} to ${max} (an SQS event source's MaximumConcurrency), got ${String(raw)}`,
      );
    return n;
  }
  return undefined;
}

export interface QueueWorkerProps {
  /** The line of functions/workers.ts. */
  worker: QueueWorkerSpec;
  table: ITable;
  /** Workers write their effects (idempotency markers in the same transaction): 'write' by default. */
  tableAccess?: TableBinding;
  /**
   * Concurrency reserved for the worker (0 or absent: none, the default), so that a flood of API requests
   * cannot take all of the account's and starve it. Opt-in: Lambda keeps 100 executions unreserved, so eight
   * workers reserving 5 each need an account quota of 140 or more, and new accounts often have 10 or 50
   * (the deploy then fails). With a reservation the event source is capped at the same number: SQS pollers
   * that invoke past a function's reserved concurrency are throttled, and throttled receives count toward
   * the DLQ redrive. Without one it is capped at DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY.
   */
  reservedConcurrency?: number;
  /**
   * The event source's MaximumConcurrency (2 to 1000); default: CDK context `workerMaxConcurrency.<name>` or
   * `workerMaxConcurrency` (maxConcurrencyFromContext), else as eventSourceCap says. Never above a reservation.
   */
  maxConcurrency?: number;
  /** The topic the DLQ alarm notifies (./alarms.ts). */
  alarmTopic: ITopic;
  /**
   * Where the function goes (RefloopApi's Workers nested stack, ./workers-stack.ts), named after the worker;
   * without it, under this construct. The queues and the alarm stay under this construct either way.
   */
  functionScope?: Construct;
}

/**
 * The event source's MaximumConcurrency: the one asked for (`maxConcurrency`), else the reservation when there
 * is one, else the default cap. Never above a reservation: SQS pollers invoking past it are throttled, and
 * throttled receives count toward the DLQ. maxConcurrency is 2 at least, so a reservation of 1 leaves the
 * event source uncapped (not recommended).
 */
export function eventSourceCap(reservedConcurrency: number | undefined, maxConcurrency?: number): { maxConcurrency?: number } {
  if (!reservedConcurrency) return { maxConcurrency: maxConcurrency ?? DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY };
  const cap = Math.min(maxConcurrency ?? reservedConcurrency, reservedConcurrency);
  return cap >= 2 ? { maxConcurrency: cap } : {};
}

export class QueueWorker extends Construct {
  readonly queue: Queue;
  readonly deadLetterQueue: Queue;
  readonly fn: RefloopFunction;
  /** In alarm as soon as one message is in the DLQ (nothing is dropped silently); notifies the alarm topic. */
  readonly alarm: Alarm;

  constructor(scope: Construct, id: string, props: QueueWorkerProps) {
    super(scope, id);
    const { worker } = props;
    const timeout = Duration.seconds(worker.timeoutSeconds);

    this.deadLetterQueue = new Queue(this, 'DeadLetterQueue', {
      retentionPeriod: DLQ_RETENTION,
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
    });
    this.queue = new Queue(this, 'Queue', {
      visibilityTimeout: Duration.seconds(worker.timeoutSeconds * VISIBILITY_TIMEOUT_FACTOR),
      encryption: QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: MAX_RECEIVE_COUNT },
    });

    this.fn = new RefloopFunction(props.functionScope ?? this, props.functionScope ? worker.name : 'Function', {
      entry: worker.entry,
      description: `Worker ${worker.name}: consumes ${worker.queue}`,
      timeout,
      ...(props.reservedConcurrency ? { reservedConcurrentExecutions: props.reservedConcurrency } : {}),
    }).bindTable(props.table, props.tableAccess ?? 'write');
    this.fn.addEventSource(
      new SqsEventSource(this.queue, {
        batchSize: worker.batchSize,
        maxBatchingWindow: batchingWindowOf(worker),
        // The handler answers batchItemFailures (shared/queue/worker.ts): only those are retried.
        reportBatchItemFailures: true,
        ...eventSourceCap(props.reservedConcurrency, props.maxConcurrency ?? maxConcurrencyFromContext(this, worker.name)),
      }),
    );

    this.alarm = deadLetterAlarm(
      this,
      'DeadLetterAlarm',
      this.deadLetterQueue,
      `${worker.name}: messages of queue ${worker.queue} are in its DLQ`,
      props.alarmTopic,
    );
  }
}
