// The member's months as a small bar chart, one measure at a time (clicks, referrals, conversions differ by
// orders of magnitude), drawn with plain elements: no chart library in the portal's bundle. Bar heights
// are set through the CSSOM (style objects), which the page's CSP allows. The chart itself is hidden from
// assistive technology; its summary is text and its numbers are a table under "Show the numbers".
import { useId, useState } from 'preact/hooks';
import { formatCount } from '../ui/format';
import type { Stats } from './api';
import { ScrollBox } from './scroll-box';
import { compactCount, monthAndYear, monthLong, monthShort } from './util';

type Measure = 'link_clicks' | 'referrals' | 'conversions';

const MEASURES: { key: Measure; label: string; noun: [string, string] }[] = [
  { key: 'link_clicks', label: 'Clicks', noun: ['click', 'clicks'] },
  { key: 'referrals', label: 'Referrals', noun: ['referral', 'referrals'] },
  { key: 'conversions', label: 'Conversions', noun: ['conversion', 'conversions'] },
];

export function BarChart({ stats }: { stats: Stats }) {
  const id = useId();
  const { buckets } = stats;
  // The first measure with anything in it (a member with referrals but no counted clicks sees those).
  const [measure, setMeasure] = useState<Measure>(() => MEASURES.find((m) => buckets.some((b) => b[m.key] > 0))?.key ?? 'link_clicks');
  const spec = MEASURES.find((m) => m.key === measure) ?? MEASURES[0]!;
  const values = buckets.map((b) => b[measure]);
  const max = Math.max(0, ...values);
  const total = values.reduce((a, v) => a + v, 0);
  const first = buckets[0];
  const summary =
    first === undefined
      ? 'No data yet.'
      : `${formatCount(total)} ${total === 1 ? spec.noun[0] : spec.noun[1]} since ${monthLong(first.start)}${max > 0 ? `; the most in one month: ${formatCount(max)}` : ''}.`;

  return (
    <figure class="chart" aria-labelledby={`${id}-caption`}>
      <div class="chart-head">
        <figcaption id={`${id}-caption`} class="chart-caption">
          <span class="chart-title">By month</span>
          <span class="chart-summary">{summary}</span>
        </figcaption>
        <fieldset class="segmented">
          <legend class="sr-only">Show in the chart</legend>
          {MEASURES.map((m) => (
            <label key={m.key} class={m.key === measure ? 'segment is-selected' : 'segment'}>
              <input type="radio" name={`${id}-measure`} value={m.key} checked={m.key === measure} onChange={() => setMeasure(m.key)} />
              {m.label}
            </label>
          ))}
        </fieldset>
      </div>
      <div class="bars" aria-hidden="true">
        <div class="bars-plot">
          {max === 0 && <span class="bars-empty">Nothing yet</span>}
          {buckets.map((b, i) => {
            const v = values[i] ?? 0;
            return (
              <div class="bars-col" key={b.start}>
                <span
                  class={v > 0 ? 'bars-bar' : 'bars-bar is-zero'}
                  style={{ height: v > 0 && max > 0 ? `${Math.max(3, (v / max) * 100)}%` : undefined }}
                >
                  {v > 0 && <span class="bars-value">{compactCount(v)}</span>}
                </span>
              </div>
            );
          })}
        </div>
        <div class="bars-axis">
          {buckets.map((b) => (
            <span key={b.start}>{monthShort(b.start)}</span>
          ))}
        </div>
      </div>
      <details class="chart-table">
        <summary>Show the numbers</summary>
        <ScrollBox label="Numbers by month, table">
          <table class="table table-compact">
            <caption class="sr-only">Clicks, referrals and conversions by month</caption>
            <thead>
              <tr>
                <th scope="col">Month</th>
                {MEASURES.map((m) => (
                  <th scope="col" class="num" key={m.key}>
                    {m.label}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {buckets.map((b) => (
                <tr key={b.start}>
                  <th scope="row">{monthAndYear(b.start)}</th>
                  {MEASURES.map((m) => (
                    <td class="num" key={m.key}>
                      {formatCount(b[m.key])}
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </ScrollBox>
      </details>
    </figure>
  );
}
