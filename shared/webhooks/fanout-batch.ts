// The fan-out worker's batch path: the outbox events of one SQS batch dispatched together (their deliveries,
// messages and screenings, with the parts of shared/webhooks/fanout.ts), for fewer calls: ONE BatchGet of every event of the batch, ONE Query of an account's endpoints per batch, the
// screenings in one send, then ONE TransactWriteItems for the batch, every account's events in it (one more per
// 100 items), that creates the events' deliveries, counts them on their endpoints and takes the events out of
// the outbox, together; the
// `deliver` messages follow the commit. The per-event path makes a transaction per delivery and an
// UpdateItem per event. An event named twice in a batch is dispatched once.
// A record fails (and is redelivered alone) when a step of its event failed: its event stays in the
// outbox, and the redelivery finds its deliveries made (attribute_not_exists) and sends them again.
// Purges of deleted endpoints' deliveries run on their own, as before.
import { clock } from '../domain/clock';
import type { EventType } from '../domain/events';
import { publishAll } from '../queue/publish';
import type { FraudScreenMessage, QueueMessages } from '../queue/queues';
import { errorFields, log } from '../log';
import { PoisonMessageError, type BatchEntry } from '../queue/worker';
import { tableName } from '../store/client';
import { batchGet, lookup, transact, type TransactItem } from '../store/ops';
import { markEventDispatched } from '../store/outbox';
import { keys } from '../store/table';
import { allEndpoints, deliveryCountAdd, deliveryPut } from '../store/webhooks';
import { createDeliveries, deliverMessage, deliveryTargets, purgeEndpoint, screeningOf } from './fanout';

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
      const planned = (
        await Promise.all([...accounts].map(([accountId, events]) => planAccount(accountId, events, found, failRecords)))
      ).flat();
      // The accounts' events commit together: one transaction for the batch while it fits in 100 items.
      const now = clock.now();
      await Promise.all(transactionChunks(planned).map((chunk) => commitChunk(chunk, now, failRecords)));
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

/** Test hooks (a write between the endpoints' read and the transaction). Never set in production. */
export const fanoutBatchHooks: { beforeCommit?: () => Promise<void> } = {};

/** At most this many items in one of the batch's transactions (DynamoDB's limit). */
const TRANSACTION_ITEMS = 100;

/** An account's live events with their deliveries' endpoints, once its screenings are sent (those that failed left out). */
async function planAccount(
  accountId: string,
  events: Map<string, string[]>,
  found: Map<string, Record<string, unknown>>,
  failRecords: (ids: readonly string[], err: unknown) => void,
): Promise<Planned[]> {
  // Gone or dispatched already: acknowledged.
  const live = [...events].flatMap(([eventId, records]) => {
    const item = lookup(found, keys.event(accountId, eventId));
    return item?.type === 'Event' && item.gsi2pk !== undefined ? [{ eventId, records, item }] : [];
  });
  if (live.length === 0) return [];
  let endpoints: Endpoints;
  try {
    endpoints = await allEndpoints(accountId);
  } catch (err) {
    for (const e of live) failRecords(e.records, err);
    return [];
  }
  const screenings: { records: string[]; message: FraudScreenMessage }[] = [];
  const planned: Planned[] = live.map((e) => {
    const event = { id: e.eventId, type: e.item.event_type as EventType, created_ms: Number(e.item.created_ms) };
    const screening = screeningOf(accountId, event.type, e.item.payload);
    if (screening) screenings.push({ records: e.records, message: screening });
    return { accountId, endpoints, records: e.records, event, targets: deliveryTargets(endpoints, event) };
  });
  // The screenings before the events leave the outbox: a failed send keeps its events there (their records
  // fail, and the redelivery hands them on again; a screening is idempotent).
  const unsent = new Set<string>();
  if (screenings.length > 0) {
    try {
      await publishAll(
        'fraud',
        screenings.map((s) => s.message),
      );
    } catch (err) {
      for (const s of screenings) {
        failRecords(s.records, err);
        for (const id of s.records) unsent.add(id);
      }
    }
  }
  return planned.filter((e) => !e.records.some((id) => unsent.has(id)));
}

type Endpoints = Awaited<ReturnType<typeof allEndpoints>>;

interface Planned {
  accountId: string;
  /** The account's endpoints, as the batch read them. */
  endpoints: Endpoints;
  records: string[];
  event: { id: string; type: EventType; created_ms: number };
  /** The endpoints it goes to (fanout.ts deliveryTargets). */
  targets: string[];
}

/** Events in groups whose transaction (each event's mark and deliveries, one count per endpoint) fits in one. */
function transactionChunks(events: Planned[]): Planned[][] {
  const chunks: Planned[][] = [];
  let chunk: Planned[] = [];
  let endpoints = new Set<string>();
  let items = 0;
  for (const e of events) {
    // Its mark, its deliveries, and a count for each endpoint the chunk does not count yet.
    const size = () => 1 + e.targets.length + e.targets.filter((id) => !endpoints.has(`${e.accountId}|${id}`)).length;
    if (chunk.length > 0 && items + size() > TRANSACTION_ITEMS) {
      chunks.push(chunk);
      chunk = [];
      endpoints = new Set();
      items = 0;
    }
    items += size();
    for (const id of e.targets) endpoints.add(`${e.accountId}|${id}`);
    chunk.push(e);
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/**
 * One transaction for a chunk of events: their deliveries created, each endpoint's count raised once by
 * their number, and the events out of the outbox, together. The `deliver` messages go after the commit:
 * a delivery item is due from its creation, so one whose message was lost is sent by the webhook sweep
 * within a minute (shared/webhooks/sweep.ts). When the transaction fails (a delivery there already, an
 * endpoint deleted meanwhile, an event gone), each event goes the per-event way: fanout.ts createDeliveries
 * (each delivery on its own, found ones counted as made), their messages, then the event's mark.
 */
async function commitChunk(chunk: Planned[], now: number, failRecords: (ids: readonly string[], err: unknown) => void): Promise<void> {
  const items: TransactItem[] = [];
  const counts = new Map<string, { accountId: string; endpointId: string; n: number }>();
  for (const e of chunk) {
    items.push({
      Update: {
        TableName: tableName(),
        Key: keys.event(e.accountId, e.event.id),
        UpdateExpression: 'SET dispatched_at = :now REMOVE gsi2pk, gsi2sk',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': Date.now() },
      },
    });
    for (const endpointId of e.targets) {
      items.push(deliveryPut(e.accountId, endpointId, e.event, now));
      const k = `${e.accountId}|${endpointId}`;
      const c = counts.get(k) ?? { accountId: e.accountId, endpointId, n: 0 };
      c.n++;
      counts.set(k, c);
    }
  }
  for (const c of counts.values()) items.push(deliveryCountAdd(c.accountId, c.endpointId, c.n));
  if (fanoutBatchHooks.beforeCommit) await fanoutBatchHooks.beforeCommit();
  try {
    await transact(items);
  } catch {
    await Promise.all(
      chunk.map(async (e) => {
        try {
          const messages = await createDeliveries(e.accountId, e.endpoints, e.event, now);
          if (messages.length > 0) await publishAll('webhook-deliveries', messages);
          await markEventDispatched(e.accountId, e.event.id);
        } catch (err) {
          failRecords(e.records, err);
        }
      }),
    );
    return;
  }
  const messages = chunk.flatMap((e) => e.targets.map((endpointId) => deliverMessage(e.accountId, endpointId, e.event)));
  if (messages.length === 0) return;
  try {
    await publishAll('webhook-deliveries', messages);
  } catch (err) {
    log('warn', 'webhook fan-out: deliver messages not sent, the sweep sends their deliveries', {
      accounts: [...new Set(chunk.map((e) => e.accountId))],
      deliveries: messages.length,
      ...errorFields(err),
    });
  }
}
