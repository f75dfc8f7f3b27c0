// The fan-out worker's batch path: the outbox events of one SQS batch dispatched together, with what
// shared/webhooks/fanout.ts dispatchEvent does for one (the same deliveries, messages and screenings, in
// the same order: deliveries created, their messages and the screenings sent, then the event leaves the
// outbox), for fewer calls: ONE BatchGet of every event of the batch, ONE Query of an account's endpoints
// per batch, and ONE TransactWriteItems marking its events dispatched (100 a transaction), instead of a
// GetItem, a Query and an UpdateItem per event. An event named twice in a batch is dispatched once.
// A record fails (and is redelivered alone) when a step of its event failed: its event stays in the
// outbox, and the redelivery finds its deliveries made (attribute_not_exists) and sends them again.
// Purges of deleted endpoints' deliveries run on their own, as before.
import { clock } from '../domain/clock';
import type { EventType } from '../domain/events';
import { publishAll } from '../queue/publish';
import type { DeliverMessage, FraudScreenMessage, QueueMessages } from '../queue/queues';
import { PoisonMessageError, type BatchEntry } from '../queue/worker';
import { tableName } from '../store/client';
import { batchGet, lookup, transact, type TransactItem } from '../store/ops';
import { markEventDispatched } from '../store/outbox';
import { keys } from '../store/table';
import { allEndpoints } from '../store/webhooks';
import { createDeliveries, purgeEndpoint, screeningOf } from './fanout';

type FanoutMessage = QueueMessages['webhook-events'];

export async function fanOutBatch(entries: BatchEntry<FanoutMessage>[]): Promise<Map<string, unknown>> {
  const failed = new Map<string, unknown>();
  // Event -> the records naming it; per account.
  const accounts = new Map<string, Map<string, string[]>>();
  const others: BatchEntry<FanoutMessage>[] = [];
  for (const entry of entries) {
    const m = entry.message;
    if (m?.kind !== 'dispatch-event') {
      others.push(entry);
      continue;
    }
    const events = accounts.get(m.account_id) ?? new Map<string, string[]>();
    events.set(m.event_id, [...(events.get(m.event_id) ?? []), entry.record.messageId]);
    accounts.set(m.account_id, events);
  }
  const failRecords = (ids: readonly string[], err: unknown) => {
    for (const id of ids) if (!failed.has(id)) failed.set(id, err);
  };
  await Promise.all([
    (async () => {
      if (accounts.size === 0) return;
      const wanted = [...accounts].flatMap(([accountId, events]) => [...events.keys()].map((id) => keys.event(accountId, id)));
      let found: Map<string, Record<string, unknown>>;
      try {
        found = await batchGet(wanted);
      } catch (err) {
        for (const events of accounts.values()) for (const ids of events.values()) failRecords(ids, err);
        return;
      }
      await Promise.all([...accounts].map(([accountId, events]) => dispatchAccount(accountId, events, found, failRecords)));
    })(),
    ...others.map(async (entry) => {
      try {
        const m = entry.message;
        if (m?.kind === 'purge-endpoint') await purgeEndpoint(m.account_id, m.endpoint_id);
        else throw new PoisonMessageError(`Unknown message kind ${String((m as { kind?: unknown } | null)?.kind)}`);
      } catch (err) {
        failed.set(entry.record.messageId, err);
      }
    }),
  ]);
  return failed;
}

async function dispatchAccount(
  accountId: string,
  events: Map<string, string[]>,
  found: Map<string, Record<string, unknown>>,
  failRecords: (ids: readonly string[], err: unknown) => void,
): Promise<void> {
  // Gone or dispatched already: acknowledged.
  const live = [...events].flatMap(([eventId, records]) => {
    const item = lookup(found, keys.event(accountId, eventId));
    return item?.type === 'Event' && item.gsi2pk !== undefined ? [{ eventId, records, item }] : [];
  });
  if (live.length === 0) return;
  let endpoints: Awaited<ReturnType<typeof allEndpoints>>;
  try {
    endpoints = await allEndpoints(accountId);
  } catch (err) {
    for (const e of live) failRecords(e.records, err);
    return;
  }
  const now = clock.now();
  const deliveries: { records: string[]; messages: DeliverMessage[] }[] = [];
  const screenings: { records: string[]; message: FraudScreenMessage }[] = [];
  const ready: typeof live = [];
  await Promise.all(
    live.map(async (e) => {
      const event = { id: e.eventId, type: e.item.event_type as EventType, created_ms: Number(e.item.created_ms) };
      // An endpoint receives the events that happened after it was created (fanout.ts createDeliveries).
      try {
        const messages = await createDeliveries(accountId, endpoints, event, now);
        if (messages.length > 0) deliveries.push({ records: e.records, messages });
        const screening = screeningOf(accountId, event.type, e.item.payload);
        if (screening) screenings.push({ records: e.records, message: screening });
        ready.push(e);
      } catch (err) {
        failRecords(e.records, err);
      }
    }),
  );
  // The messages before the events leave the outbox (a failed send keeps its events in it).
  const unsent = new Set<string>();
  const send = async <Q extends 'webhook-deliveries' | 'fraud'>(queue: Q, parts: { records: string[]; messages: QueueMessages[Q][] }[]) => {
    if (parts.length === 0) return;
    try {
      await publishAll(
        queue,
        parts.flatMap((p) => p.messages),
      );
    } catch (err) {
      for (const p of parts) {
        failRecords(p.records, err);
        for (const id of p.records) unsent.add(id);
      }
    }
  };
  await Promise.all([
    send('webhook-deliveries', deliveries),
    send(
      'fraud',
      screenings.map((s) => ({ records: s.records, messages: [s.message] })),
    ),
  ]);
  const marking = ready.filter((e) => !e.records.some((id) => unsent.has(id)));
  for (let i = 0; i < marking.length; i += 100) {
    const chunk = marking.slice(i, i + 100);
    const items: TransactItem[] = chunk.map((e) => ({
      Update: {
        TableName: tableName(),
        Key: keys.event(accountId, e.eventId),
        UpdateExpression: 'SET dispatched_at = :now REMOVE gsi2pk, gsi2sk',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': Date.now() },
      },
    }));
    try {
      await transact(items);
    } catch {
      // One of them is gone meanwhile (or the transaction failed): each on its own, as the per-event path does.
      await Promise.all(
        chunk.map(async (e) => {
          try {
            await markEventDispatched(accountId, e.eventId);
          } catch (err) {
            failRecords(e.records, err);
          }
        }),
      );
    }
  }
}
