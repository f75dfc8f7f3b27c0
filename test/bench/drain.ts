// Webhook drain: a burst of signed alerts posted as fast as the intake takes them, then the time until
// the subscription-sync worker has applied every one, and a check that none was lost.
import { localPollerConcurrency } from '../../infra/local/start';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { join } from 'node:path';
import { createAccount } from '../../shared/store/accounts';
import { batchGet, lookup, readCounter } from '../../shared/store/ops';
import { saveProviderConnection, saveProviderSettings } from '../../shared/store/provider';
import { keys, type Key } from '../../shared/store/table';
import type { ChargebeeEmulator } from '../../infra/local/emulators/chargebee';
import { checkoutAlerts } from './alerts';
import type { CpuSample } from './cpu';
import type { BenchRuntime } from './harness';
import { waitForQueue } from './load';
import type { LoadFigures } from './load-client';
import { measureRawTransactRate, type RawTransactRate } from './raw-transact';
import { median, progress } from './stats';

/**
 * Issue 29's targets: each drain's applied rate as a ratio to the raw TransactWriteItems rate of the same
 * run, 3x the ratios of BENCHMARKS.md before the batch path (Classic 0.38, Billing 0.49, Stripe 0.67).
 * Chargebee had none (it joined later); its figure is reported beside the others.
 */
export const DRAIN_RATIO_TARGETS: Record<string, number> = { 'paddle-classic': 1.14, 'paddle-billing': 1.48, stripe: 2.0 };
/** The same ratios before the batch path (BENCHMARKS.md at e10cd49: Classic 36/s applied vs 95/s raw). */
export const DRAIN_RATIOS_BEFORE: Record<string, number> = { 'paddle-classic': 0.38, 'paddle-billing': 0.49, stripe: 0.67 };
/** CPU ms per Classic alert before the batch path (BENCHMARKS.md at e10cd49; service / DynamoDB Local): the target is a third of it. */
export const CLASSIC_CPU_BEFORE = { service: 16.56, dynamodb: 18.61 };

/** The raw TransactWriteItems rate measured right before and right after a drain, and their mean. */
export interface RawBeside {
  before: RawTransactRate;
  after: RawTransactRate;
  /** The mean of the two: the denominator of the drain's ratio. */
  opsPerSecond: number;
}

async function rawBeside(bench: BenchRuntime, before: RawTransactRate): Promise<RawBeside> {
  const after = await measureRawTransactRate(bench);
  return { before, after, opsPerSecond: (before.opsPerSecond + after.opsPerSecond) / 2 };
}

const cpuLine = (cpu: CpuSample) =>
  `CPU ms per event: service ${cpu.service.toFixed(2)}, DynamoDB Local ${cpu.dynamodb === null ? '-' : cpu.dynamodb.toFixed(2)}`;

/**
 * Batches of each worker in flight at once: 5 unless LOCAL_POLLER_CONCURRENCY says otherwise, the stack's
 * default event source cap (infra/cloud/queue-worker.ts DEFAULT_EVENT_SOURCE_MAX_CONCURRENCY). The runtime
 * reads it when it starts (infra/local/start.ts), so it is set when this module loads, before the bench starts
 * its runtime, unless BENCH_SKIP skips the drain; it holds for the whole runtime (every section states its own).
 */
export const DRAIN_POLLER_CONCURRENCY = 5;
if (
  !process.env.LOCAL_POLLER_CONCURRENCY &&
  !(process.env.BENCH_SKIP ?? '')
    .split(',')
    .map((x) => x.trim())
    .includes('drain')
)
  process.env.LOCAL_POLLER_CONCURRENCY = String(DRAIN_POLLER_CONCURRENCY);

/** The worker of provider-events (functions/workers.ts): held while a backlog is posted. */
const SYNC_WORKER = 'SubscriptionSync';

/**
 * The worker's drain from a backlog: every webhook posted through the real intake while the
 * subscription-sync worker's pollers are held (`runtime.workers.hold`: infra/local/pollers.ts holdPoller, in the workers process when npm start runs one), then the worker released
 * and timed from that moment until provider-events is empty (a record is deleted only once applied; the
 * effects are verified right after, a missing one counted as lost). Nothing else bounds this rate but the
 * worker and DynamoDB Local.
 */
export interface BacklogDrain {
  events: number;
  /** Posting with the worker held: the intake's own rate. */
  postSeconds: number;
  postRate: number;
  post: LoadFigures;
  /** Messages in provider-events when the worker was released. */
  backlog: number;
  /** From the release until the queue was empty. */
  drainSeconds: number;
  /** events / drainSeconds. */
  appliedRate: number;
  /** CPU ms per event in the drain window (service process / DynamoDB Local). */
  cpu: CpuSample;
  /** The raw TransactWriteItems rate right before and right after this drain; the ratio uses their mean. */
  raw: RawBeside;
  ratio: number;
  pollerConcurrency: number;
  dlq: number;
  rejected: number;
  /** Webhooks answered 2xx whose effect is not in the table. */
  lost: number;
}

/**
 * BENCH_CPU_PROFILE=<dir>: a V8 CPU profile of the bench process (the runtime's handlers, pollers, local SQS
 * and emulators) over each backlog drain's window alone, written to <dir>/drain-<provider>.cpuprofile (open
 * it in Chrome's DevTools). A diagnostic: it slows the drain it watches.
 */
async function startDrainProfile(): Promise<{ stop(label: string): Promise<void> } | null> {
  const dir = process.env.BENCH_CPU_PROFILE;
  if (!dir) return null;
  const session = new Session();
  session.connect();
  const post = <T>(method: string, params?: object) =>
    new Promise<T>((resolve, reject) => session.post(method, params ?? {}, (err, out) => (err ? reject(err) : resolve(out as T))));
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 500 });
  await post('Profiler.start');
  return {
    async stop(label) {
      const { profile } = await post<{ profile: unknown }>('Profiler.stop');
      session.disconnect();
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `drain-${label}.cpuprofile`), JSON.stringify(profile));
    },
  };
}

async function drainFromBacklog(
  bench: BenchRuntime,
  label: string,
  o: { events: number; timeoutMs: number; post: () => Promise<LoadFigures> },
): Promise<Omit<BacklogDrain, 'lost'>> {
  await waitForQueue(bench, 'provider-events', 120_000);
  const dlqBefore = (await bench.queues.depth('provider-events-dlq')).total;
  progress(`drain (${label}, backlog): the raw TransactWriteItems rate before the drain`);
  const rawBefore = await measureRawTransactRate(bench);
  let post: LoadFigures;
  let postSeconds: number;
  let backlog: number;
  let drainSeconds: number;
  let cpu: CpuSample;
  await bench.runtime.workers.hold(SYNC_WORKER);
  try {
    progress(`drain (${label}, backlog): posting ${o.events} webhooks with the subscription-sync worker held`);
    const posting = performance.now();
    post = await o.post();
    postSeconds = (performance.now() - posting) / 1000;
    backlog = (await bench.queues.depth('provider-events')).total;
    progress(`drain (${label}, backlog): ${backlog} queued; releasing the worker`);
    const cpuFrom = bench.cpu.sample();
    const profile = await startDrainProfile();
    const started = performance.now();
    bench.runtime.workers.release(SYNC_WORKER);
    const deadline = started + o.timeoutMs;
    for (;;) {
      const { total } = await bench.queues.depth('provider-events');
      if (total === 0) break;
      if (performance.now() > deadline)
        throw new Error(`drain (${label}, backlog): not drained within ${o.timeoutMs / 1000} s (queue ${total})`);
      await new Promise((r) => setTimeout(r, 50));
    }
    drainSeconds = (performance.now() - started) / 1000;
    cpu = bench.cpu.since(cpuFrom, o.events);
    await profile?.stop(label);
  } finally {
    bench.runtime.workers.release(SYNC_WORKER);
  }
  const raw = await rawBeside(bench, rawBefore);
  const appliedRate = o.events / drainSeconds;
  const dlq = (await bench.queues.depth('provider-events-dlq')).total - dlqBefore;
  const ratio = appliedRate / raw.opsPerSecond;
  const target = DRAIN_RATIO_TARGETS[label];
  progress(
    `drain (${label}, backlog): ${backlog} drained in ${drainSeconds.toFixed(1)} s: applied ${appliedRate.toFixed(1)}/s, raw TransactWriteItems ${raw.opsPerSecond.toFixed(1)}/s (before ${raw.before.opsPerSecond.toFixed(1)}, after ${raw.after.opsPerSecond.toFixed(1)}): ratio ${ratio.toFixed(2)}${target ? ` (target >= ${target})` : ''}; ${cpuLine(cpu)}`,
  );
  return {
    events: o.events,
    postSeconds,
    postRate: post.ok / postSeconds,
    post,
    backlog,
    drainSeconds,
    appliedRate,
    cpu,
    raw,
    ratio,
    pollerConcurrency: localPollerConcurrency(false),
    dlq,
    rejected: post.requests - post.ok,
  };
}

export interface DrainRun {
  alerts: number;
  /** From the first POST until the last answer. */
  postSeconds: number;
  postRate: number;
  post: LoadFigures;
  /** From the first POST until every alert was applied (queue empty, every effect verified). */
  appliedSeconds: number;
  appliedRate: number;
  /** From the last answer until applied: the backlog the worker still had when posting ended. */
  tailSeconds: number;
  /** Most messages in provider-events at one time, waiting or in flight (sampled every 50 ms). */
  peakBacklog: number;
  /** CPU ms per alert, from the first POST until applied. */
  cpu: CpuSample;
  dlq: number;
  missing: { subscriptions: number; payments: number; markers: number; notActive: number };
  /** Alerts the intake did not answer 2xx (Paddle would retry them). */
  rejected: number;
  /** Alerts answered 200 whose effect is not in the table: lost. */
  lost: number;
}

export interface DrainSection {
  alerts: number;
  checkouts: number;
  connections: number;
  runs: DrainRun[];
  signSeconds: number;
  median: { postSeconds: number; postRate: number; appliedSeconds: number; appliedRate: number; p50: number; p99: number };
  lostTotal: number;
  /** The raw 4-item TransactWriteItems rate before and after the runs. */
  raw: RawBeside;
  /**
   * The end-to-end runs' median applied rate (from the first POST, posting while draining: bound by the
   * post rate) divided by the raw TransactWriteItems rate. Issue 29's ratio is the backlog's.
   */
  ratio: number;
  /** The worker's drain from a backlog (the measure of DRAIN_RATIO_TARGETS). */
  backlog: BacklogDrain & { missing: { subscriptions: number; payments: number; markers: number; notActive: number } };
}

/** Looks every key up (BatchGet, 100 at a time, in parallel chunks): the keys not found. */
async function missingKeys(wanted: Key[]): Promise<Key[]> {
  const missing: Key[] = [];
  for (let i = 0; i < wanted.length; i += 1000) {
    const slice = wanted.slice(i, i + 1000);
    const chunks: Key[][] = [];
    for (let j = 0; j < slice.length; j += 100) chunks.push(slice.slice(j, j + 100));
    const found = await Promise.all(chunks.map((c) => batchGet(c)));
    chunks.forEach((c, n) => {
      for (const k of c) if (!lookup(found[n] as Map<string, Record<string, unknown>>, k)) missing.push(k);
    });
  }
  return missing;
}

export async function measureDrain(
  bench: BenchRuntime,
  workDir: string,
  o: {
    checkouts: number;
    connections: number;
    /** At most this many runs. */
    runs: number;
    timeoutMs: number;
    /** Asked after each run but the last: whether another one fits (the bench's time budget). */
    another?: (lastRunSeconds: number) => boolean;
  },
): Promise<DrainSection> {
  const rt = bench.runtime;
  const runs: DrainRun[] = [];
  let signSeconds = 0;
  let lastRunSeconds = 0;
  // Ids far from the emulator's own (subscriptions 70001+, payments 80001+, alerts 1000000001+).
  let subscriptionSeq = 5_000_001;
  let alertSeq = 3_000_000_001;
  progress('drain: the raw TransactWriteItems rate before the runs (10 closed loops, 4 s)');
  const rawBefore = await measureRawTransactRate(bench);

  /** A fresh account wired to the emulator and its signed alerts, written to a file for the load generator. */
  const prepare = async (run: number | 'backlog') => {
    // A fresh account per run, wired to the emulator like the demo account: its counters start at 0.
    const { account } = await createAccount({ name: `Bench drain ${run}`, plan: 'regular' });
    const accountId = account.accountId;
    await saveProviderSettings(accountId, {
      vendorId: rt.paddle.vendorId,
      authCode: rt.paddle.authCode,
      publicKey: rt.paddle.publicKeyPem,
      vendorsApiUrl: rt.paddle.vendorsApiUrl,
      checkoutApiUrl: rt.paddle.checkoutApiUrl,
    });

    progress(
      `drain: run ${run === 'backlog' ? 'backlog' : `${run}/${o.runs}`}: signing ${o.checkouts * 2} alerts (${o.checkouts} checkouts: subscription_created + subscription_payment_succeeded)`,
    );
    const t = performance.now();
    const bodies: string[] = [];
    const subscriptions: Array<{ subscriptionId: number; paymentId: number; alertIds: [number, number] }> = [];
    for (let i = 0; i < o.checkouts; i++) {
      const subscriptionId = subscriptionSeq++;
      const ids = {
        alertId: alertSeq,
        subscriptionId,
        paymentId: subscriptionId + 10_000_000,
        userId: subscriptionId + 20_000_000,
        orderNumber: subscriptionId,
      };
      alertSeq += 2;
      bodies.push(...checkoutAlerts(rt.paddle.sign, ids));
      subscriptions.push({ subscriptionId, paymentId: ids.paymentId, alertIds: [ids.alertId, ids.alertId + 1] });
    }
    signSeconds += (performance.now() - t) / 1000;
    const file = join(workDir, `drain-${run}.txt`);
    writeFileSync(file, `${bodies.join('\n')}\n`);

    return { accountId, bodies, subscriptions, file };
  };

  /** Every alert's effect in the table: the subscriptions, payments and alert markers missing, and the checkouts not counted active. */
  const verify = async (
    accountId: string,
    subscriptions: Array<{ subscriptionId: number; paymentId: number; alertIds: [number, number] }>,
  ) => {
    const missingSubs = await missingKeys(subscriptions.map((s) => keys.subscription(accountId, s.subscriptionId)));
    const missingPayments = await missingKeys(subscriptions.map((s) => keys.payment(accountId, s.subscriptionId, s.paymentId)));
    const missingMarkers = await missingKeys(subscriptions.flatMap((s) => s.alertIds.map((a) => keys.alert(accountId, String(a)))));
    const active = await readCounter(accountId, 'subscriptions#active');
    return {
      subscriptions: missingSubs.length,
      payments: missingPayments.length,
      markers: missingMarkers.length,
      notActive: subscriptions.length - active,
    };
  };

  for (let run = 1; run <= o.runs; run++) {
    const runStarted = performance.now();
    if (run > 1 && o.another && !o.another(lastRunSeconds)) break;
    const { accountId, bodies, subscriptions, file } = await prepare(run);
    await waitForQueue(bench, 'provider-events', 120_000);
    const dlqBefore = (await bench.queues.depth('provider-events-dlq')).total;
    progress(`drain: run ${run}/${o.runs}: posting ${bodies.length} alerts with ${o.connections} connections`);
    const cpuFrom = bench.cpu.sample();
    const started = performance.now();
    let posted: LoadFigures | undefined;
    let postSeconds = 0;
    const posting = bench.load
      .run({
        url: rt.url,
        connections: o.connections,
        amount: bodies.length,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        scenario: { kind: 'form-bodies', path: `/webhooks/paddle/${accountId}/`, bodiesFile: file },
      })
      .then((f) => {
        posted = f;
        postSeconds = (performance.now() - started) / 1000;
      });

    // Applied = every alert posted and answered, and the queue holds nothing (a record is deleted only
    // after the worker applied it; a failing one stays in flight, then moves to the DLQ).
    let peakBacklog = 0;
    // The backlog when the last POST was answered, and when: what the worker drains alone afterwards.
    let postEnd: { depth: number; at: number } | null = null;
    const deadline = started + o.timeoutMs;
    for (;;) {
      const { total: depth, messages } = await bench.queues.depth('provider-events');
      peakBacklog = Math.max(peakBacklog, messages);
      if (posted && !postEnd) postEnd = { depth, at: performance.now() };
      if (posted && depth === 0) break;
      if (performance.now() > deadline) throw new Error(`drain: not applied within ${o.timeoutMs / 1000} s (queue ${depth})`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await posting;
    const appliedSeconds = (performance.now() - started) / 1000;
    const drainedAlone = postEnd as { depth: number; at: number } | null;
    if (drainedAlone && drainedAlone.depth > 0)
      progress(
        `drain: run ${run}: ${drainedAlone.depth} alerts still queued when posting ended, drained alone at ${(drainedAlone.depth / ((performance.now() - drainedAlone.at) / 1000)).toFixed(1)}/s`,
      );
    const cpu = bench.cpu.since(cpuFrom, bodies.length);
    const figures = posted as LoadFigures;

    // None lost: every subscription, payment and alert marker is in the table, and the DLQ got nothing.
    progress(`drain: run ${run}/${o.runs}: verifying every alert's effect`);
    const dlq = (await bench.queues.depth('provider-events-dlq')).total - dlqBefore;
    const missing = await verify(accountId, subscriptions);
    runs.push({
      alerts: bodies.length,
      postSeconds,
      postRate: figures.ok / postSeconds,
      post: figures,
      appliedSeconds,
      appliedRate: bodies.length / appliedSeconds,
      tailSeconds: appliedSeconds - postSeconds,
      peakBacklog,
      cpu,
      dlq,
      missing,
      rejected: figures.requests - figures.ok,
      lost: missing.markers,
    });
    lastRunSeconds = (performance.now() - runStarted) / 1000;
  }

  progress('drain: the raw TransactWriteItems rate after the runs');
  const raw = await rawBeside(bench, rawBefore);

  const appliedMedian = median(runs.map((r) => r.appliedRate));
  const ratio = appliedMedian / raw.opsPerSecond;
  const cpu = runs[runs.length - 1]?.cpu;
  progress(
    `drain (paddle-classic, end to end, bound by the post rate): applied ${appliedMedian.toFixed(1)}/s, raw TransactWriteItems ${raw.opsPerSecond.toFixed(1)}/s (before ${raw.before.opsPerSecond.toFixed(1)}, after ${raw.after.opsPerSecond.toFixed(1)}): ratio ${ratio.toFixed(2)}; ${cpu ? cpuLine(cpu) : ''}`,
  );
  // The worker's own drain: the same alerts for a fresh account, posted with the worker held, then drained.
  const b = await prepare('backlog');
  const backlogRun = await drainFromBacklog(bench, 'paddle-classic', {
    events: b.bodies.length,
    timeoutMs: o.timeoutMs,
    post: () =>
      bench.load.run({
        url: rt.url,
        connections: o.connections,
        amount: b.bodies.length,
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        scenario: { kind: 'form-bodies', path: `/webhooks/paddle/${b.accountId}/`, bodiesFile: b.file },
      }),
  });
  progress("drain: backlog: verifying every alert's effect");
  const backlogMissing = await verify(b.accountId, b.subscriptions);
  const backlog: BacklogDrain & { missing: typeof backlogMissing } = {
    ...backlogRun,
    missing: backlogMissing,
    lost: backlogMissing.subscriptions + backlogMissing.payments + backlogMissing.markers,
  };
  return {
    raw,
    ratio,
    backlog,
    alerts: o.checkouts * 2,
    checkouts: o.checkouts,
    connections: o.connections,
    runs,
    signSeconds,
    median: {
      postSeconds: median(runs.map((r) => r.postSeconds)),
      postRate: median(runs.map((r) => r.postRate)),
      appliedSeconds: median(runs.map((r) => r.appliedSeconds)),
      appliedRate: median(runs.map((r) => r.appliedRate)),
      p50: median(runs.map((r) => r.post.p50)),
      p99: median(runs.map((r) => r.post.p99)),
    },
    lostTotal: runs.reduce((s, r) => s + r.lost + r.dlq + r.rejected, 0) + backlog.lost + backlog.dlq + backlog.rejected,
  };
}

/** The JSON providers of the drain: their webhooks are built by their emulators, signed (or Basic-authenticated). */
export type JsonDrainProvider = 'paddle-billing' | 'stripe' | 'chargebee';

/** The same drain for the JSON providers: signed notifications of the emulator, through their intake. */
export interface JsonDrainSection {
  provider: JsonDrainProvider;
  checkouts: number;
  /** Checkouts of the backlog drain (its own account). */
  backlogCheckouts: number;
  webhooks: number;
  connections: number;
  postSeconds: number;
  postRate: number;
  post: LoadFigures;
  appliedSeconds: number;
  appliedRate: number;
  peakBacklog: number;
  /** Provider API calls the worker made (customer emails, lookups, Chargebee's re-fetch of each event), from the emulator's counts. */
  apiCalls: number;
  dlq: number;
  missing: { subscriptions: number; payments: number; markers: number };
  rejected: number;
  lostTotal: number;
  /** CPU ms per webhook, from the first POST until applied. */
  cpu: CpuSample;
  /** The raw 4-item TransactWriteItems rate right before and right after this drain. */
  raw: RawBeside;
  /**
   * The end-to-end applied rate (from the first POST, posting while draining: bound by the post rate)
   * divided by the raw TransactWriteItems rate. Issue 29's ratio is the backlog's.
   */
  ratio: number;
  /** The worker's drain from a backlog (the measure of DRAIN_RATIO_TARGETS); a missing marker is not counted lost (see lostTotal). */
  backlog: BacklogDrain & { missing: { subscriptions: number; payments: number; markers: number } };
}

/** A fresh account connected to the provider's emulator, checkouts made there, their webhooks written to a file. */
async function prepareJson(bench: BenchRuntime, workDir: string, o: { provider: JsonDrainProvider; checkouts: number }, tag: string) {
  const rt = bench.runtime;
  const { account } = await createAccount({ name: `Bench drain ${o.provider}${tag}`, plan: 'regular' });
  const accountId = account.accountId;
  const billing = rt.paddleBilling;
  const stripe = rt.stripe;
  // Chargebee's emulator is one of the runtime's emulators (by its definition): its handle and connection.
  const chargebeeRunning = rt.emulators.find((e) => e.kind === 'chargebee');
  if (o.provider === 'chargebee' && !chargebeeRunning) throw new Error('the runtime runs no Chargebee emulator');
  const chargebee = chargebeeRunning?.handle as ChargebeeEmulator;
  const emulatorCalls = () =>
    Object.values((o.provider === 'paddle-billing' ? billing : o.provider === 'stripe' ? stripe : chargebee).callCounts()).reduce(
      (a, b) => a + b,
      0,
    );
  if (o.provider === 'chargebee')
    await saveProviderConnection(accountId, (chargebeeRunning as NonNullable<typeof chargebeeRunning>).connection);
  else if (o.provider === 'paddle-billing')
    await saveProviderConnection(accountId, {
      kind: 'paddle-billing',
      apiKey: billing.apiKey,
      apiUrl: billing.url,
      webhookSecret: billing.webhookSecret,
    });
  else
    await saveProviderConnection(accountId, {
      kind: 'stripe',
      secretKey: stripe.secretKey,
      apiUrl: stripe.url,
      webhookSecret: stripe.webhookSecret,
    });

  progress(`drain (${o.provider}): ${o.checkouts} checkouts in the emulator, their webhooks signed`);
  const lines: string[] = [];
  const expected: { subscriptionId: string; paymentId: string }[] = [];
  const eventIds: string[] = [];
  const header = o.provider === 'paddle-billing' ? 'paddle-signature' : 'stripe-signature';
  for (let i = 0; i < o.checkouts; i++) {
    const email = `drain-${i}@example.com`;
    if (o.provider === 'chargebee') {
      // customer_created (acknowledged without effect), subscription_created, payment_succeeded; each carries
      // the account's Basic-auth pair, and the worker fetches each one it applies again by its id.
      const out = await chargebee.checkout({ email, deliver: false });
      if (!out.invoice) throw new Error('the Chargebee emulator made no first invoice');
      expected.push({ subscriptionId: out.subscription.id, paymentId: out.invoice.id });
      for (const d of out.deliveries) {
        lines.push(JSON.stringify({ h: { ...d.headers }, b: d.rawBody }));
        eventIds.push(d.event.id);
      }
    } else if (o.provider === 'paddle-billing') {
      const out = await billing.checkout({ email, deliver: false });
      expected.push({ subscriptionId: out.result.subscription.id, paymentId: out.result.transaction.id });
      for (const n of out.delivered) {
        lines.push(JSON.stringify({ h: { 'content-type': 'application/json', [header]: n.signature }, b: n.rawBody }));
        eventIds.push(n.notification.event_id);
      }
    } else {
      const out = await stripe.checkout({ email, deliver: false });
      expected.push({ subscriptionId: out.result.subscription.id, paymentId: out.result.invoice.id });
      for (const e of out.delivered) {
        lines.push(JSON.stringify({ h: { 'content-type': 'application/json', [header]: e.signature }, b: e.rawBody }));
        eventIds.push(e.event.id);
      }
    }
  }
  const file = join(workDir, `drain-${o.provider}${tag}.txt`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { accountId, lines, expected, eventIds, file, emulatorCalls };
}

export async function measureJsonDrain(
  bench: BenchRuntime,
  workDir: string,
  o: { provider: JsonDrainProvider; checkouts: number; backlogCheckouts?: number; connections: number; timeoutMs: number },
): Promise<JsonDrainSection> {
  const rt = bench.runtime;
  const { accountId, lines, expected, eventIds, file, emulatorCalls } = await prepareJson(bench, workDir, o, '');
  const callsBefore = emulatorCalls();

  await waitForQueue(bench, 'provider-events', 120_000);
  const dlqBefore = (await bench.queues.depth('provider-events-dlq')).total;
  progress(`drain (${o.provider}): the raw TransactWriteItems rate before the drain`);
  const rawBefore = await measureRawTransactRate(bench);
  progress(`drain (${o.provider}): posting ${lines.length} webhooks with ${o.connections} connections`);
  const cpuFrom = bench.cpu.sample();
  const started = performance.now();
  let posted: LoadFigures | undefined;
  let postSeconds = 0;
  const path = `/webhooks/${o.provider}/${accountId}/`;
  const posting = bench.load
    .run({
      url: rt.url,
      connections: o.connections,
      amount: lines.length,
      headers: { 'content-type': 'application/json' },
      scenario: { kind: 'signed-bodies', path, bodiesFile: file },
    })
    .then((f) => {
      posted = f;
      postSeconds = (performance.now() - started) / 1000;
    });
  let peakBacklog = 0;
  let postEnd: { depth: number; at: number } | null = null;
  const deadline = started + o.timeoutMs;
  for (;;) {
    const { total: depth, messages } = await bench.queues.depth('provider-events');
    peakBacklog = Math.max(peakBacklog, messages);
    if (posted && !postEnd) postEnd = { depth, at: performance.now() };
    if (posted && depth === 0) break;
    if (performance.now() > deadline) throw new Error(`drain (${o.provider}): not applied within ${o.timeoutMs / 1000} s (queue ${depth})`);
    await new Promise((r) => setTimeout(r, 50));
  }
  await posting;
  const appliedSeconds = (performance.now() - started) / 1000;
  const drainedAlone = postEnd as { depth: number; at: number } | null;
  // The applied rate cannot pass the post rate: a drain that ends right after the last POST was bound by the intake.
  progress(
    `drain (${o.provider}): ${drainedAlone?.depth ?? 0} webhooks still queued when posting ended${drainedAlone && drainedAlone.depth > 0 ? `, drained alone at ${(drainedAlone.depth / ((performance.now() - drainedAlone.at) / 1000)).toFixed(1)}/s` : ''}`,
  );
  const cpu = bench.cpu.since(cpuFrom, lines.length);
  const figures = posted as LoadFigures;
  const raw = await rawBeside(bench, rawBefore);
  const ratio = lines.length / appliedSeconds / raw.opsPerSecond;
  progress(
    `drain (${o.provider}, end to end, bound by the post rate): applied ${(lines.length / appliedSeconds).toFixed(1)}/s, raw TransactWriteItems ${raw.opsPerSecond.toFixed(1)}/s (before ${raw.before.opsPerSecond.toFixed(1)}, after ${raw.after.opsPerSecond.toFixed(1)}): ratio ${ratio.toFixed(2)}; ${cpuLine(cpu)}`,
  );
  progress(`drain (${o.provider}): verifying every webhook's effect`);
  const dlq = (await bench.queues.depth('provider-events-dlq')).total - dlqBefore;
  const missing = {
    subscriptions: (await missingKeys(expected.map((e) => keys.subscription(accountId, e.subscriptionId)))).length,
    payments: (await missingKeys(expected.map((e) => keys.payment(accountId, e.subscriptionId, e.paymentId)))).length,
    markers: (await missingKeys(eventIds.map((id) => keys.alert(accountId, id)))).length,
  };
  const apiCalls = emulatorCalls() - callsBefore;
  const rejected = figures.requests - figures.ok;

  // The worker's own drain: new checkouts for a fresh account, posted with the worker held, then drained.
  const b = await prepareJson(bench, workDir, { ...o, checkouts: o.backlogCheckouts ?? o.checkouts }, '-backlog');
  const backlogRun = await drainFromBacklog(bench, o.provider, {
    events: b.lines.length,
    timeoutMs: o.timeoutMs,
    post: () =>
      bench.load.run({
        url: rt.url,
        connections: o.connections,
        amount: b.lines.length,
        headers: { 'content-type': 'application/json' },
        scenario: { kind: 'signed-bodies', path: `/webhooks/${o.provider}/${b.accountId}/`, bodiesFile: b.file },
      }),
  });
  progress(`drain (${o.provider}, backlog): verifying every webhook's effect`);
  const backlogMissing = {
    subscriptions: (await missingKeys(b.expected.map((e) => keys.subscription(b.accountId, e.subscriptionId)))).length,
    payments: (await missingKeys(b.expected.map((e) => keys.payment(b.accountId, e.subscriptionId, e.paymentId)))).length,
    markers: (await missingKeys(b.eventIds.map((id) => keys.alert(b.accountId, id)))).length,
  };
  const backlog = { ...backlogRun, missing: backlogMissing, lost: backlogMissing.subscriptions + backlogMissing.payments };
  return {
    backlog,
    cpu,
    raw,
    ratio,
    provider: o.provider,
    checkouts: o.checkouts,
    backlogCheckouts: o.backlogCheckouts ?? o.checkouts,
    webhooks: lines.length,
    connections: o.connections,
    postSeconds,
    postRate: figures.ok / postSeconds,
    post: figures,
    appliedSeconds,
    appliedRate: lines.length / appliedSeconds,
    peakBacklog,
    apiCalls,
    dlq,
    missing,
    rejected,
    // Markers are written for the events that carry facts; an event type the adapter ignores leaves none,
    // so a missing marker is reported, not counted as lost. Subscriptions and payments are what must be there.
    lostTotal: missing.subscriptions + missing.payments + dlq + rejected + backlog.lost + backlog.dlq + backlog.rejected,
  };
}
