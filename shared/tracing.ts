// X-Ray traces: Lambda's active tracing (the stack turns it on) plus the subsegments of each invocation,
// written here in X-Ray's segment-document format and sent to the X-Ray daemon Lambda runs beside the
// function (UDP, AWS_XRAY_DAEMON_ADDRESS) — the same documents Powertools Tracer sends through the X-Ray SDK:
// - `## handler` per invocation, annotated with Service, ColdStart and the route or the queue (HTTP: the
//   account id too, once authenticated); `## record` per SQS record, annotated with its queue and account;
// - one subsegment per AWS SDK call (DynamoDB, SQS, SESv2, KMS: every client made through `traceClient`),
//   with the operation, table or queue, request id, retries and the error/throttle/fault flags; the
//   outgoing request's X-Amzn-Trace-Id names that subsegment, so a queued message's consumer continues
//   the trace under it;
// - one subsegment per payment-provider call (shared/providers/retry.ts providerCall), retries included.
// Logs already carry `xray_trace_id` (Powertools Logger reads it), so a log line leads to its trace; the
// AWS SDK itself puts the invocation's trace header on every request (recursion detection), which is how
// SQS hands the trace to the next worker even without the subsegment header below.
//
// Why not Powertools Tracer. Measured with the bench's bundling (test/bench/bundles.ts: the stack's esbuild
// options; init = require() in a fresh node with --enable-source-maps, minus the empty handler; a shared
// 2-core machine at load 6-7, so wall times are noisy and the CPU column is the steadier one):
//   - Tracer bundles aws-xray-sdk-core and cls-hooked: +120 KB minified in every function. The conversion
//     route would go from 380.6 KB to 500.6 KB, health from 32.3 KB to 152.2 KB: past the 350 KB budget and
//     the bench's 400 KB hard limit (tracer only where a trace helps would not fit either: the functions
//     that call providers are the largest already, 346-364 KB before this change).
//   - Its module init: +25-47 ms of CPU and +50-90 ms of wall time per function (15 interleaved rounds:
//     health +46.7 ms CPU, fallback +44.6, convert +25.0, subscription-sync +30.4, list referrals +27.8),
//     against the 60 ms init budget; and cls-hooked installs async_hooks, which slow every await after it.
//   - This file instead: +2.7 to +4 KB per function with the request line and the wrappers (health 29.6 ->
//     32.3 KB, list referrals 274.4 -> 278.5 KB), and +0 to +4 ms of init CPU, within the noise: nothing
//     runs at load. (Powertools Metrics adds about 12 KB more, only to the functions that emit a metric.)
// It does nothing unless the function runs in Lambda with a sampled trace (`_X_AMZN_TRACE_ID` has
// Sampled=1) and a daemon address: never under `npm start` or in tests (except tracing.test.ts's own
// daemon). The trace is read from `_X_AMZN_TRACE_ID`, as on Lambda's usual one-invocation-at-a-time
// environments; Lambda Managed Instances (several invocations per process, the trace id in the runtime's
// InvokeStore) are not supported here.
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';
import { createSocket, type Socket } from 'node:dgram';
import type { HandlerExecutionContext, MiddlewareStack } from '@smithy/types';

/** The trace an invocation belongs to, and the subsegment new subsegments nest under. */
interface TraceScope {
  traceId: string;
  parentId: string;
}

export type Annotations = Record<string, string | number | boolean | undefined>;

/** A `## handler` subsegment's annotations: the service, the invocation's cold start (from its log keys), then `extra`. */
export function handlerAnnotations(invocation: { cold_start?: unknown }, extra: Annotations): Annotations {
  return { Service: 'refloop', ColdStart: typeof invocation.cold_start === 'boolean' ? invocation.cold_start : undefined, ...extra };
}

interface SubsegmentOutcome {
  /** 4xx-like: the caller's fault. */
  error?: boolean;
  /** 5xx-like: ours or the dependency's. */
  fault?: boolean;
  throttle?: boolean;
  annotations?: Annotations;
}

const scope = new AsyncLocalStorage<TraceScope>();
const HEADER = '{"format":"json","version":1}\n';

const newId = () => randomBytes(8).toString('hex');
const seconds = (ms: number) => ms / 1000;

/** Root and Parent of `_X_AMZN_TRACE_ID` when the invocation is sampled and a daemon can take its segments. */
function sampledTrace(): { root: string; parent: string } | null {
  if (!process.env.AWS_LAMBDA_FUNCTION_NAME || !process.env.AWS_XRAY_DAEMON_ADDRESS) return null;
  if (process.env.POWERTOOLS_TRACE_ENABLED === 'false' || process.env.REFLOOP_TRACING === '0') return null;
  const header = process.env._X_AMZN_TRACE_ID ?? '';
  const fields = Object.fromEntries(header.split(';').map((part) => part.split('=', 2) as [string, string]));
  return fields.Root && fields.Parent && fields.Sampled === '1' ? { root: fields.Root, parent: fields.Parent } : null;
}

/** `host:port`, or Lambda's `tcp:host:port udp:host:port` form. */
export function daemonAddress(value = process.env.AWS_XRAY_DAEMON_ADDRESS ?? ''): { host: string; port: number } | null {
  const udp =
    value.split(/\s+/).find((part) => part.startsWith('udp:')) ?? value.split(/\s+/).find((part) => !part.startsWith('tcp:')) ?? '';
  const m = /^(?:udp:)?([^:\s]+):(\d+)$/.exec(udp);
  return m ? { host: m[1] as string, port: Number(m[2]) } : null;
}

let socket: Socket | undefined;
const sending = new Set<Promise<void>>();

function send(document: Record<string, unknown>): void {
  const address = daemonAddress();
  if (!address) return;
  socket ??= createSocket('udp4').unref();
  const sent = new Promise<void>((resolve) => {
    // Tracing never fails an invocation: a lost datagram is a gap in a trace.
    socket?.send(HEADER + JSON.stringify(document), address.port, address.host, () => resolve());
  });
  sending.add(sent);
  void sent.then(() => sending.delete(sent));
}

/** Waits until the subsegments sent so far have left (Lambda may freeze the process once the handler returns). */
export async function flushTraces(): Promise<void> {
  if (sending.size > 0) await Promise.all([...sending]);
}

function cleanAnnotations(annotations: Annotations | undefined): Record<string, string | number | boolean> | undefined {
  if (!annotations) return undefined;
  const out: Record<string, string | number | boolean> = {};
  for (const [key, value] of Object.entries(annotations)) if (value !== undefined) out[key.replace(/\W/g, '_')] = value;
  return Object.keys(out).length > 0 ? out : undefined;
}

function subsegment(
  trace: TraceScope,
  id: string,
  name: string,
  startMs: number,
  endMs: number,
  outcome: SubsegmentOutcome,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  const annotations = cleanAnnotations(outcome.annotations);
  return {
    type: 'subsegment',
    id,
    trace_id: trace.traceId,
    parent_id: trace.parentId,
    name,
    start_time: seconds(startMs),
    end_time: seconds(Math.max(endMs, startMs)),
    ...(outcome.error ? { error: true } : {}),
    ...(outcome.fault ? { fault: true } : {}),
    ...(outcome.throttle ? { throttle: true, error: true } : {}),
    ...(annotations ? { annotations } : {}),
    ...extra,
  };
}

/**
 * Runs `fn` in a subsegment named `name` under the current one (or, outside any, as the invocation's
 * top subsegment under Lambda's function segment). `outcome` reads the flags and late annotations from
 * the result; a thrown error marks the subsegment as a fault. Without a sampled trace: just `fn()`.
 */
export async function traced<T>(
  name: string,
  annotations: Annotations,
  fn: () => Promise<T>,
  outcome?: (result: T) => SubsegmentOutcome,
): Promise<T> {
  const outer = scope.getStore();
  let trace: TraceScope | undefined = outer;
  if (!trace) {
    const sampled = sampledTrace();
    if (sampled) trace = { traceId: sampled.root, parentId: sampled.parent };
  }
  if (!trace) return fn();
  const id = newId();
  const started = Date.now();
  const parent = trace;
  let result: SubsegmentOutcome = { fault: true };
  try {
    const value = await scope.run({ traceId: parent.traceId, parentId: id }, fn);
    const seen = outcome?.(value) ?? {};
    result = seen;
    return value;
  } finally {
    send(subsegment(parent, id, name, started, Date.now(), { ...result, annotations: { ...annotations, ...result.annotations } }));
    if (!outer) await flushTraces();
  }
}

/** A subsegment of a remote call (a payment provider's API) under the current subsegment; `fn`'s error marks it. */
export async function tracedRemote<T>(
  name: string,
  annotations: Annotations,
  fn: () => Promise<T>,
  failure: (err: unknown) => SubsegmentOutcome,
): Promise<T> {
  const trace = scope.getStore();
  if (!trace) return fn();
  const id = newId();
  const started = Date.now();
  let outcome: SubsegmentOutcome = {};
  try {
    return await fn();
  } catch (err) {
    outcome = failure(err);
    throw err;
  } finally {
    send(subsegment(trace, id, name, started, Date.now(), { ...outcome, annotations }, { namespace: 'remote' }));
  }
}

const TRACE_ID_KEY = Symbol.for('refloop.traceSubsegmentId');

type SdkContext = HandlerExecutionContext & { [TRACE_ID_KEY]?: string };
type SdkInput = Record<string, unknown>;
type SdkOutput = { $metadata?: { requestId?: string; httpStatusCode?: number; attempts?: number } };
type SdkError = { name?: string; $fault?: string; $metadata?: { requestId?: string; httpStatusCode?: number; attempts?: number } };

/**
 * Adds the subsegment of every call to an AWS SDK v3 client (`initialize`: once per send, its retries
 * inside) and the trace header naming it (`build`). Idempotent. Costs one AsyncLocalStorage read per call
 * when nothing is traced.
 *
 * It also removes the SDK's logger middleware. Its default logger drops every line, yet after each call the
 * middleware walked the whole input and output to mask sensitive fields for that dropped line (a BatchGet of
 * 100 items, in full): 2% of the local runtime's CPU under mixed load (docs/capacity.md).
 */
// biome-ignore lint/suspicious/noExplicitAny: any SDK client's middleware stack, whatever its input and output types.
export function traceClient<T extends { middlewareStack: MiddlewareStack<any, any> }>(client: T): T {
  const stack = client.middlewareStack as MiddlewareStack<SdkInput, SdkOutput>;
  stack.remove('loggerMiddleware');
  stack.add(
    (next, context: SdkContext) => async (args) => {
      const trace = scope.getStore();
      if (!trace) return next(args);
      const id = newId();
      context[TRACE_ID_KEY] = id;
      const started = Date.now();
      const service = (context.clientName ?? 'AWS').replace(/Client$/, '');
      const operation = (context.commandName ?? 'Unknown').replace(/Command$/, '');
      const input = args.input ?? {};
      const aws: Record<string, unknown> = { operation, region: process.env.AWS_REGION };
      if (typeof input.TableName === 'string') aws.table_name = input.TableName;
      if (typeof input.QueueUrl === 'string') aws.queue_url = input.QueueUrl;
      let status: number | undefined;
      let outcome: SubsegmentOutcome = {};
      try {
        const out = await next(args);
        const meta = out.output?.$metadata;
        status = meta?.httpStatusCode;
        if (meta?.requestId) aws.request_id = meta.requestId;
        if (meta?.attempts && meta.attempts > 1) aws.retries = meta.attempts - 1;
        return out;
      } catch (err) {
        const e = (err ?? {}) as SdkError;
        status = e.$metadata?.httpStatusCode;
        if (e.$metadata?.requestId) aws.request_id = e.$metadata.requestId;
        const throttled = status === 429 || /Throttl|TooManyRequests|ProvisionedThroughputExceeded|RequestLimitExceeded/.test(e.name ?? '');
        outcome = throttled ? { throttle: true } : e.$fault === 'client' ? { error: true } : { fault: true };
        throw err;
      } finally {
        send(
          subsegment(trace, id, service, started, Date.now(), outcome, {
            namespace: 'aws',
            aws,
            ...(status ? { http: { response: { status } } } : {}),
          }),
        );
      }
    },
    { step: 'initialize', priority: 'high', name: 'refloopTraceSubsegment', override: true },
  );
  stack.add(
    (next, context: SdkContext) => async (args) => {
      const trace = scope.getStore();
      const id = context[TRACE_ID_KEY];
      const request = (args as { request?: unknown }).request as { headers?: Record<string, string> } | undefined;
      if (trace && id && request?.headers) request.headers['X-Amzn-Trace-Id'] = `Root=${trace.traceId};Parent=${id};Sampled=1`;
      return next(args);
    },
    { step: 'build', name: 'refloopTraceHeader', override: true },
  );
  return client;
}
