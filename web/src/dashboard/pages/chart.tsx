// The overview's time-series chart (uPlot, loaded lazily). Days are UTC buckets, so the axis is in UTC.
// The chart is an image to assistive technology (role="img" + label); the numbers are in the overview's
// table and summary next to it.
import { useEffect, useRef, useState } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { formatCount, formatDay, formatMoney } from '../../ui/format';

export interface ChartSeries {
  label: string;
  currency: string | null;
  values: number[];
}

const COLOURS = ['#4f46e5', '#0f766e', '#b45309', '#be185d', '#1d4ed8'];
const HEIGHT = 260;

function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

export function Chart({ x, series, label, summary }: { x: number[]; series: ChartSeries[]; label: string; summary: string }) {
  const host = useRef<HTMLDivElement>(null);
  const [hover, setHover] = useState<number | null>(null);

  useEffect(() => {
    const el = host.current;
    if (!el) return;
    const grid = cssVar('--border', '#e5e7eb');
    const ink = cssVar('--text-muted', '#4b5563');
    const money = series[0]?.currency ?? null;
    const axisValue = (v: number) => (money ? formatMoney(v, money).replace(/\.00$/, '') : formatCount(v));
    const plot = new uPlot(
      {
        width: Math.max(el.clientWidth, 280),
        height: HEIGHT,
        legend: { show: false },
        cursor: { y: false, points: { size: 8 } },
        // Bucket starts are UTC midnights: label them as UTC days wherever the browser is.
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
        axes: [
          { stroke: ink, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid, width: 1 }, font: '12px system-ui, sans-serif' },
          {
            stroke: ink,
            grid: { stroke: grid, width: 1 },
            ticks: { show: false },
            font: '12px system-ui, sans-serif',
            size: 64,
            values: (_u, splits) => splits.map(axisValue),
          },
        ],
        series: [
          {},
          ...series.map((s, i) => ({
            label: s.label,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            fill: i === 0 && series.length === 1 ? 'rgba(79, 70, 229, 0.08)' : undefined,
            points: { show: x.length <= 31 },
          })),
        ],
        hooks: {
          setCursor: [
            (u) => {
              const idx = u.cursor.idx;
              setHover(typeof idx === 'number' ? idx : null);
            },
          ],
        },
      },
      [x, ...series.map((s) => s.values)],
      el,
    );
    const resize = new ResizeObserver(() => plot.setSize({ width: Math.max(el.clientWidth, 280), height: HEIGHT }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [x, series]);

  const at = hover !== null && hover < x.length ? hover : null;
  return (
    <figure class="chart">
      <div class="chart-readout" aria-hidden="true">
        {at !== null ? (
          <>
            <span class="chart-readout-day">{formatDay(x[at])}</span>
            {series.map((s, i) => (
              <span key={s.label} class="chart-readout-value">
                <span class="swatch" style={{ background: COLOURS[i % COLOURS.length] }} />
                {s.label}: {s.currency ? formatMoney(s.values[at] ?? 0, s.currency) : formatCount(s.values[at] ?? 0)}
              </span>
            ))}
          </>
        ) : (
          series.map((s, i) => (
            <span key={s.label} class="chart-readout-value">
              <span class="swatch" style={{ background: COLOURS[i % COLOURS.length] }} />
              {s.label}
            </span>
          ))
        )}
      </div>
      <div ref={host} class="chart-canvas" role="img" aria-label={`${label}. ${summary}`} />
    </figure>
  );
}
