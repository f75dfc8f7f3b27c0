// Freshness under mixed load (issue 29): API clients creating referrals (paced, 1 a second each by default) while signed
// webhooks arrive at a fixed rate across three accounts on three providers (Paddle Classic, Paddle Billing,
// Stripe), some of them converting referrals; how long each asynchronous effect takes to become visible.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAccount } from '../../shared/store/accounts';
import { saveProviderConnection, saveProviderSettings } from '../../shared/store/provider';
import { keys } from '../../shared/store/table';
import { checkoutAlerts, toForm, type Sign } from './alerts';
import type { CpuSample } from './cpu';
import { FRESHNESS_TARGET_MS, contextLine, lagFigures, type LagFigures } from './fairness';
import {
  apiAs,
  commissionProgramme,
  dlqTotal,
  settleQueues,
  startContext,
  uuidv7Millis,
  VisibilityWatch,
  benchDynamoStore,
  type BenchRuntime,
  type SectionContext,
} from './harness';
import { ms, num, percentile, progress, sleep } from './stats';
import { QUEUE_NAMES, type QueueName } from '../../shared/queue/queues';

export interface FreshnessSettings {
  seconds: number;
  /**
   * The same load, unmeasured, before the clock: DynamoDB Local's JVM compiles its hot paths in the first
   * minute under load (run alone, the section measured twice the CPU per call at half the load), and V8 the
   * handlers'. The section restarts the runtime first (infra/local/workers-process.ts), so nothing before it
   * warms them. 0: none.
   */
  warmupSeconds: number;
  /** The workers run in a process of their own (as npm start runs them; false: in the gateway's). */
  workersProcess: boolean;
  /** API clients creating referrals (spread over the three accounts). */
  clients: number;
  /** Creates per second of each client (paced, as an app's backend calls the API); 0: closed loops, as fast as answered. */
  clientRate: number;
  webhooksPerSecond: number;
  /** One checkout in this many names a referral (converts it). */
  convertEvery: number;
  /** For the effects to show after the load stopped. */
  timeoutMs: number;
}

/** The queues on the measured effects' paths. */
const MEASURED_QUEUES: readonly QueueName[] = ['provider-events', 'rewards', 'webhook-events', 'webhook-deliveries'];

type Provider = 'paddle-classic' | 'paddle-billing' | 'stripe';
const PROVIDERS: readonly Provider[] = ['paddle-classic', 'paddle-billing', 'stripe'];

export interface Effect {
  name: string;
  how: string;
  expected: number;
  lag: LagFigures;
}

export interface FreshnessSection {
  context: SectionContext;
  settings: FreshnessSettings;
  /** What the load achieved. */
  achieved: {
    webhooks: number;
    webhookSeconds: number;
    webhookRate: number;
    webhookP50: number;
    webhookP99: number;
    webhooksRejected: number;
    /** Most webhook posts waiting for an answer at one time. */
    webhooksInFlightPeak: number;
    checkouts: Record<Provider, number>;
    conversions: number;
    /** Referrals created during the load (the accounts' counts), and the creates answered 200 before autocannon stopped. */
    creates: number;
    createsAnswered: number;
    createRate: number;
    createP50: number;
    createP99: number;
    createsFailed: number;
    cpu: CpuSample;
  };
  effects: Effect[];
  /** The mirrored subscription's lag per provider. */
  subscriptionByProvider: Array<{ provider: Provider; lag: LagFigures; expected: number }>;
  verification: {
    subscriptionsCounted: Record<Provider, { expected: number; counted: number }>;
    wrongRewards: number;
    deliveriesDuplicated: number;
    dlq: number;
    /** Queues that had not emptied before the clock started, and after the effects (2 minutes more). */
    busyBefore: Array<{ queue: string; depth: number }>;
    busyAfter: Array<{ queue: string; depth: number }>;
  };
  lostTotal: number;
}

interface Checkout {
  provider: Provider;
  accountId: string;
  path: string;
  contentType: string;
  subscriptionId: string | number;
  referralId: string | null;
  webhooks: Array<{ headers: Record<string, string>; body: string }>;
}

/** A Paddle Billing or Stripe emulator checkout (signed, not delivered) as the webhooks to post. */
function jsonCheckout(
  provider: Provider,
  accountId: string,
  referralId: string | null,
  out: { result: { subscription: { id: string } }; delivered: Array<{ signature: string; rawBody: string }> },
  signatureHeader: string,
): Checkout {
  return {
    provider,
    accountId,
    path: `/webhooks/${provider}/${accountId}/`,
    contentType: 'application/json',
    subscriptionId: out.result.subscription.id,
    referralId,
    webhooks: out.delivered.map((d) => ({
      headers: { 'content-type': 'application/json', [signatureHeader]: d.signature },
      body: d.rawBody,
    })),
  };
}

function resign(sign: Sign, form: string, changes: Record<string, string>): string {
  const fields = Object.fromEntries(new URLSearchParams(form));
  delete fields.p_signature;
  return toForm(sign({ ...fields, ...changes }));
}

/** The app's webhook receiver: every `referral.created` it gets, with its arrival time (Date.now()). */
async function startReceiver(): Promise<{ url: string; got: Array<{ id: string; at: number }>; close(): Promise<void> }> {
  const got: Array<{ id: string; at: number }> = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      try {
        const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type?: string; data?: { id?: string } };
        if (event.type === 'referral.created' && typeof event.data?.id === 'string') got.push({ id: event.data.id, at });
      } catch {
        // Not JSON: answered all the same.
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    got,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function measureFreshness(bench: BenchRuntime, workDir: string, o: FreshnessSettings): Promise<FreshnessSection> {
  void workDir;
  const ctx = startContext();
  const rt = bench.runtime;

  // --- three accounts, one per provider, each with a commission campaign, members and referrals to convert ---
  progress('freshness: three accounts (Paddle Classic, Paddle Billing, Stripe), campaigns, members, referrals to convert');
  const totalWebhooks = Math.round(o.seconds * o.webhooksPerSecond);
  const warmupWebhooks = Math.round(o.warmupSeconds * o.webhooksPerSecond);
  // A checkout is 2 (Classic) to 3 or 4 webhooks: enough referrals for every converting checkout.
  const conversionsPerAccount = Math.ceil((totalWebhooks + warmupWebhooks) / 2 / PROVIDERS.length / o.convertEvery) + 1;
  const accounts = {} as Record<Provider, { id: string; key: string; codes: string[]; referrals: string[] }>;
  for (const provider of PROVIDERS) {
    const { account, apiKey } = await createAccount({ name: `Bench freshness ${provider}`, plan: 'regular' });
    const id = account.accountId;
    if (provider === 'paddle-classic')
      await saveProviderSettings(id, {
        vendorId: rt.paddle.vendorId,
        authCode: rt.paddle.authCode,
        publicKey: rt.paddle.publicKeyPem,
        vendorsApiUrl: rt.paddle.vendorsApiUrl,
        checkoutApiUrl: rt.paddle.checkoutApiUrl,
      });
    else if (provider === 'paddle-billing')
      await saveProviderConnection(id, {
        kind: 'paddle-billing',
        apiKey: rt.paddleBilling.apiKey,
        apiUrl: rt.paddleBilling.url,
        webhookSecret: rt.paddleBilling.webhookSecret,
      });
    else
      await saveProviderConnection(id, {
        kind: 'stripe',
        secretKey: rt.stripe.secretKey,
        apiUrl: rt.stripe.url,
        webhookSecret: rt.stripe.webhookSecret,
      });
    const call = (method: string, path: string, body?: unknown) => apiAs(rt, apiKey, method, path, body);
    const codes = [0, 1, 2, 3].map((i) => `FRESH${provider.slice(0, 1).toUpperCase()}${provider.length}${i}`);
    await commissionProgramme(rt, apiKey, 'fresh', codes);
    const referrals: string[] = [];
    for (let i = 0; i < conversionsPerAccount; i++) {
      const r = await call('POST', '/v1/referrals/', { user_identifier: `fresh-convert-${i}`, member_code: codes[i % codes.length] });
      if (r.status !== 200) throw new Error(`freshness: referral ${r.status} ${JSON.stringify(r.body)}`);
      referrals.push(r.body.id as string);
    }
    accounts[provider] = { id, key: apiKey, codes, referrals };
  }

  // The app's endpoint for `referral.created`, registered after the seed: it gets the load's referrals only.
  const receiver = await startReceiver();
  for (const provider of PROVIDERS) {
    const a = accounts[provider];
    const e = await apiAs(rt, a.key, 'POST', '/v1/webhook-endpoints/', {
      url: `${receiver.url}/hook/${a.id}`,
      events: ['referral.created'],
    });
    if (e.status !== 201) throw new Error(`freshness: webhook endpoint ${e.status} ${JSON.stringify(e.body)}`);
  }

  // --- the checkouts, made in the emulators and signed before the clock, round robin over the providers ---
  progress(
    `freshness: ${totalWebhooks} webhooks${warmupWebhooks > 0 ? ` (and ${warmupWebhooks} to warm up)` : ''}: checkouts in the three emulators, signed before the clock`,
  );
  const used: Record<Provider, number> = { 'paddle-classic': 0, 'paddle-billing': 0, stripe: 0 };
  const allMade: Record<Provider, number> = { 'paddle-classic': 0, 'paddle-billing': 0, stripe: 0 };
  let classicSeq = 0;
  let checkoutSeq = 0;
  const makeCheckouts = async (webhooks: number): Promise<{ checkouts: Checkout[]; made: Record<Provider, number>; count: number }> => {
    const checkouts: Checkout[] = [];
    const made: Record<Provider, number> = { 'paddle-classic': 0, 'paddle-billing': 0, stripe: 0 };
    let webhookCount = 0;
    for (; webhookCount < webhooks; ) {
      const n = checkoutSeq++;
      const provider = PROVIDERS[n % PROVIDERS.length] as Provider;
      const a = accounts[provider];
      const converts = allMade[provider] % o.convertEvery === o.convertEvery - 1;
      const referralId = converts ? (a.referrals[used[provider]++] ?? null) : null;
      made[provider]++;
      allMade[provider]++;
      const email = `fresh-${provider}-${n}@example.com`;
      let checkout: Checkout;
      if (provider === 'paddle-classic') {
        const subscriptionId = 6_600_001 + classicSeq;
        const alertId = 4_600_000_001 + classicSeq * 2;
        classicSeq++;
        const [created, paid] = checkoutAlerts(rt.paddle.sign, {
          alertId,
          subscriptionId,
          paymentId: subscriptionId + 10_000_000,
          userId: subscriptionId + 20_000_000,
          orderNumber: subscriptionId,
        });
        const first = referralId
          ? resign(rt.paddle.sign, created, { passthrough: JSON.stringify({ refloop_referral_id: referralId }) })
          : created;
        const headers = { 'content-type': 'application/x-www-form-urlencoded' };
        checkout = {
          provider,
          accountId: a.id,
          path: `/webhooks/paddle/${a.id}/`,
          contentType: headers['content-type'],
          subscriptionId,
          referralId,
          webhooks: [
            { headers, body: first },
            { headers, body: paid },
          ],
        };
      } else if (provider === 'paddle-billing') {
        const out = await rt.paddleBilling.checkout({
          email,
          deliver: false,
          ...(referralId ? { customData: { refloop_referral_id: referralId } } : {}),
        });
        checkout = jsonCheckout(provider, a.id, referralId, out, 'paddle-signature');
      } else {
        const out = await rt.stripe.checkout({
          email,
          deliver: false,
          ...(referralId ? { clientReferenceId: referralId, subscriptionMetadata: { refloop_referral_id: referralId } } : {}),
        });
        checkout = jsonCheckout(provider, a.id, referralId, out, 'stripe-signature');
      }
      checkouts.push(checkout);
      webhookCount += checkout.webhooks.length;
    }
    return { checkouts, made, count: webhookCount };
  };
  const warm = await makeCheckouts(warmupWebhooks);
  const { checkouts, made, count: webhookCount } = await makeCheckouts(totalWebhooks);
  const conversions = checkouts.filter((c) => c.referralId !== null).length;

  /** The API clients creating referrals for `seconds`, spread over the three accounts (autocannon, forked). */
  const createReferrals = (seconds: number, prefix: string) =>
    PROVIDERS.map((provider, i) => {
      const a = accounts[provider];
      const lanes = Math.floor(o.clients / PROVIDERS.length) + (i < o.clients % PROVIDERS.length ? 1 : 0);
      return bench.load.run({
        url: rt.url,
        connections: lanes,
        ...(o.clientRate > 0 ? { connectionRate: o.clientRate } : {}),
        duration: seconds,
        headers: { authorization: `Bearer ${a.key}`, 'content-type': 'application/json' },
        scenario: { kind: 'create-referral', path: '/v1/referrals/', memberCodes: a.codes, userPrefix: `${prefix}-${provider}` },
      });
    });

  /** Posts the checkouts' webhooks open loop at their due times; `onFirst` runs as a checkout's first one goes. */
  const postWebhooks = async (list: Checkout[], onFirst: (c: Checkout, t0: number) => void) => {
    const latencies: number[] = [];
    let rejected = 0;
    let inFlight = 0;
    let inFlightPeak = 0;
    const posts: Promise<void>[] = [];
    const gapMs = 1000 / o.webhooksPerSecond;
    let sent = 0;
    const started = performance.now();
    for (const c of list) {
      for (const [j, w] of c.webhooks.entries()) {
        const due = started + sent * gapMs;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        const t0 = performance.now();
        if (j === 0) onFirst(c, t0);
        sent++;
        inFlight++;
        inFlightPeak = Math.max(inFlightPeak, inFlight);
        posts.push(
          fetch(rt.url + c.path, { method: 'POST', headers: w.headers, body: w.body })
            .then(async (res) => {
              await res.arrayBuffer();
              if (res.status === 200) latencies.push(performance.now() - t0);
              else rejected++;
            })
            .catch(() => {
              rejected++;
            })
            .finally(() => {
              inFlight--;
            }),
        );
      }
    }
    await Promise.all(posts);
    return { latencies, rejected, inFlightPeak, sent, seconds: (performance.now() - started) / 1000 };
  };

  /** Referrals in each account (its counter, as GET /v1/referrals/ counts them). */
  const referralCounts = async () => {
    const counts = {} as Record<Provider, number>;
    for (const provider of PROVIDERS) {
      const r = await apiAs(rt, accounts[provider].key, 'GET', '/v1/referrals/');
      counts[provider] = Number(r.body?.count ?? 0);
    }
    return counts;
  };

  if (warm.count > 0) {
    progress(`freshness: warming up for ${o.warmupSeconds} s with the same load (not measured)`);
    const warmCreates = createReferrals(o.warmupSeconds, 'fresh-warm');
    const warmPosts = await postWebhooks(warm.checkouts, () => undefined);
    await Promise.all(warmCreates);
    if (warmPosts.rejected > 0) throw new Error(`freshness: ${warmPosts.rejected} warm-up webhooks not answered 200`);
  }

  // --- the clock: the API clients and the paced webhooks together ---------------------------------------
  const busyBefore = await settleQueues(bench, QUEUE_NAMES, 300_000);
  const dlqBefore = await dlqTotal(bench);
  progress(
    `freshness: ${o.seconds} s: ${o.clients} API clients creating referrals, ${webhookCount} webhooks at ${o.webhooksPerSecond}/s (${checkouts.length} checkouts, ${conversions} converting)`,
  );
  const countsBefore = await referralCounts();
  const cpuFrom = bench.cpu.sample();
  const clockEpochMs = Date.now();
  const creating = createReferrals(o.seconds, 'fresh-load');

  // One BatchGet of at most 50 items every 250 ms: at most 200 item reads a second. The watch shares DynamoDB Local
  // with the service it measures; at 100 per 100 ms it read more items than the service did under this load.
  const watch = new VisibilityWatch(250, 50);
  const posted = await postWebhooks(checkouts, (c, t0) => {
    const tag = `${c.provider}:${c.subscriptionId}`;
    watch.watch(`sub ${tag}`, keys.subscription(c.accountId, c.subscriptionId), t0);
    if (c.referralId)
      watch.watch(
        `reward ${c.referralId}`,
        keys.referral(c.accountId, c.referralId),
        t0,
        (item) => Array.isArray(item.rewards) && item.rewards.length > 0,
      );
  });
  const { sent, rejected, inFlightPeak, seconds: webhookSeconds } = posted;
  const postLatencies = posted.latencies;
  const created = await Promise.all(creating);
  const cpu = bench.cpu.since(cpuFrom, sent);
  // The referrals the clients created: each account's count (its counter) less the one before the clock; a
  // request still in flight when autocannon stopped may have created one it did not count, so the count is
  // read once those are answered (a few seconds).
  await sleep(5_000);
  const countsAfter = await referralCounts();
  const creates = PROVIDERS.reduce((sum, p) => sum + countsAfter[p] - countsBefore[p], 0);
  progress(`freshness: load done (${sent} webhooks in ${num(webhookSeconds, 1)} s, ${creates} referrals created); waiting for the effects`);

  const deadline = performance.now() + o.timeoutMs;
  await watch.settle(deadline);
  watch.stop();
  // Every referral the clients created is delivered to the endpoint (at least once).
  while (
    new Set(receiver.got.filter((g) => uuidv7Millis(g.id) >= clockEpochMs).map((g) => g.id)).size < creates &&
    performance.now() < deadline
  )
    await sleep(200);
  await receiver.close();

  // --- the lags ---------------------------------------------------------------------------------------
  const seen = watch.seen();
  const subLags = seen.filter((s) => s.name.startsWith('sub ')).map((s) => s.lagMs);
  const rewardLags = seen.filter((s) => s.name.startsWith('reward ')).map((s) => s.lagMs);
  const firstDelivery = new Map<string, number>();
  let duplicates = 0;
  // Only the referrals created after the clock started (their UUIDv7 ids tell): not the seed's, not the warm-up's.
  for (const g of receiver.got) {
    if (uuidv7Millis(g.id) < clockEpochMs) continue;
    if (firstDelivery.has(g.id)) duplicates++;
    else firstDelivery.set(g.id, g.at);
  }
  const deliveryLags = [...firstDelivery.entries()].map(([id, at]) => at - uuidv7Millis(id));
  const byProvider = PROVIDERS.map((provider) => ({
    provider,
    expected: checkouts.filter((c) => c.provider === provider).length,
    lag: lagFigures(seen.filter((s) => s.name.startsWith(`sub ${provider}:`)).map((s) => s.lagMs)),
  }));

  // --- verification ------------------------------------------------------------------------------------
  progress('freshness: verifying');
  // The queues of the measured effects get 2 minutes to empty; the others (member emails, say, whose retries
  // wait out another attempt's lease) are only looked at.
  const busyAfter = [
    ...(await settleQueues(bench, MEASURED_QUEUES, 120_000)),
    ...(await settleQueues(
      bench,
      QUEUE_NAMES.filter((q) => !MEASURED_QUEUES.includes(q)),
      0,
    )),
  ];
  const dlq = (await dlqTotal(bench)) - dlqBefore;
  const subscriptionsCounted = {} as Record<Provider, { expected: number; counted: number }>;
  for (const provider of PROVIDERS) {
    const r = await apiAs(rt, accounts[provider].key, 'GET', '/v1/subscriptions/');
    subscriptionsCounted[provider] = {
      // The warm-up's checkouts are the account's subscriptions too.
      expected: checkouts.filter((c) => c.provider === provider).length + warm.made[provider],
      counted: Number(r.body?.count ?? -1),
    };
  }
  let wrongRewards = 0;
  for (const c of checkouts) {
    if (!c.referralId) continue;
    const a = accounts[c.provider];
    const r = await apiAs(rt, a.key, 'GET', `/v1/referrals/${c.referralId}/`);
    if (r.status !== 200 || r.body?.rewards?.length !== 1 || r.body?.is_converted !== true) wrongRewards++;
  }
  const createP = (p: 'p50' | 'p99') =>
    percentile(
      created.map((f) => f[p]),
      50,
    );
  const effects: Effect[] = [
    {
      name: 'Webhook -> mirrored subscription',
      how: "from the post of the checkout's first webhook until the subscription item (`GET /v1/subscriptions/{id}/`) exists",
      expected: checkouts.length,
      lag: lagFigures(subLags),
    },
    {
      name: 'Conversion -> reward',
      how: "from the post of the converting checkout's first webhook until the reward is in the referral (`GET /v1/referrals/{id}/`)",
      expected: conversions,
      lag: lagFigures(rewardLags),
    },
    {
      name: 'Referral create -> `referral.created` delivered',
      how: "from the referral's id (a UUIDv7: the ms its create minted it) until the app's endpoint received the event",
      expected: creates,
      lag: lagFigures(deliveryLags),
    },
  ];
  const countMismatch = PROVIDERS.reduce((s, p) => s + Math.abs(subscriptionsCounted[p].counted - subscriptionsCounted[p].expected), 0);
  const lostTotal = rejected + (checkouts.length - subLags.length) + (conversions - rewardLags.length) + wrongRewards + countMismatch + dlq;

  return {
    context: ctx.finish(),
    settings: o,
    achieved: {
      webhooks: sent,
      webhookSeconds,
      webhookRate: sent / webhookSeconds,
      webhookP50: percentile(postLatencies, 50),
      webhookP99: percentile(postLatencies, 99),
      webhooksRejected: rejected,
      webhooksInFlightPeak: inFlightPeak,
      checkouts: made,
      conversions,
      creates,
      createRate: created.reduce((s, f) => s + f.rps, 0),
      createsAnswered: created.reduce((s, f) => s + f.ok, 0),
      createP50: createP('p50'),
      createP99: createP('p99'),
      createsFailed: created.reduce((s, f) => s + f.non2xx + f.errors + f.timeouts, 0),
      cpu,
    },
    effects,
    subscriptionByProvider: byProvider,
    verification: { subscriptionsCounted, wrongRewards, deliveriesDuplicated: duplicates, dlq, busyBefore, busyAfter },
    lostTotal,
  };
}

const sec = (valueMs: number) => (Number.isFinite(valueMs) ? `${num(valueMs / 1000, 2)} s` : 'n/a');

export function describeFreshness(x: FreshnessSection): string {
  return `freshness: ${num(x.achieved.webhookRate, 1)} webhooks/s and ${num(x.achieved.createRate)} creates/s for ${x.settings.seconds} s; ${x.effects
    .map((e) => `${e.name}: p50 ${sec(e.lag.p50)}, p99 ${sec(e.lag.p99)} (${e.lag.count} of ${e.expected})`)
    .join('; ')}; discrepancies ${x.lostTotal}`;
}

export function renderFreshnessSection(x: FreshnessSection): string[] {
  const out: string[] = [];
  const line = (s = '') => out.push(s);
  const a = x.achieved;
  line('## Freshness under mixed load');
  line();
  line(contextLine(x.context, 'BENCH_SKIP=bundles,load,auth,drain,money,dashboard,portal,fairness npm run bench'));
  line();
  line(
    `On the local runtime as \`npm start\` runs it (\`startLocal\`: DynamoDB Local ${benchDynamoStore()}, the local SQS, one poller per worker with a 1 s batching window (none for the reward fan-out, as in the stack), ${x.settings.workersProcess ? "the workers in a node process of their own beside the gateway's" : "the workers in the gateway's node process"}, the emulators), three fresh accounts, one per provider (Paddle Classic, Paddle Billing, Stripe, each connected to its emulator), each with a 20% commission campaign and an app webhook endpoint for \`referral.created\` (a receiver in the bench process). For ${x.settings.seconds} s at once${x.settings.warmupSeconds > 0 ? `, after ${x.settings.warmupSeconds} s of the same load that is not measured (DynamoDB Local's JVM compiles its hot paths in the first minute under load)` : ''}: ` +
      `**${x.settings.clients} API clients** create referrals ${x.settings.clientRate > 0 ? `at ${x.settings.clientRate} per second each (paced by autocannon, as an app's backend calls the API; closed loops would take every cycle of the two cores the pipeline shares with them)` : 'in closed loops'} (autocannon in its own process, spread over the three accounts), and **${x.settings.webhooksPerSecond} signed webhooks per second** arrive, round robin over the providers' checkouts (made in the emulators and signed before the clock; Classic: \`subscription_created\` and the first payment; Billing and Stripe: every notification of the emulator's checkout), posted open loop from the bench process at their due times whatever the answers. ` +
      `One checkout in ${x.settings.convertEvery} names a referral created before the clock (Classic \`passthrough\`, Billing \`custom_data\`, Stripe \`client_reference_id\` and subscription metadata), so it converts it and earns a commission. ` +
      'Visibility is watched with one consistent BatchGet every 250 ms of the items the API GETs read, at most 50 of them, the least recently read first: the watch reads at most 200 items a second however many are pending (exact to 0.25 s up to 50 pending, to pending / 200 s beyond), so the measuring takes little of the DynamoDB Local it measures.',
  );
  line();
  line('| Load achieved | |');
  line('|---|---|');
  line(
    `| Webhooks | ${num(a.webhooks)} in ${num(a.webhookSeconds, 1)} s = **${num(a.webhookRate, 1)}/s** (Classic ${a.checkouts['paddle-classic']}, Billing ${a.checkouts['paddle-billing']}, Stripe ${a.checkouts.stripe} checkouts; ${a.conversions} converting); answers p50 ${ms(a.webhookP50)}, p99 ${ms(a.webhookP99)}; ${a.webhooksRejected} not 200; at most ${a.webhooksInFlightPeak} awaiting an answer |`,
  );
  line(
    `| Referral creates | ${num(a.createsAnswered)} answered 200 = **${num(a.createRate)}/s** by ${x.settings.clients} clients (${num(a.creates)} created, by the accounts' counts); p50 ${ms(a.createP50)}, p99 ${ms(a.createP99)} (median of the three accounts' figures); ${a.createsFailed} failed |`,
  );
  line(
    `| CPU ms per webhook posted (service${a.cpu.workers === null ? '' : ', of which the workers process'} / DynamoDB Local / load generator), everything included | ${num(a.cpu.service, 2)}${a.cpu.workers === null ? '' : ` (${num(a.cpu.workers, 2)})`} / ${a.cpu.dynamodb === null ? 'n/a' : num(a.cpu.dynamodb, 2)} / ${a.cpu.loadgen === null ? 'n/a' : num(a.cpu.loadgen, 2)} |`,
  );
  line();
  line('| Effect | Measured | seen | p50 | p95 | p99 (target < 5 s) | max | |');
  line('|---|---|---:|---:|---:|---:|---:|:---:|');
  for (const e of x.effects) {
    const ok = e.lag.count === e.expected && e.lag.p99 < FRESHNESS_TARGET_MS;
    line(
      `| ${e.name} | ${e.how} | ${num(e.lag.count)} of ${num(e.expected)} | ${sec(e.lag.p50)} | ${sec(e.lag.p95)} | **${sec(e.lag.p99)}** | ${sec(e.lag.max)} | ${ok ? '✓' : '✗'} |`,
    );
  }
  line();
  line(
    `The mirrored subscription by provider (p50 / p99): ${x.subscriptionByProvider.map((p) => `${p.provider} ${sec(p.lag.p50)} / ${sec(p.lag.p99)} (${p.lag.count} of ${p.expected})`).join('; ')}.`,
  );
  line();
  const v = x.verification;
  line(
    `Verification: subscriptions counted by \`GET /v1/subscriptions/\` against the checkouts: ${PROVIDERS.map((p) => `${p} ${v.subscriptionsCounted[p].counted} of ${v.subscriptionsCounted[p].expected}`).join(', ')}; ` +
      `${v.wrongRewards} converted referrals without exactly one reward; ${v.deliveriesDuplicated} \`referral.created\` deliveries repeated (at least once allows it); ${v.dlq} messages dead-lettered. ` +
      (x.lostTotal === 0 ? 'Nothing missing or doubled.' : `**${x.lostTotal} discrepancies** (the bench fails).`) +
      (v.busyBefore.length > 0
        ? ` Queues not empty when the clock started: ${v.busyBefore.map((b) => `${b.queue} (${b.depth})`).join(', ')}.`
        : '') +
      (v.busyAfter.length > 0
        ? ` Queues not empty 2 minutes after the effects: ${v.busyAfter.map((b) => `${b.queue} (${b.depth})`).join(', ')}.`
        : ''),
  );
  return out;
}
