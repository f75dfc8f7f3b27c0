// Who wants which webhook event type: the counts kept on the `webhook_endpoints` counter item
// (store/webhooks.ts keeps them in the endpoints' create, update and delete transactions; the provider
// events' batch reads them, flows/provider-batch.ts withoutOutbox). A module of its own, without the
// endpoints' secrets and deliveries, so the subscription-sync worker's bundle does not carry them.
import { tableName } from './client';
import type { TransactItem } from './ops';
import { counterKey } from './shards';
import type { Key } from './table';

// The counter item of `webhook_endpoints` (one item: a limit counter) holds `n`, the endpoints; `typed`, how
// many of them have their event types counted (every endpoint created or updated since the counts exist;
// one created before them is counted from its next update); and `subscribed#<type>`, how many of
// those are subscribed to the type, enabled or not (a disabled endpoint may be enabled again, and counting
// it only keeps an event in the outbox, where the fan-out skips it as before). When `typed` equals `n`, a
// type with no subscriber has no endpoint that could want its events.

/** The endpoints' counter item (a limit counter: one item, shard 0). */
export const endpointCounterKey = (accountId: string): Key => counterKey(accountId, 'webhook_endpoints', 0);

const subscribedAttribute = (type: string) => `subscribed#${type}`;

/**
 * True when no endpoint of the account can want an event of `type`, from its endpoints' counter item as read
 * (undefined: no endpoint was ever created): no endpoint, or every endpoint's types counted and none
 * subscribed to it.
 */
export function nobodySubscribes(counter: Record<string, unknown> | undefined, type: string): boolean {
  const n = Number(counter?.n ?? 0);
  if (n <= 0) return true;
  return Number(counter?.typed ?? 0) === n && Number(counter?.[subscribedAttribute(type)] ?? 0) <= 0;
}

/**
 * A ConditionCheck that nobodySubscribes still holds for every one of `types` at the commit: an endpoint
 * created, or updated to want one of them, between the read and the commit cancels the transaction.
 */
export function nobodySubscribesCheck(accountId: string, types: readonly string[]): TransactItem {
  const names: Record<string, string> = {};
  const unsubscribed = [...new Set(types)].map((type, i) => {
    names[`#s${i}`] = subscribedAttribute(type);
    return `(attribute_not_exists(#s${i}) OR #s${i} <= :none)`;
  });
  return {
    ConditionCheck: {
      TableName: tableName(),
      Key: endpointCounterKey(accountId),
      ConditionExpression: `attribute_not_exists(n) OR n <= :none${unsubscribed.length ? ` OR (typed = n AND ${unsubscribed.join(' AND ')})` : ''}`,
      ...(unsubscribed.length ? { ExpressionAttributeNames: names } : {}),
      ExpressionAttributeValues: { ':none': 0 },
    },
  } as TransactItem;
}

/** +1 for each type an endpoint now wants, -1 for each it wanted, the unchanged ones left out. */
export function typeDeltas(before: readonly string[], after: readonly string[]): Map<string, number> {
  const deltas = new Map<string, number>();
  for (const t of new Set(before)) deltas.set(t, (deltas.get(t) ?? 0) - 1);
  for (const t of new Set(after)) deltas.set(t, (deltas.get(t) ?? 0) + 1);
  for (const [t, d] of deltas) if (d === 0) deltas.delete(t);
  return deltas;
}

/** The endpoints' counter item changed by `endpoints` (n), `typed` and each type's delta; `below` caps n. */
export function endpointCounterUpdate(
  accountId: string,
  change: { endpoints: number; typed: number; types: Map<string, number> },
  below?: number,
): TransactItem {
  const names: Record<string, string> = { '#type': 'type' };
  const values: Record<string, unknown> = { ':type': 'Counter' };
  const adds: string[] = [];
  const add = (attribute: string, delta: number) => {
    if (delta === 0) return;
    const i = adds.length;
    names[`#a${i}`] = attribute;
    values[`:a${i}`] = delta;
    adds.push(`#a${i} :a${i}`);
  };
  add('n', change.endpoints);
  add('typed', change.typed);
  for (const [type, delta] of change.types) add(subscribedAttribute(type), delta);
  if (below !== undefined) values[':limit'] = below;
  return {
    Update: {
      TableName: tableName(),
      Key: endpointCounterKey(accountId),
      UpdateExpression: `SET #type = :type${adds.length ? ` ADD ${adds.join(', ')}` : ''}`,
      ...(below !== undefined ? { ConditionExpression: 'attribute_not_exists(n) OR n < :limit' } : {}),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    },
  } as TransactItem;
}
