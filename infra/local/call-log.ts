// REFLOOP_CALL_LOG=<file>: every DynamoDB call this process makes through the store's clients, appended to
// <file> as one JSON line each once it ends (`npm start` and the bench runtime start it in the gateway's
// process and in the workers' own). A line: `t` (ms since the epoch, when it ended), `ms` (how long it
// took), `op` (GetItem, TransactWriteItems, ...), `items` (a transaction's items), `caller` (the worker whose
// batch made it; absent for the API's handlers and the rest), `pid`, `error`.
//
// It is how docs/capacity.md "What the writes wait for" found where DynamoDB Local's single write lock goes
// under the freshness load. `npx tsx test/bench/call-log.ts <file>` sums a log per caller and operation.
import { AsyncLocalStorage } from 'node:async_hooks';
import { appendFileSync } from 'node:fs';
import { recordDynamoCalls, setCallerLookup, type DynamoCall } from '../../shared/store/instrumentation';

export interface CallLine {
  t: number;
  ms: number;
  op: string;
  items?: number;
  caller?: string;
  pid: number;
  error?: string;
}

export const toLine = (c: DynamoCall): CallLine => ({
  t: c.endedAt ?? c.startedAt,
  ms: (c.endedAt ?? c.startedAt) - c.startedAt,
  op: c.command,
  ...(c.writeItems !== undefined ? { items: c.writeItems } : {}),
  ...(c.caller !== undefined ? { caller: c.caller } : {}),
  pid: process.pid,
  ...(c.error !== undefined ? { error: c.error } : {}),
});

const FLUSH_MS = 1000;
let running: (() => void) | null = null;

/** The worker whose batch is running, for the calls it makes. */
const batchOf = new AsyncLocalStorage<string>();

/**
 * Runs a worker's batch (infra/local/pollers.ts) so that its calls are logged with the worker's name, while
 * a call log runs; otherwise just runs it. An AsyncLocalStorage in use makes Node track every promise of the
 * process, a cost the runtime and the tests should not pay for a diagnostic that is off.
 */
export function inBatchOf<T>(worker: string, run: () => Promise<T>): Promise<T> {
  return running ? batchOf.run(worker, run) : run();
}

/** Starts this process's call log when `file` is set (idempotent); the function returned writes what is left and stops. */
export function startCallLog(file: string | undefined = process.env.REFLOOP_CALL_LOG): () => void {
  if (!file) return () => {};
  if (running) return running;
  const recording = recordDynamoCalls();
  setCallerLookup(() => batchOf.getStore());
  const flush = () => {
    const done = recording.calls.filter((c) => c.endedAt !== undefined);
    if (done.length === 0) return;
    const open = recording.calls.filter((c) => c.endedAt === undefined);
    recording.calls.splice(0, recording.calls.length, ...open);
    appendFileSync(file, done.map((c) => `${JSON.stringify(toLine(c))}\n`).join(''));
  };
  const timer = setInterval(flush, FLUSH_MS);
  timer.unref();
  running = () => {
    clearInterval(timer);
    flush();
    recording.stop();
    setCallerLookup(undefined);
    running = null;
  };
  return running;
}
