// The SQS publisher: one client per container, queue URLs from configuration. A send that fails
// throws (the caller's request answers 503 and is retried by its client; a worker's record is retried
// by SQS), so a message is never silently lost. A per-tenant queue's message carries its account as
// MessageGroupId (fair queues: ./queues.ts messageGroupId).
import { SendMessageBatchCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { config } from '../config';
import { isLocalEndpoint } from '../store/client';
import { traceClient } from '../tracing';
import { messageGroupId, type QueueMessages, type QueueName } from './queues';

let client: SQSClient | undefined;

export function sqs(): SQSClient {
  const { sqsEndpoint, region } = config();
  // X-Ray: each send is a subsegment, and the message's trace header names it (../tracing.ts).
  client ??= traceClient(
    new SQSClient({
      region,
      ...(sqsEndpoint ? { endpoint: sqsEndpoint } : {}),
      ...(sqsEndpoint && isLocalEndpoint(sqsEndpoint) ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
      maxAttempts: 3,
      // Not AWS_RETRY_MODE's: the bundles leave the adaptive strategy out (infra/cloud/bundling.ts).
      retryMode: 'standard',
    }),
  );
  return client;
}

export function resetQueueClient(): void {
  client?.destroy();
  client = undefined;
}

export class QueueNotConfiguredError extends Error {
  override readonly name = 'QueueNotConfiguredError';
}

export function queueUrl(queue: QueueName): string {
  const url = config().queueUrls[queue];
  if (!url) throw new QueueNotConfiguredError(`No URL configured for queue ${queue}`);
  return url;
}

/**
 * A send that failed for any reason but configuration is reported as the dependency being unavailable
 * (503 with Retry-After at the HTTP edge; a retried record in a worker). The SDK's own error is kept as
 * `cause`: under some runtimes (Jest's VM contexts) its network errors lose their `code`.
 */
async function sending<T>(queue: QueueName, send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (err) {
    if (err instanceof QueueNotConfiguredError) throw err;
    const reason = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    throw Object.assign(new Error(`Sending to queue ${queue} failed (${reason})`, { cause: err }), { name: 'ServiceUnavailable' });
  }
}

/** The body and the fair-queue group of a message (an undefined group is left out of the request). */
const entry = <Q extends QueueName>(queue: Q, message: QueueMessages[Q]) => ({
  MessageBody: JSON.stringify(message),
  MessageGroupId: messageGroupId(queue, message),
});

export async function publish<Q extends QueueName>(queue: Q, message: QueueMessages[Q]): Promise<void> {
  const url = queueUrl(queue);
  await sending(queue, () => sqs().send(new SendMessageCommand({ QueueUrl: url, ...entry(queue, message) })));
}

/** Sends many messages, 10 per SendMessageBatch; throws if any entry failed (after one retry of failures). */
export async function publishAll<Q extends QueueName>(queue: Q, messages: QueueMessages[Q][]): Promise<void> {
  for (let i = 0; i < messages.length; i += 10) {
    let entries = messages.slice(i, i + 10).map((m, j) => ({ Id: String(j), ...entry(queue, m) }));
    for (let attempt = 1; entries.length > 0; attempt++) {
      const batch = entries;
      const out = await sending(queue, () => sqs().send(new SendMessageBatchCommand({ QueueUrl: queueUrl(queue), Entries: batch })));
      const failed = new Set((out.Failed ?? []).map((f) => f.Id));
      if (failed.size === 0) break;
      if (attempt >= 2)
        throw Object.assign(new Error(`SendMessageBatch failed for ${failed.size} message(s)`), { name: 'ServiceUnavailable' });
      entries = entries.filter((e) => failed.has(e.Id));
    }
  }
}
