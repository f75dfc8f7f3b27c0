// Issue 23 #5: `npm run bench` printed every service log line to the console as JSON (thousands of them)
// while its report said they went to a file: the logger writes through its own console, which the
// bench's console.* redirection never reached. captureServiceLogs sends the logger's lines to the file.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { captureServiceLogs } from '../bench/harness';
import { log, setLogLevel, useReadableLogs } from '../../shared/log';

describe('the bench keeps the service log out of the console', () => {
  let dir: string;
  const printed: string[] = [];

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'refloop-bench-log-'));
    printed.length = 0;
    setLogLevel('INFO');
    const capture = (chunk: unknown): boolean => {
      printed.push(String(chunk));
      return true;
    };
    jest.spyOn(process.stdout, 'write').mockImplementation(capture as unknown as typeof process.stdout.write);
    jest.spyOn(process.stderr, 'write').mockImplementation(capture as unknown as typeof process.stderr.write);
  });

  afterEach(() => {
    jest.restoreAllMocks();
    setLogLevel('SILENT');
    useReadableLogs(false);
    rmSync(dir, { recursive: true, force: true });
  });

  it.each([false, true])(
    "writes the logger's lines (readable: %s) and console.* calls to the file, none to stdout or stderr, counted by level",
    async (readable) => {
      useReadableLogs(readable);
      const file = join(dir, 'service.log');
      const sink = captureServiceLogs(file);
      log('info', 'request answered', { status: 401 });
      log('warn', 'slow provider');
      log('error', 'record failed', { account_id: 'a1' });
      console.log('a console line');
      await sink.restore();
      expect(printed).toEqual([]);
      const text = readFileSync(file, 'utf8');
      for (const message of ['request answered', 'slow provider', 'record failed', 'a console line']) expect(text).toContain(message);
      expect(text.trim().split('\n')).toHaveLength(4);
      if (!readable)
        expect(JSON.parse(text.split('\n')[0] as string)).toMatchObject({ level: 'INFO', message: 'request answered', status: 401 });
      // The report counts what went to the file (the JSON lines' level; a readable line counts as info).
      expect(sink.counts.error + sink.counts.warn + sink.counts.info + sink.counts.log).toBe(4);
      if (!readable) expect([sink.counts.warn, sink.counts.error, sink.firstErrors.length]).toEqual([1, 1, 1]);
      // After restore the logger prints to the console again.
      log('info', 'after the bench');
      expect(printed.join('')).toContain('after the bench');
    },
  );
});
