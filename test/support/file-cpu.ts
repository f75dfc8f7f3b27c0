// Jest setupFilesAfterEnv: with REFLOOP_TEST_CPU_LOG=<file>, each test file appends two JSON lines to <file>,
// when it starts and after its tests, with its worker's pid and the worker's CPU time so far (user + system,
// seconds). `npx tsx test/support/file-cpu-report.ts <file>` turns them into each file's CPU: from its
// start to the next start on the same worker, so its imports, hooks and teardown count. Without the
// variable it does nothing. docs/testing.md says what it found.
import { appendFileSync } from 'node:fs';
// The real process: a test file's `process` is Jest's copy, and its cpuUsage is the worker's either way.
import realProcess from 'node:process';
import type { CpuRecord } from './file-cpu-report';

const log = process.env.REFLOOP_TEST_CPU_LOG;
if (log) {
  const file = (expect.getState().testPath ?? '?').replace(/^.*?\/test\//, 'test/');
  const record = (event: CpuRecord['event']) => {
    const { user, system } = realProcess.cpuUsage();
    const line: CpuRecord = { event, file, pid: realProcess.pid, cpu: (user + system) / 1e6, at: Date.now() / 1000 };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  };
  record('start');
  afterAll(() => record('end'));
}
