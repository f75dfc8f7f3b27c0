// Webhook endpoints, their signing secrets and their deliveries.
// - An endpoint is `A#<acct>#WEBHOOK_ENDPOINT` / `<id>` (UUIDv7: newest first), counted by the
//   `webhook_endpoints` counter (at most MAX_ENDPOINTS per account). The same counter item counts, per event
//   type, the endpoints subscribed to it (`subscribed#<type>`), and how many endpoints those counts cover
//   (`typed`; an endpoint counted there has `types_counted`): create, update and delete keep them in their
//   transactions, so the provider events can tell that no endpoint wants a type (./endpoint-counts.ts
//   nobodySubscribes). Its signing secret lives in its own item (`A#<acct>#WEBHOOK_SECRET` / `<id>`) so no
//   read of endpoints ever carries it; the delivery worker reads it to sign. It is written with the endpoint and deleted with it, in one transaction.
//   The item holds the secret encrypted for its account (shared/secrets: `kms:v1:` in AWS, `local:v1:`
//   under `npm start` and in tests): createEndpoint encrypts, loadDelivery decrypts. A secret stored in
//   plain text before encryption existed (legacy) is read as it is; the secret item is written only when
//   its endpoint is created, so such a secret stays plain until the endpoint is replaced (a new
//   endpoint gets a new, encrypted secret).
// - A delivery (one event to one endpoint) is `A#<acct>#WEBHOOK_DELIVERY#<endpoint>` /
//   `<event ms>#<event id>`: created once per (event, endpoint) with attribute_not_exists, newest event
//   first, counted on the endpoint (`delivery_count`) in the same transaction. While it waits for an
//   attempt it has an entry in the sparse GSI2 partition `WEBHOOK_DUE#<shard>` sorted by due time,
//   which the webhook sweep reads.
import { BatchWriteCommand, DeleteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { decryptSecret, encryptSecret } from '../secrets';
import { NotFoundError, ValidationError } from '../domain/errors';
import type { EventType } from '../domain/events';
import { isEntityId, newEntityId } from '../domain/ids';
import type { CreateWebhookEndpointInput, UpdateWebhookEndpointInput } from '../schemas/webhook-endpoint';
import { db, tableName } from './client';
import {
  ConditionsFailedError,
  getItem,
  lookup,
  queryAll,
  RaceLostError,
  readCounter,
  transact,
  withRetries,
  type TransactItem,
} from './ops';
import { queryIndexPages } from './outbox';
import { queryPage, type PageRequest } from './pagination';
import { endpointCounterUpdate, typeDeltas } from './endpoint-counts';
import { batchGetVia, type Prefetched } from './prefetch';
import { keys, SWEEP_SHARDS, timeKey, webhookKeys, type Key } from './table';

export const MAX_ENDPOINTS = 10;
/** A delivery keeps the record of its last attempts (a schedule over 3 days makes about 20). */
export const MAX_ATTEMPTS_KEPT = 30;

export interface WebhookEndpoint {
  id: string;
  url: string;
  description: string | null;
  events: EventType[];
  enabled: boolean;
  /** Why the service disabled it ('failing'), null when enabled or disabled by its owner. */
  disabled_reason: string | null;
  /** Unix ms of the first failed attempt since the last success; null when not failing. */
  failing_since: number | null;
  created_at: number;
  delivery_count: number;
  version: number;
}

export type DeliveryState = 'pending' | 'sending' | 'retrying' | 'succeeded' | 'failed' | 'cancelled';

export interface AttemptRecord {
  attempt: number;
  /** Unix ms. */
  at: number;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export interface WebhookDelivery {
  sk: string;
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: EventType;
  state: DeliveryState;
  attempts: number;
  created_ms: number;
  next_attempt_ms: number | null;
  lease_until: number | null;
  history: AttemptRecord[];
}

export function toEndpoint(item: Record<string, unknown> | undefined): WebhookEndpoint | null {
  if (item?.type !== 'WebhookEndpoint') return null;
  return {
    id: String(item.id),
    url: String(item.url),
    description: (item.description as string | null | undefined) ?? null,
    events: (item.events as EventType[]) ?? [],
    enabled: item.enabled === true,
    disabled_reason: (item.disabled_reason as string | null | undefined) ?? null,
    failing_since: typeof item.failing_since === 'number' ? item.failing_since : null,
    created_at: Number(item.created_at),
    delivery_count: Math.max(0, Number(item.delivery_count ?? 0)),
    version: Number(item.version ?? 0),
  };
}

export function toDelivery(item: Record<string, unknown> | undefined): WebhookDelivery | null {
  if (item?.type !== 'WebhookDelivery') return null;
  return {
    sk: String(item.sk),
    id: String(item.id),
    endpoint_id: String(item.endpoint_id),
    event_id: String(item.event_id),
    event_type: item.event_type as EventType,
    state: item.state as DeliveryState,
    attempts: Number(item.attempts ?? 0),
    created_ms: Number(item.created_ms),
    next_attempt_ms: typeof item.next_attempt_ms === 'number' ? item.next_attempt_ms : null,
    lease_until: typeof item.lease_until === 'number' ? item.lease_until : null,
    history: (item.history as AttemptRecord[] | undefined) ?? [],
  };
}

export async function getEndpointOrThrow(accountId: string, id: string): Promise<WebhookEndpoint> {
  return (await readEndpoint(accountId, id)).endpoint;
}

/** The endpoint, and whether its event types are counted on the endpoints' counter item. */
async function readEndpoint(accountId: string, id: string): Promise<{ endpoint: WebhookEndpoint; counted: boolean }> {
  if (!isEntityId(id)) throw new NotFoundError();
  const item = await getItem(webhookKeys.webhookEndpoint(accountId, id));
  const endpoint = toEndpoint(item);
  if (!endpoint) throw new NotFoundError();
  return { endpoint, counted: item?.types_counted === true };
}

export async function listEndpoints(accountId: string, page: PageRequest) {
  const [result, count] = await Promise.all([
    queryPage({ partitionValue: webhookKeys.webhookEndpointCollection(accountId), scope: `${accountId}|webhook-endpoints` }, page),
    readCounter(accountId, 'webhook_endpoints'),
  ]);
  return { ...result, items: result.items.map((i) => toEndpoint(i)).filter((e): e is WebhookEndpoint => e !== null), count };
}

/**
 * Every endpoint of an account (at most MAX_ENDPOINTS), for the fan-out, with the millisecond it was created
 * (`created_ms`, stored beside the view's seconds; 0 for endpoints created before it was stored).
 */
export async function allEndpoints(accountId: string): Promise<(WebhookEndpoint & { created_ms: number })[]> {
  const items = await queryAll({ partitionValue: webhookKeys.webhookEndpointCollection(accountId), consistent: true });
  return items.flatMap((i) => {
    const endpoint = toEndpoint(i);
    return endpoint ? [{ ...endpoint, created_ms: Number(i.created_ms ?? 0) }] : [];
  });
}

/** Creates an endpoint and its secret (stored encrypted) in one transaction (1 TransactWriteItems). */
export async function createEndpoint(
  accountId: string,
  input: CreateWebhookEndpointInput & { url: string },
  secret: string,
): Promise<WebhookEndpoint> {
  const stored = await encryptSecret(accountId, secret);
  const createdMs = Date.now();
  const endpoint: WebhookEndpoint = {
    id: newEntityId(),
    url: input.url,
    description: input.description,
    events: input.events,
    enabled: input.enabled,
    disabled_reason: null,
    failing_since: null,
    created_at: Math.floor(createdMs / 1000),
    delivery_count: 0,
    version: 1,
  };
  try {
    await transact([
      {
        Put: {
          TableName: tableName(),
          // created_ms: the fan-out sends an endpoint only the events that happened after it was created.
          Item: {
            ...webhookKeys.webhookEndpoint(accountId, endpoint.id),
            type: 'WebhookEndpoint',
            ...endpoint,
            created_ms: createdMs,
            types_counted: true,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: { ...webhookKeys.webhookSecret(accountId, endpoint.id), type: 'WebhookSecret', secret: stored },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      endpointCounterUpdate(accountId, { endpoints: 1, typed: 1, types: typeDeltas([], endpoint.events) }, MAX_ENDPOINTS),
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError && err.failed(2)) {
      throw new ValidationError({ non_field_errors: [`An account can have at most ${MAX_ENDPOINTS} webhook endpoints.`] });
    }
    throw err;
  }
  return endpoint;
}

class StaleEndpointError extends RaceLostError {}

/** PATCH: optimistic on the endpoint's version. Enabling an endpoint clears its failure state. */
export async function updateEndpoint(
  accountId: string,
  id: string,
  patch: UpdateWebhookEndpointInput & { url?: string },
): Promise<WebhookEndpoint> {
  return withRetries(
    async () => {
      const { endpoint: current, counted } = await readEndpoint(accountId, id);
      const next: WebhookEndpoint = { ...current, version: current.version + 1 };
      if (patch.url !== undefined) next.url = patch.url;
      if (patch.events !== undefined) next.events = patch.events;
      if (patch.description !== undefined) next.description = patch.description;
      if (patch.enabled !== undefined) {
        next.enabled = patch.enabled;
        // Enabled again by its owner (or disabled by them): the service's failure verdict is dropped.
        next.disabled_reason = null;
        if (patch.enabled) next.failing_since = null;
      }
      // Its types' counts follow its events; an endpoint created before the counts is counted from now on.
      const types = counted ? typeDeltas(current.events, next.events) : typeDeltas([], next.events);
      const counter =
        counted && types.size === 0 ? [] : [endpointCounterUpdate(accountId, { endpoints: 0, typed: counted ? 0 : 1, types })];
      try {
        await transact([
          {
            Update: {
              TableName: tableName(),
              Key: webhookKeys.webhookEndpoint(accountId, id),
              UpdateExpression:
                'SET #url = :url, events = :events, description = :d, enabled = :enabled, disabled_reason = :reason, failing_since = :since, version = :v, types_counted = :counted',
              ConditionExpression: 'version = :expected',
              ExpressionAttributeNames: { '#url': 'url' },
              ExpressionAttributeValues: {
                ':url': next.url,
                ':events': next.events,
                ':d': next.description,
                ':enabled': next.enabled,
                ':reason': next.disabled_reason,
                ':since': next.failing_since,
                ':v': next.version,
                ':expected': current.version,
                ':counted': true,
              },
            },
          },
          ...counter,
        ]);
      } catch (err) {
        if (err instanceof ConditionsFailedError) throw new StaleEndpointError();
        throw err;
      }
      return next;
    },
    (err) => err instanceof StaleEndpointError,
  );
}

/**
 * Deletes the endpoint and its secret, takes it off the counts, and records a purge of its deliveries
 * (removed page by page by the fan-out worker, driven by the sweep), in one transaction after reading it (its
 * event types leave the counts with it; optimistic on its version).
 */
export async function deleteEndpoint(accountId: string, id: string): Promise<void> {
  return withRetries(
    async () => {
      const { endpoint, counted } = await readEndpoint(accountId, id);
      const now = Date.now();
      try {
        await transact([
          {
            Delete: {
              TableName: tableName(),
              Key: webhookKeys.webhookEndpoint(accountId, id),
              ConditionExpression: 'version = :v',
              ExpressionAttributeValues: { ':v': endpoint.version },
            },
          },
          { Delete: { TableName: tableName(), Key: webhookKeys.webhookSecret(accountId, id) } },
          endpointCounterUpdate(accountId, {
            endpoints: -1,
            typed: counted ? -1 : 0,
            types: counted ? typeDeltas(endpoint.events, []) : new Map(),
          }),
          {
            Put: {
              TableName: tableName(),
              Item: {
                ...webhookKeys.webhookPurge(accountId, id),
                type: 'WebhookPurge',
                account_id: accountId,
                endpoint_id: id,
                gsi2pk: webhookKeys.purgeShard(dueShard(id)),
                gsi2sk: `${timeKey(now)}#${accountId}#${id}`,
              },
            },
          },
        ]);
      } catch (err) {
        // Changed or deleted since the read: read again (a deleted one is then not found).
        if (err instanceof ConditionsFailedError && err.failed(0)) throw new StaleEndpointError();
        throw err;
      }
    },
    (err) => err instanceof StaleEndpointError,
  );
}

// ---- deliveries -----------------------------------------------------------------------------------

export const deliverySk = (eventMs: number, eventId: string) => `${timeKey(eventMs)}#${eventId}`;
const deliveryId = (endpointId: string, eventId: string) =>
  `dlv_${createHash('sha256').update(`${endpointId}:${eventId}`).digest('hex').slice(0, 32)}`;
const dueShard = (sk: string) => createHash('sha256').update(sk).digest()[0]! % SWEEP_SHARDS;
const dueKey = (accountId: string, endpointId: string, sk: string, dueMs: number) => ({
  gsi2pk: webhookKeys.deliveryDueShard(dueShard(sk)),
  gsi2sk: `${timeKey(dueMs)}#${accountId}#${endpointId}#${sk}`,
});

type DeliveredEvent = { id: string; type: EventType; created_ms: number };

/** The new delivery of an event to an endpoint (pending, due now), as a transaction's Put: only if it is not there yet. */
export function deliveryPut(accountId: string, endpointId: string, event: DeliveredEvent, nowMs: number): TransactItem {
  const sk = deliverySk(event.created_ms, event.id);
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...webhookKeys.webhookDelivery(accountId, endpointId, sk),
        type: 'WebhookDelivery',
        id: deliveryId(endpointId, event.id),
        endpoint_id: endpointId,
        event_id: event.id,
        event_type: event.type,
        state: 'pending',
        attempts: 0,
        created_ms: event.created_ms,
        next_attempt_ms: nowMs,
        history: [],
        ...dueKey(accountId, endpointId, sk, nowMs),
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    },
  };
}

/** Counts `n` new deliveries on their endpoint, as a transaction's Update: only while the endpoint exists. */
export function deliveryCountAdd(accountId: string, endpointId: string, n: number): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: webhookKeys.webhookEndpoint(accountId, endpointId),
      UpdateExpression: 'ADD delivery_count :n',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':n': n },
    },
  };
}

/**
 * Creates the delivery of an event to an endpoint, once (a redelivered fan-out finds it there), and
 * counts it on the endpoint. False when the endpoint is gone; true when the delivery exists now.
 */
export async function createDelivery(accountId: string, endpointId: string, event: DeliveredEvent, nowMs: number): Promise<boolean> {
  try {
    await transact([deliveryPut(accountId, endpointId, event, nowMs), deliveryCountAdd(accountId, endpointId, 1)]);
    return true;
  } catch (err) {
    if (!(err instanceof ConditionsFailedError)) throw err;
    if (err.failed(0)) return true; // created by an earlier run of this fan-out
    return false;
  }
}

export async function listDeliveries(accountId: string, endpoint: WebhookEndpoint, page: PageRequest) {
  const result = await queryPage(
    { partitionValue: webhookKeys.webhookDeliveriesOf(accountId, endpoint.id), scope: `${accountId}|webhook-deliveries|${endpoint.id}` },
    page,
  );
  return {
    ...result,
    items: result.items.map((i) => toDelivery(i)).filter((d): d is WebhookDelivery => d !== null),
    count: endpoint.delivery_count,
  };
}

export interface DeliveryContext {
  delivery: WebhookDelivery | null;
  endpoint: WebhookEndpoint | null;
  secret: string | null;
  payload: string | null;
}

/**
 * What one attempt needs, in one BatchGet: the delivery, its endpoint, the secret (decrypted: a KMS Decrypt
 * on a cold container, then cached per stored value for PROVIDER_CACHE_TTL_SECONDS) and the event's body.
 */
/** What loadDelivery reads: the delivery, its endpoint, the signing secret, the event. */
export function deliveryContextKeys(accountId: string, endpointId: string, sk: string, eventId: string): Key[] {
  return [
    webhookKeys.webhookDelivery(accountId, endpointId, sk),
    webhookKeys.webhookEndpoint(accountId, endpointId),
    webhookKeys.webhookSecret(accountId, endpointId),
    keys.event(accountId, eventId),
  ];
}

/** `pre`: the worker batch's prefetch (./prefetch.ts), which read these keys with the other records'. */
export async function loadDelivery(
  accountId: string,
  endpointId: string,
  sk: string,
  eventId: string,
  pre?: Prefetched,
): Promise<DeliveryContext> {
  const k = deliveryContextKeys(accountId, endpointId, sk, eventId);
  const found = await batchGetVia(pre, k);
  const secretItem = lookup(found, k[2] as Key);
  const eventItem = lookup(found, k[3] as Key);
  return {
    delivery: toDelivery(lookup(found, k[0] as Key)),
    endpoint: toEndpoint(lookup(found, k[1] as Key)),
    secret: typeof secretItem?.secret === 'string' ? await decryptSecret(accountId, secretItem.secret) : null,
    payload: typeof eventItem?.payload === 'string' ? eventItem.payload : null,
  };
}

/** The conditional update that takes attempt `attempt` of a delivery until `leaseUntil` (on the state it was read in). */
export function claimUpdate(accountId: string, d: WebhookDelivery, attempt: number, leaseUntil: number) {
  return {
    TableName: tableName(),
    Key: webhookKeys.webhookDelivery(accountId, d.endpoint_id, d.sk),
    UpdateExpression: 'SET #state = :sending, attempts = :n, lease_until = :lease, gsi2pk = :gpk, gsi2sk = :gsk',
    ConditionExpression: 'attempts = :prev AND #state = :was',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: {
      ':sending': 'sending',
      ':n': attempt,
      ':lease': leaseUntil,
      ':prev': d.attempts,
      ':was': d.state,
      ...prefixed(dueKey(accountId, d.endpoint_id, d.sk, leaseUntil)),
    },
  };
}

/** Takes attempt `attempt` of a delivery for `leaseMs` (conditional on the state it was read in). */
export async function claimAttempt(accountId: string, d: WebhookDelivery, attempt: number, leaseUntil: number): Promise<boolean> {
  try {
    await db().send(new UpdateCommand(claimUpdate(accountId, d, attempt, leaseUntil)));
    return true;
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

const prefixed = (due: { gsi2pk: string; gsi2sk: string }) => ({ ':gpk': due.gsi2pk, ':gsk': due.gsi2sk });

export type EndpointChange = 'none' | 'recovered' | { failingSince: number } | 'disable';

export type AttemptOutcome = { state: 'succeeded' | 'failed' | 'cancelled' } | { state: 'retrying'; retryAtMs: number };

/** The delivery's side of recordAttempt: the outcome of attempt `attempt`, conditional on it still being the claimed one. */
export function outcomeUpdate(
  accountId: string,
  d: WebhookDelivery,
  attempt: number,
  record: AttemptRecord,
  outcome: AttemptOutcome,
): TransactItem {
  const key = webhookKeys.webhookDelivery(accountId, d.endpoint_id, d.sk);
  const history = [...d.history, record].slice(-MAX_ATTEMPTS_KEPT);
  const retrying = outcome.state === 'retrying';
  return {
    Update: {
      TableName: tableName(),
      Key: key,
      UpdateExpression: retrying
        ? 'SET #state = :s, history = :h, next_attempt_ms = :next, gsi2pk = :gpk, gsi2sk = :gsk REMOVE lease_until'
        : 'SET #state = :s, history = :h, next_attempt_ms = :next REMOVE lease_until, gsi2pk, gsi2sk',
      ConditionExpression: 'attempts = :n AND #state = :sending',
      ExpressionAttributeNames: { '#state': 'state' },
      ExpressionAttributeValues: {
        ':s': outcome.state,
        ':h': history,
        ':next': retrying ? outcome.retryAtMs : null,
        ':n': attempt,
        ':sending': 'sending',
        ...(retrying ? prefixed(dueKey(accountId, d.endpoint_id, d.sk, outcome.retryAtMs)) : {}),
      },
    },
  };
}

/**
 * Records the outcome of attempt `attempt` (conditional on it still being the claimed one) and, in the
 * same transaction, the endpoint's failure state. When the endpoint is gone the delivery is cancelled.
 */
export async function recordAttempt(
  accountId: string,
  d: WebhookDelivery,
  attempt: number,
  record: AttemptRecord,
  outcome: AttemptOutcome,
  endpointChange: EndpointChange,
): Promise<void> {
  const delivery = outcomeUpdate(accountId, d, attempt, record, outcome);
  const items: TransactItem[] = [delivery];
  const endpointKey = webhookKeys.webhookEndpoint(accountId, d.endpoint_id);
  if (endpointChange === 'recovered') {
    items.push({
      Update: {
        TableName: tableName(),
        Key: endpointKey,
        UpdateExpression: 'SET failing_since = :null',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':null': null },
      },
    });
  } else if (endpointChange === 'disable') {
    items.push({
      Update: {
        TableName: tableName(),
        Key: endpointKey,
        UpdateExpression: 'SET enabled = :f, disabled_reason = :r',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':f': false, ':r': 'failing' },
      },
    });
  } else if (typeof endpointChange === 'object') {
    items.push({
      Update: {
        TableName: tableName(),
        Key: endpointKey,
        UpdateExpression: 'SET failing_since = :since',
        // Only the first failure since the last success starts the clock.
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(failing_since) OR attribute_type(failing_since, :nullType))',
        ExpressionAttributeValues: { ':since': endpointChange.failingSince, ':nullType': 'NULL' },
      },
    });
  }
  try {
    await transact(items);
  } catch (err) {
    if (!(err instanceof ConditionsFailedError)) throw err;
    if (err.failed(0)) return; // another copy of this attempt recorded it
    if (typeof endpointChange === 'object' && err.codes[1] === 'ConditionalCheckFailed') {
      // Already failing (a concurrent delivery started the clock): record the delivery alone.
      const exists = await getItem(endpointKey);
      if (exists) return recordAttempt(accountId, d, attempt, record, outcome, 'none');
    }
    await recordAttempt(accountId, d, attempt, record, { state: 'cancelled' }, 'none');
  }
}

/** Deliveries of one shard due by `nowMs`, oldest first (the sweep's query). */
export async function dueDeliveries(
  shard: number,
  nowMs: number,
  limit = 1000,
): Promise<{ account_id: string; endpoint_id: string; delivery: string }[]> {
  const items = await queryIndexPages(webhookKeys.deliveryDueShard(shard), timeKey(nowMs + 1), limit);
  return items.flatMap((i) => {
    const [, account, endpoint, ...rest] = String(i.gsi2sk).split('#');
    return account && endpoint ? [{ account_id: account, endpoint_id: endpoint, delivery: rest.join('#') }] : [];
  });
}

/** Deleted endpoints whose deliveries are still to be removed, of one shard. */
export async function pendingPurges(shard: number, nowMs: number, limit = 100): Promise<{ account_id: string; endpoint_id: string }[]> {
  const items = await queryIndexPages(webhookKeys.purgeShard(shard), timeKey(nowMs + 1), limit);
  return items.map((i) => ({ account_id: String(i.account_id), endpoint_id: String(i.endpoint_id) }));
}

export const PURGE_PAGE = 100;

/** Removes up to PURGE_PAGE deliveries of a deleted endpoint; once none remain, its purge record. Returns how many it removed. */
export async function purgeDeliveriesPage(accountId: string, endpointId: string): Promise<number> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': webhookKeys.webhookDeliveriesOf(accountId, endpointId) },
      ProjectionExpression: 'pk, sk',
      Limit: PURGE_PAGE,
    }),
  );
  const found = (out.Items ?? []) as Key[];
  if (found.length === 0) {
    await db().send(new DeleteCommand({ TableName: tableName(), Key: webhookKeys.webhookPurge(accountId, endpointId) }));
    return 0;
  }
  for (let i = 0; i < found.length; i += 25) {
    let pending: Record<string, unknown>[] = found.slice(i, i + 25).map((k) => ({ DeleteRequest: { Key: { pk: k.pk, sk: k.sk } } }));
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 8) throw Object.assign(new Error('BatchWrite left deletes unprocessed'), { name: 'ThrottlingException' });
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(1000, 25 * 2 ** attempt)));
      const res = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending as never } }));
      pending = (res.UnprocessedItems?.[tableName()] ?? []) as Record<string, unknown>[];
    }
  }
  return found.length;
}
