// Each test file's CPU from a REFLOOP_TEST_CPU_LOG file (./file-cpu.ts), largest first:
//   REFLOOP_TEST_CPU_LOG=/tmp/cpu.log npx jest && npx tsx test/support/file-cpu-report.ts /tmp/cpu.log [top]
// A file's CPU runs from its start to the next file's start on the same worker (its last file: to its end).
// It is the Jest worker's CPU only: DynamoDB Local, Chromium and child processes are not in it.
import { readFileSync } from 'node:fs';

export interface CpuRecord {
  event: 'start' | 'end';
  file: string;
  pid: number;
  cpu: number;
  at: number;
}

/** CPU-seconds and wall seconds per file. */
export function cpuByFile(records: CpuRecord[]): Map<string, { cpu: number; wall: number }> {
  const out = new Map<string, { cpu: number; wall: number }>();
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
      out.set(start.file, { cpu: until.cpu - start.cpu, wall: until.at - start.at });
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
  const files = [...cpuByFile(records)].sort((a, b) => b[1].cpu - a[1].cpu);
  const total = files.reduce((n, [, f]) => n + f.cpu, 0);
  console.log(`${files.length} files, ${total.toFixed(0)} CPU-s in the Jest workers`);
  for (const [file, f] of files.slice(0, Number(top)))
    console.log(`${f.cpu.toFixed(1).padStart(7)} CPU-s ${f.wall.toFixed(1).padStart(7)} s  ${file}`);
}
