// Subscription repository: read-only copies of the provider's subscriptions. In this API they are
// written only by `saveSubscription` (the webhook worker and background sync use it; tests too).
// Counters per status are kept in the same transaction as the item so `count` stays exact.
import { NotFoundError } from '../domain/errors';
import { storedProviderId, type Payment, type ProviderId, type Subscription } from '../domain/models';
import type { SubscriptionStatus } from '../schemas/query';
import { tableName } from './client';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db } from './client';
import {
  batchGet,
  canonicalJson,
  ConditionsFailedError,
  queryAll,
  counterUpdate,
  getItem,
  lookup,
  RaceLostError,
  readCounter,
  transact,
  withRetries,
  type TransactItem,
} from './ops';
import { subscriptionView } from '../domain/views';
import { eventItem } from './outbox';
import { queryPage, type PageRequest } from './pagination';
import { ALERT_MARKER_DAYS, GSI1, GSI2, keys, planKey, providerIdKey, timeKey, TTL_ATTRIBUTE, type CounterName, type Key } from './table';
import { ReportDeltas, type Scopes } from './reports';
import { newPayerIds, storedPayerIds } from '../domain/payer-ids';

/**
 * A subscription as stored, with its payer ids (domain/payer-ids.ts): who pays it, as the provider told,
 * never shown. Written only by applyProviderUpdate (a string set that only grows).
 */
export type StoredSubscription = Subscription & { payer_ids?: string[] };

/** The payer ids a subscription read from the table carries ([] when none, or not read from the table). */
export const subscriptionPayerIds = (s: Subscription): string[] => storedPayerIds((s as StoredSubscription).payer_ids);

export function toSubscription(item: Record<string, unknown> | undefined): StoredSubscription | null {
  if (item?.type !== 'Subscription') return null;
  const payerIds = storedPayerIds(item.payer_ids);
  return {
    id: storedProviderId(item.id),
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
    version: Number(item.version ?? 0),
    ...(payerIds.length > 0 ? { payer_ids: payerIds } : {}),
  };
}

export async function getSubscription(accountId: string, id: ProviderId): Promise<Subscription | null> {
  return toSubscription(await getItem(keys.subscription(accountId, id)));
}

export async function getSubscriptionOrThrow(accountId: string, id: ProviderId): Promise<Subscription> {
  const subscription = await getSubscription(accountId, id);
  if (!subscription) throw new NotFoundError();
  return subscription;
}

export async function listSubscriptions(accountId: string, page: PageRequest, status?: SubscriptionStatus) {
  const [result, count] = await Promise.all([
    status
      ? queryPage(
          { index: GSI2, partitionValue: keys.subscriptionsByStatus(accountId, status), scope: `${accountId}|subscriptions|${status}` },
          page,
        )
      : queryPage({ index: GSI1, partitionValue: keys.subscriptionsByCreation(accountId), scope: `${accountId}|subscriptions` }, page),
    readCounter(accountId, status ? `subscriptions#${status}` : 'subscriptions'),
  ]);
  return { ...result, items: result.items.map((i) => toSubscription(i)).filter((s): s is Subscription => s !== null), count };
}

export type SubscriptionData = Omit<Subscription, 'created_at' | 'member_id' | 'referral_id'> & { created_at?: number };

class StaleSubscriptionError extends RaceLostError {}

/** Provider fields of a subscription (what webhooks and the background sync may change). */
export type ProviderFields = Omit<SubscriptionData, 'id' | 'created_at'>;

export type PaymentData = Payment;

export interface ProviderUpdate {
  subscriptionId: ProviderId;
  /** Unix ms the state is "as of" (the alert's event_time, or when a sync read it). Older never overwrites newer. */
  asOfMs: number;
  /** The provider fields this source carries; absent ones keep their stored value. */
  fields: Partial<ProviderFields>;
  payment?: PaymentData | null;
  /** Idempotency key (Paddle alert_id): its marker is written in the same transaction as the effect. */
  alertId?: string;
  /** First-seen time for a new subscription (unix seconds); defaults to now. */
  createdAt?: number;
  /** Items written in the same transaction when the alert is new (a refund record: store/refunds.ts). */
  extraItems?: TransactItem[];
  /**
   * Who pays it, as this source tells (domain/payer-ids.ts): added to the stored set, whatever the source's
   * time (facts about the payer only accumulate).
   */
  payerIds?: readonly string[];
}

export interface ProviderUpdateResult {
  /** The alert was processed before: nothing was written. */
  duplicate: boolean;
  /** The subscription's fields were written (false when the source was older or nothing changed). */
  subscriptionWritten: boolean;
  /** The payment was created or changed. */
  paymentChanged: boolean;
  statusChanged: boolean;
  subscription: Subscription | null;
  /** The referral the subscription is assigned to, if any (it may earn rewards from this payment). */
  referralId: string | null;
  /** Payer ids stored by this update that the subscription did not carry before. */
  payerIdsLearned: string[];
}

const REQUIRED: (keyof ProviderFields)[] = ['status', 'currency', 'plan'];
const PAYMENT_RANK = { failed: 0, paid: 1, refunded: 2 } as const;

function toPayment(item: Record<string, unknown> | undefined): (PaymentData & { version: number }) | null {
  if (item?.type !== 'Payment') return null;
  return {
    id: storedProviderId(item.id),
    subscription_id: storedProviderId(item.subscription_id),
    order_id: (item.order_id as string | null) ?? null,
    amount: Number(item.amount),
    currency: String(item.currency),
    paid_at: Number(item.paid_at),
    status: item.status as PaymentData['status'],
    ...(item.refund_amount !== undefined ? { refund_amount: Number(item.refund_amount) } : {}),
    ...(item.refund_type !== undefined ? { refund_type: String(item.refund_type) } : {}),
    ...(item.tax !== undefined ? { tax: Number(item.tax) } : {}),
    version: Number(item.version ?? 0),
  };
}

/** Combines what is stored about a payment with a new event: status only moves failed -> paid -> refunded. */
export function mergePayment(stored: PaymentData | null, event: PaymentData): PaymentData {
  if (!stored) return event;
  const status = PAYMENT_RANK[event.status] >= PAYMENT_RANK[stored.status] ? event.status : stored.status;
  // The paid amount and time come from the paid event; a refund only adds its refund fields.
  // The first paid record wins (a webhook and the background sync may describe it slightly differently).
  const paidSource = stored.status === 'failed' && event.status !== 'failed' ? event : stored;
  return {
    ...stored,
    order_id: stored.order_id ?? event.order_id,
    amount: paidSource.amount,
    currency: paidSource.currency,
    paid_at: paidSource.paid_at,
    ...(paidSource.tax !== undefined
      ? { tax: paidSource.tax }
      : stored.tax !== undefined
        ? { tax: stored.tax }
        : event.tax !== undefined
          ? { tax: event.tax }
          : {}),
    status,
    ...(event.refund_amount !== undefined ? { refund_amount: event.refund_amount } : {}),
    ...(event.refund_type !== undefined ? { refund_type: event.refund_type } : {}),
  };
}

const samePayment = (a: PaymentData, b: PaymentData) =>
  a.status === b.status &&
  a.amount === b.amount &&
  a.paid_at === b.paid_at &&
  a.refund_amount === b.refund_amount &&
  a.order_id === b.order_id &&
  a.tax === b.tax;

function providerFieldsOf(s: Subscription): ProviderFields {
  return {
    unit_price: s.unit_price,
    currency: s.currency,
    status: s.status,
    email: s.email,
    next_bill_date: s.next_bill_date,
    last_bill_date: s.last_bill_date,
    plan: s.plan,
  };
}

/** The copy of a subscription a referral carries (what the API shows), without this service's links. */
export function subscriptionSnapshot(s: Subscription): Subscription {
  const { member_id: _m, referral_id: _r, version: _v, payer_ids: _p, ...rest } = s as StoredSubscription;
  return rest;
}

/**
 * Frees a subscription tied to `referralId` (a referral that no longer exists, left by data written
 * before deletes were conditional): only while it is still tied to that one. Whether it was freed.
 */
export async function unlinkSubscription(accountId: string, subscriptionId: ProviderId, referralId: string): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.subscription(accountId, subscriptionId),
        UpdateExpression: 'REMOVE referral_id',
        ConditionExpression: 'referral_id = :r',
        ExpressionAttributeValues: { ':r': referralId },
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

/**
 * A subscription tied to a referral that does not exist (or is converted with another subscription) is
 * freed. Whether the tie to `referralId` is gone now (freed here, or changed meanwhile).
 */
export async function releaseIfOrphaned(accountId: string, subscriptionId: ProviderId, referralId: string): Promise<boolean> {
  if (await referralHolds(accountId, referralId, subscriptionId)) return false;
  await unlinkSubscription(accountId, subscriptionId, referralId);
  return true;
}

/** Whether `referralId` names a referral that exists and is converted with this subscription. */
async function referralHolds(accountId: string, referralId: string, subscriptionId: ProviderId): Promise<boolean> {
  const item = await getItem(keys.referral(accountId, referralId));
  const snapshot = item?.subscription as { id?: unknown } | null | undefined;
  return item?.type === 'Referral' && snapshot?.id !== undefined && storedProviderId(snapshot.id) === subscriptionId;
}

/** The report bucket deltas a plan adds (ReportDeltas.add's arguments). */
export type ReportAdd = [at: number, scopes: Scopes, metric: 'revenue' | 'refunds', delta: number, currency: string];

/**
 * What one provider update writes, decided from the items read (planProviderUpdate): the transaction's
 * own items, and the counter and report deltas, which a caller merging several plans into one
 * transaction aggregates per counter name and per bucket (a transaction never holds two writes of a key).
 */
export interface ProviderPlan {
  result: ProviderUpdateResult;
  /** The answer had the update been found processed already (its marker written by a concurrent copy). */
  duplicate: ProviderUpdateResult;
  /** Its items: the alert's marker first (when it has one), then the refund, subscription, event, referral snapshot and payment. */
  items: TransactItem[];
  /** Index in `items` of the referral snapshot's update, or -1. */
  referralItem: number;
  /** Index in `items` of the subscription's write when it sets every field (a new version), or -1. */
  subscriptionItem: number;
  /** Counter deltas by name. */
  counters: [CounterName, number][];
  reports: ReportAdd[];
  /** The items as they will be stored once the plan commits (the state a next update of the same keys is planned on). */
  stored: Record<string, unknown>[];
}

/** The keys one update reads (one BatchGet): its subscription, its marker, its payment and its refunds. */
export function providerUpdateKeys(accountId: string, update: ProviderUpdate): Key[] {
  return [
    keys.subscription(accountId, update.subscriptionId),
    ...(update.alertId ? [keys.alert(accountId, update.alertId)] : []),
    ...(update.payment ? [keys.payment(accountId, update.subscriptionId, update.payment.id)] : []),
    ...refundPutsOf(update).map((i) => ({ pk: String(i.pk), sk: String(i.sk) })),
  ];
}

const refundPutsOf = (update: ProviderUpdate) =>
  (update.extraItems ?? []).map((i) => i.Put?.Item).filter((i): i is Record<string, unknown> => i?.type === 'Refund');

/** Everything a transaction built from `plan` holds: its items, then one update per counter and per report bucket. */
export function planTransactionItems(accountId: string, plan: ProviderPlan): TransactItem[] {
  const report = new ReportDeltas(accountId);
  for (const add of plan.reports) report.add(...add);
  return [...plan.items, ...plan.counters.map(([name, delta]) => counterUpdate(accountId, name, delta)), ...report.items()];
}

/**
 * Decides what one update writes, from the items `found` (read by providerUpdateKeys) - no I/O. The same
 * rules as applyProviderUpdate, which runs it: the subscription only if `asOfMs` is not older than the
 * stored state, its status counters, the snapshot on its referral, the payment and its report buckets.
 * Every write is conditioned on the state read (a version, a tie, an absent item), so a plan made from a
 * state that changed meanwhile fails its transaction's conditions and is planned again.
 */
export function planProviderUpdate(
  accountId: string,
  update: ProviderUpdate,
  found: Map<string, Record<string, unknown>>,
  /** The table's state when `found` is the state earlier facts of one transaction leave (a fold). */
  basis?: Map<string, Record<string, unknown>>,
): ProviderPlan {
  const now = Date.now();
  const subKey = keys.subscription(accountId, update.subscriptionId);
  const markerKey = update.alertId ? keys.alert(accountId, update.alertId) : null;
  const payKey = update.payment ? keys.payment(accountId, update.subscriptionId, update.payment.id) : null;
  // Payer ids are never a provider field (a copy read from the table may carry them): only `payerIds` writes them.
  const { payer_ids: _ignored, ...fields } = update.fields as Partial<ProviderFields> & { payer_ids?: unknown };
  // The specification's status words: Paddle's `trialing` is stored and shown as `trialling`.
  if (fields.status === 'trialing') fields.status = 'trialling';

  // The update's own items, copied: a plan never changes its input (it may be planned again).
  const extraItems: TransactItem[] = (update.extraItems ?? []).map((i) =>
    i.Put?.Item?.type === 'Refund' ? { Put: { ...i.Put, Item: { ...i.Put.Item } } } : i,
  );
  // Refunds written with this update (their report bucket counts each once: only when it is new).
  const refundPuts = extraItems.flatMap((i) =>
    i.Put?.Item?.type === 'Refund' ? [i.Put as { Item: Record<string, unknown>; ConditionExpression?: string }] : [],
  );
  const refundKey = (refund: Record<string, unknown>) => ({ pk: String(refund.pk), sk: String(refund.sk) });
  // One refund may come in two events (Chargebee's credit note and its payment_refunded): the second
  // rewrites it as it is, with the `reported` mark the first gave it, so no evaluation counts it again.
  for (const put of refundPuts) {
    if (lookup(found, refundKey(put.Item))?.reported === true) put.Item.reported = true;
    delete put.ConditionExpression;
  }
  const existing = lookup(found, subKey);
  const previous = toSubscription(existing);
  const referralId = previous?.referral_id ?? null;
  const duplicate: ProviderUpdateResult = {
    duplicate: true,
    subscriptionWritten: false,
    paymentChanged: false,
    statusChanged: false,
    subscription: previous,
    referralId,
    payerIdsLearned: [],
  };
  const plan: ProviderPlan = {
    result: duplicate,
    duplicate,
    items: [],
    referralItem: -1,
    subscriptionItem: -1,
    counters: [],
    reports: [],
    stored: [],
  };
  if (markerKey && lookup(found, markerKey)) return plan;
  const { items, counters, reports, stored } = plan;
  if (markerKey) {
    const marker = {
      ...markerKey,
      type: 'Alert',
      subscription_id: update.subscriptionId,
      processed_at: now,
      [TTL_ATTRIBUTE]: Math.floor(now / 1000) + ALERT_MARKER_DAYS * 86400,
    };
    items.push({ Put: { TableName: tableName(), Item: marker, ConditionExpression: 'attribute_not_exists(pk)' } });
    stored.push(marker);
  }

  items.push(...extraItems);

  // The subscription: merged over the stored state unless the source is older than it.
  let subscription = previous;
  let subscriptionWritten = false;
  let statusChanged = false;
  const storedAsOf = Number(existing?.event_ms ?? 0);
  const newer = !previous || update.asOfMs >= storedAsOf;
  const merged: ProviderFields | null = previous
    ? { ...providerFieldsOf(previous), ...definedOnly(fields) }
    : REQUIRED.every((k) => fields[k] !== undefined && fields[k] !== null)
      ? {
          unit_price: fields.unit_price ?? null,
          currency: fields.currency as string,
          status: fields.status as string,
          email: fields.email ?? '',
          next_bill_date: fields.next_bill_date ?? null,
          last_bill_date: fields.last_bill_date ?? null,
          plan: fields.plan as Subscription['plan'],
        }
      : null;
  const changed = merged !== null && (!previous || canonicalJson(merged) !== canonicalJson(providerFieldsOf(previous)));
  const written = newer && merged !== null && changed;
  // Who pays it: ids not stored yet join the set (they only accumulate, whatever the source's time).
  // Their write is conditioned on the member and referral ties read, so an attachment or a conversion
  // committed meanwhile makes this start over and its follow-up (flows/subscription-sync.ts) see them.
  const knownPayers = previous ? subscriptionPayerIds(previous) : [];
  const payerIdsLearned = previous || written ? newPayerIds(knownPayers, update.payerIds ?? []) : [];
  const payerNames: Record<string, string> =
    payerIdsLearned.length > 0 ? { '#pids': 'payer_ids', ...(previous ? { '#mid': 'member_id' } : {}) } : {};
  const payerValues: Record<string, unknown> =
    payerIdsLearned.length > 0 ? { ':pids': new Set(payerIdsLearned), ...(previous?.member_id ? { ':mid': previous.member_id } : {}) } : {};
  const memberTie = previous?.member_id ? '#mid = :mid' : 'attribute_not_exists(#mid)';
  const payers = [...knownPayers, ...payerIdsLearned];
  const payerAttr = payers.length > 0 ? { payer_ids: new Set(payers) } : {};
  if (written && merged) {
    const version = Number(existing?.version ?? 0);
    const createdMs = previous
      ? Number(existing?.created_ms ?? previous.created_at * 1000)
      : (update.createdAt ?? Math.floor(now / 1000)) * 1000;
    const sortKey = `${timeKey(createdMs)}#${providerIdKey(update.subscriptionId)}`;
    const attrs: Record<string, unknown> = {
      type: 'Subscription',
      id: update.subscriptionId,
      ...merged,
      created_at: Math.floor(createdMs / 1000),
      created_ms: createdMs,
      event_ms: Math.max(update.asOfMs, storedAsOf),
      version: version + 1,
      gsi1pk: keys.subscriptionsByCreation(accountId),
      gsi1sk: sortKey,
      gsi2pk: keys.subscriptionsByStatus(accountId, merged.status),
      gsi2sk: sortKey,
    };
    // What the condition is on: the state read, or with `basis` the table's (a fact folded into one
    // transaction after another fact of the same subscription is planned on the state that one leaves, and
    // its write replaces that one's: conditioned on the table's state, adding every payer id new to it).
    const baseItem = lookup(basis ?? found, subKey);
    const base = toSubscription(baseItem);
    const baseVersion = Number(baseItem?.version ?? 0);
    const baseReferral = base?.referral_id ?? null;
    const adds = newPayerIds(base ? subscriptionPayerIds(base) : [], payers);
    const learns = adds.length > 0;
    const names: Record<string, string> = base ? { '#version': 'version' } : {};
    const values: Record<string, unknown> = {};
    const sets = Object.entries(attrs).map(([name, value], i) => {
      names[`#f${i}`] = name;
      values[`:v${i}`] = value;
      return `#f${i} = :v${i}`;
    });
    plan.subscriptionItem = items.length;
    items.push({
      Update: {
        TableName: tableName(),
        Key: subKey,
        UpdateExpression: `SET ${sets.join(', ')}${learns ? ' ADD #pids :pids' : ''}`,
        // The version read, and the referral tie read: a conversion that tied it meanwhile (its snapshot
        // is of the version read) makes this start over and refresh that referral's snapshot as well.
        ConditionExpression: base
          ? `#version = :version AND ${baseReferral ? 'referral_id = :rid' : 'attribute_not_exists(referral_id)'}${learns ? ` AND ${base.member_id ? '#mid = :mid' : 'attribute_not_exists(#mid)'}` : ''}`
          : 'attribute_not_exists(pk)',
        ExpressionAttributeNames: { ...names, ...(learns ? { '#pids': 'payer_ids', ...(base ? { '#mid': 'member_id' } : {}) } : {}) },
        ExpressionAttributeValues: {
          ...values,
          ...(learns ? { ':pids': new Set(adds), ...(base?.member_id ? { ':mid': base.member_id } : {}) } : {}),
          ...(base ? { ':version': baseVersion, ...(baseReferral ? { ':rid': baseReferral } : {}) } : {}),
        },
      },
    });
    stored.push({ ...existing, ...subKey, ...attrs, ...payerAttr });
    if (!previous) {
      counters.push(['subscriptions', 1], [`subscriptions#${merged.status}`, 1]);
    } else if (previous.status !== merged.status) {
      statusChanged = true;
      counters.push([`subscriptions#${previous.status}`, -1], [`subscriptions#${merged.status}`, 1]);
    }
    subscription = {
      ...merged,
      id: update.subscriptionId,
      created_at: Math.floor(createdMs / 1000),
      member_id: previous?.member_id,
      referral_id: previous?.referral_id,
      version: version + 1,
      ...(payers.length > 0 ? { payer_ids: payers } : {}),
    } as StoredSubscription;
    subscriptionWritten = true;
    // One event per stored version of the subscription.
    items.push(
      eventItem(accountId, 'subscription.updated', `${update.subscriptionId}:${version + 1}`, subscriptionView(subscription), now),
    );
    if (referralId) {
      // The referral shows its subscription from a snapshot (one read per GET): refresh it here.
      plan.referralItem = items.length;
      items.push({
        Update: {
          TableName: tableName(),
          Key: keys.referral(accountId, referralId),
          UpdateExpression: 'SET #s = :snap',
          ConditionExpression: 'attribute_exists(pk) AND #s.#id = :sid',
          ExpressionAttributeNames: { '#s': 'subscription', '#id': 'id' },
          ExpressionAttributeValues: { ':snap': subscriptionSnapshot(subscription), ':sid': update.subscriptionId },
        },
      });
    }
  } else if (previous && payerIdsLearned.length > 0) {
    // Only the payer is new: the set grows under the ties read (the version stays: no provider field changed).
    items.push({
      Update: {
        TableName: tableName(),
        Key: subKey,
        UpdateExpression: 'ADD #pids :pids',
        ConditionExpression: `attribute_exists(pk) AND ${referralId ? 'referral_id = :rid' : 'attribute_not_exists(referral_id)'} AND ${memberTie}`,
        ExpressionAttributeNames: payerNames,
        ExpressionAttributeValues: { ...payerValues, ...(referralId ? { ':rid': referralId } : {}) },
      },
    });
    stored.push({ ...existing, ...payerAttr });
    subscription = { ...previous, payer_ids: payers } as StoredSubscription;
  }

  // The payment: created, or merged with what is stored (failed -> paid -> refunded).
  let paymentChanged = false;
  if (update.payment && payKey) {
    const storedPayment = toPayment(lookup(found, payKey));
    const next = mergePayment(storedPayment, update.payment);
    if (!storedPayment || !samePayment(storedPayment, next)) {
      paymentChanged = true;
      // `reported`: its revenue is in the report buckets (written once, here or by the evaluation).
      const wasReported = lookup(found, payKey)?.reported === true;
      const reported = wasReported || (referralId !== null && next.status !== 'failed');
      const item = {
        ...payKey,
        type: 'Payment',
        ...next,
        version: (storedPayment?.version ?? 0) + 1,
        ...(reported ? { reported: true } : {}),
      };
      items.push({
        Put: {
          TableName: tableName(),
          Item: item,
          ConditionExpression: storedPayment ? 'version = :v' : 'attribute_not_exists(pk)',
          ...(storedPayment ? { ExpressionAttributeValues: { ':v': storedPayment.version } } : {}),
        },
      });
      stored.push(item);
      // Report buckets of a referred subscription's money (store/reports.ts), in this same transaction.
      if (referralId && existing && next.status !== 'failed' && !wasReported)
        reports.push([next.paid_at, scopesOf(existing), 'revenue', next.amount, next.currency]);
    }
  }
  for (const put of refundPuts) {
    const refund = put.Item;
    if (referralId && existing && !lookup(found, refundKey(refund))) {
      refund.reported = true;
      // Counted only by the write that creates it: another event of the same refund writing it meanwhile
      // makes this one start over and find it.
      put.ConditionExpression = 'attribute_not_exists(pk)';
      reports.push([
        Number(refund.refunded_at) || Math.floor(now / 1000),
        scopesOf(existing),
        'refunds',
        Number(refund.amount),
        String(refund.currency),
      ]);
    }
    stored.push(refund);
  }
  plan.result = { duplicate: false, subscriptionWritten, paymentChanged, statusChanged, subscription, referralId, payerIdsLearned };
  return plan;
}

const scopesOf = (existing: Record<string, unknown>): Scopes => ({
  memberId: existing.referrer_member_id as string | undefined,
  campaignId: existing.referrer_campaign_id as string | undefined,
});

/**
 * Applies what the provider says about one subscription (an alert, or a page of the background sync),
 * in ONE transaction: the alert's idempotency marker, the subscription (only if `asOfMs` is not older
 * than the stored state), its status counters, the snapshot on its referral, and the payment
 * (planProviderUpdate decides them). Round trips: 1 BatchGet + 1 TransactWriteItems (more only when a
 * concurrent write wins a race).
 */
export async function applyProviderUpdate(accountId: string, update: ProviderUpdate): Promise<ProviderUpdateResult> {
  const wanted = providerUpdateKeys(accountId, update);
  return withRetries(
    async () => {
      const plan = planProviderUpdate(accountId, update, await batchGet(wanted));
      if (plan.result.duplicate) return plan.result;
      const items = planTransactionItems(accountId, plan);
      if (items.length > 0) {
        try {
          await transact(items);
        } catch (err) {
          if (err instanceof ConditionsFailedError) {
            // Someone processed this alert concurrently: it is a duplicate now.
            if (update.alertId && err.failed(0)) return plan.duplicate;
            // The tied referral is gone (or holds another subscription): the tie is stale data, never a reason
            // to refuse the provider's update. Freed, then applied again.
            const referralId = plan.result.referralId;
            if (referralId && plan.referralItem >= 0 && err.failed(plan.referralItem))
              await releaseIfOrphaned(accountId, update.subscriptionId, referralId);
            throw new StaleSubscriptionError();
          }
          throw err;
        }
      }
      return plan.result;
    },
    (err) => err instanceof StaleSubscriptionError,
    8,
  );
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Creates or updates a subscription's provider fields (never `member_id` / `referral_id`, which belong
 * to this service), moving the status counters in the same transaction. Tests and tools use it; the
 * webhook worker and background sync use applyProviderUpdate.
 */
export async function saveSubscription(accountId: string, data: SubscriptionData): Promise<Subscription> {
  const { id, created_at, ...fields } = data;
  const result = await applyProviderUpdate(accountId, {
    subscriptionId: id,
    asOfMs: Date.now(),
    fields,
    ...(created_at !== undefined ? { createdAt: created_at } : {}),
  });
  return result.subscription as Subscription;
}

/** Every payment of a subscription (payment-id order). */
export async function listPayments(accountId: string, subscriptionId: ProviderId): Promise<PaymentData[]> {
  return listPaymentsFrom(await queryAll({ partitionValue: keys.paymentsOf(accountId, subscriptionId), consistent: true }));
}

/** The payments among the items of a payments partition (which also holds refunds). */
export function listPaymentsFrom(items: Record<string, unknown>[]): PaymentData[] {
  return items.flatMap((item) => {
    const p = toPayment(item);
    if (!p) return [];
    const { version: _v, ...rest } = p;
    return [rest];
  });
}

const PLAN_CACHE_SECONDS = 24 * 3600;

export interface CachedPlan {
  id: number;
  name: string;
  billing_type: string;
  billing_period: number;
  recurring_price: Record<string, string>;
  fetched_at: number;
}

/** The provider's plan from the table cache; `stale` when older than a day (refresh it when you can). */
export async function getCachedPlan(accountId: string, planId: number): Promise<{ plan: CachedPlan; stale: boolean } | null> {
  const item = await getItem(planKey(accountId, planId), false);
  if (item?.type !== 'PlanCache') return null;
  const plan = item.plan as CachedPlan;
  return { plan, stale: Math.floor(Date.now() / 1000) - plan.fetched_at > PLAN_CACHE_SECONDS };
}

export async function putCachedPlan(accountId: string, plan: Omit<CachedPlan, 'fetched_at'>): Promise<CachedPlan> {
  const cached = { ...plan, fetched_at: Math.floor(Date.now() / 1000) };
  await db().send(new PutCommand({ TableName: tableName(), Item: { ...planKey(accountId, plan.id), type: 'PlanCache', plan: cached } }));
  return cached;
}
