// Subscription repository: read-only copies of the provider's subscriptions. In this API they are
// written only by `saveSubscription` (the webhook worker and background sync use it; tests too).
// Counters per status are kept in the same transaction as the item so `count` stays exact.
import { NotFoundError } from '../domain/errors';
import type { Subscription } from '../domain/models';
import type { SubscriptionStatus } from '../schemas/query';
import { tableName } from './client';
import { ConditionsFailedError, counterUpdate, getItem, readCounter, transact, withRetries, type TransactItem } from './ops';
import { RaceLostError } from './ops';
import { queryPage, type PageRequest } from './pagination';
import { GSI1, GSI2, keys, padSubscriptionId, timeKey } from './table';

export function toSubscription(item: Record<string, unknown> | undefined): Subscription | null {
  if (!item || item.type !== 'Subscription') return null;
  return {
    id: Number(item.id),
    unit_price: item.unit_price === null || item.unit_price === undefined ? null : String(item.unit_price),
    currency: String(item.currency),
    status: String(item.status),
    email: String(item.email),
    next_bill_date: (item.next_bill_date as string | null) ?? null,
    last_bill_date: (item.last_bill_date as string | null) ?? null,
    plan: item.plan as Subscription['plan'],
    created_at: Number(item.created_at),
    member_id: typeof item.member_id === 'string' ? item.member_id : undefined,
    referral_id: typeof item.referral_id === 'string' ? item.referral_id : undefined,
  };
}

export async function getSubscription(accountId: string, id: number): Promise<Subscription | null> {
  return toSubscription(await getItem(keys.subscription(accountId, id)));
}

export async function getSubscriptionOrThrow(accountId: string, id: number): Promise<Subscription> {
  const subscription = await getSubscription(accountId, id);
  if (!subscription) throw new NotFoundError();
  return subscription;
}

export async function listSubscriptions(accountId: string, page: PageRequest, status?: SubscriptionStatus) {
  const [result, count] = await Promise.all([
    status
      ? queryPage({ index: GSI2, partitionValue: keys.subscriptionsByStatus(accountId, status), scope: `${accountId}|subscriptions|${status}` }, page)
      : queryPage({ index: GSI1, partitionValue: keys.subscriptionsByCreation(accountId), scope: `${accountId}|subscriptions` }, page),
    readCounter(accountId, status ? `subscriptions#${status}` : 'subscriptions'),
  ]);
  return { ...result, items: result.items.map((i) => toSubscription(i)).filter((s): s is Subscription => s !== null), count };
}

export type SubscriptionData = Omit<Subscription, 'created_at' | 'member_id' | 'referral_id'> & { created_at?: number };

class StaleSubscriptionError extends RaceLostError {}

/**
 * Creates or updates a subscription's provider fields (never `member_id` / `referral_id`, which belong
 * to this service), moving the status counters in the same transaction.
 */
export async function saveSubscription(accountId: string, data: SubscriptionData): Promise<Subscription> {
  // The specification's status words: Paddle's `trialing` is stored and shown as `trialling`.
  if (data.status === 'trialing') data = { ...data, status: 'trialling' };
  return withRetries(async () => {
    const existing = await getItem(keys.subscription(accountId, data.id));
    const previous = toSubscription(existing);
    const version = Number(existing?.version ?? 0);
    const createdMs = previous ? Number(existing?.created_ms ?? previous.created_at * 1000) : (data.created_at ?? Math.floor(Date.now() / 1000)) * 1000;
    const sortKey = `${timeKey(createdMs)}#${padSubscriptionId(data.id)}`;
    const fields: Record<string, unknown> = {
      type: 'Subscription',
      id: data.id,
      unit_price: data.unit_price,
      currency: data.currency,
      status: data.status,
      email: data.email,
      next_bill_date: data.next_bill_date,
      last_bill_date: data.last_bill_date,
      plan: data.plan,
      created_at: Math.floor(createdMs / 1000),
      created_ms: createdMs,
      version: version + 1,
      gsi1pk: keys.subscriptionsByCreation(accountId),
      gsi1sk: sortKey,
      gsi2pk: keys.subscriptionsByStatus(accountId, data.status),
      gsi2sk: sortKey,
    };
    const names: Record<string, string> = previous ? { '#version': 'version' } : {};
    const values: Record<string, unknown> = {};
    const sets = Object.entries(fields).map(([name, value], i) => {
      names[`#f${i}`] = name;
      values[`:v${i}`] = value;
      return `#f${i} = :v${i}`;
    });
    const items: TransactItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: keys.subscription(accountId, data.id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: previous ? '#version = :version' : 'attribute_not_exists(pk)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: { ...values, ...(previous ? { ':version': version } : {}) },
        },
      },
    ];
    if (!previous) {
      items.push(counterUpdate(accountId, 'subscriptions', 1), counterUpdate(accountId, `subscriptions#${data.status}`, 1));
    } else if (previous.status !== data.status) {
      items.push(counterUpdate(accountId, `subscriptions#${previous.status}`, -1), counterUpdate(accountId, `subscriptions#${data.status}`, 1));
    }
    try {
      await transact(items);
    } catch (err) {
      if (err instanceof ConditionsFailedError) throw new StaleSubscriptionError();
      throw err;
    }
    return { ...data, created_at: Math.floor(createdMs / 1000), member_id: previous?.member_id, referral_id: previous?.referral_id };
  }, (err) => err instanceof StaleSubscriptionError);
}
