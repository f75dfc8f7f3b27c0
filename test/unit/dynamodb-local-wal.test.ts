// infra/local/dynamodb.ts preferWriteAheadLog: DynamoDB Local's database file is put in SQLite's WAL mode
// before java opens it (a new file is an empty WAL database; a rollback-mode file has its two header bytes
// set), and anything it cannot switch safely is left as it is. That DynamoDB Local runs on such a file, and
// keeps its data across a restart, is test/e2e/local-runtime.test.ts's.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DYNAMODB_LOCAL_DB_FILE, preferWriteAheadLog } from '../../infra/local/dynamodb';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'refloop-wal-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const db = () => join(dir, DYNAMODB_LOCAL_DB_FILE);
/** A rollback-mode SQLite header (bytes 18 and 19 are 1) on a page of `fill`. */
function rollbackFile(fill = 7): Buffer {
  const page = Buffer.alloc(4096, fill);
  Buffer.from('SQLite format 3\0', 'latin1').copy(page, 0);
  page[18] = 1;
  page[19] = 1;
  return page;
}

describe('preferWriteAheadLog', () => {
  it('writes an empty SQLite database in WAL mode when there is none', () => {
    expect(preferWriteAheadLog(dir)).toBe('created');
    const page = readFileSync(db());
    expect(page).toHaveLength(4096);
    expect(page.subarray(0, 16).toString('latin1')).toBe('SQLite format 3\0');
    expect(page.readUInt16BE(16)).toBe(4096);
    expect([page[18], page[19]]).toEqual([2, 2]);
    expect(page.readUInt32BE(28)).toBe(1);
    expect(page[100]).toBe(0x0d);
    expect(preferWriteAheadLog(dir)).toBe('already');
  });

  it('switches a rollback-mode file by its two header bytes and changes nothing else', () => {
    const before = rollbackFile();
    writeFileSync(db(), before);
    expect(preferWriteAheadLog(dir)).toBe('switched');
    const after = readFileSync(db());
    expect([after[18], after[19]]).toEqual([2, 2]);
    expect(Buffer.concat([after.subarray(0, 18), after.subarray(20)])).toEqual(
      Buffer.concat([before.subarray(0, 18), before.subarray(20)]),
    );
  });

  it('leaves a rollback-mode file with a hot journal beside it, a file that is not SQLite and a short file as they are', () => {
    const withJournal = rollbackFile();
    writeFileSync(db(), withJournal);
    writeFileSync(`${db()}-journal`, 'a transaction a crash left');
    expect(preferWriteAheadLog(dir)).toBe('left');
    expect(readFileSync(db())).toEqual(withJournal);
    rmSync(`${db()}-journal`);

    writeFileSync(db(), Buffer.alloc(4096, 1));
    expect(preferWriteAheadLog(dir)).toBe('left');
    expect(readFileSync(db())).toEqual(Buffer.alloc(4096, 1));

    writeFileSync(db(), 'SQLite format 3\0');
    expect(preferWriteAheadLog(dir)).toBe('left');
    expect(existsSync(`${db()}-wal`)).toBe(false);
  });
});
