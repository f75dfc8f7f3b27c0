// `npm run bench`: bundle sizes and init times, load on the local runtime beside raw DynamoDB Local,
// and the webhook drain; prints the headline figures and writes BENCHMARKS.md. Exits non-zero when a
// hard budget fails (a bundle over 300 KB, an alert lost, a section that could not run), after writing
// the file. Not part of `npm test`.
//
// Settings (environment): BENCH_CONNECTIONS (10), BENCH_SECONDS per run (5), BENCH_RUNS (3),
// BENCH_WARMUP_SECONDS (2), BENCH_AUTH_REQUESTS (2000, the unknown-key flood of ./auth-flood.ts), BENCH_DRAIN_CHECKOUTS (2500 = 5,000 alerts), BENCH_JSON_DRAIN_CHECKOUTS (300) and BENCH_JSON_BACKLOG_CHECKOUTS (2000: the JSON providers' end-to-end and backlog drains), BENCH_DRAIN_RUNS (up to 3 while
// the total stays under BENCH_BUDGET_SECONDS, 290), BENCH_SKIP (comma list of bundles,load,auth,drain),
// BENCH_NOTE (a remark on the machine for the report, e.g. what else was running), BENCH_MONEY_REWARDS (100000:
// the rewards seeded for the report and export section; about 5 minutes more on two cores),
// BENCH_DASHBOARD_REFERRALS (3000) and BENCH_DASHBOARD_RUNS (5) for the dashboard section (skip: `dashboard`),
// BENCH_PORTAL_REFERRALS (200) and BENCH_PORTAL_RUNS (5) for the member portal section (skip: `portal`),
// the noisy neighbour (skip: `fairness`): BENCH_FAIR_EVENTS (20000, the noisy tenant's burst),
// BENCH_FAIR_SUBSCRIPTIONS (200, the subscriptions it renews), BENCH_FAIR_CONVERSIONS (50, the quiet tenant's),
// BENCH_FAIR_SPACING_MS (a fixed spacing of the quiet conversions; default: one a second while the burst is posted, then the rest spread over its drain);
// freshness under mixed load (skip: `freshness`): BENCH_FRESH_SECONDS (60), BENCH_FRESH_CLIENTS (20 API
// clients creating referrals), BENCH_FRESH_CLIENT_RATE (1 create per second per client; 0 = closed loops), BENCH_FRESH_WEBHOOKS_PER_SECOND (50, across three accounts on three providers),
// BENCH_FRESH_CONVERT_EVERY (4: one checkout in 4 converts a referral), BENCH_FRESH_WARMUP_SECONDS (20 s of the same load
// before the clock, unmeasured; 0 = none); the cost per conversion (skip: `cost`): BENCH_COST_CONVERSIONS (60),
// BENCH_COST_WEBHOOKS_PER_SECOND (15). BENCH_DYNAMODB=memory keeps the runtimes' DynamoDB Local in memory;
// BENCH_DYNAMODB_CALLS=<file> writes a tally of their DynamoDB calls by kind to <file> (./call-tally.ts);
// BENCH_CPU_PROFILE=<dir> writes a V8 CPU profile of each backlog drain's window to <dir> (./drain.ts).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describeRun, measureAuthFlood, type AuthFloodSection } from './auth-flood';
import { measureBundles, REPO_ROOT, type BundleSection } from './bundles';
import { measureDrain, measureJsonDrain, type DrainSection, type JsonDrainSection } from './drain';
import { benchServiceLog, captureServiceLogs, startBenchRuntime, type BenchRuntime } from './harness';
import { measureLoad, type LoadSection } from './load';
import { measureMoney, type MoneySection } from './money';
import { measureDashboard, type DashboardSection } from './dashboard';
import { measureFairness, type FairnessSection } from './fairness';
import { describeFreshness, measureFreshness, type FreshnessSection } from './freshness';
import { describeCost, measureCost, type CostSection } from './cost';
import { describePortal, measurePortal, writePortalSection, type PortalSection } from './portal';
import { describeMachine } from './machine';
import { renderReport, verdicts, type Report } from './report';
import { kb, ms, num, pct, progress } from './stats';

function setting(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, got "${raw}"`);
  return value;
}

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

async function main(): Promise<number> {
  const started = performance.now();
  const elapsed = () => (performance.now() - started) / 1000;
  const skip = new Set(
    (process.env.BENCH_SKIP ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  );
  const connections = setting('BENCH_CONNECTIONS', 10);
  const budgetSeconds = setting('BENCH_BUDGET_SECONDS', 290);
  const machine = describeMachine();
  progress(`${machine.cores} cores, ${machine.node}, ${machine.java}, load average ${num(machine.loadAtStart, 2)}`);
  const workDir = mkdtempSync(join(tmpdir(), 'refloop-bench-'));
  // Every line the service logs (thousands: a 401 per unknown key of the auth flood, say) goes to this file.
  const serviceLogFile = benchServiceLog();
  writeFileSync(serviceLogFile, '');
  progress(`service log lines go to ${relative(REPO_ROOT, serviceLogFile) || serviceLogFile}, not the console`);

  let bundles: BundleSection | null = null;
  let load: LoadSection | null = null;
  let drain: DrainSection | null = null;
  const jsonDrains: JsonDrainSection[] = [];
  let authFlood: AuthFloodSection | null = null;
  let money: MoneySection | null = null;
  let fairness: FairnessSection | null = null;
  let freshness: FreshnessSection | null = null;
  let cost: CostSection | null = null;
  let serviceLog: Report['serviceLog'] = null;
  const errors: string[] = [];

  if (!skip.has('bundles')) {
    try {
      bundles = await measureBundles(workDir);
    } catch (err) {
      errors.push(`bundles: ${message(err)}`);
    }
  }

  const runtimeSections = ['load', 'auth', 'drain', 'fairness', 'cost', 'freshness', 'money'];
  if (runtimeSections.some((name) => !skip.has(name))) {
    let bench: BenchRuntime | undefined;
    try {
      progress('starting the local runtime (DynamoDB Local, local SQS, pollers, Paddle emulator, gateway)');
      bench = await startBenchRuntime(workDir);
      if (!skip.has('load')) {
        try {
          load = await measureLoad(bench, workDir, {
            connections,
            seconds: setting('BENCH_SECONDS', 5),
            warmupSeconds: setting('BENCH_WARMUP_SECONDS', 2),
            runs: setting('BENCH_RUNS', 3),
          });
        } catch (err) {
          errors.push(`load: ${message(err)}`);
        }
      }
      if (!skip.has('auth')) {
        try {
          authFlood = await measureAuthFlood(bench, { requests: setting('BENCH_AUTH_REQUESTS', 2000), connections });
        } catch (err) {
          errors.push(`auth flood: ${message(err)}`);
        }
      }
      if (!skip.has('drain')) {
        const fixedRuns = process.env.BENCH_DRAIN_RUNS ? setting('BENCH_DRAIN_RUNS', 1) : null;
        try {
          drain = await measureDrain(bench, workDir, {
            checkouts: setting('BENCH_DRAIN_CHECKOUTS', 2500),
            connections,
            runs: fixedRuns ?? 3,
            timeoutMs: 900_000,
            // Another run only if it fits the time budget (with a margin for stopping and the report).
            // Room is kept for the Paddle Billing, Stripe and Chargebee drains that follow (about 60 s together).
            another: (last) => fixedRuns !== null || elapsed() + last + 70 < budgetSeconds,
          });
        } catch (err) {
          errors.push(`drain: ${message(err)}`);
        }
        for (const provider of ['paddle-billing', 'stripe', 'chargebee'] as const) {
          try {
            jsonDrains.push(
              await measureJsonDrain(bench, workDir, {
                provider,
                checkouts: setting('BENCH_JSON_DRAIN_CHECKOUTS', 300),
                // The backlog drain measures a steady rate: at 300 checkouts (900 Stripe events, 3 s) the first
                // receive and the last batch were a sixth of it; at 1,000 (3,000 Stripe events, 5 s) one run's
                // ratio still moved by a tenth from the next one's. 2,000 (4,000 to 6,000 events, about as
                // many as the Classic drain's 5,000 alerts) doubles the window.
                backlogCheckouts: setting('BENCH_JSON_BACKLOG_CHECKOUTS', 2000),
                connections,
                timeoutMs: 300_000,
              }),
            );
          } catch (err) {
            errors.push(`drain (${provider}): ${message(err)}`);
          }
        }
      }
      // The noisy neighbour and freshness under mixed load (issue 29): fresh accounts of their own.
      if (!skip.has('fairness')) {
        try {
          fairness = await measureFairness(bench, workDir, {
            events: setting('BENCH_FAIR_EVENTS', 20_000),
            subscriptions: setting('BENCH_FAIR_SUBSCRIPTIONS', 200),
            conversions: setting('BENCH_FAIR_CONVERSIONS', 50),
            spacingMs: process.env.BENCH_FAIR_SPACING_MS ? setting('BENCH_FAIR_SPACING_MS', 1000) : null,
            connections,
            timeoutMs: 1_800_000,
          });
        } catch (err) {
          errors.push(`fairness: ${message(err)}`);
        }
      }
      // Every call of a conversion counted, with the workers in this process (their calls go through its clients).
      if (!skip.has('cost')) {
        try {
          cost = await measureCost(bench, {
            conversions: setting('BENCH_COST_CONVERSIONS', 60),
            webhooksPerSecond: setting('BENCH_COST_WEBHOOKS_PER_SECOND', 15),
            timeoutMs: 300_000,
          });
        } catch (err) {
          errors.push(`cost: ${message(err)}`);
        }
      }
      if (!skip.has('freshness')) {
        try {
          // On the runtime as npm start runs it: the workers in a process of their own (the sections before
          // measure the workers' own cost in one process, infra/local/workers-process.ts).
          progress('freshness: restarting the local runtime with its workers in a process of their own, as npm start runs them');
          const logs = bench.logs;
          await bench.stopKeepingLogs();
          bench = undefined;
          const fresh = await startBenchRuntime(join(workDir, 'freshness'), { workersProcess: true, logs });
          bench = fresh;
          freshness = await measureFreshness(fresh, workDir, {
            seconds: setting('BENCH_FRESH_SECONDS', 60),
            warmupSeconds: Number(process.env.BENCH_FRESH_WARMUP_SECONDS ?? 20),
            workersProcess: true,
            clients: setting('BENCH_FRESH_CLIENTS', 20),
            clientRate: setting('BENCH_FRESH_CLIENT_RATE', 1),
            webhooksPerSecond: setting('BENCH_FRESH_WEBHOOKS_PER_SECOND', 50),
            convertEvery: setting('BENCH_FRESH_CONVERT_EVERY', 4),
            timeoutMs: 600_000,
          });
        } catch (err) {
          errors.push(`freshness: ${message(err)}`);
        }
      }
      // Last: seeding 100,000 rewards takes DynamoDB Local (on disk) about five minutes, outside the drains' budget.
      if (!skip.has('money')) {
        try {
          if (!bench) throw new Error('no local runtime (its restart for the freshness section failed)');
          money = await measureMoney(bench, { rewards: setting('BENCH_MONEY_REWARDS', 100_000) });
        } catch (err) {
          errors.push(`money: ${message(err)}`);
        }
      }
    } catch (err) {
      errors.push(`local runtime: ${message(err)}`);
    } finally {
      await bench?.stop().catch((err: unknown) => errors.push(`stopping the local runtime: ${message(err)}`));
      if (bench) serviceLog = { counts: bench.logs.counts, firstErrors: bench.logs.firstErrors };
    }
  }
  rmSync(workDir, { recursive: true, force: true });

  // The dashboard in Chromium, on a runtime of its own (3,000 referrals seeded through the API).
  let dashboard: DashboardSection | null = null;
  if (!skip.has('dashboard')) {
    try {
      progress('dashboard: assets, then the overview with 3,000 referrals in Chromium');
      const logs = captureServiceLogs(serviceLogFile);
      try {
        dashboard = await measureDashboard({
          referrals: setting('BENCH_DASHBOARD_REFERRALS', 3000),
          runs: setting('BENCH_DASHBOARD_RUNS', 5),
        });
      } finally {
        await logs.restore();
      }
    } catch (err) {
      errors.push(`dashboard: ${message(err)}`);
    }
  }

  // The member portal and its widget in Chromium, on a runtime of its own (one member with 200 referrals).
  let portal: PortalSection | null = null;
  if (!skip.has('portal')) {
    try {
      progress('portal: widget script and page assets, then the portal (standalone and framed) in Chromium');
      const logs = captureServiceLogs(serviceLogFile);
      try {
        portal = await measurePortal({ referrals: setting('BENCH_PORTAL_REFERRALS', 200), runs: setting('BENCH_PORTAL_RUNS', 5) });
      } finally {
        await logs.restore();
      }
    } catch (err) {
      errors.push(`portal: ${message(err)}`);
    }
  }

  const report: Report = {
    machine,
    loadAtEnd: loadavg()[0] ?? 0,
    totalSeconds: elapsed(),
    bundles,
    load,
    authFlood,
    drain,
    jsonDrains,
    money,
    fairness,
    freshness,
    cost,
    dashboard,
    errors,
    serviceLog,
  };
  const file = join(REPO_ROOT, 'BENCHMARKS.md');
  writeFileSync(file, renderReport(report));
  if (portal) writePortalSection(portal);

  // Headline figures.
  const out = (s: string) => process.stdout.write(`${s}\n`);
  out('');
  if (bundles) {
    const biggest = bundles.results.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const slowest = bundles.results.reduce((a, b) => (b.overheadMs > a.overheadMs ? b : a));
    out(
      `bundles: largest ${kb(biggest.bytes)} (${biggest.entry}); empty handler init ${ms(bundles.empty.initMs)}; largest init overhead ${ms(slowest.overheadMs)} (${slowest.entry})`,
    );
  }
  if (load) {
    const rawGet = load.raw.GetItem.opsPerSecond;
    for (const s of load.scenarios) {
      out(
        `load: ${s.name}: ${num(s.figures.rps)} req/s (${pct(s.figures.rps / rawGet)} of raw GetItem), p50 ${ms(s.figures.p50)}, p99 ${ms(s.figures.p99)}`,
      );
    }
    for (const [name, x] of Object.entries(load.raw)) out(`raw DynamoDB Local ${name}: ${num(x.opsPerSecond)} ops/s, p50 ${ms(x.p50)}`);
  }
  for (const r of authFlood?.runs ?? []) out(`auth flood: ${describeRun(r)}`);
  if (drain) {
    out(
      `drain: ${num(drain.alerts)} alerts posted in ${num(drain.median.postSeconds, 1)} s (${num(drain.median.postRate)}/s), all applied after ${num(drain.median.appliedSeconds, 1)} s (${num(drain.median.appliedRate)}/s), ${drain.runs.length} run(s); lost ${drain.lostTotal}`,
    );
  }
  if (money) {
    out(
      `money: ${num(money.rewards)} rewards seeded in ${num(money.seedSeconds, 1)} s; 90-day report p50 ${ms(money.report.p50)}, overview p50 ${ms(money.overview.p50)}; export of ${num(money.exportRun.rows)} rows in ${money.exportRun.pages} pages, ${num(money.exportRun.seconds, 1)} s, peak heap +${num(money.exportRun.peakHeapMiB, 1)} MiB`,
    );
  }
  if (dashboard) {
    out(
      `dashboard: JS ${kb(dashboard.jsGzip)} gzipped, CSS ${kb(dashboard.cssGzip)}; overview with ${num(dashboard.referrals)} referrals: cold FCP ${ms(dashboard.cold.fcp)}, KPI tiles ${ms(dashboard.cold.kpis)}; warm ${ms(dashboard.warm.fcp)} / ${ms(dashboard.warm.kpis)}`,
    );
  }
  if (portal) out(describePortal(portal));
  for (const d of jsonDrains) {
    out(
      `drain (${d.provider}): ${num(d.webhooks)} webhooks posted in ${num(d.postSeconds, 1)} s (${num(d.postRate)}/s), all applied after ${num(d.appliedSeconds, 1)} s (${num(d.appliedRate)}/s); lost ${d.lostTotal}`,
    );
  }
  if (fairness) {
    const f = fairness;
    out(
      `fairness: quiet tenant webhook -> reward p50 ${ms(f.quiet.lag.p50)}, p99 ${ms(f.quiet.lag.p99)}, max ${ms(f.quiet.lag.max)} (${f.quiet.lag.count} of ${f.quiet.conversions}); noisy ${num(f.noisy.events)} renewals drained in ${num(f.noisy.drainSeconds, 1)} s (${num(f.noisy.drainRate)}/s); discrepancies ${f.lostTotal}`,
    );
  }
  if (freshness) out(describeFreshness(freshness));
  if (cost) out(describeCost(cost));
  const v = verdicts(report);
  for (const m of v.missed) out(`missed: ${m}`);
  for (const f of v.hardFailures) out(`FAILED: ${f}`);
  out(`wrote ${file} in ${num(elapsed())} s`);
  return v.hardFailures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`bench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exit(1);
  },
);
