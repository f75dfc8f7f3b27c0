// Noisy neighbour (issue 29): one tenant's burst of Paddle Classic renewals, posted as fast as the intake
// takes them, while a quiet tenant converts referrals; the quiet tenant's lag from its webhook to the
// reward visible, and the noisy tenant's drain time. Both tenants share `provider-events` and its worker,
// as every tenant does; fair queues (a MessageGroupId per account) are what keep the quiet one's lag flat.
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAccount } from '../../shared/store/accounts';
import { saveProviderSettings } from '../../shared/store/provider';
import { keys, type Key } from '../../shared/store/table';
import { checkoutAlerts, dateTimeOf, toForm, type Sign } from './alerts';
import type { CpuSample } from './cpu';
import { absentKeys, apiAs, dlqTotal, startContext, VisibilityWatch, type BenchRuntime, type SectionContext } from './harness';
import { waitForQueue } from './load';
import type { LoadFigures } from './load-client';
import { ms, num, percentile, progress, sleep } from './stats';

export const FRESHNESS_TARGET_MS = 5_000;

export interface FairnessSettings {
  /** Noisy tenant's burst (BENCH_FAIR_EVENTS, 20,000). */
  events: number;
  /** Its subscriptions, created (and drained) before the clock; the burst renews them in turn. */
  subscriptions: number;
  /** The quiet tenant's conversions (50). */
  conversions: number;
  /** Between two quiet conversions; null = spread over the burst's expected drain time. */
  spacingMs: number | null;
  connections: number;
  timeoutMs: number;
}

export interface LagFigures {
  count: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function lagFigures(values: readonly number[]): LagFigures {
  return {
    count: values.length,
    p50: percentile(values, 50),
    p95: percentile(values, 95),
    p99: percentile(values, 99),
    max: percentile(values, 100),
  };
}

export interface FairnessSection {
  context: SectionContext;
  /** Whether this tree's local SQS serves the accounts' message groups fairly (infra/local/fair-queue.ts exists). */
  fairQueues: boolean;
  settings: FairnessSettings & { spacingMs: number; adaptive: boolean };
  /** When the quiet conversions were posted, seconds into the burst: first, median, last. */
  quietPosted: { first: number; median: number; last: number };
  signSeconds: number;
  /** The seed checkouts (before the clock): the intake's rate for them sizes the spacing. */
  seed: { alerts: number; seconds: number; rate: number; postRate: number };
  noisy: {
    events: number;
    postSeconds: number;
    postRate: number;
    post: LoadFigures;
    /** First post until `provider-events` held nothing. */
    drainSeconds: number;
    drainRate: number;
    peakBacklog: number;
    cpu: CpuSample;
    rejected: number;
    missingPayments: number;
    missingMarkers: number;
    /** GET /v1/subscriptions/ `count` (from the counters) against the subscriptions created. */
    subscriptionsCounted: number;
  };
  quiet: {
    conversions: number;
    /** Webhook post (its first alert) -> reward in the referral, ms. */
    lag: LagFigures;
    /** Quiet conversions posted while the noisy tenant's queue held at least 100 messages. */
    postedUnderBacklog: number;
    /** The noisy backlog (messages waiting) when each quiet conversion was posted: min, median, max. */
    backlogAtPost: { min: number; median: number; max: number };
    /** Post answers: p50 / max ms of the two alerts together. */
    postP50: number;
    postMax: number;
    rejected: number;
    notVisible: number;
    /** Referrals whose reward list is not exactly one reward (a double or a missing one). */
    wrongRewards: number;
    rewardsCounted: number;
    subscriptionsCounted: number;
    missingMarkers: number;
  };
  dlq: number;
  lostTotal: number;
}

/** A signed alert `form` (as checkoutAlerts makes them) with some fields changed, signed again. */
function resign(sign: Sign, form: string, changes: Record<string, string>): string {
  const fields = Object.fromEntries(new URLSearchParams(form));
  delete fields.p_signature;
  return toForm(sign({ ...fields, ...changes }));
}

/** Posts bodies with autocannon (the load generator's process) and waits for the queue to empty; seconds. */
async function postAndDrain(
  bench: BenchRuntime,
  workDir: string,
  path: string,
  bodies: string[],
  connections: number,
): Promise<{ seconds: number; postRate: number }> {
  const file = join(workDir, `fair-${Date.now()}.txt`);
  writeFileSync(file, `${bodies.join('\n')}\n`);
  const started = performance.now();
  const f = await bench.load.run({
    url: bench.runtime.url,
    connections,
    amount: bodies.length,
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    scenario: { kind: 'form-bodies', path, bodiesFile: file },
  });
  if (f.ok !== bodies.length) throw new Error(`fairness: seed alerts answered ${f.ok} of ${bodies.length} 2xx`);
  await waitForQueue(bench, 'provider-events', 600_000);
  return { seconds: (performance.now() - started) / 1000, postRate: f.rps };
}

export async function measureFairness(bench: BenchRuntime, workDir: string, o: FairnessSettings): Promise<FairnessSection> {
  const ctx = startContext();
  const rt = bench.runtime;
  const paddle = {
    vendorId: rt.paddle.vendorId,
    authCode: rt.paddle.authCode,
    publicKey: rt.paddle.publicKeyPem,
    vendorsApiUrl: rt.paddle.vendorsApiUrl,
    checkoutApiUrl: rt.paddle.checkoutApiUrl,
  };
  const sign = rt.paddle.sign;

  // --- two tenants on the same provider (Paddle Classic, the same emulator) ----------------------------
  progress('fairness: two accounts (noisy, quiet); the quiet one gets a commission campaign, a member and its referrals');
  const noisy = await createAccount({ name: 'Bench noisy tenant', plan: 'regular' });
  const quiet = await createAccount({ name: 'Bench quiet tenant', plan: 'regular' });
  const noisyId = noisy.account.accountId;
  const quietId = quiet.account.accountId;
  await saveProviderSettings(noisyId, paddle);
  await saveProviderSettings(quietId, paddle);
  const q = (method: string, path: string, body?: unknown) => apiAs(rt, quiet.apiKey, method, path, body);
  const campaign = await q('POST', '/v1/campaigns/', {
    name: 'Quiet affiliates',
    allows_commission: true,
    commission_type: 'percentage',
    commission_percent: '20',
    commission_currency: 'USD',
  });
  if (campaign.status !== 201) throw new Error(`fairness: campaign ${campaign.status} ${JSON.stringify(campaign.body)}`);
  const member = await q('POST', '/v1/members/', {
    identifier: 'quiet-member',
    email: 'quiet-member@example.com',
    code: 'QUIET001',
    campaign: { id: campaign.body.id },
  });
  if (member.status !== 201) throw new Error(`fairness: member ${member.status} ${JSON.stringify(member.body)}`);
  const referralIds: string[] = [];
  for (let i = 0; i < o.conversions; i++) {
    const r = await q('POST', '/v1/referrals/', { user_identifier: `quiet-user-${i}`, member_code: 'QUIET001' });
    if (r.status !== 200) throw new Error(`fairness: referral ${r.status} ${JSON.stringify(r.body)}`);
    referralIds.push(r.body.id as string);
  }

  // --- the noisy tenant's subscriptions, created a day ago (their checkouts drained before the clock) ----
  const dayAgo = Date.now() - 86_400_000;
  const noisySubs: Array<{ id: number; paid: string }> = [];
  const seedBodies: string[] = [];
  let alertSeq = 4_100_000_001;
  for (let i = 0; i < o.subscriptions; i++) {
    const subscriptionId = 6_100_001 + i;
    const [created, paid] = checkoutAlerts(
      sign,
      {
        alertId: alertSeq,
        subscriptionId,
        paymentId: subscriptionId + 10_000_000,
        userId: subscriptionId + 20_000_000,
        orderNumber: subscriptionId,
      },
      new Date(dayAgo),
    );
    alertSeq += 2;
    seedBodies.push(created, paid);
    noisySubs.push({ id: subscriptionId, paid });
  }
  await waitForQueue(bench, 'provider-events', 600_000);
  progress(`fairness: seeding the noisy tenant's ${o.subscriptions} subscriptions (${seedBodies.length} alerts, not timed)`);
  const seed = await postAndDrain(bench, workDir, `/webhooks/paddle/${noisyId}/`, seedBodies, o.connections);
  const seedSeconds = seed.seconds;
  const seedRate = seedBodies.length / seedSeconds;

  // --- the burst: renewals (subscription_payment_succeeded, not initial) of those subscriptions in turn ----
  progress(`fairness: signing ${o.events} renewals of the noisy tenant and ${o.conversions} quiet checkouts`);
  const signStarted = performance.now();
  const renewals: string[] = [];
  const expected: Array<{ subscriptionId: number; paymentId: number; alertId: number }> = [];
  for (let n = 0; n < o.events; n++) {
    const sub = noisySubs[n % noisySubs.length] as { id: number; paid: string };
    const cycle = Math.floor(n / noisySubs.length) + 1;
    const paymentId = 900_000_001 + n;
    const alertId = alertSeq++;
    renewals.push(
      resign(sign, sub.paid, {
        alert_id: String(alertId),
        event_time: dateTimeOf(new Date(dayAgo + cycle * 60_000)),
        initial_payment: '0',
        subscription_payment_id: String(paymentId),
        order_id: `${sub.id}-${7_000_000 + n}`,
      }),
    );
    expected.push({ subscriptionId: sub.id, paymentId, alertId });
  }
  const renewalFile = join(workDir, 'fair-renewals.txt');
  writeFileSync(renewalFile, `${renewals.join('\n')}\n`);
  // The quiet tenant's checkouts: subscription_created naming its referral (passthrough, as the browser
  // script's refloop.passthrough() hands it to Paddle), then the first payment.
  const quietCheckouts: Array<{ referralId: string; subscriptionId: number; bodies: string[]; alertIds: number[] }> = [];
  for (let i = 0; i < o.conversions; i++) {
    const subscriptionId = 6_000_001 + i;
    const alertId = 4_000_000_001 + i * 2;
    const referralId = referralIds[i] as string;
    const [created, paid] = checkoutAlerts(sign, {
      alertId,
      subscriptionId,
      paymentId: subscriptionId + 10_000_000,
      userId: subscriptionId + 20_000_000,
      orderNumber: subscriptionId,
    });
    quietCheckouts.push({
      referralId,
      subscriptionId,
      bodies: [resign(sign, created, { passthrough: JSON.stringify({ refloop_referral_id: referralId }) }), paid],
      alertIds: [alertId, alertId + 1],
    });
  }
  const signSeconds = (performance.now() - signStarted) / 1000;

  // One quiet conversion a second while the burst is being posted (BENCH_FAIR_SPACING_MS sets another fixed
  // spacing); once it is all posted, the rest are spread over what is left of its drain (the backlog at the
  // rate drained so far), so that the conversions land behind the noisy backlog, early and late in it.
  const spacingMs = o.spacingMs ?? 1_000;
  const adaptive = o.spacingMs === null;

  // --- the clock ---------------------------------------------------------------------------------------
  await waitForQueue(bench, 'provider-events', 600_000);
  await waitForQueue(bench, 'rewards', 600_000);
  const dlqBefore = await dlqTotal(bench);
  progress(
    `fairness: posting ${o.events} noisy renewals with ${o.connections} connections; ${o.conversions} quiet conversions, one every ${num(spacingMs / 1000, 1)} s${adaptive ? ' while it is posted, then spread over its drain' : ''}`,
  );
  const cpuFrom = bench.cpu.sample();
  const started = performance.now();
  let posted: LoadFigures | undefined;
  let postSeconds = 0;
  const posting = bench.load
    .run({
      url: rt.url,
      connections: o.connections,
      amount: renewals.length,
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      scenario: { kind: 'form-bodies', path: `/webhooks/paddle/${noisyId}/`, bodiesFile: renewalFile },
    })
    .then((f) => {
      posted = f;
      postSeconds = (performance.now() - started) / 1000;
    });

  // The noisy backlog, sampled; each quiet post records the last sample.
  let backlog = 0;
  let peakBacklog = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      try {
        backlog = (await bench.queues.depth('provider-events')).messages;
        peakBacklog = Math.max(peakBacklog, backlog);
      } catch {
        // The next sample.
      }
      await sleep(100);
    }
  })();

  const watch = new VisibilityWatch(100);
  const backlogAtPost: number[] = [];
  const postTimes: number[] = [];
  let quietRejected = 0;
  const quietPath = `${rt.url}/webhooks/paddle/${quietId}/`;
  const postOffsets: number[] = [];
  const converting = (async () => {
    // The first one a second into the burst (its backlog is building).
    let due = started + 1_000;
    for (let i = 0; i < quietCheckouts.length; i++) {
      const c = quietCheckouts[i] as (typeof quietCheckouts)[number];
      if (performance.now() < due) await sleep(due - performance.now());
      const t0 = performance.now();
      postOffsets.push((t0 - started) / 1000);
      backlogAtPost.push(backlog);
      // The reward is visible when the referral item holds it (GET /v1/referrals/{id}/ reads that item).
      watch.watch(c.referralId, keys.referral(quietId, c.referralId), t0, (item) => Array.isArray(item.rewards) && item.rewards.length > 0);
      for (const body of c.bodies) {
        const res = await fetch(quietPath, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body });
        await res.arrayBuffer();
        if (res.status !== 200) quietRejected++;
      }
      postTimes.push(performance.now() - t0);
      let gap = spacingMs;
      const left = quietCheckouts.length - i - 1;
      if (adaptive && posted && left > 0) {
        const elapsed = (performance.now() - started) / 1000;
        const rate = Math.max(1, o.events - backlog) / elapsed;
        gap = Math.min(10_000, Math.max(100, ((backlog / rate) * 1000 * 0.8) / left));
      }
      due = t0 + gap;
    }
  })();

  const deadline = started + o.timeoutMs;
  let drainSeconds = 0;
  try {
    for (;;) {
      const { total } = await bench.queues.depth('provider-events');
      if (posted && total === 0) {
        drainSeconds = (performance.now() - started) / 1000;
        break;
      }
      if (performance.now() > deadline)
        throw new Error(`fairness: the burst was not applied within ${o.timeoutMs / 1000} s (queue ${total})`);
      await sleep(100);
    }
    await posting;
    await converting;
    await watch.settle(deadline);
  } finally {
    watch.stop();
    sampling = false;
    await sampler;
  }
  const cpu = bench.cpu.since(cpuFrom, o.events);
  const figures = posted as LoadFigures;
  progress(
    `fairness: burst applied in ${num(drainSeconds, 1)} s; quiet rewards visible ${watch.seen().length} of ${o.conversions}; verifying`,
  );

  // --- verification: every event of both applied once, nothing dead-lettered ---------------------------
  await waitForQueue(bench, 'provider-events', 120_000);
  await waitForQueue(bench, 'rewards', 120_000);
  const dlq = (await dlqTotal(bench)) - dlqBefore;
  const missingPayments = (await absentKeys(expected.map((e) => keys.payment(noisyId, e.subscriptionId, e.paymentId)))).length;
  const missingMarkers = (await absentKeys(expected.map((e) => keys.alert(noisyId, String(e.alertId))))).length;
  const noisySubsCount = (await apiAs(rt, noisy.apiKey, 'GET', '/v1/subscriptions/')).body?.count ?? -1;
  const quietMarkerKeys: Key[] = quietCheckouts.flatMap((c) => c.alertIds.map((a) => keys.alert(quietId, String(a))));
  const quietMissingMarkers = (await absentKeys(quietMarkerKeys)).length;
  let wrongRewards = 0;
  for (const c of quietCheckouts) {
    const r = await q('GET', `/v1/referrals/${c.referralId}/`);
    if (r.status !== 200 || !Array.isArray(r.body?.rewards) || r.body.rewards.length !== 1 || r.body.is_converted !== true) wrongRewards++;
  }
  const rewardsCounted = (await q('GET', '/v1/rewards/')).body?.count ?? -1;
  const quietSubsCount = (await q('GET', '/v1/subscriptions/')).body?.count ?? -1;
  const lags = watch.seen().map((s) => s.lagMs);
  const sortedBacklog = [...backlogAtPost].sort((a, b) => a - b);
  const rejected = figures.requests - figures.ok;
  const notVisible = o.conversions - lags.length;
  const lostTotal =
    missingPayments +
    missingMarkers +
    Math.abs(noisySubsCount - o.subscriptions) +
    rejected +
    quietRejected +
    notVisible +
    wrongRewards +
    Math.abs(rewardsCounted - o.conversions) +
    Math.abs(quietSubsCount - o.conversions) +
    quietMissingMarkers +
    dlq;

  return {
    context: ctx.finish(),
    fairQueues: existsSync(join(__dirname, '..', '..', 'infra', 'local', 'fair-queue.ts')),
    settings: { ...o, spacingMs, adaptive },
    quietPosted: { first: postOffsets[0] ?? 0, median: percentile(postOffsets, 50), last: postOffsets[postOffsets.length - 1] ?? 0 },
    signSeconds,
    seed: { alerts: seedBodies.length, seconds: seedSeconds, rate: seedRate, postRate: seed.postRate },
    noisy: {
      events: o.events,
      postSeconds,
      postRate: figures.ok / postSeconds,
      post: figures,
      drainSeconds,
      drainRate: o.events / drainSeconds,
      peakBacklog,
      cpu,
      rejected,
      missingPayments,
      missingMarkers,
      subscriptionsCounted: noisySubsCount,
    },
    quiet: {
      conversions: o.conversions,
      lag: lagFigures(lags),
      postedUnderBacklog: backlogAtPost.filter((b) => b >= 100).length,
      backlogAtPost: {
        min: sortedBacklog[0] ?? 0,
        median: percentile(sortedBacklog, 50),
        max: sortedBacklog[sortedBacklog.length - 1] ?? 0,
      },
      postP50: percentile(postTimes, 50),
      postMax: percentile(postTimes, 100),
      rejected: quietRejected,
      notVisible,
      wrongRewards,
      rewardsCounted,
      subscriptionsCounted: quietSubsCount,
      missingMarkers: quietMissingMarkers,
    },
    dlq,
    lostTotal,
  };
}

const sec = (valueMs: number) => (Number.isFinite(valueMs) ? `${num(valueMs / 1000, 2)} s` : 'n/a');

/** Where a section ran, in one paragraph: date, commit, machine, its load average. */
export function contextLine(c: SectionContext, how: string): string {
  return (
    `Measured on ${c.date.replace('T', ' ').replace('Z', ' UTC')} at commit \`${c.commit}\` (\`${how}\`), ` +
    `${c.cores} cores (${c.cpuModel}), load average ${num(c.loadStart, 2)} at the start of the section and ${num(c.loadEnd, 2)} at its end` +
    `${c.loadStart > c.cores * 0.25 || c.loadEnd > c.cores * 0.25 ? ' (a shared machine: other work competed for the same cores)' : ''}` +
    `${c.note ? `; ${c.note}` : ''}. ` +
    `Pollers: ${c.pollerConcurrency === 1 ? 'one batch' : `${c.pollerConcurrency} batches`} per worker in flight (\`npm start\` runs 5, the stack's event source cap; LOCAL_POLLER_CONCURRENCY sets it). ` +
    `DynamoDB Local connections: ${c.dynamoConnections === '0' ? "the SDK's 50" : c.dynamoConnections} per node process (\`npm start\` keeps 4; DYNAMODB_LOCAL_CONNECTIONS sets it).`
  );
}

export function renderFairnessSection(x: FairnessSection): string[] {
  const out: string[] = [];
  const line = (s = '') => out.push(s);
  const n = x.noisy;
  const qq = x.quiet;
  const met = qq.lag.count === qq.conversions && qq.lag.p99 < FRESHNESS_TARGET_MS;
  line("## Noisy neighbour: a quiet tenant during another tenant's burst");
  line();
  line(contextLine(x.context, 'BENCH_SKIP=bundles,load,auth,drain,money,dashboard,portal,freshness npm run bench'));
  line();
  line(
    `Two accounts on the local runtime (\`startLocal\`, as \`npm start\` runs it: the local SQS and one poller per worker, a 1 s batching window), both on Paddle Classic (the same emulator), sharing \`provider-events\` and its subscription-sync worker as every tenant does. ` +
      (x.fairQueues
        ? 'At this commit the local SQS serves the accounts fairly (`infra/local/fair-queue.ts`: every message carries its account as MessageGroupId, and the group with the fewest messages in the queue is fed first, as SQS fair queues do). '
        : 'At this commit the local SQS serves the queue in arrival order (no fair queues yet). ') +
      `The **noisy** tenant has ${num(x.settings.subscriptions)} subscriptions (their checkouts posted and drained before the clock, ${num(x.seed.alerts)} alerts at ${num(x.seed.rate)}/s); its burst is ${num(n.events)} renewals of them in turn (\`subscription_payment_succeeded\`, not initial, each a new payment: a transaction each), signed before the clock (${num(x.signSeconds, 1)} s of signing) and posted by autocannon with ${x.settings.connections} connections as fast as the intake answers. ` +
      `Meanwhile the **quiet** tenant converts ${qq.conversions} referrals of a 20% commission campaign, ${x.settings.adaptive ? `one a second from 1 s into the burst while it is posted, then the rest spread over what is left of its drain (the backlog at the rate drained so far): they were posted ${num(x.quietPosted.first, 1)} s to ${num(x.quietPosted.last, 1)} s into the burst (median ${num(x.quietPosted.median, 1)} s; the burst was posted in ${num(x.noisy.postSeconds, 1)} s and drained in ${num(x.noisy.drainSeconds, 1)} s)` : `one every ${num(x.settings.spacingMs / 1000, 2)} s from 1 s into the burst (${num(x.quietPosted.first, 1)} s to ${num(x.quietPosted.last, 1)} s)`}: for each, its \`subscription_created\` naming the referral (\`passthrough\`) and its first \`subscription_payment_succeeded\`, posted one after the other from the bench process. ` +
      'Lag = from the first of those posts until the reward is in the referral (the item `GET /v1/referrals/{id}/` reads; watched with one consistent BatchGet of the pending referrals every 100 ms, at most 100 a time). ' +
      'The path it measures: intake, `provider-events`, the subscription-sync worker (ties the referral, queues the evaluation), `rewards`, the settlement worker.',
  );
  line();
  line('| Quiet tenant: webhook -> reward visible | target | p50 | p95 | p99 | max | visible | |');
  line('|---|---|---:|---:|---:|---:|---:|:---:|');
  line(
    `| ${qq.conversions} conversions during the burst | p99 < ${FRESHNESS_TARGET_MS / 1000} s | ${sec(qq.lag.p50)} | ${sec(qq.lag.p95)} | **${sec(qq.lag.p99)}** | ${sec(qq.lag.max)} | ${qq.lag.count} of ${qq.conversions} | ${met ? '✓' : '✗'} |`,
  );
  line();
  line(
    `The noisy backlog (messages waiting in \`provider-events\`) when each quiet conversion was posted: ${num(qq.backlogAtPost.min)} to ${num(qq.backlogAtPost.max)}, median ${num(qq.backlogAtPost.median)}; ${qq.postedUnderBacklog} of ${qq.conversions} were posted behind 100 or more. ` +
      `Posting a quiet conversion's two alerts took ${ms(qq.postP50)} at the median (${ms(qq.postMax)} at most), through the intake the burst was saturating.`,
  );
  line();
  line(
    '| Noisy tenant | Events | Posted in | Post rate | Post p50 / p99 | Drained in (first post to queue empty) | Drain rate | Peak backlog | CPU ms per event: service / DynamoDB Local / load generator |',
  );
  line('|---|---:|---:|---:|---:|---:|---:|---:|---|');
  line(
    `| renewals | ${num(n.events)} | ${num(n.postSeconds, 1)} s | ${num(n.postRate)}/s | ${ms(n.post.p50)} / ${ms(n.post.p99)} | **${num(n.drainSeconds, 1)} s** | **${num(n.drainRate)}/s** | ${num(n.peakBacklog)} | ${num(n.cpu.service, 2)} / ${n.cpu.dynamodb === null ? 'n/a' : num(n.cpu.dynamodb, 2)} / ${n.cpu.loadgen === null ? 'n/a' : num(n.cpu.loadgen, 2)} |`,
  );
  line();
  line('| Verification | expected | found |');
  line('|---|---:|---:|');
  line(`| Noisy renewals answered 2xx | ${num(n.events)} | ${num(n.events - n.rejected)} |`);
  line(`| Noisy payments in the table | ${num(n.events)} | ${num(n.events - n.missingPayments)} |`);
  line(`| Noisy idempotency markers | ${num(n.events)} | ${num(n.events - n.missingMarkers)} |`);
  line(
    `| Noisy subscriptions counted (\`GET /v1/subscriptions/\` count) | ${num(x.settings.subscriptions)} | ${num(n.subscriptionsCounted)} |`,
  );
  line(`| Quiet alerts answered 2xx | ${qq.conversions * 2} | ${qq.conversions * 2 - qq.rejected} |`);
  line(`| Quiet idempotency markers | ${qq.conversions * 2} | ${qq.conversions * 2 - qq.missingMarkers} |`);
  line(`| Quiet referrals converted with exactly one reward | ${qq.conversions} | ${qq.conversions - qq.wrongRewards} |`);
  line(`| Quiet rewards counted (\`GET /v1/rewards/\` count) | ${qq.conversions} | ${num(qq.rewardsCounted)} |`);
  line(`| Quiet subscriptions counted | ${qq.conversions} | ${num(qq.subscriptionsCounted)} |`);
  line(`| Messages dead-lettered (every DLQ) | 0 | ${x.dlq} |`);
  line();
  line(
    x.lostTotal === 0
      ? 'Every event of both tenants was applied once: nothing missing, nothing counted twice, nothing dead-lettered.'
      : `**${x.lostTotal} discrepancies** in the verification above (the bench fails).`,
  );
  return out;
}
