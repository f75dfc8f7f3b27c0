// What the load and drain sections share: the local runtime on free ports, the forked load generator,
// the service's logs kept out of the bench output, and queue depths.
import { fork, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { format } from 'node:util';
import { GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { freePort } from '../../infra/local/dynamodb';
import { startLocal, type LocalRuntime } from '../../infra/local/start';
import { useLogSink } from '../../shared/log';
import { CpuMeter, findJavaChild } from './cpu';
import type { LoadFigures, LoadJob, LoadReply } from './load-client';

import type { QueueName } from '../../shared/queue/queues';

export interface BenchRuntime {
  runtime: LocalRuntime;
  tableName: string;
  /** The load generator process. */
  load: LoadGenerator;
  queues: QueueProbe;
  logs: LogSink;
  cpu: CpuMeter;
  stop(): Promise<void>;
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
export async function startBenchRuntime(workDir: string): Promise<BenchRuntime> {
  process.env.AUTH_CACHE_TTL_SECONDS = '60';
  // The load runs one key far past any plan's rate: the limits stay on (every request still pays its
  // rate-limit UpdateItem, as in AWS) but high enough never to refuse.
  process.env.API_RATE_LIMITS = 'starter=1000000,small=1000000,regular=1000000,unlimited=1000000';
  process.env.JS_RATE_LIMIT_PER_IP = '100000000';
  process.env.JS_RATE_LIMIT_PER_KEY = '100000000';
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const tableName = `refloop-bench-${process.pid}-${Date.now().toString(36)}`;
  const logs = captureServiceLogs(benchServiceLog());
  let runtime: LocalRuntime;
  try {
    runtime = await startLocal({
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
    });
  } catch (err) {
    await logs.restore();
    throw err;
  }
  const load = LoadGenerator.start();
  const queues = queueProbe(runtime.sqsEndpoint);
  return {
    runtime,
    tableName,
    load,
    queues,
    logs,
    cpu: new CpuMeter(findJavaChild(), load.pid),
    stop: async () => {
      queues.stop();
      await load.stop();
      await runtime.stop();
      await logs.restore();
    },
  };
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
