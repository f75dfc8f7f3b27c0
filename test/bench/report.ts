// BENCHMARKS.md from the figures of one `npm run bench`.
import { BUNDLE_BUDGET_BYTES, INIT_OVERHEAD_BUDGET_MS, LAMBDA_NODE_OPTIONS, type BundleSection } from './bundles';
import type { CpuSample } from './cpu';
import { CLASSIC_CPU_BEFORE, DRAIN_RATIO_TARGETS, DRAIN_RATIOS_BEFORE, type DrainSection, type JsonDrainSection } from './drain';
import type { MoneySection } from './money';
import { renderDashboardSection, type DashboardSection } from './dashboard';

const MiB = 1024 * 1024;
import { READ_TARGET_RATIO, type LoadSection } from './load';
import type { Machine } from './machine';
import { kb, mark, median, ms, num, pct } from './stats';
import { describeRun, type AuthFloodSection } from './auth-flood';
import { FRESHNESS_TARGET_MS, renderFairnessSection, type FairnessSection } from './fairness';
import { renderFreshnessSection, type FreshnessSection } from './freshness';
import { renderCostSection, type CostSection } from './cost';
import { workers } from '../../functions/workers';

/** The subscription-sync worker's batch size (functions/workers.ts). */
const SYNC_BATCH = workers.find((w) => w.name === 'SubscriptionSync')?.batchSize ?? 10;

/** A fixed measurement (the change's before and after cannot both be rebuilt on every run). */
const ISSUE_17_COST =
  "What observability and secrets encryption cost (issue 17), measured when they went in on this machine: Powertools Metrics and the X-Ray subsegment sender (`shared/metrics.ts`, `shared/tracing.ts`) add 2.8 to 16.5 KB per function (median 4.1 KB; the conversion route 364.1 -> 380.6 KB) and no init time beyond the noise (0 to 4 ms of CPU). The Powertools Tracer would have added about 120 KB per function (the conversion route 500.6 KB) and 50 to 90 ms of init, so it is not used. Secrets encryption adds about 4 KB to the functions that decrypt; the KMS client (about 31 KB) is not bundled but loaded from the Lambda runtime's SDK on a container's first cold secret read. The 60 ms init budget is below what the bundled AWS SDK clients alone cost here (the reference row), so most functions miss it with or without these.";

export interface Report {
  machine: Machine;
  loadAtEnd: number;
  totalSeconds: number;
  bundles: BundleSection | null;
  load: LoadSection | null;
  drain: DrainSection | null;
  /** The same drain for Paddle Billing and Stripe webhooks (absent from reports written before them). */
  jsonDrains?: JsonDrainSection[];
  /** The unknown-key flood (section `auth`); absent from reports written before it existed. */
  authFlood?: AuthFloodSection | null;
  /** The money side at size (section `money`); absent from reports written before it existed. */
  money?: MoneySection | null;
  /** The noisy neighbour (section `fairness`, issue 29). */
  fairness?: FairnessSection | null;
  /** Freshness under mixed load (section `freshness`, issue 29). */
  freshness?: FreshnessSection | null;
  /** The cost of one conversion, counted (section `cost`, issue 29). */
  cost?: CostSection | null;
  /** The dashboard's assets and first paint (section `dashboard`). */
  dashboard?: DashboardSection | null;
  /** Sections that could not run, with the reason. */
  errors: string[];
  /** Service log lines (handlers, workers) written to the log file during the run. */
  serviceLog: { counts: Record<string, number>; firstErrors: string[] } | null;
}

export interface Verdicts {
  /** Hard budgets: `npm run bench` exits non-zero when one fails. */
  hardFailures: string[];
  /** Targets and soft budgets missed: reported, not fatal. */
  missed: string[];
}

export function verdicts(r: Report): Verdicts {
  const hardFailures: string[] = [];
  const missed: string[] = [];
  for (const e of r.errors) hardFailures.push(e);
  if (r.bundles) {
    for (const b of r.bundles.results) {
      if (!b.sizeOk) hardFailures.push(`${b.entry} is ${kb(b.bytes)} (budget ${kb(BUNDLE_BUDGET_BYTES)})`);
      if (!b.initOk) missed.push(`${b.entry}: init overhead ${ms(b.overheadMs)} (budget ${INIT_OVERHEAD_BUDGET_MS} ms)`);
    }
  }
  if (r.load) {
    const rawGet = r.load.raw.GetItem.opsPerSecond;
    for (const s of r.load.scenarios.filter((x) => x.name === 'GET referral' || x.name === 'List referrals')) {
      const ratio = s.figures.rps / rawGet;
      if (ratio < READ_TARGET_RATIO)
        missed.push(
          `${s.name}: ${num(s.figures.rps)} req/s = ${pct(ratio)} of raw GetItem (${num(rawGet)} ops/s), target ${pct(READ_TARGET_RATIO)}`,
        );
    }
    for (const s of r.load.scenarios) {
      if (s.figures.non2xx > 0 || s.figures.errors > 0)
        missed.push(`${s.name}: ${s.figures.non2xx} non-2xx answers, ${s.figures.errors} errors/timeouts under load`);
    }
  }
  if (r.drain && r.drain.lostTotal > 0) hardFailures.push(`drain: ${r.drain.lostTotal} alerts rejected, lost or dead-lettered`);
  for (const d of r.jsonDrains ?? [])
    if (d.lostTotal > 0) hardFailures.push(`drain (${d.provider}): ${d.lostTotal} webhooks rejected, lost or dead-lettered`);
  if (r.fairness) {
    const f = r.fairness;
    if (f.lostTotal > 0) hardFailures.push(`fairness: ${f.lostTotal} events missing, doubled, rejected or dead-lettered`);
    if (!(f.quiet.lag.count === f.quiet.conversions && f.quiet.lag.p99 < FRESHNESS_TARGET_MS))
      missed.push(
        `fairness: the quiet tenant's p99 webhook -> reward lag is ${ms(f.quiet.lag.p99)} (${f.quiet.lag.count} of ${f.quiet.conversions} visible), target < ${FRESHNESS_TARGET_MS / 1000} s`,
      );
  }
  if (r.cost && r.cost.missing > 0) hardFailures.push(`cost: ${r.cost.missing} referrals without exactly one reward`);
  if (r.freshness) {
    const f = r.freshness;
    if (f.lostTotal > 0) hardFailures.push(`freshness: ${f.lostTotal} effects missing, rejected or dead-lettered`);
    for (const e of f.effects)
      if (!(e.lag.count === e.expected && e.lag.p99 < FRESHNESS_TARGET_MS))
        missed.push(
          `freshness: ${e.name}: p99 ${ms(e.lag.p99)} (${e.lag.count} of ${e.expected} seen), target < ${FRESHNESS_TARGET_MS / 1000} s`,
        );
  }
  if (r.totalSeconds >= 300) missed.push(`bench runtime ${num(r.totalSeconds)} s (target < 5 min)`);
  return { hardFailures, missed };
}

/** Each drain's backlog measure, Classic first (absent from reports written before it). */
function backlogDrains(r: Report): Array<{ provider: string; run: DrainSection['backlog'] | JsonDrainSection['backlog'] }> {
  const out: Array<{ provider: string; run: DrainSection['backlog'] | JsonDrainSection['backlog'] }> = [];
  if (r.drain?.backlog) out.push({ provider: 'paddle-classic', run: r.drain.backlog });
  for (const d of r.jsonDrains ?? []) if (d.backlog) out.push({ provider: d.provider, run: d.backlog });
  return out;
}

const cpuCell = (c: CpuSample, withLoadgen = true) =>
  [
    num(c.service, 2),
    c.dynamodb === null ? 'n/a' : num(c.dynamodb, 2),
    ...(withLoadgen ? [c.loadgen === null ? 'n/a' : num(c.loadgen, 2)] : []),
  ].join(' / ');

const runsCell = (values: number[]) => values.map((v) => num(v)).join(', ');

export function renderReport(r: Report): string {
  const { machine } = r;
  const v = verdicts(r);
  const out: string[] = [];
  const line = (s = '') => out.push(s);
  const shared = machine.loadAtStart > machine.cores * 0.25 || r.loadAtEnd > machine.cores * 0.25;

  line('# Refloop benchmarks');
  line();
  line(
    `Generated by \`npm run bench\` (test/bench/run.ts; not part of \`npm test\`) on ${machine.date}, in ${num(r.totalSeconds)} s. Every figure is the median of the repeated runs given beside it.`,
  );
  line();
  line('## Machine');
  line();
  line('| | |');
  line('|---|---|');
  line(`| CPU | ${machine.cores} cores, ${machine.cpuModel} |`);
  line(`| Memory | ${num(machine.memoryGiB, 1)} GiB |`);
  line(`| OS | ${machine.os} |`);
  line(`| Node | ${machine.node} (Lambda runs Node 22) |`);
  line(`| Java (DynamoDB Local) | ${machine.java} |`);
  line(`| Load average (1 min) at start / end | ${num(machine.loadAtStart, 2)} / ${num(r.loadAtEnd, 2)} |`);
  line();
  if (shared) {
    line(
      `**Measured on a shared ${machine.cores}-core machine**: other jobs were running at the same time, as the load average shows${process.env.BENCH_NOTE ? ` (${process.env.BENCH_NOTE})` : ''}. ` +
        'Every process here competes with them for the same cores, so the absolute figures are lower and noisier than on an idle machine; ratios measured in the same run (endpoint vs raw DynamoDB Local, handler vs empty handler) hold up better than absolute rates.',
    );
    line();
  }

  // --- summary ---------------------------------------------------------------------------------------
  line('## Budgets and targets');
  line();
  line('| | budget / target | measured | |');
  line('|---|---|---|---|');
  if (r.bundles) {
    const biggest = r.bundles.results.reduce((a, b) => (b.bytes > a.bytes ? b : a));
    const slowest = r.bundles.results.reduce((a, b) => (b.overheadMs > a.overheadMs ? b : a));
    const over = r.bundles.results.filter((b) => !b.initOk).length;
    line(
      `| Largest bundle (minified) | ≤ ${kb(BUNDLE_BUDGET_BYTES)} (hard) | ${kb(biggest.bytes)} (${biggest.entry}) | ${mark(biggest.sizeOk)} |`,
    );
    line(
      `| Largest init overhead over the empty handler | ≤ ${INIT_OVERHEAD_BUDGET_MS} ms | ${ms(slowest.overheadMs)} (${slowest.entry}); ${over} of ${r.bundles.results.length} functions over | ${mark(over === 0)} |`,
    );
  }
  if (r.load) {
    const rawGet = r.load.raw.GetItem.opsPerSecond;
    for (const s of r.load.scenarios.filter((x) => x.name === 'GET referral' || x.name === 'List referrals')) {
      const ratio = s.figures.rps / rawGet;
      line(
        `| ${s.name} vs raw GetItem rate | ≥ ${pct(READ_TARGET_RATIO)} | ${pct(ratio)} (${num(s.figures.rps)} vs ${num(rawGet)}/s) | ${mark(ratio >= READ_TARGET_RATIO)} |`,
      );
    }
  }
  if (r.drain) {
    line(
      `| Webhook drain: alerts lost | 0 (hard) | ${r.drain.lostTotal} of ${num(r.drain.alerts * (r.drain.runs.length + 1))} | ${mark(r.drain.lostTotal === 0)} |`,
    );
  }
  for (const b of backlogDrains(r)) {
    const target = DRAIN_RATIO_TARGETS[b.provider];
    if (target === undefined) continue;
    line(
      `| Worker drain from a backlog (${b.provider}): applied / raw TransactWriteItems | ≥ ${num(target, 2)} (before ${num(DRAIN_RATIOS_BEFORE[b.provider] ?? 0, 2)}) | ${num(b.run.ratio, 2)} (${num(b.run.appliedRate)}/s vs ${num(b.run.raw.opsPerSecond)}/s) | ${mark(b.run.ratio >= target)} |`,
    );
  }
  if (r.fairness) {
    const q = r.fairness.quiet;
    const ok = q.lag.count === q.conversions && q.lag.p99 < FRESHNESS_TARGET_MS;
    line(
      `| Quiet tenant's webhook -> reward during a ${num(r.fairness.noisy.events)}-event burst, p99 | < ${FRESHNESS_TARGET_MS / 1000} s | ${ms(q.lag.p99)} (${q.lag.count} of ${q.conversions}) | ${mark(ok)} |`,
    );
  }
  for (const e of r.freshness?.effects ?? []) {
    const ok = e.lag.count === e.expected && e.lag.p99 < FRESHNESS_TARGET_MS;
    line(
      `| Freshness under mixed load: ${e.name}, p99 | < ${FRESHNESS_TARGET_MS / 1000} s | ${ms(e.lag.p99)} (${e.lag.count} of ${e.expected}) | ${mark(ok)} |`,
    );
  }
  line(
    `| Bench runtime | < 5 min | ${num(r.totalSeconds)} s${r.drain ? ` (drain ${num(r.drain.runs.reduce((t, x) => t + x.appliedSeconds, 0))} s)` : ''} | ${mark(r.totalSeconds < 300)} |`,
  );
  line();
  if (v.hardFailures.length > 0) {
    line('Hard failures (the bench exits non-zero):');
    for (const f of v.hardFailures) line(`- ${f}`);
    line();
  }

  // --- bundles ---------------------------------------------------------------------------------------
  if (r.bundles) {
    const b = r.bundles;
    line('## 1. Bundles and module initialisation');
    line();
    line(
      `Every function of \`functions/routes.ts\` (the fallback included), \`functions/workers.ts\` and its scheduled jobs, bundled with esbuild's JS API and the stack's options ` +
        `(\`infra/cloud/bundling.ts\`, which the stack's \`infra/cloud/function.ts\` uses too: ${b.options}). ` +
        'Sizes are the minified `index.js` (1 KB = 1,024 bytes), the budgeted figure; the source map is a separate file, and so is each provider adapter and lazily loaded module a function may use (the On demand column: loaded on first use, not at init).',
    );
    line();
    line(
      `Init = the time to \`require()\` the bundle in a fresh \`node\` process (process.hrtime right before and after, so node's own start is not counted), ` +
        `median of ${b.runs}, in rounds that interleave every bundle. The budgeted column runs with the stack's \`NODE_OPTIONS=${LAMBDA_NODE_OPTIONS}\` (as in Lambda); the last column without it. ` +
        `Overhead = init minus the empty handler's init (\`export const handler = async () => ...\`, bundled the same way) measured in the same rounds. ` +
        'The CPU column is the CPU time the process used during the same require() (all threads): on a busy machine wall time includes waiting for a core, CPU time much less so.',
    );
    line();
    line(
      `| Function(s) | Entry | Size | ≤ ${kb(BUNDLE_BUDGET_BYTES)} | On demand | Init (source maps on) | Overhead | ≤ ${INIT_OVERHEAD_BUDGET_MS} ms | CPU during init / overhead | Init / overhead without source maps |`,
    );
    line('|---|---|---:|:---:|---:|---:|---:|:---:|---:|---:|');
    line(
      `| (empty handler) | - | ${kb(b.empty.bytes)} | | | ${ms(b.empty.initMs)} | - | | ${ms(b.empty.initCpuMs)} / - | ${ms(b.empty.initPlainMs)} / - |`,
    );
    line(
      `| (reference: SDK clients only) | DynamoDB + DocumentClient + SQS imports | ${kb(b.sdkOnly.bytes)} | | | ${ms(b.sdkOnly.initMs)} | ${ms(b.sdkOnly.initMs - b.empty.initMs)} | | ${ms(b.sdkOnly.initCpuMs)} / ${ms(b.sdkOnly.initCpuMs - b.empty.initCpuMs)} | ${ms(b.sdkOnly.initPlainMs)} / ${ms(b.sdkOnly.initPlainMs - b.empty.initPlainMs)} |`,
    );
    for (const x of b.results) {
      line(
        `| ${x.names.join(', ')} | \`${x.entry}\` | ${kb(x.bytes)} | ${mark(x.sizeOk)} | ${x.adapterBytes > 0 ? kb(x.adapterBytes) : '-'} | ${ms(x.initMs)} | ${ms(x.overheadMs)} | ${mark(x.initOk)} | ${ms(x.initCpuMs)} / ${ms(x.overheadCpuMs)} | ${ms(x.initPlainMs)} / ${ms(x.overheadPlainMs)} |`,
      );
    }
    line();
    const c = b.biggestContributors;
    line(`Largest parts of the biggest bundle (${c.name}, \`${c.entry}\`): ${c.parts.map((p) => `${p.group} ${kb(p.bytes)}`).join(', ')}.`);
    line();
    line(ISSUE_17_COST);
    line();
  }

  // --- load ------------------------------------------------------------------------------------------
  if (r.load) {
    const l = r.load;
    const s = l.settings;
    line('## 2. Load on the local runtime');
    line();
    line(
      `\`startLocal\` (infra/local/start.ts) on free ports with a fresh data directory and table: DynamoDB Local (java, file-backed), the local SQS, the pollers, the Paddle emulator and the HTTP gateway, ` +
        `which runs the handlers in the bench's own node process. autocannon runs in a separate node process: ${s.connections} connections, ${s.runs} runs of ${s.seconds} s per scenario ` +
        `(the webhook intake posts a fixed number of alerts per run, ${num(l.intakeAlertsPerRun)}, sized from its warm-up to last about as long), after a ${s.warmupSeconds} s warm-up per scenario; ` +
        `the scenarios and the raw loops are interleaved round by round, and each timed run starts once every queue is empty (the background work of the run before it, such as the webhook fan-out of the referrals it created, is not timed against the next). \`AUTH_CACHE_TTL_SECONDS=60\` is set before \`startLocal\` (which otherwise turns the cache off) so API keys are cached as in a warm Lambda container. ` +
        `Seed: one credit campaign, ${l.seed.members} referring members, ${l.seed.referrals} referrals. Latency: of 2xx answers, from every response's own timing.`,
    );
    line();
    line(
      '| Scenario | Request | DynamoDB per request | req/s | runs | p50 | p99 | non-2xx / errors | CPU ms per request: service / DynamoDB Local / load generator |',
    );
    line('|---|---|---|---:|---|---:|---:|---:|---|');
    for (const x of l.scenarios) {
      const f = x.figures;
      line(
        `| ${x.name} | ${x.request} | ${x.dynamo} | **${num(f.rps)}** | ${runsCell(f.runs)} | ${ms(f.p50)} | ${ms(f.p99)} | ${f.non2xx} / ${f.errors} | ${cpuCell(f.cpu)} |`,
      );
    }
    line();
    line(
      `Raw DynamoDB Local in the same run: the same SDK client configuration as shared/store/client.ts (DynamoDBClient + DocumentClient, maxAttempts 3), from the bench process, ${s.connections} closed loops for ${s.seconds} s, ${s.runs} runs, no HTTP in between.`,
    );
    line();
    line('| Operation | What | ops/s | runs | p50 | p99 | CPU ms per op: SDK process / DynamoDB Local |');
    line('|---|---|---:|---|---:|---:|---|');
    for (const [name, x] of Object.entries(l.raw)) {
      line(
        `| ${name} | ${x.what} | **${num(x.opsPerSecond)}** | ${runsCell(x.runs)} | ${ms(x.p50)} | ${ms(x.p99)} | ${cpuCell(x.cpu, false)} |`,
      );
    }
    line();
    const rawGet = l.raw.GetItem.opsPerSecond;
    line('| Endpoint | vs raw GetItem | vs its own raw operation |');
    line('|---|---:|---:|');
    for (const x of l.scenarios) {
      const own = x.raw ? l.raw[x.raw].opsPerSecond : null;
      const read = x.name === 'GET referral' || x.name === 'List referrals';
      line(
        `| ${x.name} | ${pct(x.figures.rps / rawGet)}${read ? ` (target ≥ ${pct(READ_TARGET_RATIO)}: ${mark(x.figures.rps / rawGet >= READ_TARGET_RATIO)})` : ''} | ${own ? `${pct(x.figures.rps / own)} of ${x.raw}` : '-'} |`,
      );
    }
    line();
    line(readingNotes(l));
    line();
  }

  // --- auth flood ------------------------------------------------------------------------------------
  if (r.authFlood && r.authFlood.runs.length > 0) {
    line('## Unknown-key flood (auth)');
    line();
    line(
      'Requests with well-formed API keys that do not exist, against the local runtime, counting the DynamoDB calls the handlers make: ' +
        'with the negative auth cache and the per-IP failure limit off (every request reads its key), with the negative cache on (a few keys repeated, as a scripted flood repeats them), ' +
        'and with the per-IP limit on and a new random key per request (the cache cannot help; past the limit the IP gets 429 without a read).',
    );
    line();
    for (const run of r.authFlood.runs) line(`- ${describeRun(run)}`);
    line();
  }

  // --- drain -----------------------------------------------------------------------------------------
  if (r.drain) {
    const d = r.drain;
    line('## 3. Webhook drain');
    line();
    line(
      `${num(d.alerts)} signed alerts per run (signed by the emulator's key before the clock starts; ${num(d.signSeconds, 1)} s of signing in all): ${num(d.checkouts)} checkouts, each a \`subscription_created\` for a distinct subscription ` +
        `and its \`subscription_payment_succeeded\`, posted in that order by autocannon with ${d.connections} connections, as fast as the intake answers, to a fresh account wired to the emulator. ` +
        `Meanwhile the subscription-sync worker drains \`provider-events\` through the local pollers (${d.backlog?.pollerConcurrency ?? 1} batch(es) of up to ${SYNC_BATCH} in flight, LOCAL_POLLER_CONCURRENCY). ` +
        "These runs measure end to end, posting while draining: their applied rate is bound by the post rate (autocannon and the intake share the cores), not by the worker; the worker's own rate is the backlog drain below. " +
        '"Applied" is when every alert has been answered and the queue holds nothing: a record leaves the queue only after the worker applied it. ' +
        "Then every effect is checked in the table: each subscription (status active), its payment, and each alert's idempotency marker; and the DLQ.",
    );
    line();
    line(
      '| Run | Alerts | Posted in | Post rate | Post p50 / p99 | Applied in (after the last post) | Applied rate | Peak queue depth (waiting + in flight) | CPU ms per alert: service / DynamoDB Local / load generator | DLQ | Rejected | Lost |',
    );
    line('|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|');
    d.runs.forEach((x, i) => {
      line(
        `| ${i + 1} | ${num(x.alerts)} | ${num(x.postSeconds, 1)} s | ${num(x.postRate)}/s | ${ms(x.post.p50)} / ${ms(x.post.p99)} | ${num(x.appliedSeconds, 1)} s (+${num(x.tailSeconds, 1)} s) | ${num(x.appliedRate)}/s | ${num(x.peakBacklog)} | ${cpuCell(x.cpu)} | ${x.dlq} | ${x.rejected} | ${x.lost} |`,
      );
    });
    if (d.runs.length > 1) {
      line(
        `| **median** | ${num(d.alerts)} | ${num(d.median.postSeconds, 1)} s | ${num(d.median.postRate)}/s | ${ms(d.median.p50)} / ${ms(d.median.p99)} | ${num(d.median.appliedSeconds, 1)} s | **${num(d.median.appliedRate)}/s** | | | | | |`,
      );
    }
    line();
    const missing = d.runs.map((x) => x.missing);
    const m = (k: keyof (typeof missing)[number]) => missing.reduce((s, x) => s + x[k], 0);
    line(
      `Verification: ${m('subscriptions')} subscriptions missing, ${m('payments')} payments missing, ${m('markers')} alert markers missing, ${m('notActive')} not counted active; ${d.runs.reduce((s, x) => s + x.dlq, 0)} messages dead-lettered.` +
        (d.runs.length === 1
          ? ' One run: a second one would take the bench past its five-minute budget on this machine (set BENCH_DRAIN_RUNS=3 for three).'
          : ''),
    );
    line();
  }

  if ((r.jsonDrains ?? []).length > 0) {
    line('### Paddle Billing, Stripe and Chargebee webhooks');
    line();
    line(
      "The same drain through the JSON intakes: checkouts made in each provider's emulator, their signed webhooks (Billing: `subscription.created`, `transaction.completed` and the rest of a checkout; Stripe: `customer.subscription.created`, `invoice.paid`, `checkout.session.completed`; Chargebee: `customer_created`, `subscription_created`, `payment_succeeded`, with the account's Basic-auth pair) posted by autocannon to a fresh account connected to that emulator. " +
        "Unlike Classic's alerts, the worker parses each one through the adapter, which calls the provider's API where the webhook does not say enough (the customer's email; Chargebee's events, which are not signed, are each fetched again by id before they are applied, and the plan's name once): those calls are part of the time.",
    );
    line();
    line(
      '| Provider | Checkouts | Webhooks | Posted in | Post rate | Post p50 / p99 | Applied in | Applied rate | Peak queue depth | Provider API calls | DLQ | Rejected | Lost |',
    );
    line('|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|');
    for (const d of r.jsonDrains ?? []) {
      line(
        `| ${d.provider} | ${num(d.checkouts)} | ${num(d.webhooks)} | ${num(d.postSeconds, 1)} s | ${num(d.postRate)}/s | ${ms(d.post.p50)} / ${ms(d.post.p99)} | ${num(d.appliedSeconds, 1)} s | **${num(d.appliedRate)}/s** | ${num(d.peakBacklog)} | ${num(d.apiCalls)} | ${d.dlq} | ${d.rejected} | ${d.lostTotal} |`,
      );
    }
    line();
    line(
      `Verification: ${(r.jsonDrains ?? []).map((d) => `${d.provider}: ${d.missing.subscriptions} subscriptions and ${d.missing.payments} payments missing, ${d.missing.markers} webhooks without an idempotency marker (event types the adapter acknowledges without effect leave none)`).join('; ')}.`,
    );
    line();
  }

  const backlogs = backlogDrains(r);
  if (backlogs.length > 0) {
    line("### The worker's drain from a backlog");
    line();
    line(
      `For each drain, the same webhooks again for a fresh account (Classic: ${num(r.drain?.checkouts ?? 0)} checkouts; the JSON providers: ${num(r.jsonDrains?.[0]?.backlogCheckouts ?? 0)} checkouts), posted through the intake while the subscription-sync worker's pollers are held (infra/local/pollers.ts \`holdPoller\`), so the whole set waits in \`provider-events\`. ` +
        `The worker is then released (${backlogs[0]?.run.pollerConcurrency ?? 1} batch(es) of up to ${SYNC_BATCH} in flight, LOCAL_POLLER_CONCURRENCY; 5 is the stack's default event source cap, infra/cloud/queue-worker.ts) and timed until the queue is empty (a record leaves it only once applied); every effect is verified right after and a missing one counted lost. ` +
        'Applied rate = events / drain time; CPU per event is measured in the drain window only. Raw TransactWriteItems: the 4-item transaction of test/bench/raw-transact.ts (10 closed loops, 4 s), right before and right after each drain; the ratio divides by their mean. ' +
        `Before the batch path (BENCHMARKS.md at e10cd49, measured end to end): Classic 36/s vs 95/s raw = ${num(DRAIN_RATIOS_BEFORE['paddle-classic'] ?? 0, 2)}, Billing ${num(DRAIN_RATIOS_BEFORE['paddle-billing'] ?? 0, 2)}, Stripe ${num(DRAIN_RATIOS_BEFORE.stripe ?? 0, 2)}; CPU per Classic alert ${num(CLASSIC_CPU_BEFORE.service, 1)} ms service + ${num(CLASSIC_CPU_BEFORE.dynamodb, 1)} ms DynamoDB Local.`,
    );
    line();
    line(
      '| Provider | Events | Post rate (worker held) | Backlog | Drain time | Applied rate | Raw TWI before / after (mean) | Ratio | Target | CPU ms per event: service / DynamoDB Local | DLQ | Lost |',
    );
    line('|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|');
    for (const { provider, run: b } of backlogs) {
      const target = DRAIN_RATIO_TARGETS[provider];
      line(
        `| ${provider} | ${num(b.events)} | ${num(b.postRate)}/s | ${num(b.backlog)} | ${num(b.drainSeconds, 1)} s | **${num(b.appliedRate)}/s** | ${num(b.raw.before.opsPerSecond)} / ${num(b.raw.after.opsPerSecond)} (${num(b.raw.opsPerSecond)})/s | **${num(b.ratio, 2)}** | ${target === undefined ? 'none' : `≥ ${num(target, 2)} ${mark(b.ratio >= target)}`} | ${cpuCell(b.cpu, false)} | ${b.dlq} | ${b.lost} |`,
      );
    }
    line();
    const classic = backlogs.find((b) => b.provider === 'paddle-classic');
    if (classic) {
      const c = classic.run.cpu;
      line(
        `CPU per Classic alert in the drain: ${num(c.service, 2)} ms service (before ${num(CLASSIC_CPU_BEFORE.service, 2)}) and ${c.dynamodb === null ? 'n/a' : `${num(c.dynamodb, 2)} ms`} DynamoDB Local (before ${num(CLASSIC_CPU_BEFORE.dynamodb, 2)}).`,
      );
      line();
    }
  }

  if (r.money) {
    const x = r.money;
    line('## Reports and exports at size');
    line();
    line(
      `The demo account holds ${num(x.rewards)} rewards (one through the real flows, the rest copies of its ledger item; seeded in ${num(x.seedSeconds, 1)} s) and 90 days of report buckets (test/bench/money.ts). ` +
        'Each request goes through the gateway and the real handler; the service runs in the bench process, so its memory is measured there.',
    );
    line();
    line('| What | Requests | p50 | p99 |');
    line('|---|---:|---:|---:|');
    line(
      `| 90-day daily report (\`/v1/reports/timeseries/\`, one Query of 90 items) | ${x.report.requests} | ${ms(x.report.p50)} | ${ms(x.report.p99)} |`,
    );
    line(
      `| overview, 45 days against the 45 before (one Query) | ${x.overview.requests} | ${ms(x.overview.p50)} | ${ms(x.overview.p99)} |`,
    );
    line();
    line(
      `**Export** of \`rewards.csv\`: ${num(x.exportRun.rows)} rows in ${x.exportRun.pages} pages of at most 10,000 (following \`Link: rel="next"\`), ${num(x.exportRun.bytes / MiB, 1)} MiB, **${num(x.exportRun.seconds, 1)} s** in all (${num(x.exportRun.rows / x.exportRun.seconds)} rows/s); ` +
        `the service's peak heap was ${num(x.exportRun.peakHeapMiB, 1)} MiB above its start, peak RSS ${num(x.exportRun.peakRssMiB, 1)} MiB above (one page at a time is held, never the export).`,
    );
    line();
  }

  if (r.fairness) {
    for (const l of renderFairnessSection(r.fairness)) line(l);
    line();
  }
  if (r.freshness) {
    for (const l of renderFreshnessSection(r.freshness)) line(l);
    line();
  }
  if (r.cost) {
    for (const l of renderCostSection(r.cost)) line(l);
    line();
  }

  if (r.serviceLog) {
    const c = r.serviceLog.counts;
    line(
      `Service log lines during the load and drain sections (written to .data/bench-service.log, or BENCH_SERVICE_LOG, not the console): ${num((c.log ?? 0) + (c.info ?? 0))} info, ${num(c.warn ?? 0)} warnings, ${num(c.error ?? 0)} errors.` +
        (r.serviceLog.firstErrors.length > 0
          ? ` First errors: ${r.serviceLog.firstErrors.map((e) => `\`${e.replace(/`/g, "'").slice(0, 160)}\``).join('; ')}`
          : ''),
    );
    line();
  }

  if (r.dashboard) {
    for (const l of renderDashboardSection(r.dashboard, machine.date.slice(0, 10))) line(l);
    line();
  }

  if (v.missed.length > 0) {
    line('## Missed targets');
    line();
    for (const m of v.missed) line(`- ${m}`);
    line();
    line(missedNotes(r));
    line();
  }

  line('## What the local figures do and do not say about AWS');
  line();
  for (const n of AWS_NOTES) line(`- ${n}`);
  line();
  return out.join('\n');
}

function readingNotes(l: LoadSection): string {
  const get = l.scenarios.find((s) => s.name === 'GET referral');
  const rawGet = l.raw.GetItem;
  const parts: string[] = [];
  if (get) {
    const svc = get.figures.cpu.service;
    const ddb = get.figures.cpu.dynamodb;
    const gen = get.figures.cpu.loadgen;
    const rawSdk = rawGet.cpu.service;
    parts.push(
      `Reading the CPU columns: a GET referral costs ${num(svc, 2)} ms of CPU in the service process (HTTP server, the gateway's event, middy, auth from cache, one SDK call, JSON) ` +
        `against ${num(rawSdk, 2)} ms for the bare SDK GetItem, plus ${gen === null ? 'n/a' : num(gen, 2)} ms in the load generator; DynamoDB Local spends ${ddb === null ? 'n/a' : num(ddb, 2)} ms (vs ${rawGet.cpu.dynamodb === null ? 'n/a' : num(rawGet.cpu.dynamodb, 2)} ms raw). ` +
        'On two cores shared by these three processes (and whatever else runs on the machine), the rate is roughly 2,000 ms / (sum of the CPU per request) when the cores are saturated: every millisecond the HTTP path and the load generator add is taken from DynamoDB Local.',
    );
  }
  return parts.join(' ');
}

function missedNotes(r: Report): string {
  const notes: string[] = [];
  if (r.bundles?.results.some((b) => !b.initOk)) {
    const b = r.bundles;
    const sdk = b.sdkOnly.initMs - b.empty.initMs;
    const typical = b.results.map((x) => x.overheadMs).sort((x, y) => x - y)[Math.floor(b.results.length / 2)] ?? 0;
    notes.push(
      `Init overhead: the SDK clients alone (the reference row: imports of DynamoDBClient, DynamoDBDocumentClient and SQSClient, no service code) cost ${ms(sdk)} over the empty handler, against ${ms(typical)} for the median function: ` +
        "most of a handler's load time is the AWS SDK v3 (smithy core, the clients and their protocol code) being compiled and run at require, and the node built-ins it pulls in (http, https, crypto, stream, zlib); the service's own code is a few KB of each bundle. " +
        'With --enable-source-maps node also reads and parses the source map at load (compare the last column). These figures are CPU-bound: on a shared machine they grow with the load average.',
    );
  }
  if (r.load) {
    const rawGet = r.load.raw.GetItem.opsPerSecond;
    const reads = r.load.scenarios.filter(
      (x) => (x.name === 'GET referral' || x.name === 'List referrals') && x.figures.rps / rawGet < READ_TARGET_RATIO,
    );
    if (reads.some((x) => x.name === 'List referrals')) {
      const list = r.load.scenarios.find((x) => x.name === 'List referrals');
      const q = r.load.raw.Query.opsPerSecond;
      notes.push(
        `List referrals against raw GetItem compares a page of 21 items plus a counter read with a single small item: DynamoDB Local itself serves the Query at ${num(q)}/s, ${pct(q / rawGet)} of its GetItem rate, so a list cannot reach ${pct(READ_TARGET_RATIO)} of GetItem here whatever the service does; against its own raw Query it reaches ${list ? pct(list.figures.rps / q) : 'n/a'}.`,
      );
    }
    if (reads.some((x) => x.name === 'GET referral')) {
      notes.push(
        'GET referral below target: with auth cached it makes one GetItem per request, like the raw loop, so the gap is the HTTP path (the gateway, middy, serialisation) and the load generator competing with DynamoDB Local for the same two cores (see the CPU columns).',
      );
    }
  }
  if (r.drain && r.totalSeconds >= 300) {
    const d = r.drain;
    const perAlert = median(d.runs.map((x) => x.cpu.dynamodb ?? Number.NaN));
    notes.push(
      `Bench runtime: the drain of ${num(d.alerts)} alerts alone took ${num(d.runs.reduce((t, x) => t + x.appliedSeconds, 0))} s. DynamoDB Local spends ${ms(perAlert)} of CPU per alert ` +
        "(the worker reads a batch's subscriptions, markers and payments in one BatchGet and writes them in one transaction per wave, about 4 items an alert, and the fan-out marks their events dispatched; DynamoDB Local's transactions are its most expensive operation, see the raw TransactWriteItems rate), " +
        `so ${num(d.alerts)} alerts need at least ${num((d.alerts * perAlert) / 1000 / 2)} s of both cores here, before the service's own share.`,
    );
  }
  return notes.join('\n\n');
}

const AWS_NOTES = [
  "Throughput here is one machine's: every handler runs in one node process, beside DynamoDB Local (java) and the load generator, on the same cores. In AWS each concurrent request gets its own Lambda instance and DynamoDB scales on demand, so capacity grows with concurrency; these req/s are not AWS capacity. They are a baseline to compare changes on the same machine, and the ratios (endpoint vs raw DynamoDB Local in the same run) show how much the service adds on top of its database calls.",
  "DynamoDB Local is an emulator (java over SQLite), much slower per operation than DynamoDB and with no partitions, throttling or adaptive capacity. In AWS a GetItem or Query takes single-digit milliseconds in-region and a 4-item transaction roughly twice a write; latency per request is then dominated by those round trips (auth is cached). What DynamoDB Local does not model: the ~1,000 WCU/s per partition key, i.e. about 500 transactional increments per second on one counter item - the account's `referrals` and `subscriptions` counters every create touches are the first ceiling in AWS.",
  'There is no API Gateway locally: in AWS the HTTP API adds a few milliseconds per request, plus TLS and the network to the client. The local gateway builds the same payload v2.0 event in process.',
  "Cold starts: the init figures are module load on this machine's CPU. A Lambda cold start also includes the runtime's own start and fetching the code, and a 512 MB function gets about 0.3 of a vCPU, so CPU-bound module initialisation there takes longer than here; the first SDK call then pays the TLS handshake, not counted here. Warm requests pay none of it.",
  `The drain runs the local pollers with LOCAL_POLLER_CONCURRENCY batches of up to ${SYNC_BATCH} in flight (5, the stack's default event source cap), against DynamoDB Local, all handlers in one node process. In AWS each batch runs in its own Lambda and the cap can be raised (docs/operations.md), so a backlog drains faster, until the table's write budget binds; the counters a create touches are sharded (docs/capacity.md), so no single item is that limit.`,
  'Auth: with AUTH_CACHE_TTL_SECONDS=60 every handler shares one key cache in the local process; in AWS each Lambda container has its own, so each new container pays one GetItem for the key.',
];
