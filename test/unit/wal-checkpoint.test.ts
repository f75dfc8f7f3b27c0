// infra/local/wal-checkpoint.ts on a plain SQLite file, without java: a writer on a thread of its own plays
// DynamoDB Local (write-ahead log, automatic checkpoints off, so its log only grows), and the checkpointer,
// on a connection of its own, folds that log into the database file while the writer keeps writing. That
// DynamoDB Local's own file gets the same is test/e2e/local-runtime.test.ts's.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { startWalCheckpointer, truncateLog, type WalCheckpointer } from '../../infra/local/wal-checkpoint';
import { pollUntil } from '../support/poll';

let dir: string;
let checkpointer: WalCheckpointer | undefined;
/** Writers still open: a failed test must not leave a thread that keeps Jest from exiting. */
const open = new Set<{ close(): Promise<void> }>();
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'refloop-ckpt-'));
});
afterEach(async () => {
  for (const w of open) await w.close();
  await checkpointer?.stop();
  checkpointer = undefined;
  rmSync(dir, { recursive: true, force: true });
});

const file = () => join(dir, 'shared-local-instance.db');
const size = (path: string) => {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
};

/**
 * Writes `rounds` transactions of 50 rows of 500 bytes, `pauseMs` apart, as DynamoDB Local would: no
 * checkpoints. Its connection stays open until close(): SQLite checkpoints a log when its last connection
 * closes, which DynamoDB Local's never does while it runs.
 */
function writer(rounds: number, pauseMs: number): { written: Promise<void>; close(): Promise<void> } {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    process.emitWarning = () => undefined;
    const { DatabaseSync } = require('node:sqlite');
    const db = new DatabaseSync(workerData.file);
    db.exec('PRAGMA journal_mode=WAL');
    db.exec('PRAGMA wal_autocheckpoint=0');
    db.exec('CREATE TABLE IF NOT EXISTS items (k TEXT PRIMARY KEY, v TEXT)');
    const insert = db.prepare('INSERT INTO items (k, v) VALUES (?, ?)');
    let round = 0;
    const tick = () => {
      db.exec('BEGIN');
      for (let i = 0; i < 50; i++) insert.run('k' + workerData.tag + round + '-' + i, 'x'.repeat(500));
      db.exec('COMMIT');
      if (++round < workerData.rounds) setTimeout(tick, workerData.pauseMs);
      else parentPort.postMessage('written');
    };
    parentPort.on('message', () => {
      db.close();
      parentPort.close();
    });
    tick();
  `;
  const worker = new Worker(source, { eval: true, workerData: { file: file(), rounds, pauseMs, tag: Math.random().toString(36) } });
  const exited = new Promise<void>((ok, fail) => {
    worker.once('error', fail);
    worker.once('exit', (code) => (code === 0 ? ok() : fail(new Error(`writer exited ${code}`))));
  });
  const written = new Promise<void>((ok, fail) => {
    worker.once('message', () => ok());
    exited.catch(fail);
  });
  worker.unref();
  const handle = {
    written,
    close: async () => {
      open.delete(handle);
      worker.postMessage('close');
      await exited;
    },
  };
  open.add(handle);
  return handle;
}

describe('the write-ahead-log checkpointer', () => {
  it("copies a writer's log into the database file while the writer keeps writing, and TRUNCATE empties the log", async () => {
    const w = writer(40, 20);
    // The writer's file first (DynamoDB Local's exists before the checkpointer starts).
    await pollUntil(() => (size(`${file()}-wal`) > 0 ? true : null), { timeoutMs: 10_000, intervalMs: 10 });
    checkpointer = startWalCheckpointer(file(), { everyMs: 50, capFrames: 50 });
    // Pages land in the database file while the writer writes (never quiet: past the cap of 50 frames): without
    // the checkpointer they never do (its connection's automatic checkpoints are off, as DynamoDB Local's never run).
    const grown = await pollUntil(() => (size(file()) > 200_000 ? size(file()) : null), { timeoutMs: 20_000, intervalMs: 20 });
    expect(grown).toBeGreaterThan(200_000);
    await w.written;
    await checkpointer.stop();
    checkpointer = undefined;

    // The writer's connection is still open and idle: TRUNCATE copies the rest and empties the log.
    const result = await truncateLog(file());
    expect(result).toEqual({ busy: 0, log: 0, checkpointed: 0 });
    expect(size(`${file()}-wal`)).toBe(0);
    // 40 x 50 rows of 500 bytes: all of them in the database file itself.
    expect(size(file())).toBeGreaterThan(40 * 50 * 500);
    await w.close();
  });

  it('below the cap, copies the log once the writer has been quiet for one look', async () => {
    const w = writer(10, 0);
    await w.written;
    checkpointer = startWalCheckpointer(file(), { everyMs: 50 });
    const grown = await pollUntil(() => (size(file()) > 10 * 50 * 500 ? size(file()) : null), { timeoutMs: 20_000, intervalMs: 20 });
    expect(grown).toBeGreaterThan(10 * 50 * 500);
    await w.close();
  });

  it('leaves a busy log below the cap alone: nothing is copied while commits keep coming', async () => {
    const w = writer(40, 10);
    await pollUntil(() => (size(`${file()}-wal`) > 0 ? true : null), { timeoutMs: 10_000, intervalMs: 10 });
    checkpointer = startWalCheckpointer(file(), { everyMs: 300 });
    await w.written;
    // A commit every 10 ms: no look 300 ms after another saw the same last frame, and 400 KB is far below 64 MB.
    expect(size(file())).toBeLessThan(20_000);
    await w.close();
  });

  it('without it the log only grows while the writer has the file open', async () => {
    const w = writer(20, 0);
    await w.written;
    expect(size(file())).toBeLessThan(20_000);
    expect(size(`${file()}-wal`)).toBeGreaterThan(20 * 50 * 500);
    await w.close();
  });

  it('answers undefined for a file that does not exist, and creates none', async () => {
    expect(await truncateLog(file())).toBeUndefined();
    expect(size(file())).toBe(0);
  });
});
