// Report buckets (docs/design/money.md "Reports"): exact, with no lag, because every bucket is changed in the
// transaction that changes what it counts (a click, a referral, a conversion, a payment, a reward).
//
// Items:
// - daily, per scope: `A#<acct>#REPORT#<scope>` / `YYYY-MM-DD`, scope `T` (the account), `C#<campaign>`,
//   `M#<member>`, `S#<member>#<sub>` (a member's sub-id: clicks, referrals and conversions only). A 90-day chart is one Query of at most 90 small items
//   (scopes `T` and `C#` are 8 shards, ./shards.ts: 8 Queries in parallel, summed per day).
// - monthly, per member: `A#<acct>#REPORT_MEMBERS#<YYYY-MM>` / member id, for the top-members ranking
//   (one Query per month of the range, sorted in the Lambda).
// Attributes: counts (`link_clicks`, `referrals`, `conversions`) and money in cents per currency
// (`revenue_USD`, `refunds_USD`, `credit_earned_USD`, `commission_earned_USD`, `commission_paid_USD`).
import { tableName } from './client';
import { ConditionsFailedError, queryAll, transact, type TransactItem } from './ops';
import { COUNTER_SHARDS, pickShard, reportShard, shardedScope } from './shards';
import { keys, reportReadKeys } from './table';

export type CountMetric = 'link_clicks' | 'referrals' | 'conversions';
export type MoneyMetric = 'revenue' | 'refunds' | 'credit_earned' | 'commission_earned' | 'commission_paid';

export interface Scopes {
  campaignId?: string | null | undefined;
  memberId?: string | null | undefined;
  /** The sub-id of a member's link: counts only (clicks, referrals, conversions), in scope `S#<member>#<sub>`. */
  sub?: string | null | undefined;
}

/** The report scope of one member's sub-id. */
export const subScope = (memberId: string, sub: string) => `S#${memberId}#${sub}`;

/** `YYYY-MM-DD` (UTC) of unix seconds. */
export const dayOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10);
export const monthOf = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 7);

/** The attribute a metric is stored in: money per currency. */
export const attributeOf = (metric: CountMetric | MoneyMetric, currency?: string) => (currency ? `${metric}_${currency}` : metric);

/**
 * Collects what one transaction adds to the buckets and returns one Update per bucket (a transaction may
 * touch an item once): several rewards of one member on one day are one write.
 */
export class ReportDeltas {
  private readonly byKey = new Map<string, { pk: string; sk: string; type: string; memberId?: string; add: Map<string, number> }>();

  /** The shard of the sharded scopes' buckets (./shards.ts): one per transaction, so its deltas merge. */
  private readonly shard = pickShard(0);

  constructor(readonly accountId: string) {}

  add(at: number, scopes: Scopes, metric: CountMetric | MoneyMetric, delta: number, currency?: string): this {
    if (delta === 0) return this;
    const attr = attributeOf(metric, currency);
    const day = dayOf(at);
    const scopeNames = [
      'T',
      ...(scopes.campaignId ? [`C#${scopes.campaignId}`] : []),
      ...(scopes.memberId ? [`M#${scopes.memberId}`] : []),
      // One more bucket where a sub-id is present (one more item in the same transaction, no round trip).
      // (Counts only: a count has no currency. Written out rather than through subScope: a smaller bundle.)
      ...(scopes.memberId && scopes.sub && !currency ? [`S#${scopes.memberId}#${scopes.sub}`] : []),
    ];
    for (const scope of scopeNames) {
      const key = keys.reportDay(this.accountId, scope, day);
      this.bump(shardedScope(scope) ? { pk: reportShard(key.pk, this.shard), sk: day } : key, 'ReportDay', attr, delta);
    }
    // The ranking counts what it sorts by: conversions, revenue and commission.
    if (scopes.memberId && (metric === 'conversions' || metric === 'revenue' || metric === 'commission_earned')) {
      this.bump(keys.reportMemberMonth(this.accountId, monthOf(at), scopes.memberId), 'ReportMemberMonth', attr, delta, scopes.memberId);
    }
    return this;
  }

  private bump(key: { pk: string; sk: string }, type: string, attr: string, delta: number, memberId?: string): void {
    const id = `${key.pk}|${key.sk}`;
    const entry = this.byKey.get(id) ?? { ...key, type, ...(memberId ? { memberId } : {}), add: new Map<string, number>() };
    entry.add.set(attr, (entry.add.get(attr) ?? 0) + delta);
    this.byKey.set(id, entry);
  }

  items(): TransactItem[] {
    return [...this.byKey.values()].flatMap((e) => {
      const adds = [...e.add].filter(([, d]) => d !== 0);
      if (adds.length === 0) return [];
      const names: Record<string, string> = { '#type': 'type' };
      const values: Record<string, unknown> = { ':type': e.type };
      adds.forEach(([attr, d], i) => {
        names[`#a${i}`] = attr;
        values[`:d${i}`] = d;
      });
      if (e.memberId) {
        names['#m'] = 'member_id';
        values[':m'] = e.memberId;
      }
      return [
        {
          Update: {
            TableName: tableName(),
            Key: { pk: e.pk, sk: e.sk },
            UpdateExpression: `SET #type = :type${e.memberId ? ', #m = :m' : ''} ADD ${adds.map((_, i) => `#a${i} :d${i}`).join(', ')}`,
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          },
        },
      ];
    });
  }
}

/**
 * The daily buckets of one scope from `fromDay` to `toDay` (inclusive): one Query per shard, in parallel (two
 * pages past 1 MB, never here), summed per day.
 */
export async function readDays(
  accountId: string,
  scope: string,
  fromDay: string,
  toDay: string,
): Promise<Map<string, Record<string, number>>> {
  const partition = reportReadKeys.reportDays(accountId, scope);
  const shards = shardedScope(scope) ? [...Array(COUNTER_SHARDS).keys()] : [0];
  const days = new Map<string, Record<string, number>>();
  for (const items of await Promise.all(
    shards.map((s) => queryAll({ partitionValue: reportShard(partition, s), consistent: true, sk: { between: [fromDay, toDay] } })),
  )) {
    for (const [day, numbers] of bySortKey(items)) {
      const sum = days.get(day) ?? {};
      for (const [k, v] of Object.entries(numbers)) sum[k] = (sum[k] ?? 0) + v;
      days.set(day, sum);
    }
  }
  return days;
}

/** Every member's monthly bucket of one month. */
export async function readMemberMonth(accountId: string, month: string): Promise<Map<string, Record<string, number>>> {
  return bySortKey(await queryAll({ partitionValue: reportReadKeys.reportMembers(accountId, month), consistent: true }));
}

const bySortKey = (items: Record<string, unknown>[]) => new Map(items.map((item) => [String(item.sk), numbersOf(item)]));

function numbersOf(item: Record<string, unknown>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(item)) if (typeof v === 'number') out[k] = v;
  return out;
}

/**
 * Payments and refunds of a referred subscription recorded before it was converted (its webhook came
 * first): each is put in the report buckets once, with a `reported` mark written in the same transaction.
 * Called by the reward evaluation, which runs after every conversion and payment, with the items of the
 * subscription's payments partition it has just read.
 */
export async function reportMissedPayments(accountId: string, items: Record<string, unknown>[], scopes: Scopes): Promise<number> {
  let reported = 0;
  for (const item of items) {
    if (item.reported === true) continue;
    const payment = item.type === 'Payment' && item.status !== 'failed';
    const refund = item.type === 'Refund';
    if (!payment && !refund) continue;
    const deltas = new ReportDeltas(accountId);
    if (payment) deltas.add(Number(item.paid_at), scopes, 'revenue', Number(item.amount), String(item.currency));
    else deltas.add(Number(item.refunded_at), scopes, 'refunds', Number(item.amount), String(item.currency));
    try {
      await transact([
        {
          Update: {
            TableName: tableName(),
            Key: { pk: String(item.pk), sk: String(item.sk) },
            UpdateExpression: 'SET reported = :t',
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(reported)',
            ExpressionAttributeValues: { ':t': true },
          },
        },
        ...deltas.items(),
      ]);
      reported++;
    } catch (err) {
      if (!(err instanceof ConditionsFailedError)) throw err; // reported meanwhile by another worker
    }
  }
  return reported;
}
