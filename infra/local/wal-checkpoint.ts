// Checkpoints for DynamoDB Local's write-ahead log, which DynamoDB Local never runs itself.
//
// DynamoDB Local keeps a file store in SQLite (3.8.7, through sqlite4java), which we put in write-ahead-log
// mode (./dynamodb.ts preferWriteAheadLog). SQLite's automatic checkpoint never runs on that connection: measured
// on 2026-11-29, 20,000 items written left a 4 KB database file beside a 556 MB `-wal` file, 25 KB of log per
// item, growing for as long as the runtime ran. Every page DynamoDB Local reads is looked up in that log's
// index first, so each call got slower the longer `npm start` ran. Under the freshness bench's load (tens of
// thousands of items in two minutes) the file store answered the pipeline about ten times more slowly than
// the same DynamoDB Local in memory, for the same CPU (docs/capacity.md "The log nobody checkpointed").
//
// So the runtime checkpoints it from outside, on a connection of its own through Node's own SQLite
// (`node:sqlite`; SQLite's log and its locks are one format across versions and processes):
// - before java starts: a TRUNCATE checkpoint folds a log a previous run left into the database file and
//   empties it (nothing else has the file open then);
// - while it runs: a PASSIVE checkpoint every 200 ms, which copies what was committed into the database file
//   without waiting for, or holding up, DynamoDB Local's readers and writer. When one copies everything before
//   the next commit, DynamoDB Local's next write starts the log again from its beginning: under the bench's
//   full load the log stayed under 5 MB. (Every second was too seldom under a steady stream of writes: the
//   log seldom got fully copied, so it seldom started again.) A RESTART or TRUNCATE checkpoint is never run
//   while java is up: DynamoDB Local sets no busy timeout, so its calls would fail while we held the writer's
//   lock;
// - after java has exited: TRUNCATE again, so a stopped data directory is one compact file.
// Every checkpoint runs on a worker thread: copying and syncing would otherwise stall the event loop of the
// process that serves the API.
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** How often the running checkpointer copies the log into the database file. */
export const CHECKPOINT_EVERY_MS = 200;

export interface CheckpointResult {
  /** 1 when SQLite could not do all it was asked (another connection held a lock it needed). */
  busy: number;
  /** Frames in the log after the checkpoint (0 once TRUNCATE has emptied it). */
  log: number;
  /** Frames of the log now copied into the database file. */
  checkpointed: number;
}

// The worker's code: plain JavaScript (it runs without the TypeScript loader), on a thread of its own so that
// neither a checkpoint's copying and syncing nor `node:sqlite`'s ExperimentalWarning (Node 22) reaches the
// process that serves the API. `once`: one checkpoint in `mode`, its result posted. Otherwise a PASSIVE one
// every `everyMs` until a message asks it to stop; a failed one (the file briefly locked, say) is tried again
// at the next tick, and the thread never throws.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
process.emitWarning = () => undefined;
let db;
try {
  const { DatabaseSync } = require('node:sqlite');
  db = new DatabaseSync(workerData.file);
} catch (err) {
  parentPort.postMessage({ unavailable: String((err && err.message) || err) });
}
if (db && workerData.once) {
  try {
    parentPort.postMessage({ result: { ...db.prepare('PRAGMA wal_checkpoint(' + workerData.mode + ')').get() } });
  } catch (err) {
    parentPort.postMessage({ unavailable: String((err && err.message) || err) });
  }
  db.close();
} else if (db) {
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  const timer = setInterval(() => {
    try {
      checkpoint.get();
    } catch {}
  }, workerData.everyMs);
  parentPort.on('message', () => {
    clearInterval(timer);
    try { db.close(); } catch {}
    parentPort.close();
  });
}
`;

type WorkerMessage = { unavailable?: string; result?: CheckpointResult };

/**
 * One checkpoint of `dbFile`'s log on a connection of its own: `TRUNCATE` only when nothing else has the file
 * open, `PASSIVE` whenever. Undefined when there is no such file, or this Node has no `node:sqlite`.
 */
export async function checkpointNow(dbFile: string, mode: 'PASSIVE' | 'TRUNCATE'): Promise<CheckpointResult | undefined> {
  if (!existsSync(dbFile)) return undefined;
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: dbFile, once: true, mode } });
  let result: CheckpointResult | undefined;
  worker.on('message', (m: WorkerMessage) => {
    result = m.result ?? result;
  });
  await new Promise<void>((ok) => {
    worker.once('error', () => ok());
    worker.once('exit', () => ok());
  });
  return result;
}

export interface WalCheckpointer {
  /** Stops the periodic checkpoints and closes the thread's connection. */
  stop(): Promise<void>;
}

/**
 * Checkpoints `dbFile`'s log every `everyMs` on a worker thread until stopped. Without `node:sqlite` (Node
 * before 22.13) it calls `onUnavailable` once and does nothing else: the log then grows as it always did.
 */
export function startWalCheckpointer(
  dbFile: string,
  options: { everyMs?: number; onUnavailable?: (reason: string) => void } = {},
): WalCheckpointer {
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: dbFile, everyMs: options.everyMs ?? CHECKPOINT_EVERY_MS } });
  // Never what keeps a process alive: the runtime's own stop() ends it.
  worker.unref();
  worker.on('message', (m: WorkerMessage) => {
    if (m.unavailable !== undefined) options.onUnavailable?.(m.unavailable);
  });
  // A thread that cannot start is a slower store, not a failed runtime.
  worker.on('error', (err) => options.onUnavailable?.(String(err)));
  const exited = new Promise<void>((ok) => worker.once('exit', () => ok()));
  return {
    async stop() {
      worker.postMessage('stop');
      // The thread exits once it has closed its connection; terminate() if it has not within a second.
      const timer = setTimeout(() => void worker.terminate(), 1000);
      await exited;
      clearTimeout(timer);
    },
  };
}
