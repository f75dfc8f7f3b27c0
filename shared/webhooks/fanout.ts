// The fan-out's parts for one event: the endpoints it goes to, its deliveries (each created once:
// attribute_not_exists, so a redelivered event finds them and sends their messages again; the delivery worker
// ignores an attempt that is not due), the fraud screening it asks for, and a deleted endpoint's purge, a page
// at a time on the same queue. The worker's batch path (./fanout-batch.ts) uses them, and falls back to
// createDeliveries per event.
//
// The events the fraud rules look at (docs/fraud.md "When the rules run") are handed on to the `fraud`
// queue before the event leaves the outbox: a failed send fails the message, which is retried (the
// screening is idempotent, so a second hand-off of the same event records nothing twice).
import type { EventType } from '../domain/events';
import { publish } from '../queue/publish';
import type { DeliverMessage, FraudScreenMessage } from '../queue/queues';
import { type allEndpoints, createDelivery, deliverySk, PURGE_PAGE, purgeDeliveriesPage } from '../store/webhooks';

type Endpoints = Awaited<ReturnType<typeof allEndpoints>>;
type FannedEvent = { id: string; type: EventType; created_ms: number };

/**
 * The endpoints an event goes to: enabled, subscribed to its type, and created before it (an event of a
 * moment before the endpoint existed is not news to it, even when its dispatch was late).
 */
export function deliveryTargets(endpoints: Endpoints, event: FannedEvent): string[] {
  return endpoints.filter((e) => e.enabled && e.events.includes(event.type) && e.created_ms <= event.created_ms).map((e) => e.id);
}

/** The `deliver` message of an event's delivery to an endpoint. */
export const deliverMessage = (accountId: string, endpointId: string, event: FannedEvent): DeliverMessage => ({
  kind: 'deliver',
  account_id: accountId,
  endpoint_id: endpointId,
  delivery: deliverySk(event.created_ms, event.id),
});

/**
 * One delivery per target endpoint (deliveryTargets), each in a transaction of its own, and the `deliver`
 * message of each one created (or found: a redelivered event sends them again). The per-event path, and
 * the batch's fallback (./fanout-batch.ts).
 */
export async function createDeliveries(
  accountId: string,
  endpoints: Endpoints,
  event: FannedEvent,
  now: number,
): Promise<DeliverMessage[]> {
  const created = await Promise.all(
    deliveryTargets(endpoints, event).map(async (id) => ((await createDelivery(accountId, id, event, now)) ? id : null)),
  );
  return created.filter((id): id is string => id !== null).map((id) => deliverMessage(accountId, id, event));
}

/**
 * Removes a page of a deleted endpoint's deliveries. A full page means there may be more: the purge is
 * queued again at once rather than left to the next sweep (shared/webhooks/sweep.ts).
 */
export async function purgeEndpoint(accountId: string, endpointId: string): Promise<void> {
  if ((await purgeDeliveriesPage(accountId, endpointId)) >= PURGE_PAGE)
    await publish('webhook-events', { kind: 'purge-endpoint', account_id: accountId, endpoint_id: endpointId });
}

/**
 * The fraud screening an event asks for, or null: a new referral, a conversion, a clawback (a reward with a
 * negative amount), a reward voided as refunded, a new application. The ids come from the event's data.
 */
/** The event types the fan-out hands to fraud screening (some of them only in part, see screeningOf). */
export const SCREENED_EVENT_TYPES: readonly string[] = [
  'referral.created',
  'referral.converted',
  'reward.created',
  'reward.voided',
  'application.created',
];

export function screeningOf(accountId: string, type: EventType, payload: unknown): FraudScreenMessage | null {
  if (!SCREENED_EVENT_TYPES.includes(type) || typeof payload !== 'string') return null;
  let data: Record<string, unknown>;
  try {
    data = (JSON.parse(payload) as { data?: Record<string, unknown> }).data ?? {};
  } catch {
    return null;
  }
  if (typeof data.id !== 'string') return null;
  if (type === 'reward.created' && !String(data.amount ?? '').startsWith('-')) return null;
  if (type === 'reward.voided' && data.void_reason !== 'refunded') return null;
  const memberId = typeof data.member_id === 'string' ? data.member_id : undefined;
  return { kind: 'screen', account_id: accountId, event_type: type, subject_id: data.id, ...(memberId ? { member_id: memberId } : {}) };
}
