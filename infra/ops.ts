// What the operator CLI (infra/admin.ts) needs beyond the service's own store: the queues' depths and
// their redrive, and the list of accounts. Operator tooling, never a request path: `listAccounts` is a
// Scan (the table has no index of accounts, and a request never needs one); it reads only the account
// items' few attributes, a page of 1 MB at a time.
import { ScanCommand, type DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import {
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { workers } from '../functions/workers';
import { messageGroupId, QUEUE_NAMES, QUEUES, type QueueMessages, type QueueName } from '../shared/queue/queues';
import { isLocalEndpoint } from '../shared/store/client';
import { localUrl } from './local/runtime-file';
import { dlqName } from './local/sqs';

export interface QueuePair {
  queue: QueueName;
  url: string;
  dlqUrl: string;
}

/** The SQS endpoint of the CLI: SQS_ENDPOINT, else locally `npm start`'s (port SQS_PORT or 9324); undefined in AWS. */
export function cliSqsEndpoint(local: boolean): string | undefined {
  return process.env.SQS_ENDPOINT || (local ? localUrl('SQS_PORT', (f) => f.sqs_endpoint, 9324) : undefined);
}

/** The SQS client of the CLI: `npm start`'s local SQS (SQS_ENDPOINT, else port SQS_PORT or 9324) or AWS's. */
export function cliSqs(local: boolean): SQSClient {
  const endpoint = cliSqsEndpoint(local);
  return new SQSClient({
    region: process.env.AWS_REGION || 'us-east-1',
    ...(endpoint ? { endpoint } : {}),
    ...(endpoint && isLocalEndpoint(endpoint) ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
    maxAttempts: 3,
  });
}

/** The DLQ of a queue, from its redrive policy (the same in AWS and locally). */
async function dlqOf(sqs: SQSClient, url: string): Promise<string> {
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['RedrivePolicy'] }));
  const arn = (JSON.parse(Attributes?.RedrivePolicy ?? '{}') as { deadLetterTargetArn?: string }).deadLetterTargetArn;
  if (!arn) throw new Error(`queue ${url} has no dead-letter queue`);
  const name = arn.split(':').pop() as string;
  return (await sqs.send(new GetQueueUrlCommand({ QueueName: name }))).QueueUrl as string;
}

/**
 * Every queue with its DLQ. A queue's URL is taken from its environment variable when set (the functions'
 * own, e.g. PROVIDER_EVENTS_QUEUE_URL: the stack outputs them); else locally by its name; else in AWS by
 * the worker's construct id in the queue names of the stack (`<stack>-<Worker>Queue…`).
 */
export async function queuePairs(sqs: SQSClient, local: boolean, stack: string): Promise<QueuePair[]> {
  let listed: string[] | undefined;
  const urlOf = async (queue: QueueName): Promise<string> => {
    const fromEnv = process.env[QUEUES[queue].envVar];
    if (fromEnv) return fromEnv;
    if (local) return (await sqs.send(new GetQueueUrlCommand({ QueueName: queue }))).QueueUrl as string;
    listed ??= (await sqs.send(new ListQueuesCommand({ QueueNamePrefix: `${stack}-`, MaxResults: 1000 }))).QueueUrls ?? [];
    const worker = workers.find((w) => w.queue === queue);
    const url = listed.find((u) => {
      const name = u.split('/').pop() ?? '';
      return worker !== undefined && name.startsWith(`${stack}-${worker.name}Queue`);
    });
    if (!url)
      throw new Error(
        `no queue of ${queue} in stack ${stack}: set ${QUEUES[queue].envVar} (the stack's ${worker?.name ?? queue} queue URL output) or pass --stack`,
      );
    return url;
  };
  return Promise.all(
    QUEUE_NAMES.map(async (queue) => {
      const url = await urlOf(queue);
      return {
        queue,
        url,
        dlqUrl:
          local && !process.env[QUEUES[queue].envVar]
            ? ((await sqs.send(new GetQueueUrlCommand({ QueueName: dlqName(queue) }))).QueueUrl as string)
            : await dlqOf(sqs, url),
      };
    }),
  );
}

async function depth(sqs: SQSClient, url: string): Promise<{ visible: number; in_flight: number }> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
    }),
  );
  return {
    visible: Number(Attributes?.ApproximateNumberOfMessages ?? 0),
    in_flight: Number(Attributes?.ApproximateNumberOfMessagesNotVisible ?? 0),
  };
}

/** Depth (waiting and in flight) and DLQ depth of every queue; SQS's figures are approximate. */
export async function queueStatus(sqs: SQSClient, pairs: QueuePair[]) {
  return Promise.all(
    pairs.map(async (p) => {
      const [main, dead] = await Promise.all([depth(sqs, p.url), depth(sqs, p.dlqUrl)]);
      return { queue: p.queue, messages: main.visible, in_flight: main.in_flight, dlq_messages: dead.visible + dead.in_flight };
    }),
  );
}

/**
 * The fair-queue group a dead letter goes back with: the one it was sent with, else (a message sent before
 * the queues had groups) its account's, from the body (shared/queue/queues.ts messageGroupId).
 */
export function redriveGroup(queue: QueueName, body: string, sentWith: string | undefined): string | undefined {
  if (sentWith) return sentWith;
  try {
    return messageGroupId(queue, JSON.parse(body) as QueueMessages[QueueName]);
  } catch {
    return undefined;
  }
}

/**
 * Moves a queue's dead letters back to it, ten at a time: sent to the queue first, then deleted from the
 * DLQ, so a failure between the two duplicates a message rather than losing one (every consumer is
 * idempotent: a duplicate is applied once). Each keeps its fair-queue group (redriveGroup). Stops when the
 * DLQ answers empty twice, or after `max`.
 */
export async function redrive(sqs: SQSClient, pair: QueuePair, max = Number.POSITIVE_INFINITY): Promise<number> {
  let moved = 0;
  let empty = 0;
  while (moved < max && empty < 2) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: pair.dlqUrl,
        MaxNumberOfMessages: Math.min(10, max - moved),
        WaitTimeSeconds: 1,
        VisibilityTimeout: 60,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['MessageGroupId'],
      }),
    );
    if (Messages.length === 0) {
      empty++;
      continue;
    }
    empty = 0;
    const entries = Messages.map((m, i) => ({
      Id: String(i),
      MessageBody: m.Body ?? '',
      MessageGroupId: redriveGroup(pair.queue, m.Body ?? '', m.Attributes?.MessageGroupId),
      ...(m.MessageAttributes && Object.keys(m.MessageAttributes).length ? { MessageAttributes: m.MessageAttributes } : {}),
    }));
    const sent = await sqs.send(new SendMessageBatchCommand({ QueueUrl: pair.url, Entries: entries }));
    const ok = new Set((sent.Successful ?? []).map((s) => s.Id));
    const done = Messages.filter((_, i) => ok.has(String(i)));
    if (done.length > 0) {
      await sqs.send(
        new DeleteMessageBatchCommand({
          QueueUrl: pair.dlqUrl,
          Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle as string })),
        }),
      );
    }
    moved += done.length;
    if ((sent.Failed ?? []).length > 0)
      throw new Error(
        `${(sent.Failed ?? []).length} message(s) could not be sent back to ${pair.queue} (they stay in its DLQ); ${moved} moved`,
      );
  }
  return moved;
}

/** Every account (id, name, plan, created), oldest first: a Scan of the account items only. */
export async function listAccounts(client: DynamoDBDocumentClient, table: string) {
  const out: { account_id: string; name: string; plan: string; created_at: number }[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: table,
        FilterExpression: 'sk = :account AND begins_with(pk, :a)',
        ProjectionExpression: 'pk, #name, #plan, created_at',
        ExpressionAttributeNames: { '#name': 'name', '#plan': 'plan' },
        ExpressionAttributeValues: { ':account': 'ACCOUNT', ':a': 'A#' },
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    for (const item of page.Items ?? []) {
      out.push({
        account_id: String(item.pk).slice(2),
        name: String(item.name ?? ''),
        plan: String(item.plan ?? ''),
        created_at: Number(item.created_at ?? 0),
      });
    }
    start = page.LastEvaluatedKey;
  } while (start);
  return out.sort((a, b) => a.created_at - b.created_at || a.account_id.localeCompare(b.account_id));
}
