// Reports (docs/design/money.md "Reports"): time series, an overview against the previous period, and top members,
// read from the buckets the writes keep (store/reports.ts). Times are UTC unix seconds; a range is at
// most 400 days. Every bucket of the range is present, zeros included.
import { DetailError, ValidationError } from '../domain/errors';
import { formatCents } from '../domain/money';
import { batchGet, lookup } from '../store/ops';
import { dayOf, readDays, readMemberMonth, subScope, type CountMetric, type MoneyMetric } from '../store/reports';
import { toMember } from '../store/members';
import { keys } from '../store/table';

export const COUNT_METRICS: readonly CountMetric[] = ['link_clicks', 'referrals', 'conversions'];
export const MONEY_METRICS: readonly MoneyMetric[] = ['revenue', 'refunds', 'credit_earned', 'commission_earned', 'commission_paid'];
export const METRICS = [...COUNT_METRICS, ...MONEY_METRICS] as const;
export type Metric = CountMetric | MoneyMetric;
export type Interval = 'day' | 'week' | 'month';

const DAY = 86_400;
export const MAX_RANGE_DAYS = 400;

export function checkRange(from: number, to: number): void {
  if (to < from) throw new DetailError(400, '`to` must not be before `from`.');
  if (to - from > MAX_RANGE_DAYS * DAY) throw new DetailError(400, `A range is at most ${MAX_RANGE_DAYS} days.`);
}

/** The start (unix seconds) of the bucket holding `day` (`YYYY-MM-DD`): the day, its ISO week's Monday, or its month. */
export function bucketStart(day: string, interval: Interval): number {
  const t = Date.parse(`${day}T00:00:00Z`) / 1000;
  if (interval === 'day') return t;
  if (interval === 'month') return Date.parse(`${day.slice(0, 7)}-01T00:00:00Z`) / 1000;
  const weekday = (new Date(t * 1000).getUTCDay() + 6) % 7; // Monday = 0
  return t - weekday * DAY;
}

function nextStart(start: number, interval: Interval): number {
  if (interval === 'day') return start + DAY;
  if (interval === 'week') return start + 7 * DAY;
  const d = new Date(start * 1000);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) / 1000;
}

const isMoney = (metric: Metric): metric is MoneyMetric => (MONEY_METRICS as readonly string[]).includes(metric);

/** The scope's buckets: the account, one campaign, one member or one member's sub-id. */
function scopeOf(filters: { campaign?: string | undefined; member?: string | undefined; sub?: string | undefined }): string {
  if (filters.campaign && filters.member) throw new DetailError(400, 'Filter by campaign or by member, not both.');
  if (filters.sub !== undefined) {
    if (!filters.member) throw ValidationError.field('sub', "A sub-id is one member's: filter by `member` too.");
    return subScope(filters.member, filters.sub);
  }
  return filters.member ? `M#${filters.member}` : filters.campaign ? `C#${filters.campaign}` : 'T';
}

/** Sums `metric` of the daily buckets (counts as a number, money per currency in cents). */
function sum(days: Iterable<Record<string, number>>, metric: Metric): { value: number; amounts: Record<string, number> } {
  let value = 0;
  const amounts: Record<string, number> = {};
  for (const d of days) {
    for (const [attr, n] of Object.entries(d)) {
      if (attr === metric) value += n;
      else if (isMoney(metric) && attr.startsWith(`${metric}_`) && /^[A-Z]{3}$/.test(attr.slice(metric.length + 1))) {
        const currency = attr.slice(metric.length + 1);
        amounts[currency] = (amounts[currency] ?? 0) + n;
      }
    }
  }
  return { value, amounts };
}

const money = (m: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(m)
      .sort()
      .map(([c, n]) => [c, formatCents(n)]),
  );

export async function timeseries(
  accountId: string,
  q: {
    metric: Metric;
    interval: Interval;
    from: number;
    to: number;
    campaign?: string | undefined;
    member?: string | undefined;
    sub?: string | undefined;
  },
) {
  checkRange(q.from, q.to);
  // A sub-id's buckets count clicks, referrals and conversions (store/reports.ts): no money.
  if (q.sub !== undefined && isMoney(q.metric)) {
    throw ValidationError.field('sub', 'A sub-id reports link_clicks, referrals and conversions only.');
  }
  const days = await readDays(accountId, scopeOf(q), dayOf(q.from), dayOf(q.to));
  const byBucket = new Map<number, Record<string, number>[]>();
  for (const [day, values] of days) {
    const start = bucketStart(day, q.interval);
    byBucket.set(start, [...(byBucket.get(start) ?? []), values]);
  }
  const currencies = new Set(Object.keys(sum(days.values(), q.metric).amounts));
  const buckets = [];
  for (let start = bucketStart(dayOf(q.from), q.interval); start <= q.to; start = nextStart(start, q.interval)) {
    const s = sum(byBucket.get(start) ?? [], q.metric);
    const end = nextStart(start, q.interval);
    if (isMoney(q.metric)) {
      for (const c of currencies) s.amounts[c] ??= 0;
      buckets.push({ start, end, value: null, amounts: money(s.amounts) });
    } else {
      buckets.push({ start, end, value: s.value, amounts: null });
    }
  }
  return { metric: q.metric, interval: q.interval, from: q.from, to: q.to, buckets };
}

type Totals = Record<string, number | Record<string, string>>;

function totals(days: Record<string, number>[]): Totals {
  const out: Totals = {};
  for (const metric of METRICS) {
    const s = sum(days, metric);
    out[metric] = isMoney(metric) ? money(s.amounts) : s.value;
  }
  return out;
}

/** Totals of every metric over [from, to] and over the period of the same length just before it: one Query. */
export async function overview(
  accountId: string,
  q: { from: number; to: number; campaign?: string | undefined; member?: string | undefined },
) {
  checkRange(q.from, q.to);
  const length = q.to - q.from + 1;
  const previousFrom = q.from - length;
  const days = await readDays(accountId, scopeOf(q), dayOf(previousFrom), dayOf(q.to));
  const current: Record<string, number>[] = [];
  const previous: Record<string, number>[] = [];
  for (const [day, values] of days) (day >= dayOf(q.from) ? current : previous).push(values);
  return {
    from: q.from,
    to: q.to,
    previous_from: previousFrom,
    previous_to: q.from - 1,
    current: totals(current),
    previous: totals(previous),
  };
}

export type MemberSort = 'conversions' | 'revenue' | 'commission';

/**
 * The top members over the UTC months [from, to] touches (the ranking's buckets are monthly): one Query per
 * month, summed and sorted here. Money is ranked in `currency` (default: the one with the largest total).
 */
export async function topMembers(
  accountId: string,
  q: { sort: MemberSort; from: number; to: number; limit: number; currency?: string | undefined },
) {
  checkRange(q.from, q.to);
  const months: string[] = [];
  for (let m = dayOf(q.from).slice(0, 7); m <= dayOf(q.to).slice(0, 7); ) {
    months.push(m);
    const [y, mo] = m.split('-').map(Number) as [number, number];
    m = new Date(Date.UTC(y, mo, 1)).toISOString().slice(0, 7);
  }
  const perMonth = await Promise.all(months.map((m) => readMemberMonth(accountId, m)));
  const byMember = new Map<string, Record<string, number>[]>();
  for (const month of perMonth) for (const [member, values] of month) byMember.set(member, [...(byMember.get(member) ?? []), values]);
  const rows = [...byMember].map(([memberId, values]) => ({
    memberId,
    conversions: sum(values, 'conversions').value,
    revenue: sum(values, 'revenue').amounts,
    commission: sum(values, 'commission_earned').amounts,
  }));
  let currency = q.currency ?? null;
  if (q.sort !== 'conversions' && currency === null) {
    const all: Record<string, number> = {};
    for (const r of rows) for (const [c, n] of Object.entries(r[q.sort])) all[c] = (all[c] ?? 0) + n;
    currency = Object.entries(all).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? null;
  }
  const key = (r: (typeof rows)[number]) => (q.sort === 'conversions' ? r.conversions : currency ? (r[q.sort][currency] ?? 0) : 0);
  const top = rows.sort((a, b) => key(b) - key(a) || (a.memberId < b.memberId ? -1 : 1)).slice(0, q.limit);
  const found = await batchGet(top.map((r) => keys.member(accountId, r.memberId)));
  return {
    sort: q.sort,
    from: q.from,
    to: q.to,
    currency: q.sort === 'conversions' ? null : currency,
    results: top.map((r) => {
      const member = toMember(lookup(found, keys.member(accountId, r.memberId)));
      return {
        member_id: r.memberId,
        identifier: member?.identifier ?? null,
        email: member?.email ?? null,
        conversions: r.conversions,
        revenue: money(r.revenue),
        commission: money(r.commission),
      };
    }),
  };
}
