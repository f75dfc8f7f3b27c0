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
// - while it runs: a PASSIVE checkpoint every second, which copies what was committed into the database file
//   without waiting for, or holding up, DynamoDB Local's readers and writer. Once everything is copied, the
//   next write starts the log again from its beginning, so it stays a few megabytes;
// - after java has exited: TRUNCATE again, so a stopped data directory is one compact file.
// The periodic checkpoints run on a worker thread: each copies a second's writes and syncs the file, which
// would otherwise stall the event loop of the process that serves the API.
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** How often the running checkpointer copies the log into the database file. */
export const CHECKPOINT_EVERY_MS = 200;

interface SqliteModule {
  DatabaseSync: new (path: string) => { prepare(sql: string): { get(): unknown }; close(): void };
}

/** `node:sqlite` when this Node has it without a flag (22.13 and later); undefined otherwise. */
function nodeSqlite(): SqliteModule | undefined {
  // Loading it prints an ExperimentalWarning on Node 22: not a message for the runtime's console.
  const emit = process.emitWarning;
  process.emitWarning = () => undefined;
  try {
    return require('node:sqlite') as SqliteModule;
  } catch {
    return undefined;
  } finally {
    process.emitWarning = emit;
  }
}

export interface CheckpointResult {
  /** 1 when SQLite could not do all it was asked (another connection held a lock it needed). */
  busy: number;
  /** Frames in the log after the checkpoint (0 once TRUNCATE has emptied it). */
  log: number;
  /** Frames of the log now copied into the database file. */
  checkpointed: number;
}

/**
 * One checkpoint of `dbFile`'s log on a connection of this process: `TRUNCATE` only when nothing else has the
 * file open, `PASSIVE` whenever. Undefined when there is no such file or this Node has no `node:sqlite`.
 */
export function checkpointNow(dbFile: string, mode: 'PASSIVE' | 'TRUNCATE'): CheckpointResult | undefined {
  if (!existsSync(dbFile)) return undefined;
  const sqlite = nodeSqlite();
  if (!sqlite) return undefined;
  const db = new sqlite.DatabaseSync(dbFile);
  try {
    return db.prepare(`PRAGMA wal_checkpoint(${mode})`).get() as CheckpointResult;
  } finally {
    db.close();
  }
}

// The worker's code: plain JavaScript (it runs without the TypeScript loader). A failed checkpoint (the file
// briefly locked, say) is tried again a second later; the thread never throws.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
process.emitWarning = () => undefined;
let db;
try {
  const { DatabaseSync } = require('node:sqlite');
  db = new DatabaseSync(workerData.file);
} catch (err) {
  parentPort.postMessage({ unavailable: String(err && err.message || err) });
}
if (db) {
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
  worker.on('message', (m: { unavailable?: string }) => {
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
