// The fan-out worker's logic: one outbox event -> one delivery per enabled endpoint subscribed to its
// type, then one `deliver` message per delivery, then the event leaves the outbox. Idempotent on the
// event id: a redelivered message finds the deliveries created (attribute_not_exists) and sends their
// messages again (the delivery worker ignores an attempt that is not due), and an event already
// dispatched is acknowledged.
//
// A deleted endpoint's deliveries are removed a page at a time (purgeEndpoint), on the same queue.
import { clock } from '../domain/clock';
import type { EventType } from '../domain/events';
import { publish, publishAll } from '../queue/publish';
import type { DeliverMessage } from '../queue/queues';
import { getItem } from '../store/ops';
import { markEventDispatched } from '../store/outbox';
import { keys } from '../store/table';
import { allEndpoints, createDelivery, deliverySk, PURGE_PAGE, purgeDeliveriesPage } from '../store/webhooks';

export async function dispatchEvent(accountId: string, eventId: string): Promise<{ deliveries: number }> {
  const item = await getItem(keys.event(accountId, eventId));
  if (item?.type !== 'Event' || item.gsi2pk === undefined) return { deliveries: 0 }; // gone or dispatched
  const event = { id: eventId, type: item.event_type as EventType, created_ms: Number(item.created_ms) };
  const now = clock.now();
  // An endpoint receives the events that happened after it was created, even when their dispatch was late
  // (an event of a moment before the endpoint existed is not news to it).
  const targets = (await allEndpoints(accountId)).filter(
    (e) => e.enabled && e.events.includes(event.type) && e.created_ms <= event.created_ms,
  );
  const created = await Promise.all(targets.map(async (e) => ((await createDelivery(accountId, e.id, event, now)) ? e.id : null)));
  const messages: DeliverMessage[] = created
    .filter((id): id is string => id !== null)
    .map((endpointId) => ({
      kind: 'deliver',
      account_id: accountId,
      endpoint_id: endpointId,
      delivery: deliverySk(event.created_ms, event.id),
    }));
  if (messages.length > 0) await publishAll('webhook-deliveries', messages);
  await markEventDispatched(accountId, eventId);
  return { deliveries: messages.length };
}

/**
 * Removes a page of a deleted endpoint's deliveries. A full page means there may be more: the purge is
 * queued again at once rather than left to the next sweep (shared/webhooks/sweep.ts).
 */
export async function purgeEndpoint(accountId: string, endpointId: string): Promise<void> {
  if ((await purgeDeliveriesPage(accountId, endpointId)) >= PURGE_PAGE)
    await publish('webhook-events', { kind: 'purge-endpoint', account_id: accountId, endpoint_id: endpointId });
}
