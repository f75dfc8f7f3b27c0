// What the load and drain sections share: the local runtime on free ports, the forked load generator,
// the service's logs kept out of the bench output, and queue depths.
import { fork, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, mkdtempSync, rmSync, type WriteStream } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { format } from 'node:util';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { freePort, startDynamoLocal, type DynamoLocal } from '../../infra/local/dynamodb';
import { localDynamoConnections, localPollerConcurrency, startLocal, type LocalRuntime } from '../../infra/local/start';
import { tallyCalls } from './call-tally';
import { useLogSink } from '../../shared/log';
import { batchGet, lookup } from '../../shared/store/ops';
import type { Key } from '../../shared/store/table';
import { CpuMeter, findJavaChild } from './cpu';
import type { LoadFigures, LoadJob, LoadReply } from './load-client';
import { QUEUE_NAMES, type QueueName } from '../../shared/queue/queues';

export interface BenchRuntime {
  runtime: LocalRuntime;
  tableName: string;
  /** The load generator process. */
  load: LoadGenerator;
  queues: QueueProbe;
  logs: LogSink;
  cpu: CpuMeter;
  stop(): Promise<void>;
  /** Stops it without giving the console back (another runtime takes over the log file). */
  stopKeepingLogs(): Promise<void>;
}

/**
 * The service's log lines (shared/log.ts: handlers, workers, the local runtime) and any console.* call of
 * theirs go to a file: thousands of lines would drown the report. The logger writes through its own
 * console, not the global one, so it is redirected with useLogSink (counted by the line's level).
 */
export interface LogSink {
  file: string;
  counts: Record<'log' | 'info' | 'warn' | 'error', number>;
  /** The first few error lines, for the report. */
  firstErrors: string[];
  restore(): Promise<void>;
}

/**
 * The file the service's lines go to during `npm run bench`: BENCH_SERVICE_LOG, else .data/bench-service.log
 * (gitignored; emptied when the bench starts, kept after it for reading).
 */
export function benchServiceLog(): string {
  const file = resolve(process.env.BENCH_SERVICE_LOG || join(__dirname, '..', '..', '.data', 'bench-service.log'));
  mkdirSync(dirname(file), { recursive: true });
  return file;
}

export function captureServiceLogs(file: string): LogSink {
  const stream: WriteStream = createWriteStream(file, { flags: 'a' });
  const counts = { log: 0, info: 0, warn: 0, error: 0 };
  const firstErrors: string[] = [];
  const original = { log: console.log, info: console.info, warn: console.warn, error: console.error };
  for (const level of ['log', 'info', 'warn', 'error'] as const) {
    console[level] = (...args: unknown[]) => {
      counts[level]++;
      const line = format(...args);
      if (level === 'error' && firstErrors.length < 5) firstErrors.push(line.slice(0, 300));
      stream.write(`${level} ${line}\n`);
    };
  }
  useLogSink((line) => {
    let level: keyof typeof counts = 'info';
    try {
      const parsed = JSON.parse(line) as { level?: unknown };
      const name = String(parsed.level ?? '').toLowerCase();
      level = name === 'warn' || name === 'error' || name === 'critical' ? (name === 'critical' ? 'error' : name) : 'info';
    } catch {
      // Not JSON: counted as info.
    }
    counts[level]++;
    if (level === 'error' && firstErrors.length < 5) firstErrors.push(line.trim().slice(0, 300));
    stream.write(line);
  });
  return {
    file,
    counts,
    firstErrors,
    restore: () =>
      new Promise<void>((resolve) => {
        useLogSink(null);
        Object.assign(console, original);
        stream.end(() => resolve());
      }),
  };
}

export class LoadGenerator {
  readonly pid: number | null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (f: LoadFigures) => void; reject: (e: Error) => void }>();

  private constructor(private readonly child: ChildProcess) {
    this.pid = child.pid ?? null;
    child.on('message', (reply: LoadReply) => {
      const waiter = this.pending.get(reply.id);
      if (!waiter) return;
      this.pending.delete(reply.id);
      if ('error' in reply) waiter.reject(new Error(reply.error));
      else waiter.resolve(reply.figures);
    });
    child.on('exit', (code) => {
      for (const w of this.pending.values()) w.reject(new Error(`load generator exited (${code})`));
      this.pending.clear();
    });
  }

  static start(): LoadGenerator {
    const child = fork(join(__dirname, 'load-client.ts'), [], {
      execArgv: ['--import', 'tsx'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    return new LoadGenerator(child);
  }

  run(job: Omit<LoadJob, 'id'>): Promise<LoadFigures> {
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.child.send({ ...job, id } satisfies LoadJob);
    });
  }

  stop(): Promise<void> {
    return new Promise((resolve) => {
      if (this.child.exitCode !== null || !this.child.connected) return resolve();
      this.child.once('exit', () => resolve());
      this.child.disconnect();
    });
  }
}

export interface QueueProbe {
  /**
   * `total`: visible + in flight + delayed, as GetQueueAttributes reports them (0 = nothing left; the
   * local SQS counts an in-flight message in both of the first two, so only 0 is exact).
   * `messages`: ApproximateNumberOfMessages alone (on the local SQS: every message not delayed).
   */
  depth(queue: QueueName | `${QueueName}-dlq`): Promise<{ total: number; messages: number }>;
  stop(): void;
}

function queueProbe(endpoint: string): QueueProbe {
  const client = new SQSClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  return {
    depth: async (queue) => {
      const out = await client.send(
        new GetQueueAttributesCommand({
          QueueUrl: `${endpoint}/000000000000/${queue}`,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
        }),
      );
      const a = out.Attributes ?? {};
      const messages = Number(a.ApproximateNumberOfMessages ?? 0);
      return {
        total: messages + Number(a.ApproximateNumberOfMessagesNotVisible ?? 0) + Number(a.ApproximateNumberOfMessagesDelayed ?? 0),
        messages,
      };
    },
    stop: () => client.destroy(),
  };
}

/**
 * `startLocal` on free ports, a fresh data directory and a table of its own. AUTH_CACHE_TTL_SECONDS is
 * set to 60 first (startLocal turns the cache off unless it is set): API keys are then cached per
 * container as they are in AWS, instead of costing one GetItem per request. Rate limits are raised out
 * of the way, not turned off.
 */
export interface BenchRuntimeOptions {
  /**
   * The workers in a process of their own, as npm start runs them (the freshness section), or in this one (the
   * other sections: a drain measures the worker's own cost per event, which the second process's IPC and its
   * second SDK stack would add to: +0.4 to 1 ms of CPU per event in a Paddle Billing drain).
   */
  workersProcess?: boolean;
  /** The log file's sink of a runtime started before (the bench counts one run's lines). */
  logs?: LogSink;
}

/**
 * Where the bench runtime's DynamoDB Local keeps its data: on disk in DATA_DIR as `npm start` does (the
 * default), in memory with BENCH_DYNAMODB=memory, or as a file store on tmpfs with BENCH_DYNAMODB=shm. Under
 * the full load the file store's per-commit syncs bound DynamoDB Local on this kind of machine, so the
 * freshness section is run these ways (docs/capacity.md "The log nobody checkpointed").
 */
export function benchDynamoStore(): string {
  if (process.env.BENCH_DYNAMODB === 'memory') return 'in memory (BENCH_DYNAMODB=memory: `-inMemory`, nothing on disk)';
  if (process.env.BENCH_DYNAMODB === 'shm') return 'a file store on tmpfs (BENCH_DYNAMODB=shm: /dev/shm, where a sync costs nothing)';
  return "on disk in the bench's DATA_DIR, as npm start keeps it";
}

/** Whether the running bench runtime has a workers process (the sections' context lines say how many lanes). */
let workersProcessNow = false;

export async function startBenchRuntime(workDir: string, options: BenchRuntimeOptions = {}): Promise<BenchRuntime> {
  workersProcessNow = options.workersProcess ?? false;
  process.env.AUTH_CACHE_TTL_SECONDS = '60';
  // The load runs one key far past any plan's rate: the limits stay on (every request still pays its
  // rate-limit UpdateItem, as in AWS) but high enough never to refuse.
  process.env.API_RATE_LIMITS = 'starter=1000000,small=1000000,regular=1000000,unlimited=1000000';
  process.env.JS_RATE_LIMIT_PER_IP = '100000000';
  process.env.JS_RATE_LIMIT_PER_KEY = '100000000';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const tableName = `refloop-bench-${process.pid}-${Date.now().toString(36)}`;
  const logs = options.logs ?? captureServiceLogs(benchServiceLog());
  let runtime: LocalRuntime;
  /** A DynamoDB Local started here rather than by startLocal (in memory, or behind the call tally). */
  let ownDynamo: DynamoLocal | undefined;
  let shmDir: string | undefined;
  try {
    if (process.env.BENCH_DYNAMODB === 'memory') ownDynamo = await startDynamoLocal({ port: await freePort(), path: null, tableName });
    // A diagnostic: the same file store on tmpfs, where a sync costs nothing (Linux's /dev/shm).
    if (process.env.BENCH_DYNAMODB === 'shm') {
      shmDir = mkdtempSync('/dev/shm/refloop-bench-');
      ownDynamo = await startDynamoLocal({ port: await freePort(), path: shmDir, tableName });
    }
    // A diagnostic: every call counted by kind (./call-tally.ts), through a proxy in front of a DynamoDB Local
    // started here (on the data directory, as startLocal would, unless it is in memory).
    const callsFile = process.env.BENCH_DYNAMODB_CALLS;
    if (callsFile) {
      ownDynamo ??= await startDynamoLocal({ port: await freePort(), path: join(workDir, 'data', 'dynamodb'), tableName });
      ownDynamo = await tallyCalls(ownDynamo, callsFile);
    }
    runtime = await startLocal({
      ...(ownDynamo ? { dynamodbEndpoint: ownDynamo.endpoint } : {}),
      port: await freePort(),
      dynamodbPort: await freePort(),
      sqsPort: 0,
      paddlePort: 0,
      paddleBillingPort: 0,
      stripePort: 0,
      paypalPort: 0,
      wisePort: 0,
      dataDir: join(workDir, 'data'),
      tableName,
      workersProcess: options.workersProcess ?? false,
    });
  } catch (err) {
    await logs.restore();
    throw err;
  }
  const load = LoadGenerator.start();
  const queues = queueProbe(runtime.sqsEndpoint);
  const stopKeepingLogs = async () => {
    queues.stop();
    await load.stop();
    await runtime.stop();
    await ownDynamo?.stop();
    if (shmDir) rmSync(shmDir, { recursive: true, force: true });
  };
  return {
    runtime,
    tableName,
    load,
    queues,
    logs,
    cpu: new CpuMeter(findJavaChild(), load.pid, () => runtime.workers.pid),
    stop: async () => {
      await stopKeepingLogs();
      await logs.restore();
    },
    stopKeepingLogs,
  };
}

/**
 * A 20% commission campaign and one member per code, through the API as an operator would make them (the
 * freshness and cost sections): `section` names the campaign, the members' identifiers and emails, and the errors.
 */
export async function commissionProgramme(rt: LocalRuntime, apiKey: string, section: string, codes: string[]): Promise<void> {
  const call = (method: string, path: string, body?: unknown) => apiAs(rt, apiKey, method, path, body);
  const campaign = await call('POST', '/v1/campaigns/', {
    name: `${section} affiliates`,
    allows_commission: true,
    commission_type: 'percentage',
    commission_percent: '20',
    commission_currency: 'USD',
  });
  if (campaign.status !== 201) throw new Error(`${section}: campaign ${campaign.status} ${JSON.stringify(campaign.body)}`);
  for (const [i, code] of codes.entries()) {
    const m = await call('POST', '/v1/members/', {
      identifier: `${section}-member-${i}`,
      email: `${section}-member-${i}@example.com`,
      code,
      campaign: { id: campaign.body.id },
    });
    if (m.status !== 201) throw new Error(`${section}: member ${m.status} ${JSON.stringify(m.body)}`);
  }
}

/** One JSON call to the local API with the demo key. */
export async function api(rt: LocalRuntime, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(rt.url + path, {
    method,
    headers: {
      authorization: `Bearer ${rt.demo.apiKey}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** One JSON call to the local API with a given API key (another account's than the demo's). */
export async function apiAs(
  rt: LocalRuntime,
  apiKey: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await fetch(rt.url + path, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** The keys of `wanted` not in the table (consistent BatchGets of 100, ten at a time). */
export async function absentKeys(wanted: Key[]): Promise<Key[]> {
  const missing: Key[] = [];
  for (let i = 0; i < wanted.length; i += 1000) {
    const slice = wanted.slice(i, i + 1000);
    const found = await batchGet(slice);
    for (const k of slice) if (!lookup(found, k)) missing.push(k);
  }
  return missing;
}

/** Every queue's DLQ depth summed (visible + in flight + delayed). */
export async function dlqTotal(bench: BenchRuntime): Promise<number> {
  let total = 0;
  for (const queue of QUEUE_NAMES) total += (await bench.queues.depth(`${queue}-dlq`)).total;
  return total;
}

/**
 * The commit the working tree is on (`git log -1 --format=%h`), with `+` when tracked files differ from it;
 * BENCH_COMMIT says it instead (a copy of a commit outside the repository, say).
 */
export function currentCommit(): string {
  if (process.env.BENCH_COMMIT) return process.env.BENCH_COMMIT;
  const root = join(__dirname, '..', '..');
  const head = spawnSync('git', ['log', '-1', '--format=%h'], { cwd: root, encoding: 'utf8' }).stdout?.trim() || 'unknown';
  const dirty = spawnSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: root, encoding: 'utf8' }).stdout?.trim();
  return dirty ? `${head}+` : head;
}

/** Where and when a section ran: what makes its markdown self-contained (date, commit, machine, its load). */
export interface SectionContext {
  /** ISO time the section started (UTC, seconds). */
  date: string;
  commit: string;
  cores: number;
  cpuModel: string;
  /** 1-minute load average when the section started and ended. */
  loadStart: number;
  loadEnd: number;
  /** BENCH_NOTE: a remark on the machine (e.g. what else was running). */
  note: string | null;
  /** Batches of each worker in flight at once (LOCAL_POLLER_CONCURRENCY, infra/local/start.ts; 1 as `npm start` runs). */
  pollerConcurrency: number;
  /** Calls each node process keeps in flight to DynamoDB Local (DYNAMODB_LOCAL_CONNECTIONS, infra/local/start.ts; '0' = the SDK's 50). */
  dynamoConnections: string;
}

export function startContext(): { finish(): SectionContext } {
  const date = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const loadStart = loadavg()[0] ?? 0;
  const commit = currentCommit();
  return {
    finish: () => ({
      date,
      commit,
      cores: cpus().length,
      cpuModel: cpus()[0]?.model.trim() ?? 'unknown',
      loadStart,
      loadEnd: loadavg()[0] ?? 0,
      note: process.env.BENCH_NOTE || null,
      pollerConcurrency: localPollerConcurrency(workersProcessNow),
      dynamoConnections: localDynamoConnections(workersProcessNow),
    }),
  };
}

/** The unix ms a UUIDv7 (dashes or not: referral, member and reward ids) was minted at. */
export function uuidv7Millis(id: string): number {
  return Number.parseInt(id.replace(/-/g, '').slice(0, 12), 16);
}

interface Watched {
  key: Key;
  since: number;
  ready: (item: Record<string, unknown>) => boolean;
  /** When it was last read (performance.now()); 0 = never. */
  polledAt: number;
}

/**
 * Watches items become visible: every `intervalMs`, one consistent BatchGet of the (at most `maxKeys`)
 * pending keys read longest ago, the same read the API's GETs make; an item counts once `ready` accepts it.
 * The lag is from `since` (the caller's clock, performance.now()) to the poll that saw it: exact to
 * `intervalMs` while at most `maxKeys` items are pending, to (pending / maxKeys) x `intervalMs` beyond.
 */
export class VisibilityWatch {
  private readonly pending = new Map<string, Watched>();
  private readonly done: Array<{ name: string; lagMs: number; since: number }> = [];
  private timer: NodeJS.Timeout | null = null;
  private polling = false;
  /** Ticks that found something, and BatchGet calls made. */
  polls = 0;

  constructor(
    private readonly intervalMs = 100,
    private readonly maxKeys = 100,
  ) {}

  watch(name: string, key: Key, since: number, ready: (item: Record<string, unknown>) => boolean = () => true): void {
    this.pending.set(name, { key, since, ready, polledAt: 0 });
    if (!this.timer) this.timer = setInterval(() => void this.tick(), this.intervalMs);
  }

  private async tick(): Promise<void> {
    if (this.polling || this.pending.size === 0) return;
    this.polling = true;
    try {
      // At most `maxKeys` items per poll, the least recently read first: the watch's own reads stay bounded
      // (1,000 items a second at 100 per 100 ms) however many items are pending, so a backlog does not make
      // the watching itself a load on DynamoDB Local; with more pending, each is read less often.
      const entries = [...this.pending.entries()].sort((a, b) => a[1].polledAt - b[1].polledAt).slice(0, this.maxKeys);
      const polledAt = performance.now();
      for (const [, w] of entries) w.polledAt = polledAt;
      const found = await batchGet(entries.map(([, w]) => w.key));
      this.polls++;
      const now = performance.now();
      for (const [name, w] of entries) {
        const item = lookup(found, w.key);
        if (item && w.ready(item)) {
          this.pending.delete(name);
          this.done.push({ name, lagMs: now - w.since, since: w.since });
        }
      }
    } catch {
      // A failed poll (DynamoDB Local busy): the next tick tries again.
    } finally {
      this.polling = false;
    }
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  pendingNames(): string[] {
    return [...this.pending.keys()];
  }

  /** Visible items: name, lag (ms) and when it was watched from. */
  seen(): ReadonlyArray<{ name: string; lagMs: number; since: number }> {
    return this.done;
  }

  /** Resolves once nothing is pending, or at the deadline (performance.now() ms); true when nothing is. */
  async settle(deadline: number): Promise<boolean> {
    while (this.pending.size > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, this.intervalMs));
    return this.pending.size === 0;
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }
}

/**
 * Waits until each queue holds nothing, up to `timeoutMs` in all: the queues that still held messages then
 * (name and depth), reported instead of failing the section (a worker failing its records, say; they
 * reach the DLQ, which the sections count).
 */
export async function settleQueues(
  bench: BenchRuntime,
  queues: readonly QueueName[],
  timeoutMs: number,
): Promise<Array<{ queue: QueueName; depth: number }>> {
  const deadline = Date.now() + timeoutMs;
  const left: Array<{ queue: QueueName; depth: number }> = [];
  for (const queue of queues) {
    for (;;) {
      const { total } = await bench.queues.depth(queue);
      if (total === 0) break;
      if (Date.now() > deadline) {
        left.push({ queue, depth: total });
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return left;
}
