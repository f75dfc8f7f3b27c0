// The recorded facts the fraud rules read (docs/fraud.md "Facts"), for the screening worker and the preview.
// Every loader is a Query bounded by its key range (time-ordered ids from `since` on) and by a cap on the
// items it reads; none scans.
//
// - Referrals: the referral item (ip_hash from the browser script, user_identifier, the subscription's
//   email, converted_at, rewards: a reward voided as `refunded` or a clawback means refunded), a member's
//   through GSI1 (keys.referralsByMember, sorted by the time-ordered id), the account's through the
//   referral collection (the preview).
// - Applications: the application collection (applicationKeys.applicationCollection, `app_` + a
//   time-ordered id), with the ip_hash the join request recorded.
// - A member's days: the report buckets `M#<member>` (store/reports.ts): link_clicks, conversions and
//   referrals per UTC day.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ApplicationFact, MemberDay, ReferralFact } from '../domain/fraud-rules';
import { db, tableName } from '../store/client';
import { getItem } from '../store/ops';
import { getItemVia, type Prefetched } from '../store/prefetch';
import { dayOf } from '../store/reports';
import { applicationKeys, GSI1, keys, reportReadKeys } from '../store/table';

const DAY = 86_400;
/** At most this many of a member's referrals, or of the account's applications, per load (newest first). */
export const FACTS_CAP = 5000;

/** The smallest time-ordered id (UUIDv7, 32 hex) created at or after `seconds`. */
export function idFrom(seconds: number): string {
  return Math.max(0, Math.floor(seconds) * 1000)
    .toString(16)
    .padStart(12, '0')
    .concat('0'.repeat(20));
}

const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

type Stored = Record<string, unknown>;

/** A stored reward that a refund took back: voided as refunded, or a clawback (negative, reversing another). */
const isRefund = (r: Stored) =>
  r.void_reason === 'refunded' || (typeof r.amount === 'number' && r.amount < 0) || typeof r.reverses === 'string';

/** The referral item as a fact. */
export function toReferralFact(item: Stored): ReferralFact {
  const user = typeof item.user_identifier === 'string' ? item.user_identifier : '';
  const subscriptionEmail = (item.subscription as { email?: unknown } | null | undefined)?.email;
  const rewards = (item.rewards as Stored[] | undefined) ?? [];
  return {
    id: String(item.id),
    member_id: String(item.member_id),
    created_at: Number(item.created_at),
    ip_hash: typeof item.ip_hash === 'string' && item.ip_hash ? item.ip_hash : null,
    email: EMAIL.test(user) ? user : typeof subscriptionEmail === 'string' && EMAIL.test(subscriptionEmail) ? subscriptionEmail : null,
    converted_at: typeof item.converted_at === 'number' ? item.converted_at : null,
    refunded: rewards.some(isRefund),
  };
}

/** When a refund took a reward of the referral back (unix seconds, each refund once), for the preview. */
export function refundTimes(item: Stored): number[] {
  const rewards = (item.rewards as Stored[] | undefined) ?? [];
  return rewards
    .filter(isRefund)
    .map((r) => Number(r.void_reason === 'refunded' && typeof r.voided_at === 'number' ? r.voided_at : r.created_at))
    .filter((t) => Number.isFinite(t));
}

export function toApplicationFact(item: Stored): ApplicationFact {
  return {
    id: String(item.id),
    campaign_id: String(item.campaign_id),
    created_at: Number(item.created_at),
    ip_hash: typeof item.ip_hash === 'string' && item.ip_hash ? item.ip_hash : null,
    email: String(item.email ?? ''),
    member_id: typeof item.member_id === 'string' ? item.member_id : null,
  };
}

/**
 * Items of one partition whose sort key is at least `from`, newest first, at most `cap` (read page by
 * page); `truncated` when more were there.
 */
export async function queryNewest(q: {
  partitionValue: string;
  index?: typeof GSI1;
  from: string;
  cap: number;
  /** Only these attributes (`a.b` for a map's entry), with the keys. */
  attributes?: readonly string[];
}): Promise<{ items: Stored[]; truncated: boolean }> {
  const pk = q.index ? 'gsi1pk' : 'pk';
  const sk = q.index ? 'gsi1sk' : 'sk';
  const names: Record<string, string> = { '#pk': pk, '#sk': sk };
  // LastEvaluatedKey carries the keys whatever is projected.
  const projection = q.attributes
    ?.map((path, i) =>
      path
        .split('.')
        .map((part, j) => {
          names[`#p${i}_${j}`] = part;
          return `#p${i}_${j}`;
        })
        .join('.'),
    )
    .join(', ');
  const items: Stored[] = [];
  let startKey: Stored | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        ...(q.index ? { IndexName: q.index } : {}),
        KeyConditionExpression: '#pk = :pk AND #sk >= :from',
        ExpressionAttributeNames: names,
        ...(projection ? { ProjectionExpression: projection } : {}),
        ExpressionAttributeValues: { ':pk': q.partitionValue, ':from': q.from },
        ScanIndexForward: false,
        // One more than the cap: whether more were there.
        Limit: Math.min(1000, q.cap + 1 - items.length),
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    startKey = out.LastEvaluatedKey;
  } while (startKey && items.length <= q.cap);
  return { items: items.slice(0, q.cap), truncated: items.length > q.cap };
}

/** What a referral's fact (and the preview) reads of its item. */
export const REFERRAL_FACT_ATTRIBUTES = [
  'type',
  'id',
  'member_id',
  'created_at',
  'ip_hash',
  'user_identifier',
  'subscription.email',
  'converted_at',
  'rewards',
  'fraud_flags',
] as const;

/** One referral as a fact, or null when it does not exist; `pre`: the worker batch's prefetch (../store/prefetch.ts). */
export async function referralFact(accountId: string, referralId: string, pre?: Prefetched): Promise<ReferralFact | null> {
  if (!/^[0-9a-f]{32}$/.test(referralId)) return null;
  const item = await getItemVia(pre, keys.referral(accountId, referralId));
  return item?.type === 'Referral' ? toReferralFact(item) : null;
}

/** A member's referrals created at or after `since` (unix seconds), newest first (at most FACTS_CAP). */
export async function memberReferralFacts(accountId: string, memberId: string, since: number): Promise<ReferralFact[]> {
  const { items } = await queryNewest({
    partitionValue: keys.referralsByMember(accountId, memberId),
    index: GSI1,
    from: idFrom(since),
    cap: FACTS_CAP,
    attributes: REFERRAL_FACT_ATTRIBUTES,
  });
  return items.filter((i) => i.type === 'Referral').map(toReferralFact);
}

/** The account's applications created at or after `since` (unix seconds), newest first (at most FACTS_CAP). */
export async function recentApplicationFacts(accountId: string, since: number): Promise<ApplicationFact[]> {
  const { items } = await queryNewest({
    partitionValue: applicationKeys.applicationCollection(accountId),
    from: `app_${idFrom(since)}`,
    cap: FACTS_CAP,
  });
  return items.filter((i) => i.type === 'Application').map(toApplicationFact);
}

/** One application as a fact, or null. */
export async function applicationFact(accountId: string, applicationId: string): Promise<ApplicationFact | null> {
  if (!/^app_[0-9a-f]{32}$/.test(applicationId)) return null;
  const item = await getItem(applicationKeys.application(accountId, applicationId));
  return item?.type === 'Application' ? toApplicationFact(item) : null;
}

/** A member's daily buckets (clicks, conversions) of the `days` UTC days ending with the day of `now`, oldest first, gaps as zeros. */
export async function memberDays(accountId: string, memberId: string, days: number, now: number): Promise<MemberDay[]> {
  const count = Math.max(1, Math.floor(days));
  const first = dayOf(now - (count - 1) * DAY);
  const last = dayOf(now);
  const byDay = new Map<string, Stored>();
  let startKey: Stored | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :first AND :last',
        ExpressionAttributeValues: { ':pk': reportReadKeys.reportDays(accountId, `M#${memberId}`), ':first': first, ':last': last },
        ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      }),
    );
    for (const item of out.Items ?? []) byDay.set(String(item.sk), item);
    startKey = out.LastEvaluatedKey;
  } while (startKey);
  const count_ = (item: Stored | undefined, name: string) => (typeof item?.[name] === 'number' ? (item[name] as number) : 0);
  return Array.from({ length: count }, (_, i) => {
    const day = dayOf(now - (count - 1 - i) * DAY);
    const item = byDay.get(day);
    return {
      day,
      link_clicks: count_(item, 'link_clicks'),
      conversions: count_(item, 'conversions'),
      referrals: count_(item, 'referrals'),
    };
  });
}
