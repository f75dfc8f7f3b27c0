// Small building blocks the repositories share: transactions with cancellation reasons, BatchGet
// with retry of unprocessed keys, counter reads and updates (sharded: ./shards.ts).
import { BatchGetCommand, GetCommand, QueryCommand, TransactWriteCommand, type TransactWriteCommandInput } from '@aws-sdk/lib-dynamodb';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import { db, tableName } from './client';
import { effectMarkerItem, IdempotencyLockLostError } from './idempotency';
import { dispatchCommittedEvents } from './outbox';
import { counterKey, counterKeys, pickShard, sumOf, unsharded } from './shards';
import type { CounterName, Key } from './table';

export type TransactItem = NonNullable<TransactWriteCommandInput['TransactItems']>[number];

/** A transaction cancelled by conditions: `codes[i]` is the reason for item i ('None' when it passed). */
export class ConditionsFailedError extends Error {
  constructor(readonly codes: string[]) {
    super(`Transaction cancelled: ${codes.join(',')}`);
  }
  failed(index: number): boolean {
    return this.codes[index] === 'ConditionalCheckFailed';
  }
}

const CONFLICT_CODES = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A failure after which the transaction may have been applied or not: a 5xx, or no HTTP answer at all
 * after the SDK's own attempts (connection reset, timeout). Duck-typed: network errors can come from
 * another realm (see shared/http/errors.ts).
 */
function outcomeUnknown(err: unknown): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { name?: string; $metadata?: { httpStatusCode?: number; attempts?: number } };
  if (e.name === 'TransactionInProgressException') return true; // the same token is still being applied
  const status = e.$metadata?.httpStatusCode;
  if (status !== undefined) return status >= 500;
  return e.$metadata?.attempts !== undefined;
}

/**
 * Extra rounds of the SDK's attempts when the outcome of a transaction is unknown. Each round is up to
 * the SDK's 3 attempts with the same token; only when every attempt of every round fails does the
 * request answer 503 without knowing whether the write landed (a retried delete then finds its item
 * gone). A round is often ONE attempt: the SDK's standard retry strategy spends a per-client quota (500
 * tokens, 5 or 10 per retry, 1 back per success) and, once it is empty, does not retry at all. Under
 * the fault suite's 50% burst (3 of 4 fault modes fail an attempt) the quota empties, so the rounds
 * alone decide: 11 single attempts fail together about once in 50,000 transactions (0.375^11), where
 * the 5 of an earlier version failed once in 140, which CI hit. Each pause is capped at 425 ms, so all
 * the rounds together take about 4.5 s at most, well inside an API function's 10 s.
 */
const UNKNOWN_OUTCOME_ROUNDS = 10;

/**
 * Writes all items atomically. Conflicts with a concurrent transaction are retried with jittered
 * backoff (they mean "try again", not "your condition failed"); failed conditions surface as
 * ConditionsFailedError so the caller can map each to its 4xx.
 *
 * Every transaction carries a ClientRequestToken. When its outcome is unknown (a 5xx or no answer
 * after the SDK's attempts, which reuse the token) it is sent again with the SAME token: DynamoDB then
 * applies it once, or answers success for the copy it already applied. So a write that landed but
 * whose answer was lost is not reported as a failure (a 503 whose write happened) and is never
 * applied twice. A conflict (not applied) is retried with a new token.
 */
export async function transact(own: TransactItem[], attempts = 6): Promise<void> {
  // Inside a request that holds an Idempotency-Key, the key's "effect committed" marker goes into the
  // same transaction (shared/store/idempotency.ts). It is the last item: callers' indices are unchanged.
  const marker = effectMarkerItem();
  const items: TransactItem[] = marker ? [...own, marker as TransactItem] : own;
  await send(items, attempts, marker !== undefined);
  // Outbox events written by this transaction are handed to the dispatcher at once (the outbox sweep
  // catches any whose hand-off does not happen).
  await dispatchCommittedEvents(own);
}

async function send(items: TransactItem[], attempts: number, marked: boolean): Promise<void> {
  let token = randomUUID();
  let unknownRounds = 0;
  for (let attempt = 1; ; attempt++) {
    try {
      await db().send(new TransactWriteCommand({ TransactItems: items, ClientRequestToken: token }));
      return;
    } catch (err) {
      const conflict =
        (err instanceof Error && err.name === 'TransactionConflictException') ||
        (err instanceof TransactionCanceledException &&
          (err.CancellationReasons ?? []).some((r) => CONFLICT_CODES.has(r.Code ?? '')) &&
          !(err.CancellationReasons ?? []).some((r) => r.Code === 'ConditionalCheckFailed'));
      if (conflict && attempt < attempts) {
        token = randomUUID();
        await pause(Math.random() * 20 * 2 ** attempt);
        continue;
      }
      if (!conflict && outcomeUnknown(err) && unknownRounds < UNKNOWN_OUTCOME_ROUNDS) {
        unknownRounds++;
        attempt--; // not a conflict: does not use up the conflict retries
        await pause(25 + Math.random() * 50 * 2 ** Math.min(unknownRounds, 3)); // at most 425 ms
        continue;
      }
      if (err instanceof TransactionCanceledException && !conflict) {
        const reasons = err.CancellationReasons ?? [];
        if (marked && reasons[items.length - 1]?.Code === 'ConditionalCheckFailed') {
          throw new IdempotencyLockLostError('The Idempotency-Key of this request was taken over or its effect already committed');
        }
        throw new ConditionsFailedError((err.CancellationReasons ?? []).map((r) => r.Code ?? 'None'));
      }
      throw err;
    }
  }
}

/**
 * An optimistic write lost a race with a concurrent one; the operation re-reads and tries again.
 * If it still loses after every attempt the request answers 503 (retryable), never 500.
 */
export class RaceLostError extends Error {
  override readonly name = 'RaceLostError';
}

/** Runs `op` again when it lost a race it can recover from (optimistic-lock failures). */
export async function withRetries<T>(op: () => Promise<T>, isRetryable: (err: unknown) => boolean, attempts = 5): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await op();
    } catch (err) {
      if (attempt >= attempts || !isRetryable(err)) throw err;
      await pause(Math.random() * 10 * 2 ** attempt);
    }
  }
}

export async function getItem(key: Key, consistent = true): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: key, ConsistentRead: consistent }));
  return Item;
}

/** A key as one string (the maps batchGet answers are keyed by it). */
export const keyString = (k: Key) => `${k.pk}\u0000${k.sk}`;

/** Reads up to 100 distinct keys in one BatchGet (plus retries of unprocessed keys). */
export async function batchGet(wanted: Key[]): Promise<Map<string, Record<string, unknown>>> {
  const found = new Map<string, Record<string, unknown>>();
  const unique = [...new Map(wanted.map((k) => [keyString(k), k])).values()];
  const chunks: Key[][] = [];
  for (let i = 0; i < unique.length; i += 100) chunks.push(unique.slice(i, i + 100));
  // Chunks of 100 (BatchGetItem's limit) are read in parallel: a 100-member page with 101 nested keys
  // still costs one sequential round trip.
  await Promise.all(
    chunks.map(async (chunk) => {
      let pending: Key[] = chunk;
      for (let attempt = 0; pending.length > 0; attempt++) {
        if (attempt > 0) await pause(Math.min(1000, 25 * 2 ** attempt));
        if (attempt > 8) throw Object.assign(new Error('BatchGet left keys unprocessed'), { name: 'ThrottlingException' });
        const out = await db().send(new BatchGetCommand({ RequestItems: { [tableName()]: { Keys: pending, ConsistentRead: true } } }));
        for (const item of out.Responses?.[tableName()] ?? []) {
          found.set(keyString({ pk: String(item.pk), sk: String(item.sk) }), item);
        }
        pending = (out.UnprocessedKeys?.[tableName()]?.Keys ?? []) as Key[];
      }
    }),
  );
  return found;
}

export function lookup(found: Map<string, Record<string, unknown>>, key: Key): Record<string, unknown> | undefined {
  return found.get(keyString(key));
}

/** A counter's value: the sum of its shards (./shards.ts), read in one BatchGet. */
export async function readCounter(accountId: string, name: CounterName): Promise<number> {
  return Math.max(0, sumOf((await batchGet(counterKeys(accountId, name))).values()));
}

/**
 * Transaction item adding `delta` to a counter (created at 0 on first use): to one shard picked per write
 * (./shards.ts), or to shard 0 for a counter that stays one item and for a conditional write (a limit).
 */
export function counterUpdate(accountId: string, name: CounterName, delta: number, condition?: { below: number }): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: counterKey(accountId, name, condition || unsharded(name) ? 0 : pickShard(1)),
      UpdateExpression: 'SET #type = :type ADD n :delta',
      ...(condition ? { ConditionExpression: 'attribute_not_exists(n) OR n < :limit' } : {}),
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':delta': delta, ':type': 'Counter', ...(condition ? { ':limit': condition.below } : {}) },
    },
  };
}

export const nowSeconds = () => Math.floor(Date.now() / 1000);

/** JSON with sorted keys, and sets as sorted lists: DynamoDB maps come back in any key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v instanceof Set
      ? [...v].sort()
      : v && typeof v === 'object' && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
        : v,
  );
}

/**
 * Every item of one partition (of the table or of GSI1/GSI2), or of a sort-key range of it (`between`
 * both inclusive, or `below` exclusive), following LastEvaluatedKey. Not for request paths over large
 * partitions.
 */
export async function queryAll(q: {
  partitionValue: string;
  index?: 'gsi1' | 'gsi2';
  consistent?: boolean;
  sk?: { between: [string, string] } | { below: string };
}): Promise<Record<string, unknown>[]> {
  const pkName = q.index ? `${q.index}pk` : 'pk';
  const skName = q.index ? `${q.index}sk` : 'sk';
  const range = !q.sk ? '' : 'between' in q.sk ? ' AND #sk BETWEEN :from AND :to' : ' AND #sk < :below';
  const rangeValues = !q.sk ? {} : 'between' in q.sk ? { ':from': q.sk.between[0], ':to': q.sk.between[1] } : { ':below': q.sk.below };
  const items: Record<string, unknown>[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ...(q.index ? { IndexName: q.index } : {}),
        KeyConditionExpression: `#pk = :pk${range}`,
        ExpressionAttributeNames: { '#pk': pkName, ...(q.sk ? { '#sk': skName } : {}) },
        ExpressionAttributeValues: { ':pk': q.partitionValue, ...rangeValues },
        // GSIs only offer eventually consistent reads.
        ...(q.consistent && !q.index ? { ConsistentRead: true } : {}),
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  return items;
}
