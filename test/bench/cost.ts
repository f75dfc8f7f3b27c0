// The cost of one conversion, counted (issue 29, docs/capacity.md "Cost per 1,000 conversions"): a fresh
// Stripe-connected account with a 20% commission campaign and one app webhook endpoint for every event type;
// for each conversion, a referral created through the API, then the emulator's checkout that names it, whose
// signed webhooks are posted to the intake at a steady pace (a busy hour, not a backlog). Every DynamoDB call
// and write, every SQS send and every call to the Stripe emulator made while the pipeline runs is counted,
// until every queue is empty; the figures are per conversion. The writes are sized as DynamoDB bills them by
// the write-rate accountant (test/support/write-rate.ts: item size, transactional items twice, GSI copies).
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { EVENT_TYPES } from '../../shared/domain/events';
import { sqs } from '../../shared/queue/publish';
import { QUEUE_NAMES } from '../../shared/queue/queues';
import { createAccount } from '../../shared/store/accounts';
import { recordDynamoCalls } from '../../shared/store/instrumentation';
import { saveProviderConnection } from '../../shared/store/provider';
import { WriteRateAccountant } from '../support/write-rate';
import type { CpuSample } from './cpu';
import { contextLine } from './fairness';
import { apiAs, type BenchRuntime, commissionProgramme, type SectionContext, settleQueues, startContext } from './harness';
import { num, progress, sleep } from './stats';

export interface CostSettings {
  conversions: number;
  /** Webhooks posted per second. */
  webhooksPerSecond: number;
  timeoutMs: number;
}

export interface CostSection {
  context: SectionContext;
  conversions: number;
  webhooksPerConversion: number;
  webhooksPerSecond: number;
  /** DynamoDB calls per conversion, by operation. */
  calls: Record<string, number>;
  /** Write units per conversion (transactional items twice, GSI copies included). */
  writeUnits: number;
  /** Write units per conversion by item kind (the sort key's first part; GSI copies under `gsi`). */
  writeUnitsByKind: Record<string, number>;
  /** Items read per conversion (each under 4 KB: about one strongly consistent read unit each). */
  itemsRead: number;
  /** SQS messages sent per conversion, by queue, and SendMessage(Batch) calls. */
  messages: Record<string, number>;
  sendCalls: number;
  /** Stripe API calls per conversion, by call. */
  providerCalls: Record<string, number>;
  /** CPU ms per conversion: this process (gateway, workers, the emulator, the driver) and DynamoDB Local. */
  cpu: CpuSample;
  /** Referrals without a reward at the end, and queues not empty. */
  missing: number;
  left: Array<{ queue: string; depth: number }>;
}

/** List prices, us-east-1, on-demand (docs/capacity.md has the sources' units); they change, plug in today's. */
export const PRICES = {
  writeUnitPerMillion: 0.625,
  readUnitPerMillion: 0.125,
  sqsRequestPerMillion: 0.4,
  apiRequestPerMillion: 1.0,
  lambdaRequestPerMillion: 0.2,
};

/** A receiver for the app's webhook endpoint: answers 204 and counts. */
async function startSink(): Promise<{ url: string; count: () => number; close(): Promise<void> }> {
  let got = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      got++;
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hook`,
    count: () => got,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

const MIDDLEWARE = 'benchCostSqsCounter';
/**
 * An item's kind, from its key (shared/store/table.ts): `A#<account>#<KIND>#…` by that part (a report bucket
 * with its scope, a counter with its name); an item of the account's own partition (counters: `COUNT#<name>#<shard>`) by its sort key.
 */
const kindOf = (pk: string, sk: string) => {
  const parts = pk.split('#');
  if (parts[0] !== 'A') return parts[0] ?? pk;
  if (parts.length <= 2) {
    const [head = '', name = ''] = sk.split('#');
    return head === 'COUNT' && name ? `COUNT#${name}` : head;
  }
  return (parts[2] === 'REPORT' || parts[2] === 'COUNT') && parts[3] ? `${parts[2]}#${parts[3]}` : (parts[2] ?? pk);
};
const perConversion = (counts: Map<string, number>, n: number) =>
  Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).map(([k, v]) => [k, v / n]));
const bump = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);

export async function measureCost(bench: BenchRuntime, o: CostSettings): Promise<CostSection> {
  const ctx = startContext();
  const rt = bench.runtime;
  progress(`cost: a Stripe account, a 20% commission campaign, an endpoint for every event; ${o.conversions} conversions`);
  const { account, apiKey } = await createAccount({ name: 'Bench cost', plan: 'regular' });
  const accountId = account.accountId;
  await saveProviderConnection(accountId, {
    kind: 'stripe',
    secretKey: rt.stripe.secretKey,
    apiUrl: rt.stripe.url,
    webhookSecret: rt.stripe.webhookSecret,
  });
  const call = (method: string, path: string, body?: unknown) => apiAs(rt, apiKey, method, path, body);
  const codes = [0, 1, 2, 3, 4].map((i) => `COST${i}`);
  await commissionProgramme(rt, apiKey, 'cost', codes);
  const sink = await startSink();
  const endpoint = await call('POST', '/v1/webhook-endpoints/', { url: sink.url, events: [...EVENT_TYPES] });
  if (endpoint.status !== 201) throw new Error(`cost: webhook endpoint ${endpoint.status} ${JSON.stringify(endpoint.body)}`);

  /** One conversion: the referral through the API, the checkout naming it, its webhooks paced. */
  let posted = 0;
  let started = 0;
  const pace = 1000 / o.webhooksPerSecond;
  const convert = async (tag: string, i: number): Promise<{ referralId: string; webhooks: number }> => {
    const r = await call('POST', '/v1/referrals/', { user_identifier: `${tag}-${i}`, member_code: codes[i % codes.length] });
    if (r.status !== 200) throw new Error(`cost: referral ${r.status} ${JSON.stringify(r.body)}`);
    const referralId = r.body.id as string;
    const out = await rt.stripe.checkout({
      email: `${tag}-${i}@example.com`,
      deliver: false,
      clientReferenceId: referralId,
      subscriptionMetadata: { refloop_referral_id: referralId },
    });
    for (const d of out.delivered) {
      const due = started + posted++ * pace;
      if (due > Date.now()) await sleep(due - Date.now());
      const res = await fetch(`${rt.url}/webhooks/stripe/${accountId}/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'stripe-signature': d.signature },
        body: d.rawBody,
      });
      await res.arrayBuffer();
      if (res.status !== 200) throw new Error(`cost: webhook answered ${res.status}`);
    }
    return { referralId, webhooks: out.delivered.length };
  };
  const run = async (tag: string, n: number) => {
    posted = 0;
    started = Date.now();
    const results: Array<{ referralId: string; webhooks: number }> = [];
    // Four at a time: each waits for its webhooks' due times, so the pace holds.
    for (let i = 0; i < n; i += 4)
      results.push(...(await Promise.all(Array.from({ length: Math.min(4, n - i) }, (_, k) => convert(tag, i + k)))));
    const queues = QUEUE_NAMES.filter((q) => !q.endsWith('-dlq'));
    // A worker sends its follow-ups before its own record is deleted, so a chain always holds a message
    // somewhere; a queue read empty just before an earlier one's worker sent to it is caught by asking
    // again: settled once every queue reads empty twice in a row.
    const deadline = Date.now() + o.timeoutMs;
    const empty = async () => (await Promise.all(queues.map((q) => bench.queues.depth(q)))).every((d) => d.total === 0);
    const quiet = async () => {
      if (!(await empty())) return false;
      await sleep(250);
      return empty();
    };
    let left = await settleQueues(bench, queues, o.timeoutMs);
    while (left.length === 0 && !(await quiet()) && Date.now() < deadline)
      left = await settleQueues(bench, queues, Math.max(0, deadline - Date.now()));
    return { results, left };
  };

  // Warm-up (not counted): the caches a steady pipeline has (the account's connection, the JIT).
  await run('cost-warm', 8);

  progress(`cost: ${o.conversions} conversions at ${o.webhooksPerSecond} webhooks/s, every call counted`);
  const accountant = new WriteRateAccountant().attach(undefined, { everyWrite: true });
  const recording = recordDynamoCalls();
  const sends = new Map<string, number>();
  let sendCalls = 0;
  sqs().middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { QueueUrl?: string; Entries?: unknown[] };
      const queue =
        String(input.QueueUrl ?? '')
          .split('/')
          .pop() ?? '?';
      if (context.commandName === 'SendMessageCommand') bump(sends, queue);
      if (context.commandName === 'SendMessageBatchCommand') bump(sends, queue, input.Entries?.length ?? 0);
      if (/^SendMessage/.test(context.commandName ?? '')) sendCalls++;
      return next(args);
    },
    { step: 'initialize', name: MIDDLEWARE, override: true },
  );
  const stripeBefore = rt.stripe.callCounts();
  const cpuFrom = bench.cpu.sample();
  let measured: Awaited<ReturnType<typeof run>>;
  try {
    measured = await run('cost', o.conversions);
  } finally {
    recording.stop();
    accountant.detach();
    sqs().middlewareStack.remove(MIDDLEWARE);
  }
  const cpu = bench.cpu.since(cpuFrom, o.conversions);
  const stripeAfter = rt.stripe.callCounts();
  await accountant.settle();
  const n = o.conversions;

  const calls = new Map<string, number>();
  let itemsRead = 0;
  for (const c of recording.calls) {
    bump(calls, c.command);
    itemsRead += c.itemsRead ?? 0;
  }
  const providerCalls = new Map<string, number>();
  for (const [k, v] of Object.entries(stripeAfter)) if (v - (stripeBefore[k] ?? 0) > 0) providerCalls.set(k, v - (stripeBefore[k] ?? 0));

  const byKind = new Map<string, number>();
  for (const r of accountant.records) bump(byKind, r.index ? 'gsi copies' : kindOf(r.pk, r.sk), WriteRateAccountant.units(r));

  let missing = 0;
  for (const { referralId } of measured.results) {
    const r = await call('GET', `/v1/referrals/${referralId}/`);
    if (r.status !== 200 || !Array.isArray(r.body.rewards) || r.body.rewards.length !== 1) missing++;
  }
  await sink.close();
  const webhooks = measured.results.reduce((s, r) => s + r.webhooks, 0);
  return {
    context: ctx.finish(),
    conversions: n,
    webhooksPerConversion: webhooks / n,
    webhooksPerSecond: o.webhooksPerSecond,
    calls: perConversion(calls, n),
    writeUnits: accountant.records.reduce((s, r) => s + WriteRateAccountant.units(r), 0) / n,
    writeUnitsByKind: perConversion(byKind, n),
    itemsRead: itemsRead / n,
    messages: perConversion(sends, n),
    sendCalls: sendCalls / n,
    providerCalls: perConversion(providerCalls, n),
    cpu,
    missing,
    left: measured.left,
  };
}

/** SQS requests per conversion in AWS: the sends, and each message received and deleted in batches of up to 10. */
const sqsRequests = (x: CostSection) => x.sendCalls + (2 * Object.values(x.messages).reduce((s, v) => s + v, 0)) / 10 + 0.5;

export function describeCost(x: CostSection): string {
  const calls = Object.values(x.calls).reduce((s, v) => s + v, 0);
  return `cost: per conversion ${num(calls, 1)} DynamoDB calls, ${num(x.writeUnits, 1)} write units, ${num(x.itemsRead, 1)} items read, ${num(
    Object.values(x.messages).reduce((s, v) => s + v, 0),
    1,
  )} SQS messages; missing ${x.missing}`;
}

export function renderCostSection(x: CostSection): string[] {
  const out: string[] = [];
  const line = (s = '') => out.push(s);
  const list = (r: Record<string, number>) =>
    Object.entries(r)
      .map(([k, v]) => `${k} ${num(v, 2)}`)
      .join(', ');
  const calls = Object.values(x.calls).reduce((s, v) => s + v, 0);
  const messages = Object.values(x.messages).reduce((s, v) => s + v, 0);
  const apiRequests = 1 + x.webhooksPerConversion;
  const dollars = (units: number, perMillion: number) => (units * 1000 * perMillion) / 1e6;
  const rows: Array<[string, string, number]> = [
    [
      'DynamoDB writes',
      `${num(x.writeUnits * 1000)} write units at $${PRICES.writeUnitPerMillion} per million`,
      dollars(x.writeUnits, PRICES.writeUnitPerMillion),
    ],
    [
      'DynamoDB reads',
      `${num(x.itemsRead * 1000)} read units at $${PRICES.readUnitPerMillion} per million`,
      dollars(x.itemsRead, PRICES.readUnitPerMillion),
    ],
    [
      'SQS',
      `${num(sqsRequests(x) * 1000)} requests at $${PRICES.sqsRequestPerMillion} per million`,
      dollars(sqsRequests(x), PRICES.sqsRequestPerMillion),
    ],
    [
      'API Gateway (HTTP API)',
      `${num(apiRequests * 1000)} requests at $${PRICES.apiRequestPerMillion} per million`,
      dollars(apiRequests, PRICES.apiRequestPerMillion),
    ],
  ];
  line('## Cost per conversion, counted');
  line();
  line(
    `A fresh Stripe-connected account with a 20% commission campaign and one app webhook endpoint for every event type. For each of ${num(x.conversions)} conversions: a referral created through the API, then the Stripe emulator's checkout naming it (\`client_reference_id\` and subscription metadata), whose ${num(x.webhooksPerConversion, 1)} signed webhooks are posted to the intake at ${num(x.webhooksPerSecond)} a second (a busy hour, not a backlog: the workers' batches are small). Counted from the first request until every queue is empty, after 8 conversions of warm-up: every DynamoDB call (shared/store/instrumentation.ts), every write sized as DynamoDB bills it (test/support/write-rate.ts: item size in KB, transactional items twice, GSI copies), every SQS send, every call to the Stripe emulator. ${contextLine(x.context, 'npm run bench')}`,
  );
  line();
  line('| Per conversion | Count |');
  line('|---|---:|');
  line(`| DynamoDB calls | ${num(calls, 1)}: ${list(x.calls)} |`);
  line(`| Write units (transactional items twice, GSI copies) | ${num(x.writeUnits, 1)}: ${list(x.writeUnitsByKind)} |`);
  line(`| Items read (each under 4 KB: about one strongly consistent read unit) | ${num(x.itemsRead, 1)} |`);
  line(`| SQS messages sent | ${num(messages, 1)}: ${list(x.messages)} (${num(x.sendCalls, 2)} send calls) |`);
  line(`| Stripe API calls | ${list(x.providerCalls) || 'none'} |`);
  line(`| API requests | ${num(apiRequests, 1)} (the referral and the webhooks) |`);
  line(
    `| CPU | ${num(x.cpu.service, 1)} ms in the service's process (the gateway, the workers, the Stripe emulator and this driver) + ${x.cpu.dynamodb === null ? '-' : num(x.cpu.dynamodb, 1)} ms in DynamoDB Local |`,
  );
  line();
  line(
    'At list prices (us-east-1, on-demand), per 1,000 conversions, without Lambda (its duration is mostly waiting on DynamoDB and the provider; docs/capacity.md estimates it):',
  );
  line();
  line('| Service | Per 1,000 conversions | Cost |');
  line('|---|---|---:|');
  for (const [service, what, cost] of rows) line(`| ${service} | ${what} | $${cost.toFixed(4)} |`);
  line(`| **Total counted** | | **$${rows.reduce((s, r) => s + r[2], 0).toFixed(3)}** |`);
  line();
  line(
    `Verification: ${x.missing} of ${num(x.conversions)} referrals without exactly one reward; ${x.left.length === 0 ? 'every queue empty at the end' : `queues not empty at the end: ${x.left.map((l) => `${l.queue} ${l.depth}`).join(', ')}`}.`,
  );
  return out;
}
