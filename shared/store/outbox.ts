// The transactional outbox of outgoing webhook events. A write that has an event adds eventItem() to
// its own TransactWriteItems, so the event exists if and only if the effect does. Right after the
// commit, transact() hands the events to the `webhook-events` queue (dispatchCommittedEvents); an event
// whose hand-off did not happen (the process died, SQS was down, the function has no queue) keeps its
// entry in a sparse GSI2 partition (`OUTBOX#<shard>`) until the fan-out worker has dispatched it, and
// the scheduled webhook sweep re-queues such entries once they are older than a grace period.
import { createHash } from 'node:crypto';
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { eventId, type EventEnvelope, type EventType } from '../domain/events';
import { publishAll } from '../queue/publish';
import type { DispatchEventMessage } from '../queue/queues';
import { db, tableName } from './client';
import { GSI2, keys, SWEEP_SHARDS, timeKey, TTL_ATTRIBUTE } from './table';
import { log } from '../log';

/** Events are kept 30 days (deliveries give up after 3). */
export const EVENT_DAYS = 30;

type PutItem = { Put: { TableName: string; Item: Record<string, unknown> } };

export function shardOf(id: string): number {
  return createHash('sha256').update(id).digest()[0]! % SWEEP_SHARDS;
}

/** The outbox item of one event, for the effect's transaction (a plain Put: the id is the effect's own). */
export function eventItem(accountId: string, type: EventType, effectKey: string, data: unknown, nowMs = Date.now()): PutItem {
  const id = eventId(type, effectKey);
  const envelope: EventEnvelope = { id, type, created_at: Math.floor(nowMs / 1000), data };
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.event(accountId, id),
        type: 'Event',
        id,
        account_id: accountId,
        event_type: type,
        created_ms: nowMs,
        // The exact body every delivery sends (signatures are computed over these bytes).
        payload: JSON.stringify(envelope),
        gsi2pk: keys.outboxShard(shardOf(id)),
        gsi2sk: `${timeKey(nowMs)}#${accountId}#${id}`,
        [TTL_ATTRIBUTE]: Math.floor(nowMs / 1000) + EVENT_DAYS * 86400,
      },
    },
  };
}

function committedEvents(items: readonly unknown[]): DispatchEventMessage[] {
  const out: DispatchEventMessage[] = [];
  for (const item of items) {
    const put = (item as { Put?: { Item?: Record<string, unknown> } }).Put?.Item;
    // An event written without its outbox entry (no gsi2pk: nothing to deliver it to, see
    // shared/flows/provider-batch.ts) is not handed on.
    if (put?.gsi2pk && put.type === 'Event')
      out.push({ kind: 'dispatch-event', account_id: String(put.account_id), event_id: String(put.id) });
  }
  return out;
}

/**
 * Queues the events a committed transaction wrote. Never fails the write that committed them: when the
 * function has no dispatcher queue, or the send fails, the events stay in the outbox for the sweep.
 */
export async function dispatchCommittedEvents(items: readonly unknown[]): Promise<void> {
  const events = committedEvents(items);
  if (events.length === 0 || !config().queueUrls['webhook-events']) return;
  try {
    await publishAll('webhook-events', events);
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    log('warn', 'event hand-off deferred to the outbox sweep', { events: events.map((m) => m.event_id), error: e.name, reason: e.message });
  }
}

/** Marks an event dispatched: it leaves the outbox index. */
export async function markEventDispatched(accountId: string, id: string): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.event(accountId, id),
      UpdateExpression: 'SET dispatched_at = :now REMOVE gsi2pk, gsi2sk',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':now': Date.now() },
    }),
  );
}

/** Outbox entries of one shard created in [sinceMs, beforeMs) (oldest first), at most `limit`. */
export async function undispatchedEvents(shard: number, beforeMs: number, limit = 1000, sinceMs = 0): Promise<DispatchEventMessage[]> {
  const items = await queryIndexPages(keys.outboxShard(shard), timeKey(beforeMs), limit, timeKey(sinceMs));
  return items.map((i) => ({ kind: 'dispatch-event', account_id: String(i.account_id), event_id: String(i.id) }));
}

/** Sparse-index entries of one GSI2 partition sorted before `before`, oldest first, following pages up to `limit`. */
export async function queryIndexPages(partition: string, before: string, limit: number, from = ''): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        IndexName: GSI2,
        KeyConditionExpression: from ? 'gsi2pk = :pk AND gsi2sk BETWEEN :from AND :before' : 'gsi2pk = :pk AND gsi2sk < :before',
        ExpressionAttributeValues: { ':pk': partition, ':before': before, ...(from ? { ':from': from } : {}) },
        Limit: Math.min(100, limit - items.length),
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start && items.length < limit);
  return items;
}
