// Jest setupFilesAfterEnv: with REFLOOP_TEST_CPU_LOG=<file>, each test file appends two JSON lines to <file>,
// when it starts and after its tests, with its worker's pid and the worker's CPU time so far (user + system,
// seconds). `npx tsx test/support/file-cpu-report.ts <file>` turns them into each file's CPU: from its
// start to the next start on the same worker, so its imports, hooks and teardown count. Each line also has
// `children`: the CPU of the worker's child processes so far (those it has reaped, from /proc/<pid>/stat's
// cutime and cstime, and those still running with their own descendants), so that work a file hands to a
// process (esbuild, the CLI, a runtime's node and java) is counted against it too; Linux only (elsewhere 0).
// Without the variable it does nothing. docs/testing.md says what it found.
import { appendFileSync, readFileSync } from 'node:fs';
// The real process: a test file's `process` is Jest's copy, and its cpuUsage is the worker's either way.
import realProcess from 'node:process';
import type { CpuRecord } from './file-cpu-report';

/** Linux's clock ticks per second (USER_HZ), in which /proc/<pid>/stat counts CPU time. */
const TICKS = 100;

/** utime, stime, cutime, cstime of a process, in seconds (null once it is gone). */
function procTimes(pid: number): [number, number, number, number] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces: the fields after it start after its closing parenthesis.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(f[11]), Number(f[12]), Number(f[13]), Number(f[14])].map((t) => t / TICKS) as [number, number, number, number];
  } catch {
    return null;
  }
}

/** The CPU seconds of a process's running descendants (their own and what they reaped). */
function liveDescendants(pid: number): number {
  let children: string[];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    return 0;
  }
  let sum = 0;
  for (const child of children) {
    const t = procTimes(Number(child));
    if (t) sum += t[0] + t[1] + t[2] + t[3] + liveDescendants(Number(child));
  }
  return sum;
}

/** The CPU seconds of this worker's child processes so far, reaped or running. */
function childrenCpu(pid: number): number {
  const own = procTimes(pid);
  return own ? own[2] + own[3] + liveDescendants(pid) : 0;
}

const log = process.env.REFLOOP_TEST_CPU_LOG;
if (log) {
  const file = (expect.getState().testPath ?? '?').replace(/^.*?\/test\//, 'test/');
  const record = (event: CpuRecord['event']) => {
    const { user, system } = realProcess.cpuUsage();
    const line: CpuRecord = {
      event,
      file,
      pid: realProcess.pid,
      cpu: (user + system) / 1e6,
      children: childrenCpu(realProcess.pid),
      at: Date.now() / 1000,
    };
    appendFileSync(log, `${JSON.stringify(line)}\n`);
  };
  record('start');
  afterAll(() => record('end'));
}
