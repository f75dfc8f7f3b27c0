// Sums a REFLOOP_CALL_LOG file (infra/local/call-log.ts) per caller and operation: how many calls, the
// items the transactions wrote, and how long the calls took (mean, p50, p90). Writes wait in DynamoDB
// Local's single write lock, so their time is mostly queueing: docs/capacity.md "What the writes wait for".
//
//   REFLOOP_CALL_LOG=/tmp/calls.jsonl BENCH_SKIP=bundles,load,auth,drain,money,dashboard,portal,fairness,cost npm run bench
//   npx tsx test/bench/call-log.ts /tmp/calls.jsonl [--from <s> --to <s>]   (seconds after the first call)
import { readFileSync } from 'node:fs';
import type { CallLine } from '../../infra/local/call-log';

export interface CallGroup {
  caller: string;
  op: string;
  calls: number;
  items: number;
  meanMs: number;
  p50Ms: number;
  p90Ms: number;
}

/** What the API's handlers (and anything outside a worker's batch) are listed as. */
export const NO_WORKER = '(no worker)';

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * q))] ?? 0;

/** The lines' groups, most calls first; `from`/`to` in seconds after the first line's time (inclusive). */
export function summarizeCalls(lines: readonly CallLine[], window: { from?: number; to?: number } = {}): CallGroup[] {
  if (lines.length === 0) return [];
  // A loop, not Math.min(...): a long run's log has more lines than a call takes arguments.
  const start = lines.reduce((min, l) => Math.min(min, l.t), Number.POSITIVE_INFINITY);
  const groups = new Map<string, { caller: string; op: string; ms: number[]; items: number }>();
  for (const l of lines) {
    const at = (l.t - start) / 1000;
    if ((window.from !== undefined && at < window.from) || (window.to !== undefined && at > window.to)) continue;
    const caller = l.caller ?? NO_WORKER;
    const key = `${caller}\u0000${l.op}`;
    const g = groups.get(key) ?? { caller, op: l.op, ms: [], items: 0 };
    g.ms.push(l.ms);
    g.items += l.items ?? 0;
    groups.set(key, g);
  }
  return [...groups.values()]
    .map((g) => {
      const sorted = [...g.ms].sort((a, b) => a - b);
      return {
        caller: g.caller,
        op: g.op,
        calls: sorted.length,
        items: g.items,
        meanMs: sorted.reduce((a, b) => a + b, 0) / sorted.length,
        p50Ms: quantile(sorted, 0.5),
        p90Ms: quantile(sorted, 0.9),
      };
    })
    .sort((a, b) => b.calls - a.calls || a.caller.localeCompare(b.caller) || a.op.localeCompare(b.op));
}

/** A Markdown table of the groups. */
export function callTable(groups: readonly CallGroup[]): string {
  const rows = groups.map(
    (g) =>
      `| ${g.caller} | ${g.op} | ${g.calls} | ${g.items || ''} | ${g.meanMs.toFixed(0)} | ${g.p50Ms.toFixed(0)} | ${g.p90Ms.toFixed(0)} |`,
  );
  return ['| Caller | Operation | Calls | Items written | Mean ms | p50 ms | p90 ms |', '|---|---|---:|---:|---:|---:|---:|', ...rows].join(
    '\n',
  );
}

export function parseCallLog(text: string): CallLine[] {
  return text
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as CallLine);
}

if (require.main === module) {
  const [file, ...rest] = process.argv.slice(2);
  if (!file) {
    console.error('usage: npx tsx test/bench/call-log.ts <REFLOOP_CALL_LOG file> [--from <s>] [--to <s>]');
    process.exit(2);
  }
  const flag = (name: string) => {
    const at = rest.indexOf(name);
    return at >= 0 ? Number(rest[at + 1]) : undefined;
  };
  console.log(callTable(summarizeCalls(parseCallLog(readFileSync(file, 'utf8')), { from: flag('--from'), to: flag('--to') })));
}
