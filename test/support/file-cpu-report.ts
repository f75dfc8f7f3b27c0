// Each test file's CPU from a REFLOOP_TEST_CPU_LOG file (./file-cpu.ts), largest first:
//   REFLOOP_TEST_CPU_LOG=/tmp/cpu.log npx jest && npx tsx test/support/file-cpu-report.ts /tmp/cpu.log [top]
// A file's CPU runs from its start to the next file's start on the same worker (its last file: to its end).
// The worker's CPU, and its child processes' (`children`): the run's shared DynamoDB Local and Chromium are
// not in either.
import { readFileSync } from 'node:fs';

export interface CpuRecord {
  event: 'start' | 'end';
  file: string;
  pid: number;
  cpu: number;
  /** The CPU seconds of the worker's child processes so far (older logs: absent). */
  children?: number;
  at: number;
}

/** CPU-seconds (the worker's, its children's) and wall seconds per file. */
export function cpuByFile(records: CpuRecord[]): Map<string, { cpu: number; children: number; wall: number }> {
  const out = new Map<string, { cpu: number; children: number; wall: number }>();
  const byWorker = new Map<number, CpuRecord[]>();
  for (const r of records) {
    const list = byWorker.get(r.pid);
    if (list) list.push(r);
    else byWorker.set(r.pid, [r]);
  }
  for (const list of byWorker.values()) {
    list.sort((a, b) => a.at - b.at);
    const starts = list.filter((r) => r.event === 'start');
    starts.forEach((start, i) => {
      const until = starts[i + 1] ?? list.filter((r) => r.event === 'end' && r.file === start.file).pop() ?? start;
      // A child that ends between the records moves from "running" to "reaped": the sum stays, but never below 0.
      const children = Math.max(0, (until.children ?? 0) - (start.children ?? 0));
      out.set(start.file, { cpu: until.cpu - start.cpu, children, wall: until.at - start.at });
    });
  }
  return out;
}

if (require.main === module) {
  const [path, top = '40'] = process.argv.slice(2);
  if (!path) {
    console.error('usage: npx tsx test/support/file-cpu-report.ts <REFLOOP_TEST_CPU_LOG file> [top]');
    process.exit(2);
  }
  const records = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as CpuRecord);
  const files = [...cpuByFile(records)].sort((a, b) => b[1].cpu + b[1].children - (a[1].cpu + a[1].children));
  const total = files.reduce((n, [, f]) => n + f.cpu, 0);
  const children = files.reduce((n, [, f]) => n + f.children, 0);
  console.log(`${files.length} files, ${total.toFixed(0)} CPU-s in the Jest workers, ${children.toFixed(0)} in their child processes`);
  console.log('  worker  children     wall  file');
  for (const [file, f] of files.slice(0, Number(top)))
    console.log(`${f.cpu.toFixed(1).padStart(8)}${f.children.toFixed(1).padStart(10)}${f.wall.toFixed(1).padStart(8)} s  ${file}`);
}
