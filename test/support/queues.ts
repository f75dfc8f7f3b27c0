// Queues for integration tests: each test file starts its own local SQS (in process, pure JS, a few
// milliseconds) in beforeAll and stops it in afterAll. The environment then points the publisher at it.
import type { SQSEvent } from 'aws-lambda';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SQSClient,
  type MessageAttributeValue,
  type MessageSystemAttributeName,
} from '@aws-sdk/client-sqs';
import { startPollers, type PollerOptions, type Pollers } from '../../infra/local/pollers';
import { setQueueEnvironment, startLocalSqs, type LocalSqs, type LocalSqsOptions } from '../../infra/local/sqs';
import { QUEUE_NAMES, type QueueName } from '../../shared/queue/queues';
import { pollUntil } from './fixtures';

export interface ReceivedMessage {
  messageId: string;
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
  attributes: Partial<Record<MessageSystemAttributeName, string>>;
  messageAttributes: Record<string, MessageAttributeValue>;
}

/** A queue name (`rewards`), its DLQ (`rewards-dlq`) or a queue URL. */
export type QueueRef = QueueName | `${QueueName}-dlq` | string;

export interface TestQueues extends Omit<LocalSqs, 'purge'> {
  client: SQSClient;
  urlOf(queue: QueueRef): string;
  /**
   * Receives every message visible now and deletes it (unless `keep`). Waits up to `waitMs` (default
   * 0) for a first message; returns [] if none came. For an expected message, use it within pollUntil.
   */
  receiveAll(queue: QueueRef, options?: { waitMs?: number; keep?: boolean }): Promise<ReceivedMessage[]>;
  /** Visible + in flight + delayed messages of a queue, as GetQueueAttributes reports them. */
  count(queue: QueueRef): Promise<number>;
  /** Empties every queue and DLQ at once. */
  purge(): Promise<void>;
  /** Waits until every named queue is empty (none visible, in flight or delayed); fails after `timeoutMs` (15 s). */
  drained(queues: QueueRef[], timeoutMs?: number): Promise<void>;
}

/**
 * Test defaults: a 2 s visibility timeout and 3 receives before the DLQ keep retries quick (a failed
 * record comes back after 2 s, a poison one is in the DLQ after about 6 s). Pass others if needed.
 */
export async function startTestQueues(options: LocalSqsOptions = {}): Promise<TestQueues> {
  const sqs = await startLocalSqs({ visibilityTimeoutSeconds: 2, maxReceiveCount: 3, ...options });
  setQueueEnvironment(sqs);
  const client = new SQSClient({
    region: process.env.AWS_REGION || 'us-east-1',
    endpoint: sqs.endpoint,
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });

  const urlOf = (queue: QueueRef): string => {
    if ((QUEUE_NAMES as string[]).includes(queue)) return sqs.queueUrls[queue as QueueName];
    const dlq = QUEUE_NAMES.find((q) => `${q}-dlq` === queue);
    if (dlq) return sqs.dlqUrls[dlq];
    if (/^https?:\/\//.test(queue)) return queue;
    throw new Error(`unknown queue ${queue}`);
  };

  /** Messages visible or held by the fair layer, not in flight (the local queue counts in-flight ones in ApproximateNumberOfMessages). */
  const waiting = async (url: string): Promise<number> => {
    const res = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: url,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    const a = res.Attributes ?? {};
    return Number(a.ApproximateNumberOfMessages ?? 0) - Number(a.ApproximateNumberOfMessagesNotVisible ?? 0);
  };

  const receiveAll: TestQueues['receiveAll'] = async (queue, { waitMs = 0, keep = false } = {}) => {
    const url = urlOf(queue);
    const deadline = Date.now() + waitMs;
    const out: ReceivedMessage[] = [];
    const handles: string[] = [];
    for (;;) {
      const res = await client.send(
        new ReceiveMessageCommand({
          QueueUrl: url,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          // Hidden long enough not to be received twice while draining.
          VisibilityTimeout: 30,
          AttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
          MessageAttributeNames: ['All'],
        }),
      );
      const messages = res.Messages ?? [];
      for (const m of messages) {
        let json: unknown;
        try {
          json = JSON.parse(m.Body ?? '');
        } catch {
          json = undefined;
        }
        out.push({
          messageId: m.MessageId ?? '',
          body: m.Body ?? '',
          json,
          attributes: m.Attributes ?? {},
          messageAttributes: m.MessageAttributes ?? {},
        });
        handles.push(m.ReceiptHandle ?? '');
      }
      if (messages.length > 0) continue;
      if (out.length > 0 || Date.now() >= deadline) {
        // An empty short poll does not prove that nothing waits (SQS samples its servers; the local queue
        // answers empty while a message fed by its fair layer waits for its 0 ms timer): stop only when the
        // queue holds nothing visible or held, or after a few seconds more.
        if ((await waiting(url)) === 0 || Date.now() >= deadline + 5_000) break;
        await new Promise((r) => setTimeout(r, 20));
        continue;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    if (!keep) {
      for (let i = 0; i < handles.length; i += 10) {
        const entries = handles.slice(i, i + 10).map((h, j) => ({ Id: String(j), ReceiptHandle: h }));
        await client.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: entries }));
      }
    }
    return out;
  };

  const count: TestQueues['count'] = async (queue) => {
    const res = await client.send(
      new GetQueueAttributesCommand({
        QueueUrl: urlOf(queue),
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
      }),
    );
    const a = res.Attributes ?? {};
    return (
      Number(a.ApproximateNumberOfMessages ?? 0) +
      Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) +
      Number(a.ApproximateNumberOfMessagesDelayed ?? 0)
    );
  };

  return {
    endpoint: sqs.endpoint,
    queueUrls: sqs.queueUrls,
    dlqUrls: sqs.dlqUrls,
    client,
    urlOf,
    receiveAll,
    count,
    purge: async () => sqs.purge(),
    drained: async (queues, timeoutMs = 15_000) => {
      await pollUntil(async () => (await Promise.all(queues.map(count))).every((n) => n === 0), { timeoutMs });
    },
    stop: async () => {
      client.destroy();
      await sqs.stop();
    },
  };
}

/**
 * Pollers on test queues: the worker table's handlers unless overridden. Short polls by default (a 1-2 s
 * visibility timeout must outlast the poll, and records are handled within ~50 ms of being sent).
 * Stop them before the queues.
 */
export function startTestPollers(
  queues: Pick<TestQueues, 'endpoint' | 'queueUrls' | 'dlqUrls'>,
  options: Omit<PollerOptions, 'endpoint' | 'queueUrls' | 'dlqUrls'> = {},
): Pollers {
  return startPollers({
    waitTimeSeconds: 0,
    maxReceiveCount: 3,
    ...options,
    endpoint: queues.endpoint,
    queueUrls: queues.queueUrls,
    dlqUrls: queues.dlqUrls,
  });
}

let eventSerial = 0;

/** An SQS event as Lambda hands it to a worker: one record per message (its JSON body), each with a fresh message id. */
export function sqsEventOf(messages: readonly unknown[], queue: string): SQSEvent {
  const batch = ++eventSerial;
  return {
    Records: messages.map((m, i) => ({
      messageId: `msg-${batch}-${i}`,
      receiptHandle: 'r',
      body: JSON.stringify(m),
      attributes: {
        ApproximateReceiveCount: '1',
        SentTimestamp: String(Date.now()),
        SenderId: 'test',
        ApproximateFirstReceiveTimestamp: String(Date.now()),
      },
      messageAttributes: {},
      md5OfBody: '',
      eventSource: 'aws:sqs',
      eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queue}`,
      awsRegion: 'us-east-1',
    })),
  };
}
