// Load on the local runtime (autocannon, from its own process) for four endpoints, beside the raw
// DynamoDB Local rate of the operations behind them, measured by the same SDK client configuration in
// the same run: the ceiling the local stack itself puts on any endpoint.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GetCommand, PutCommand, QueryCommand, DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { createDynamoClient } from '../../shared/store/client';
import { keys, listKeys } from '../../shared/store/table';
import { QUEUE_NAMES, type QueueName } from '../../shared/queue/queues';
import { oneOffPaymentAlert } from './alerts';
import type { CpuSample } from './cpu';
import { api, type BenchRuntime } from './harness';
import type { LoadFigures } from './load-client';
import { median, percentile, progress } from './stats';
import { referralShapedTransaction } from './raw-transact';

export const READ_TARGET_RATIO = 0.7;

export interface LoadSettings {
  connections: number;
  /** Seconds per measured run (HTTP scenarios and raw loops alike). */
  seconds: number;
  warmupSeconds: number;
  runs: number;
}

export interface Figures {
  rps: number;
  p50: number;
  p99: number;
  /** Per-run rates, to show the spread. */
  runs: number[];
  non2xx: number;
  errors: number;
  requests: number;
  /** CPU ms per request (median over runs): service process, DynamoDB Local, load generator. */
  cpu: CpuSample;
}

export interface RawFigures {
  opsPerSecond: number;
  p50: number;
  p99: number;
  runs: number[];
  errors: number;
  /** CPU ms per operation (median over runs): this process (the SDK), DynamoDB Local. */
  cpu: CpuSample;
}

export interface LoadSection {
  settings: LoadSettings;
  scenarios: Array<{
    name: string;
    request: string;
    dynamo: string;
    raw: 'GetItem' | 'Query' | 'TransactWriteItems' | null;
    figures: Figures;
  }>;
  raw: Record<'GetItem' | 'Query' | 'TransactWriteItems', RawFigures & { what: string }>;
  seed: { referrals: number; members: number };
  signSeconds: number;
  intakeAlertsPerRun: number;
}

function medianCpu(list: CpuSample[]): CpuSample {
  const pick = (f: (c: CpuSample) => number | null) => {
    const values = list.map(f).filter((v): v is number => v !== null);
    return values.length === list.length ? median(values) : null;
  };
  return {
    service: pick((c) => c.service) ?? 0,
    workers: pick((c) => c.workers),
    dynamodb: pick((c) => c.dynamodb),
    loadgen: pick((c) => c.loadgen),
  };
}

type Measured<T> = T & { cpu: CpuSample };

function combine(runs: Array<Measured<LoadFigures>>): Figures {
  return {
    cpu: medianCpu(runs.map((r) => r.cpu)),
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    runs: runs.map((r) => r.rps),
    non2xx: runs.reduce((s, r) => s + r.non2xx, 0),
    errors: runs.reduce((s, r) => s + r.errors + r.timeouts, 0),
    requests: runs.reduce((s, r) => s + r.requests, 0),
  };
}

/** `lanes` concurrent closed loops of `op` for `seconds`: completed ops per second and their latency. */
async function closedLoop(lanes: number, seconds: number, op: (lane: number, i: number) => Promise<unknown>) {
  const latencies: number[] = [];
  let errors = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: lanes }, async (_, lane) => {
      for (let i = 0; performance.now() < deadline; i++) {
        const t = performance.now();
        try {
          await op(lane, i);
          latencies.push(performance.now() - t);
        } catch {
          errors++;
        }
      }
    }),
  );
  const elapsed = (performance.now() - started) / 1000;
  return {
    ops: latencies.length,
    opsPerSecond: latencies.length / elapsed,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
  };
}

export async function measureLoad(bench: BenchRuntime, workDir: string, settings: LoadSettings): Promise<LoadSection> {
  const rt = bench.runtime;
  const { connections, seconds, warmupSeconds, runs } = settings;

  // --- seed: a credit campaign, one referring member per connection, 60 referrals --------------------
  progress('load: seeding a campaign, members and referrals');
  const campaign = await api(rt, 'POST', '/v1/campaigns/', {
    name: 'Bench',
    allows_credit: true,
    credit_amount: '5.00',
    credit_currency: 'USD',
  });
  if (campaign.status !== 201) throw new Error(`seed campaign: ${campaign.status} ${JSON.stringify(campaign.body)}`);
  const memberCodes: string[] = [];
  for (let i = 0; i < connections; i++) {
    const code = `BENCH${String(i).padStart(3, '0')}`;
    const m = await api(rt, 'POST', '/v1/members/', {
      identifier: `bench-member-${i}`,
      email: `m${i}@example.com`,
      code,
      campaign: { id: campaign.body.id },
    });
    if (m.status !== 201) throw new Error(`seed member: ${m.status} ${JSON.stringify(m.body)}`);
    memberCodes.push(code);
  }
  const referralIds: string[] = [];
  for (let i = 0; i < 60; i++) {
    const r = await api(rt, 'POST', '/v1/referrals/', {
      user_identifier: `seed-user-${i}`,
      member_code: memberCodes[i % memberCodes.length],
    });
    if (r.status !== 200) throw new Error(`seed referral: ${r.status} ${JSON.stringify(r.body)}`);
    referralIds.push(r.body.id as string);
  }
  const accountId = rt.demo.accountId;
  const headers = { authorization: `Bearer ${rt.demo.apiKey}` };

  // --- signed alerts for the intake: one pool per run (each alert posted once), signed before timing -----
  // The intake's rate is not known in advance, so each intake run posts a fixed number of alerts
  // sized from the warm-up's rate to last about `seconds`.
  let alertSeq = 2_000_000_001;
  const signPool = (n: number, file: string) => {
    const bodies: string[] = [];
    for (let i = 0; i < n; i++) bodies.push(oneOffPaymentAlert(rt.paddle.sign, alertSeq++));
    writeFileSync(file, `${bodies.join('\n')}\n`);
  };

  // --- raw DynamoDB Local: the same client configuration and document client as shared/store/client.ts ---
  const rawClient = createDynamoClient({ endpoint: rt.dynamodbEndpoint, region: 'us-east-1' });
  const doc = DynamoDBDocumentClient.from(rawClient, { marshallOptions: { removeUndefinedValues: true } });
  const table = bench.tableName;
  const sample = (
    await doc.send(new GetCommand({ TableName: table, Key: keys.referral(accountId, referralIds[0] as string), ConsistentRead: true }))
  ).Item;
  if (!sample) throw new Error('seeded referral not found');
  // Write-side stand-ins under keys of their own (never read by the service): the shape of the create
  // referral transaction - the referral, the referred-user claim, an ADD on the referring member (one per
  // lane, like one member per connection) and an ADD on one shared counter (the account's counter).
  const benchPk = `BENCHRAW#${process.pid}`;
  for (let lane = 0; lane < connections; lane++) {
    await doc.send(new PutCommand({ TableName: table, Item: { pk: `${benchPk}#MEMBER`, sk: String(lane), type: 'Bench', referrals: 0 } }));
  }
  let rawSeq = 0;
  const rawOps = {
    GetItem: {
      what: 'GetItem of a referral (strongly consistent), as GET /v1/referrals/{id}/ reads it',
      op: (_lane: number, i: number) =>
        doc.send(
          new GetCommand({
            TableName: table,
            Key: keys.referral(accountId, referralIds[i % referralIds.length] as string),
            ConsistentRead: true,
          }),
        ),
    },
    Query: {
      what: 'Query of 21 referrals, newest first (strongly consistent), as GET /v1/referrals/ reads its page',
      op: () =>
        doc.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: '#pk = :pk',
            ExpressionAttributeNames: { '#pk': 'pk' },
            ExpressionAttributeValues: { ':pk': listKeys.referralCollection(accountId) },
            ScanIndexForward: false,
            Limit: 21,
            ConsistentRead: true,
          }),
        ),
    },
    TransactWriteItems: {
      what: 'TransactWriteItems of 4 items, the shape of POST /v1/referrals/: 2 conditional Puts of new items, an ADD on a member (one per lane), an ADD on one shared counter',
      op: (lane: number) => {
        const n = rawSeq++;
        return doc.send(referralShapedTransaction(table, benchPk, sample, n, lane));
      },
    },
  } as const;
  type RawName = keyof typeof rawOps;
  const rawNames = Object.keys(rawOps) as RawName[];

  // --- scenarios ------------------------------------------------------------------------------------
  let userSeq = 0;
  const webhookPath = `/webhooks/paddle/${accountId}/`;
  let intakePerRun = 0;
  let signSeconds = 0;
  const scenarios = [
    {
      name: 'GET referral',
      request: 'GET /v1/referrals/{id}/ (60 ids in turn)',
      dynamo: '1 GetItem (+ 1 UpdateItem of the rate-limit window once per 5% of the limit)',
      raw: 'GetItem' as const,
      job: () => ({ scenario: { kind: 'paths' as const, paths: referralIds.map((id) => `/v1/referrals/${id}/`) } }),
    },
    {
      name: 'List referrals',
      request: 'GET /v1/referrals/ (page of 20, exact count)',
      dynamo: '1 Query (21 items) ‖ 1 GetItem (counter) (+ the batched rate-limit UpdateItem)',
      raw: 'Query' as const,
      job: () => ({ scenario: { kind: 'paths' as const, paths: ['/v1/referrals/'] } }),
    },
    {
      name: 'Create referral',
      request: `POST /v1/referrals/ (new user_identifier each, ${memberCodes.length} referring members in turn)`,
      dynamo: '2 BatchGetItem + 1 TransactWriteItems (4 items, + the referral.created outbox event) (+ the batched rate-limit UpdateItem)',
      raw: 'TransactWriteItems' as const,
      job: () => ({
        headers: { ...headers, 'content-type': 'application/json' },
        scenario: { kind: 'create-referral' as const, path: '/v1/referrals/', memberCodes, userPrefix: `load-${userSeq++}` },
      }),
    },
    {
      name: 'Webhook intake',
      request:
        "POST /webhooks/paddle/{account}/ (signed form body, unique alert_id; Paddle's one-off `payment_succeeded`, which the worker acknowledges without writes)",
      dynamo: 'none (provider settings cached) + 1 SQS SendMessage',
      raw: null,
      job: () => {
        const file = join(workDir, `alerts-${alertSeq}.txt`);
        const t = performance.now();
        signPool(intakePerRun, file);
        signSeconds += (performance.now() - t) / 1000;
        return {
          amount: intakePerRun,
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          scenario: { kind: 'form-bodies' as const, path: webhookPath, bodiesFile: file },
        };
      },
    },
  ];

  // Warm-up: loads each handler (tsx compiles it on first require), fills the auth and provider caches,
  // lets V8 optimise; not counted. The intake's warm-up also sizes its measured runs.
  progress(`load: warm-up, ${warmupSeconds} s per scenario`);
  for (const s of scenarios) {
    if (s.name === 'Webhook intake') {
      intakePerRun = 400;
      const w = await bench.load.run({ url: rt.url, connections, headers: {}, ...s.job() });
      intakePerRun = Math.max(500, Math.round(w.rps * seconds));
      // The warm-up's alerts and the next ones are acknowledged by the worker in the background.
    } else {
      await bench.load.run({ url: rt.url, connections, duration: warmupSeconds, headers, ...s.job() });
    }
  }
  for (const name of rawNames) await closedLoop(connections, 1, rawOps[name].op);

  // Rounds interleave the scenarios and the raw loops, so drift on a shared machine hits them alike.
  type RawRun = Measured<Awaited<ReturnType<typeof closedLoop>>>;
  const httpRuns = new Map<string, Array<Measured<LoadFigures>>>(scenarios.map((s) => [s.name, []]));
  const rawRuns = new Map<RawName, RawRun[]>(rawNames.map((n) => [n, []]));
  for (let round = 1; round <= runs; round++) {
    for (const s of scenarios) {
      // Let the workers finish what the previous run queued before anything is timed.
      await waitForQueues(bench, 120_000);
      progress(`load: round ${round}/${runs}: ${s.name}`);
      const job = s.job();
      const cpuFrom = bench.cpu.sample();
      const figures = await bench.load.run({
        url: rt.url,
        connections,
        ...(s.name === 'Webhook intake' ? {} : { duration: seconds }),
        headers,
        ...job,
      });
      (httpRuns.get(s.name) as Array<Measured<LoadFigures>>).push({ ...figures, cpu: bench.cpu.since(cpuFrom, figures.requests) });
    }
    await waitForQueues(bench, 120_000);
    for (const name of rawNames) {
      progress(`load: round ${round}/${runs}: raw DynamoDB Local ${name}`);
      const cpuFrom = bench.cpu.sample();
      const loop = await closedLoop(connections, seconds, rawOps[name].op);
      const cpu = bench.cpu.since(cpuFrom, loop.ops);
      (rawRuns.get(name) as RawRun[]).push({ ...loop, cpu: { ...cpu, loadgen: null } });
    }
  }
  rawClient.destroy();

  const raw = Object.fromEntries(
    rawNames.map((name) => {
      const list = rawRuns.get(name) as RawRun[];
      return [
        name,
        {
          what: rawOps[name].what,
          opsPerSecond: median(list.map((r) => r.opsPerSecond)),
          p50: median(list.map((r) => r.p50)),
          p99: median(list.map((r) => r.p99)),
          runs: list.map((r) => r.opsPerSecond),
          errors: list.reduce((s, r) => s + r.errors, 0),
          cpu: medianCpu(list.map((r) => r.cpu)),
        },
      ];
    }),
  ) as LoadSection['raw'];

  return {
    settings,
    scenarios: scenarios.map((s) => ({
      name: s.name,
      request: s.request,
      dynamo: s.dynamo,
      raw: s.raw,
      figures: combine(httpRuns.get(s.name) as Array<Measured<LoadFigures>>),
    })),
    raw,
    seed: { referrals: referralIds.length, members: memberCodes.length },
    signSeconds,
    intakeAlertsPerRun: intakePerRun,
  };
}

/** Waits until the queue holds nothing (visible, in flight or delayed). */
export async function waitForQueue(bench: BenchRuntime, queue: QueueName, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await bench.queues.depth(queue)).total > 0) {
    if (Date.now() > deadline) throw new Error(`${queue} did not empty within ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Every queue empty: the background work an earlier scenario caused (the webhook fan-out of the referrals
 * it created, reward evaluations, the worker acknowledging intake alerts) is done before the next is timed.
 */
async function waitForQueues(bench: BenchRuntime, timeoutMs: number): Promise<void> {
  for (const queue of QUEUE_NAMES) await waitForQueue(bench, queue, timeoutMs);
}
