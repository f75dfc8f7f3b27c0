// Unattributed subscriptions: what the subscription-sync worker saw of a provider subscription (or its
// checkout) that did NOT convert a referral, and why, so the dashboard can answer "why did this referral
// not convert?" (GET /v1/referrals/{id}/diagnosis/, docs/referrals-diagnosis.md).
//
// One small item per account, customer email and subscription:
//   pk  `A#<acct>#UNATTRIBUTED#<email, trimmed and lower-cased>`   sk `<subscription id>` (store/table.ts providerIdKey)
//   gsi1 `A#<acct>#UNATTRIBUTED_REFERRAL#<referral id>` / same sk, only when the event named a referral id
//        (passthrough / custom_data / client_reference_id / metadata, or a referral's coupon) that was refused.
// A subscription without an email is kept under `A#<acct>#UNATTRIBUTED_NO_EMAIL` when it named a referral
// (then only the GSI finds it), and not kept otherwise (nothing could look it up).
// Every item expires 90 days after its last sighting (TTL). Writes are one UpdateItem, idempotent: a
// replayed event rewrites the same item with the same reason. A specific reason (a referral was named and
// refused) is never overwritten by a later event that names none (a renewal); the newest specific reason wins.
// Reads are Queries of one partition (never a Scan), bounded by MAX_ITEMS.
import { DeleteCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ProviderId } from '../domain/models';
import { db, tableName } from './client';
import { providerIdKey, type Key } from './table';

export const UNATTRIBUTED_TTL_DAYS = 90;
/** The most items one diagnosis reads per partition (an email with more subscriptions is not a real case). */
export const MAX_ITEMS = 50;
/** Emails longer than this are not keyed (RFC 5321 caps a path at 256 octets). */
const MAX_EMAIL = 320;

export type UnattributedReason =
  | 'no_referral_hint'
  | 'unknown_coupon'
  | 'malformed_referral_id'
  | 'referral_not_found'
  | 'referral_converted_elsewhere'
  | 'subscription_assigned'
  | 'self_referral'
  | 'conversion_refused';

export interface UnattributedSighting {
  subscriptionId: ProviderId;
  email: string;
  reason: UnattributedReason;
  detail: string;
  eventId: string;
  checkoutId?: string | undefined;
  /** The referral id the event named (well-formed or not, at most 64 characters). */
  referralNamed?: string | undefined;
  couponCode?: string | undefined;
  status?: string | undefined;
  planName?: string | undefined;
  nowMs?: number;
}

export interface UnattributedItem {
  subscription_id: ProviderId;
  email: string;
  reason: UnattributedReason;
  detail: string;
  event_id: string;
  checkout_id: string | null;
  referral_named: string | null;
  coupon_code: string | null;
  status: string | null;
  plan_name: string | null;
  first_seen_at: number;
  last_seen_at: number;
}

/** The email as a key part: trimmed, lower-cased; null when there is none to key by. */
export function emailKeyPart(email: string | null | undefined): string | null {
  const e = (email ?? '').trim().toLowerCase();
  return e === '' || e.length > MAX_EMAIL ? null : e;
}

export const unattributedKeys = {
  byEmail: (acct: string, emailPart: string) => `A#${acct}#UNATTRIBUTED#${emailPart}`,
  noEmail: (acct: string) => `A#${acct}#UNATTRIBUTED_NO_EMAIL`,
  byReferral: (acct: string, referralId: string) => `A#${acct}#UNATTRIBUTED_REFERRAL#${referralId}`,
  item: (acct: string, emailPart: string | null, subscriptionId: ProviderId): Key => ({
    pk: emailPart === null ? `A#${acct}#UNATTRIBUTED_NO_EMAIL` : `A#${acct}#UNATTRIBUTED#${emailPart}`,
    sk: providerIdKey(subscriptionId),
  }),
};

/** Records (or refreshes) one sighting. Returns false when there is nothing to key it by. */
export async function recordUnattributed(accountId: string, s: UnattributedSighting): Promise<boolean> {
  const update = unattributedUpdate(accountId, s);
  if (!update) return false;
  await db().send(new UpdateCommand(update));
  return true;
}

/**
 * The one UpdateItem recordUnattributed sends (unconditional), or null when there is nothing to key the
 * sighting by: the provider-event batch path writes it inside the event's own transaction.
 */
export function unattributedUpdate(
  accountId: string,
  s: UnattributedSighting,
): {
  TableName: string;
  Key: Key;
  UpdateExpression: string;
  ExpressionAttributeNames: Record<string, string>;
  ExpressionAttributeValues: Record<string, unknown>;
} | null {
  const emailPart = emailKeyPart(s.email);
  const named = s.referralNamed && s.reason !== 'no_referral_hint' && s.reason !== 'unknown_coupon' ? s.referralNamed.slice(0, 64) : null;
  if (emailPart === null && named === null) return null;
  const now = s.nowMs ?? Date.now();
  const key = unattributedKeys.item(accountId, emailPart, s.subscriptionId);
  // A sighting without a named referral keeps a more specific reason already recorded.
  const weak = s.reason === 'no_referral_hint';
  const sets = [
    '#type = :type',
    'subscription_id = :sid',
    'email = :email',
    'last_seen_at = :now',
    'first_seen_at = if_not_exists(first_seen_at, :now)',
    `expires_at = :ttl`,
    weak ? 'reason = if_not_exists(reason, :reason)' : 'reason = :reason',
    weak ? 'detail = if_not_exists(detail, :detail)' : 'detail = :detail',
    weak ? 'event_id = if_not_exists(event_id, :event)' : 'event_id = :event',
  ];
  const values: Record<string, unknown> = {
    ':type': 'Unattributed',
    ':sid': s.subscriptionId,
    ':email': s.email.trim(),
    ':now': now,
    ':ttl': Math.floor(now / 1000) + UNATTRIBUTED_TTL_DAYS * 86_400,
    ':reason': s.reason,
    ':detail': s.detail,
    ':event': s.eventId,
  };
  const optional: [string, string | undefined | null][] = [
    ['checkout_id', s.checkoutId],
    ['coupon_code', s.couponCode],
    ['sub_status', s.status],
    ['plan_name', s.planName],
  ];
  for (const [name, value] of optional) {
    if (value === undefined || value === null || value === '') continue;
    sets.push(`${name} = :${name}`);
    values[`:${name}`] = value.slice(0, 255);
  }
  if (named !== null) {
    sets.push('referral_named = :named', 'gsi1pk = :g1pk', 'gsi1sk = :g1sk');
    values[':named'] = named;
    values[':g1pk'] = unattributedKeys.byReferral(accountId, named);
    values[':g1sk'] = key.sk;
  }
  return {
    TableName: tableName(),
    Key: key,
    UpdateExpression: `SET ${sets.join(', ')}`,
    ExpressionAttributeNames: { '#type': 'type' },
    ExpressionAttributeValues: values,
  };
}

/**
 * The Delete that forgets a subscription's sighting once it converted a referral: it rides in the
 * conversion's own transaction (store/referrals.ts markReferralConverted), which costs an item there instead
 * of a write call of its own; no condition, so an absent sighting (the usual case) is no failure.
 */
export function forgetUnattributedItem(
  accountId: string,
  email: string,
  subscriptionId: ProviderId,
): { Delete: { TableName: string; Key: Key } } {
  return { Delete: { TableName: tableName(), Key: unattributedKeys.item(accountId, emailKeyPart(email), subscriptionId) } };
}

/** Forgets a subscription's sighting on its own (a conversion found already made, whose transaction did not run). */
export async function forgetUnattributed(accountId: string, email: string, subscriptionId: ProviderId): Promise<void> {
  await db().send(new DeleteCommand(forgetUnattributedItem(accountId, email, subscriptionId).Delete));
}

function toItem(raw: Record<string, unknown>, nowSeconds: number): UnattributedItem | null {
  // An expired item DynamoDB has not deleted yet counts as absent.
  if (typeof raw.expires_at === 'number' && raw.expires_at <= nowSeconds) return null;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  const sid = raw.subscription_id;
  if (typeof sid !== 'number' && typeof sid !== 'string') return null;
  return {
    subscription_id: sid,
    email: str(raw.email) ?? '',
    reason: (str(raw.reason) ?? 'no_referral_hint') as UnattributedReason,
    detail: str(raw.detail) ?? '',
    event_id: str(raw.event_id) ?? '',
    checkout_id: str(raw.checkout_id),
    referral_named: str(raw.referral_named),
    coupon_code: str(raw.coupon_code),
    status: str(raw.sub_status),
    plan_name: str(raw.plan_name),
    first_seen_at: typeof raw.first_seen_at === 'number' ? raw.first_seen_at : 0,
    last_seen_at: typeof raw.last_seen_at === 'number' ? raw.last_seen_at : 0,
  };
}

async function queryPartition(partitionValue: string, index?: 'gsi1'): Promise<UnattributedItem[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      ...(index ? { IndexName: index } : {}),
      KeyConditionExpression: '#pk = :pk',
      ExpressionAttributeNames: { '#pk': index ? 'gsi1pk' : 'pk' },
      ExpressionAttributeValues: { ':pk': partitionValue },
      Limit: MAX_ITEMS,
    }),
  );
  const now = Math.floor(Date.now() / 1000);
  return (out.Items ?? []).map((i) => toItem(i, now)).filter((i): i is UnattributedItem => i !== null);
}

/** The sightings under one customer email (one Query). */
export function unattributedByEmail(accountId: string, email: string): Promise<UnattributedItem[]> {
  const part = emailKeyPart(email);
  return part === null ? Promise.resolve([]) : queryPartition(unattributedKeys.byEmail(accountId, part));
}

/** The sightings whose event named this referral and was refused (one Query of GSI1). */
export function unattributedByReferral(accountId: string, referralId: string): Promise<UnattributedItem[]> {
  return queryPartition(unattributedKeys.byReferral(accountId, referralId), 'gsi1');
}
