// /app/ - the programme at a glance for the last 7, 30 or 90 days (`?days=`): KPI tiles against the previous
// period, a chart switchable between clicks, referrals, conversions, revenue and rewards (`?metric=`), the
// click -> referral -> conversion funnel, top members and the latest rewards.
import type { ComponentChildren } from 'preact';
import { useMemo, useState } from 'preact/hooks';
import { lazy, useLocation } from 'preact-iso';
import { api } from '../api';
import { unwrap, type ApiPaths, type Schemas } from '../../api/client';
import { Badge } from '../../ui/badge';
import { Spinner } from '../../ui/busy-button';
import { LoadState, PageHeader, Section, useLoad } from '../components/page';
import { formatCount, formatDay, formatMoney, formatPercent, formatTime } from '../../ui/format';
import { usePendingApplications } from '../lib/affiliates';
import { useOpenFlags } from '../lib/fraud';
import { MemberRef } from '../lib/members';
import { oneOf, urlWith } from '../lib/url';
import type { ChartSeries } from './chart';
import { funnelText } from './funnel';

// uPlot is a third of the bundle: it loads with the chart, after the numbers are on screen.
const Chart = lazy(() => import('./chart').then((m) => m.Chart));

const DAY = 86_400;
const PERIODS = ['7', '30', '90'] as const;
type Period = (typeof PERIODS)[number];

type Totals = Schemas['ReportOverview']['current'];
type TotalValue = Totals[string];

interface Kpi {
  field: string;
  label: string;
  money: boolean;
  /** For refunds a rise is bad news. */
  lowerIsBetter?: boolean;
}

// `field` is the name in GET /v1/reports/overview/'s `current` (and data-kpi on the tile).
const KPIS: Kpi[] = [
  { field: 'link_clicks', label: 'Link clicks', money: false },
  { field: 'referrals', label: 'Referrals', money: false },
  { field: 'conversions', label: 'Conversions', money: false },
  { field: 'revenue', label: 'Revenue from referrals', money: true },
  { field: 'commission_earned', label: 'Commission earned', money: true },
  { field: 'credit_earned', label: 'Credit earned', money: true },
  { field: 'commission_paid', label: 'Commission paid', money: true },
  { field: 'refunds', label: 'Refunds', money: true, lowerIsBetter: true },
];

const METRICS = ['clicks', 'referrals', 'conversions', 'revenue', 'rewards'] as const;
type ChartMetric = (typeof METRICS)[number];
type ApiMetric = NonNullable<NonNullable<ApiPaths['/v1/reports/timeseries/']['get']['parameters']['query']>['metric']>;

const METRIC_INFO: Record<ChartMetric, { label: string; api: ApiMetric[]; empty: ComponentChildren }> = {
  clicks: {
    label: 'Clicks',
    api: ['link_clicks'],
    empty: (
      <>
        No clicks yet: add the script tag from <a href="/app/settings">Settings</a> to your site, then share a member's link (
        <code>?via=CODE</code>).
      </>
    ),
  },
  referrals: {
    label: 'Referrals',
    api: ['referrals'],
    empty:
      'No referrals in this period yet. They appear when a referred visitor signs up (the script) or your app calls POST /v1/referrals/.',
  },
  conversions: {
    label: 'Conversions',
    api: ['conversions'],
    empty: 'No conversions in this period yet. A referral converts when the referred user starts a paid subscription.',
  },
  revenue: { label: 'Revenue', api: ['revenue'], empty: 'No revenue from referred customers in this period yet.' },
  rewards: { label: 'Rewards', api: ['commission_earned', 'credit_earned'], empty: 'No rewards earned in this period yet.' },
};

function range(days: number): { from: number; to: number } {
  const now = Math.floor(Date.now() / 1000);
  const today = now - (now % DAY);
  return { from: today - (days - 1) * DAY, to: now };
}

const amountsOf = (value: TotalValue | undefined): Record<string, string> =>
  value !== undefined && typeof value === 'object' ? value : {};
const countOf = (value: TotalValue | undefined): number => (typeof value === 'number' ? value : 0);

/** The currency to headline: the largest amount now (else before); null when there is none. */
function mainCurrency(current: Record<string, string>, previous: Record<string, string>): string | null {
  const pick = (m: Record<string, string>) =>
    Object.entries(m).sort((a, b) => Number(b[1]) - Number(a[1]) || (a[0] < b[0] ? -1 : 1))[0]?.[0] ?? null;
  return pick(current) ?? pick(previous);
}

function Change({ now, before, days, lowerIsBetter }: { now: number; before: number; days: number; lowerIsBetter?: boolean }) {
  const period = `vs previous ${days} days`;
  if (before === 0 && now === 0) return <p class="kpi-change">No change {period}</p>;
  if (before === 0) return <p class="kpi-change is-up">New {period}</p>;
  const ratio = (now - before) / before;
  if (ratio === 0) return <p class="kpi-change">No change {period}</p>;
  const up = ratio > 0;
  const good = lowerIsBetter ? !up : up;
  return (
    <p class={`kpi-change ${good ? 'is-up' : 'is-down'}`}>
      <span aria-hidden="true">{up ? '▲' : '▼'} </span>
      {up ? 'Up' : 'Down'} {formatPercent(Math.abs(ratio))} <span class="muted">{period}</span>
    </p>
  );
}

/** The account's main currency in this report (for money tiles that have nothing yet): the first one any metric has. */
function reportCurrency(report: { current: Totals; previous: Totals }): string | null {
  for (const totals of [report.current, report.previous]) {
    for (const k of KPIS) {
      const c = k.money ? mainCurrency(amountsOf(totals[k.field]), {}) : null;
      if (c) return c;
    }
  }
  return null;
}

function KpiTile({
  kpi,
  current,
  previous,
  days,
  fallbackCurrency,
}: {
  kpi: Kpi;
  current: TotalValue | undefined;
  previous: TotalValue | undefined;
  days: number;
  fallbackCurrency: string | null;
}) {
  if (!kpi.money) {
    const now = countOf(current);
    return (
      <li class="kpi" data-kpi={kpi.field} data-value={String(now)} data-previous={String(countOf(previous))}>
        <p class="kpi-label">{kpi.label}</p>
        <p class="kpi-value">{formatCount(now)}</p>
        <Change now={now} before={countOf(previous)} days={days} lowerIsBetter={kpi.lowerIsBetter} />
      </li>
    );
  }
  const now = amountsOf(current);
  const before = amountsOf(previous);
  const currency = mainCurrency(now, before);
  const raw = currency ? (now[currency] ?? '0.00') : '0.00';
  const others = Object.entries(now).filter(([c]) => c !== currency);
  return (
    <li
      class="kpi"
      data-kpi={kpi.field}
      data-value={raw}
      data-currency={currency ?? undefined}
      data-amounts={JSON.stringify(now)}
      data-previous={currency ? (before[currency] ?? '0.00') : '0.00'}
    >
      <p class="kpi-label">{kpi.label}</p>
      <p class="kpi-value">
        {currency ? formatMoney(raw, currency) : fallbackCurrency ? formatMoney(0, fallbackCurrency) : formatCount(0)}
      </p>
      {others.length > 0 && <p class="kpi-more">+ {others.map(([c, v]) => formatMoney(v, c)).join(' · ')}</p>}
      <Change now={Number(raw)} before={Number(currency ? (before[currency] ?? 0) : 0)} days={days} lowerIsBetter={kpi.lowerIsBetter} />
    </li>
  );
}

function Funnel({ totals }: { totals: Totals }) {
  const clicks = countOf(totals.link_clicks);
  const referrals = countOf(totals.referrals);
  const conversions = countOf(totals.conversions);
  const top = Math.max(clicks, referrals, conversions, 1);
  // Percentages only where they are shares: referrals made without a click are said so (./funnel.ts).
  const text = funnelText({ clicks, referrals, conversions });
  const steps = [
    { label: 'Clicks', value: clicks, rate: null as string | null },
    { label: 'Referrals', value: referrals, rate: text.referrals },
    { label: 'Conversions', value: conversions, rate: text.conversions },
  ];
  return (
    <>
      <ol class="funnel">
        {steps.map((s) => (
          <li key={s.label} class="funnel-step">
            <div class="funnel-head">
              <span class="funnel-label">{s.label}</span>
              <span class="funnel-value num">{formatCount(s.value)}</span>
            </div>
            <div class="funnel-track" aria-hidden="true">
              <div class="funnel-bar" style={{ width: `${Math.max((s.value / top) * 100, s.value > 0 ? 2 : 0)}%` }} />
            </div>
            {s.rate && <p class="funnel-rate">{s.rate}</p>}
          </li>
        ))}
      </ol>
      <p class="funnel-total">
        Click to conversion: <strong>{text.total}</strong>
      </p>
      {text.note && <p class="funnel-rate">{text.note}</p>}
    </>
  );
}

type Bucket = Schemas['ReportTimeseries']['buckets'][number];

/** The chart's series: one for counts, one per currency for money (rewards add commission and credit). */
function toSeries(metric: ChartMetric, reports: Schemas['ReportTimeseries'][]): { x: number[]; series: ChartSeries[] } {
  const first = reports[0];
  const x = first ? first.buckets.map((b) => b.start) : [];
  if (metric === 'clicks' || metric === 'referrals' || metric === 'conversions') {
    return {
      x,
      series: [{ label: METRIC_INFO[metric].label, currency: null, values: first ? first.buckets.map((b) => b.value ?? 0) : [] }],
    };
  }
  const currencies = new Set<string>();
  for (const r of reports) for (const b of r.buckets) for (const c of Object.keys(b.amounts ?? {})) currencies.add(c);
  const series = [...currencies].sort().map((currency) => ({
    label: `${METRIC_INFO[metric].label} (${currency})`,
    currency,
    values: x.map((_, i) => reports.reduce((sum, r) => sum + Number((r.buckets[i] as Bucket | undefined)?.amounts?.[currency] ?? 0), 0)),
  }));
  return { x, series };
}

function ChartSection({ days, from, to }: { days: number; from: number; to: number }) {
  const { path, query, route } = useLocation();
  const metric = oneOf<ChartMetric>(query.metric, METRICS, 'clicks');
  const info = METRIC_INFO[metric];
  const loaded = useLoad(
    () =>
      Promise.all(
        info.api.map((m) => unwrap(api.GET('/v1/reports/timeseries/', { params: { query: { metric: m, interval: 'day', from, to } } }))),
      ),
    [metric, from, to],
  );
  const data = useMemo(() => (loaded.data ? toSeries(metric, loaded.data) : null), [loaded.data, metric]);
  const isEmpty = data?.series.every((s) => s.values.every((v) => v === 0));
  const format = (v: number, s: ChartSeries) => (s.currency ? formatMoney(v, s.currency) : formatCount(v));
  const total = (s: ChartSeries) => s.values.reduce((a, b) => a + b, 0);

  const summary =
    data && !isEmpty
      ? `${info.label} per day, ${formatDay(data.x[0])} to ${formatDay(data.x[data.x.length - 1])}. ` +
        data.series
          .map((s) => {
            const peak = s.values.reduce((best, v, i) => (v > (s.values[best] ?? 0) ? i : best), 0);
            return `${s.currency ? `${s.currency} total` : 'Total'} ${format(total(s), s)}; highest ${format(s.values[peak] ?? 0, s)} on ${formatDay(data.x[peak])}.`;
          })
          .join(' ')
      : '';

  return (
    <Section
      id="trend"
      title="Over time"
      class="chart-card"
      actions={
        <fieldset class="segmented">
          <legend class="sr-only">Metric shown in the chart</legend>
          {METRICS.map((m) => (
            <label key={m} class={m === metric ? 'segment is-selected' : 'segment'}>
              <input
                type="radio"
                name="chart-metric"
                value={m}
                checked={m === metric}
                onChange={() => route(urlWith(path, query, { metric: m === 'clicks' ? null : m }), true)}
              />
              {METRIC_INFO[m].label}
            </label>
          ))}
        </fieldset>
      }
    >
      <LoadState loaded={loaded} what="the chart">
        {() =>
          !data || isEmpty ? (
            <div class="empty empty-inline">
              <p>{info.empty}</p>
            </div>
          ) : (
            <>
              <div aria-busy={loaded.loading ? 'true' : undefined}>
                <Chart
                  x={data.x}
                  series={data.series}
                  label={`Chart of ${info.label.toLowerCase()} per day over the last ${days} days`}
                  summary={summary}
                />
              </div>
              <p class="sr-only">{summary}</p>
              <details class="data-table">
                <summary>Show the chart's data as a table</summary>
                <div class="table-wrap">
                  <table class="table table-compact">
                    <caption class="sr-only">{info.label} per day</caption>
                    <thead>
                      <tr>
                        <th scope="col">Day</th>
                        {data.series.map((s) => (
                          <th key={s.label} scope="col" class="num">
                            {s.label}
                          </th>
                        ))}
                      </tr>
                    </thead>
                    <tbody>
                      {data.x.map((start, i) => (
                        <tr key={start}>
                          <th scope="row">{formatDay(start)}</th>
                          {data.series.map((s) => (
                            <td key={s.label} class="num">
                              {format(s.values[i] ?? 0, s)}
                            </td>
                          ))}
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              </details>
            </>
          )
        }
      </LoadState>
    </Section>
  );
}

const TOP_SORTS = ['conversions', 'revenue', 'commission'] as const;
type TopSort = (typeof TOP_SORTS)[number];

function TopMembers({ from, to }: { from: number; to: number }) {
  const [sort, setSort] = useState<TopSort>('conversions');
  const loaded = useLoad(
    () => unwrap(api.GET('/v1/reports/members/', { params: { query: { sort, from, to, limit: 5 } } })),
    [sort, from, to],
  );
  return (
    <Section
      id="top-members"
      title="Top members"
      actions={
        <div class="inline-field">
          <label for="top-sort" class="label-inline">
            Rank by
          </label>
          <select id="top-sort" class="input input-small" value={sort} onChange={(e) => setSort(e.currentTarget.value as TopSort)}>
            <option value="conversions">Conversions</option>
            <option value="revenue">Revenue</option>
            <option value="commission">Commission</option>
          </select>
        </div>
      }
    >
      <LoadState loaded={loaded} what="the top members">
        {(report) =>
          report.results.length === 0 ? (
            <div class="empty empty-inline">
              <p>No member has brought a conversion in this period yet. Share members' links to get started.</p>
            </div>
          ) : (
            <div class="table-wrap">
              <table class="table">
                <caption class="sr-only">Top members by {sort}</caption>
                <thead>
                  <tr>
                    <th scope="col">Member</th>
                    <th scope="col" class="num">
                      Conversions
                    </th>
                    <th scope="col" class="num">
                      Revenue
                    </th>
                    <th scope="col" class="num">
                      Commission
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {report.results.map((r) => (
                    <tr key={r.member_id}>
                      <td>
                        <a href={`/app/members/${encodeURIComponent(r.member_id)}`}>{r.identifier ?? r.email ?? r.member_id}</a>
                        {r.email && r.identifier && <span class="cell-sub">{r.email}</span>}
                      </td>
                      <td class="num">{formatCount(r.conversions)}</td>
                      <td class="num">{amountList(r.revenue)}</td>
                      <td class="num">{amountList(r.commission)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </LoadState>
    </Section>
  );
}

function amountList(amounts: Record<string, string>): string {
  const entries = Object.entries(amounts);
  return entries.length === 0 ? '—' : entries.map(([c, v]) => formatMoney(v, c)).join(' · ');
}

function RecentRewards() {
  const loaded = useLoad(() => unwrap(api.GET('/v1/rewards/', { params: { query: { page_size: 5 } } })), []);
  return (
    <Section id="recent-rewards" title="Recent rewards" actions={<a href="/app/rewards">All rewards</a>}>
      <LoadState loaded={loaded} what="the recent rewards">
        {(page) =>
          page.results.length === 0 ? (
            <div class="empty empty-inline">
              <p>No rewards yet. Rewards are created when a referred customer pays, under the terms of the member's campaign.</p>
            </div>
          ) : (
            <div class="table-wrap">
              <table class="table">
                <caption class="sr-only">The five latest rewards</caption>
                <thead>
                  <tr>
                    <th scope="col">Created</th>
                    <th scope="col">Member</th>
                    <th scope="col">Type</th>
                    <th scope="col" class="num">
                      Amount
                    </th>
                    <th scope="col">Status</th>
                  </tr>
                </thead>
                <tbody>
                  {page.results.map((r) => (
                    <tr key={r.id}>
                      <td>{formatTime(r.created_at)}</td>
                      <td>
                        <MemberRef id={r.member_id} />
                      </td>
                      <td>{r.type === 'credit' ? 'Credit' : 'Commission'}</td>
                      <td class="num">{formatMoney(r.amount, r.currency)}</td>
                      <td>
                        <Badge status={r.status} />
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </LoadState>
    </Section>
  );
}

/** The last tile: applications waiting for a decision (the sign-up pages), with the way to them; not a period's figure. */
function PendingApplicationsTile() {
  const count = usePendingApplications();
  if (count === null) return null;
  return (
    <li class="kpi" data-pending-applications={String(count)}>
      <p class="kpi-label">Pending applications</p>
      <p class="kpi-value">{formatCount(count)}</p>
      <p class="kpi-change">
        <a href="/app/applications">{count > 0 ? 'Review applications' : 'See applications'}</a>
      </p>
    </li>
  );
}

/** Open fraud flags, above the figures: what waits for an operator, with the way to it; hidden at zero. */
function OpenFlagsAlert() {
  const count = useOpenFlags();
  if (!count) return null;
  return (
    <div class="alert alert-warning overview-alert" data-open-flags={String(count)}>
      <p>
        <strong>{count === 1 ? '1 fraud flag waits' : `${formatCount(count)} fraud flags wait`} for review.</strong> Held commissions are
        paid only once released.
      </p>
      <a class="btn btn-secondary btn-small" href="/app/review">
        Open the review queue
      </a>
    </div>
  );
}

export function Overview() {
  const { path, query } = useLocation();
  const period: Period = oneOf<Period>(query.days, PERIODS, '30');
  const days = Number(period);
  const { from, to } = useMemo(() => range(days), [days]);
  const overview = useLoad(() => unwrap(api.GET('/v1/reports/overview/', { params: { query: { from, to } } })), [from, to]);

  return (
    <>
      <PageHeader title="Overview" subtitle={`${formatDay(from)} – ${formatDay(to - (to % DAY))} (UTC days)`}>
        <nav class="segmented" aria-label="Period">
          {PERIODS.map((p) => (
            <a
              key={p}
              class={p === period ? 'segment is-selected' : 'segment'}
              href={urlWith(path, query, { days: p === '30' ? null : p })}
              aria-current={p === period ? 'true' : undefined}
            >
              {p} days
            </a>
          ))}
        </nav>
      </PageHeader>

      <OpenFlagsAlert />

      <section aria-labelledby="kpi-title" class="kpis-section">
        <h2 id="kpi-title" class="sr-only">
          Key figures, last {days} days
        </h2>
        <LoadState loaded={overview} what="the key figures">
          {(report) => (
            <ul class="kpis" data-from={String(report.from)} data-to={String(report.to)} aria-busy={overview.loading ? 'true' : undefined}>
              {KPIS.map((k) => (
                <KpiTile
                  key={k.field}
                  kpi={k}
                  current={report.current[k.field]}
                  previous={report.previous[k.field]}
                  days={days}
                  fallbackCurrency={reportCurrency(report)}
                />
              ))}
              <PendingApplicationsTile />
            </ul>
          )}
        </LoadState>
      </section>

      <ChartSection days={days} from={from} to={to} />

      <div class="grid-2">
        <Section id="funnel" title="Funnel">
          <LoadState loaded={overview} what="the funnel">
            {(report) =>
              countOf(report.current.link_clicks) + countOf(report.current.referrals) === 0 ? (
                <div class="empty empty-inline">
                  <p>
                    No clicks yet: add the script tag from <a href="/app/settings">Settings</a> to your site.
                  </p>
                </div>
              ) : (
                <Funnel totals={report.current} />
              )
            }
          </LoadState>
        </Section>
        <TopMembers from={from} to={to} />
      </div>

      <RecentRewards />
      {overview.loading && overview.data && <Spinner label="Updating…" />}
    </>
  );
}
