// Bench scenario (issue 11 item 11): a flood of unknown API keys against the local runtime, measuring the
// DynamoDB calls it causes with and without the negative auth cache, and with the per-IP failure limit.
// Part of `npm run bench` (section `auth`); run it alone with `npx tsx test/bench/auth-flood.ts`.
//
// - uncached: negative cache and IP limit off: every request reads its key (the situation before);
// - negative cache: the same requests (a few keys repeated, as a scripted flood repeats them);
// - IP limit: every request a NEW random key (the negative cache cannot help) from one IP, limit on.
// Handlers run in this process, so the store's call recorder sees every call they make.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resetConfig } from '../../shared/config';
import { generateApiKey } from '../../shared/domain/api-keys';
import { clearAuthCaches } from '../../shared/http/auth';
import { recordDynamoCalls } from '../../shared/store/instrumentation';
import { resetRateCounts } from '../../shared/store/rate-limits';
import { startBenchRuntime, type BenchRuntime } from './harness';
import { num, progress } from './stats';

export interface AuthFloodRun {
  name: string;
  requests: number;
  distinctKeys: number;
  statuses: Record<string, number>;
  getItems: number;
  updateItems: number;
  otherCalls: number;
  seconds: number;
}

export interface AuthFloodSection {
  runs: AuthFloodRun[];
}

async function flood(url: string, keys: string[], requests: number, connections: number): Promise<Record<string, number>> {
  const statuses: Record<string, number> = {};
  let next = 0;
  const worker = async () => {
    while (next < requests) {
      const key = keys[next++ % keys.length] as string;
      const res = await fetch(`${url}/v1/campaigns/`, { headers: { authorization: `Bearer ${key}` } });
      await res.arrayBuffer();
      statuses[res.status] = (statuses[res.status] ?? 0) + 1;
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  return statuses;
}

export async function measureAuthFlood(bench: BenchRuntime, opts: { requests: number; connections: number }): Promise<AuthFloodSection> {
  const settings = [
    { name: 'uncached (negative cache off, IP limit off)', negative: '0', limit: '0', distinct: 20 },
    { name: 'negative cache 30 s (IP limit off)', negative: '30', limit: '0', distinct: 20 },
    { name: 'IP limit 60/min + negative cache, every key new', negative: '30', limit: '60', distinct: opts.requests },
  ];
  const runs: AuthFloodRun[] = [];
  for (const s of settings) {
    process.env.AUTH_NEGATIVE_CACHE_SECONDS = s.negative;
    process.env.AUTH_FAILURES_PER_IP_PER_MINUTE = s.limit;
    resetConfig();
    clearAuthCaches();
    resetRateCounts();
    const keys = Array.from({ length: s.distinct }, () => generateApiKey());
    const rec = recordDynamoCalls();
    const started = performance.now();
    let statuses: Record<string, number>;
    try {
      statuses = await flood(bench.runtime.url, keys, opts.requests, opts.connections);
    } finally {
      rec.stop();
    }
    const count = (command: string) => rec.calls.filter((c) => c.command === command).length;
    const run = {
      name: s.name,
      requests: opts.requests,
      distinctKeys: s.distinct,
      statuses,
      getItems: count('GetItem'),
      updateItems: count('UpdateItem'),
      otherCalls: rec.calls.length - count('GetItem') - count('UpdateItem'),
      seconds: (performance.now() - started) / 1000,
    };
    runs.push(run);
    progress(`auth flood: ${describeRun(run)}`);
  }
  delete process.env.AUTH_NEGATIVE_CACHE_SECONDS;
  delete process.env.AUTH_FAILURES_PER_IP_PER_MINUTE;
  resetConfig();
  return { runs };
}

export function describeRun(r: AuthFloodRun): string {
  const statuses = Object.entries(r.statuses)
    .map(([s, n]) => `${n}x${s}`)
    .join(' ');
  return `${r.name}: ${num(r.requests)} requests over ${num(r.distinctKeys)} keys in ${num(r.seconds, 1)} s (${num(r.requests / r.seconds)}/s) -> ${statuses}; DynamoDB GetItem ${num(r.getItems)}, UpdateItem ${num(r.updateItems)}, other ${num(r.otherCalls)}`;
}

if (require.main === module) {
  void (async () => {
    const workDir = mkdtempSync(join(tmpdir(), 'refloop-bench-auth-'));
    const bench = await startBenchRuntime(workDir);
    try {
      const section = await measureAuthFlood(bench, {
        requests: Number(process.env.BENCH_AUTH_REQUESTS ?? 2000),
        connections: Number(process.env.BENCH_CONNECTIONS ?? 10),
      });
      for (const r of section.runs) process.stdout.write(`${describeRun(r)}\n`);
    } finally {
      await bench.stop();
      rmSync(workDir, { recursive: true, force: true });
    }
    process.exit(0);
  })().catch((err: unknown) => {
    process.stderr.write(`auth flood bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  });
}
