// The one logger of handlers, workers and the local runtime: AWS Lambda Powertools Logger.
//
// - In Lambda: one JSON object per line (Powertools' format: level, message, timestamp, service) plus the
//   invocation's keys: `request_id` and `route` (HTTP), `queue` and `message_id` (workers), `account_id`
//   once known, `cold_start` and `function_request_id` (the Lambda request id).
// - Under `npm start` (`useReadableLogs()`): the same log items, printed by `ReadableLogger.printLog` as one
//   readable line each, "2026-05-01 10:00:00.123 INFO  message  key=value ...". A Powertools subclass
//   rather than a LogFormatter because a formatter can only shape the JSON object, not leave JSON.
// - The level is Powertools' own setting: `LOG_LEVEL` (or `POWERTOOLS_LOG_LEVEL`; `AWS_LAMBDA_LOG_LEVEL`
//   wins in Lambda), default INFO. Jest's global setup sets `LOG_LEVEL=SILENT`: expected failure paths stay
//   quiet, and a test that asserts on log lines turns them on with `setLogLevel`.
//
// Keys of the current invocation live in an AsyncLocalStorage, not in the logger's own appended keys: the
// local runtime serves many requests and worker batches at once in one process.
import { AsyncLocalStorage } from 'node:async_hooks';
import { Logger, LogLevelThreshold, type LogItem } from '@aws-lambda-powertools/logger';
import type { Context } from 'aws-lambda';

export type LogLevelName = 'debug' | 'info' | 'warn' | 'error';
export type LogFields = Record<string, unknown>;

let readable = false;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function localTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

/** Keys a reader of the local console does not need (they are the same on every line). */
const QUIET_KEYS = new Set(['level', 'message', 'timestamp', 'service', 'sampling_rate', 'xray_trace_id']);

function readableValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/** Formats one Powertools log item as a readable line (exported for its test). */
export function readableLine(attributes: LogFields): string {
  const time = typeof attributes.timestamp === 'string' ? Date.parse(attributes.timestamp) : Date.now();
  const level = String(attributes.level ?? 'INFO').padEnd(5);
  const keys = Object.entries(attributes)
    .filter(([key, value]) => !QUIET_KEYS.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${readableValue(value)}`);
  return `${localTime(Number.isNaN(time) ? Date.now() : time)} ${level} ${String(attributes.message ?? '')}${keys.length ? `  ${keys.join(' ')}` : ''}\n`;
}

/** Where every line goes instead of the console, when set (`npm run bench` keeps the service's lines in a file). */
let sink: ((line: string) => void) | null = null;

/** Prints `item` to the sink or as a readable line, when either is on; false: Powertools prints it (JSON). */
function printedElsewhere(logLevel: number, item: LogItem): boolean {
  if (sink) {
    item.prepareForPrint();
    sink(readable ? readableLine(item.getAttributes()) : `${JSON.stringify(item.getAttributes())}\n`);
    return true;
  }
  if (!readable) return false;
  item.prepareForPrint();
  const line = readableLine(item.getAttributes());
  // Warnings and errors to stderr, like Powertools' own console.
  (logLevel >= LogLevelThreshold.WARN ? process.stderr : process.stdout).write(line);
  return true;
}

class ReadableLogger extends Logger {
  protected override printLog(logLevel: number, item: LogItem): void {
    // Nothing in a Lambda function sets a sink or readable lines (the bench and `npm start` do): its bundle
    // (infra/cloud/bundling.ts LAMBDA_DEFINE) leaves them out.
    if (process.env.REFLOOP_LAMBDA_BUNDLE || !printedElsewhere(logLevel, item)) super.printLog(logLevel, item);
  }
}

const logger = new ReadableLogger({ serviceName: 'refloop' });
const scope = new AsyncLocalStorage<LogFields>();

/** One log line: the message, the current invocation's keys, then `extra`. */
export function log(level: LogLevelName, message: string, extra: LogFields = {}): void {
  logger[level](message, { ...scope.getStore(), ...extra });
}

/** Name, message (and stack, for a 500) of a caught value, as log fields. */
export function errorFields(err: unknown, withStack = false): LogFields {
  const e = err instanceof Error ? err : new Error(String(err));
  return withStack ? { error: e.name, reason: e.message, stack: e.stack } : { error: e.name, reason: e.message };
}

/** Runs `fn` with `keys` added to every line it logs (nested scopes add to the outer one's keys). */
export function withLogKeys<T>(keys: LogFields, fn: () => T): T {
  return scope.run({ ...scope.getStore(), ...keys }, fn);
}

/** Adds keys to the current scope from inside it (e.g. the account id once the key is resolved). */
export function appendLogKeys(keys: LogFields): void {
  const store = scope.getStore();
  if (store) Object.assign(store, keys);
}

/** The current scope's keys (a copy): e.g. the account id an authenticated request appended. */
export function currentLogKeys(): LogFields {
  return { ...scope.getStore() };
}

const inLambda = Boolean(process.env.AWS_LAMBDA_FUNCTION_NAME);
let coldStart = true;

/** The Lambda invocation's keys: its request id and, in Lambda, whether this is the container's first. */
export function invocationKeys(context?: Pick<Context, 'awsRequestId'>): LogFields {
  const cold = coldStart;
  coldStart = false;
  return {
    ...(inLambda ? { cold_start: cold } : {}),
    ...(context?.awsRequestId ? { function_request_id: context.awsRequestId } : {}),
  };
}

/** Sends every line (each ending with a newline) to `write` instead of stdout/stderr; null restores the console. */
export function useLogSink(write: ((line: string) => void) | null): void {
  sink = write;
}

/** Whether lines go to a sink (useLogSink) rather than the console. */
export const logSinkOn = (): boolean => sink !== null;

/** Whether lines are readable (useReadableLogs) rather than JSON. */
export const readableLogsOn = (): boolean => readable;

/** A line another process logged (npm start's workers process) goes where this process's lines go. */
export function writeLogLine(line: string): void {
  if (sink) sink(line);
  else process.stdout.write(line);
}

/** `npm start`: readable lines with local timestamps instead of JSON. */
export function useReadableLogs(on = true): void {
  readable = on;
}

/** Changes the level at run time ('DEBUG' ... 'SILENT'); tests that assert on log lines turn them on. */
export function setLogLevel(level: 'DEBUG' | 'INFO' | 'WARN' | 'ERROR' | 'SILENT'): void {
  logger.setLogLevel(level);
}
