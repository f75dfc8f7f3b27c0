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
// - while it runs: a look at the log's index every 200 ms (its header in the `-shm` file: the last frame
//   committed, the last copied), and a PASSIVE checkpoint when frames wait to be copied and either no commit
//   came since the last look, or 64 MB of them wait (CHECKPOINT_CAP_FRAMES). A PASSIVE checkpoint copies what
//   was committed into the database file without waiting for, or holding up, DynamoDB Local's readers and
//   writer; when it copies everything, DynamoDB Local's next write starts the log again from its beginning.
//   Under the bench's full load the log stayed under 5 MB. Checkpointing every 200 ms whatever the load did
//   that too, but its copying and the database file's writes competed with the commits' syncs for this
//   host's disk: 10 to 14 s at p99 at 40 webhooks a second against 2.8 s waiting for quiet moments
//   (docs/capacity.md "The log nobody checkpointed"). A RESTART or TRUNCATE checkpoint is never run while
//   java is up: DynamoDB Local sets no busy timeout, so its calls would fail while we held the writer's lock;
// - after java has exited: TRUNCATE again, so a stopped data directory is one compact file.
// Every checkpoint runs on a worker thread: copying and syncing would otherwise stall the event loop of the
// process that serves the API.
import { existsSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** How often the running checkpointer looks at the log. */
export const CHECKPOINT_EVERY_MS = 200;
/**
 * Frames (4 KB pages) the log may hold uncopied while DynamoDB Local is busy: 64 MB, about four seconds of the
 * bench's full load. Below it the checkpointer waits for a quiet moment (no commit for one look), so its
 * copying and the database file's writes do not compete with a burst's commits for the disk.
 */
export const CHECKPOINT_CAP_FRAMES = 16_384;

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
// process that serves the API. `once`: one TRUNCATE checkpoint, its result posted. Otherwise it looks at the
// log every `everyMs` and runs a PASSIVE one when it is quiet or past `capFrames` (above), until a message
// asks it to stop; a failed look or checkpoint (the file briefly locked, say) is tried again at the next tick,
// and the thread never throws.
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
    parentPort.postMessage({ result: { ...db.prepare('PRAGMA wal_checkpoint(TRUNCATE)').get() } });
  } catch (err) {
    parentPort.postMessage({ unavailable: String((err && err.message) || err) });
  }
  db.close();
} else if (db) {
  const fs = require('node:fs');
  const little = require('node:os').endianness() === 'LE';
  const header = Buffer.alloc(100);
  // The log's index header (the -shm file, in the machine's byte order): its change counter at 8, the last
  // frame committed at 16; the last frame copied into the database file at 96.
  const state = () => {
    const fd = fs.openSync(workerData.file + '-shm', 'r');
    try {
      if (fs.readSync(fd, header, 0, 100, 0) < 100) return null;
    } finally {
      fs.closeSync(fd);
    }
    const u32 = (at) => (little ? header.readUInt32LE(at) : header.readUInt32BE(at));
    return { change: u32(8), last: u32(16), copied: u32(96) };
  };
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let before = null;
  const timer = setInterval(() => {
    try {
      const now = state();
      if (!now) return;
      const pending = now.last > now.copied ? now.last - now.copied : 0;
      const quiet = before !== null && before.change === now.change && before.last === now.last;
      before = now;
      if (pending > 0 && (quiet || pending >= workerData.capFrames)) checkpoint.get();
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
 * Copies all of `dbFile`'s log into it and empties the log (a TRUNCATE checkpoint, on a connection of its own):
 * only while nothing else has the file open. Undefined when there is no such file, or this Node has no
 * `node:sqlite`.
 */
export async function truncateLog(dbFile: string): Promise<CheckpointResult | undefined> {
  if (!existsSync(dbFile)) return undefined;
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { file: dbFile, once: true } });
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
  options: { everyMs?: number; capFrames?: number; onUnavailable?: (reason: string) => void } = {},
): WalCheckpointer {
  const workerData = {
    file: dbFile,
    everyMs: options.everyMs ?? CHECKPOINT_EVERY_MS,
    capFrames: options.capFrames ?? CHECKPOINT_CAP_FRAMES,
  };
  const worker = new Worker(WORKER_SOURCE, { eval: true, workerData });
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
