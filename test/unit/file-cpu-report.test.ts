// test/support/file-cpu-report.ts: a file's CPU runs from its start to the next start on the same worker
// (its imports, hooks and teardown included), and a worker's last file to its own end.
import { cpuByFile, type CpuRecord } from '../support/file-cpu-report';

const r = (event: CpuRecord['event'], file: string, pid: number, cpu: number, at: number): CpuRecord => ({ event, file, pid, cpu, at });

describe('cpuByFile', () => {
  it('charges each file up to the next start on its worker, and the last file up to its end', () => {
    const out = cpuByFile([
      r('start', 'a', 1, 1.0, 100),
      r('end', 'a', 1, 3.0, 110),
      r('start', 'b', 2, 0.5, 101),
      r('start', 'c', 1, 3.5, 111),
      r('end', 'b', 2, 0.9, 102),
      r('end', 'c', 1, 4.0, 115),
    ]);
    expect(Object.fromEntries([...out].map(([f, v]) => [f, { cpu: Number(v.cpu.toFixed(2)), wall: Number(v.wall.toFixed(2)) }]))).toEqual({
      a: { cpu: 2.5, wall: 11 },
      b: { cpu: 0.4, wall: 1 },
      c: { cpu: 0.5, wall: 4 },
    });
  });

  it('a file whose end was never logged counts nothing rather than guessing', () => {
    expect(cpuByFile([r('start', 'x', 7, 2, 50)]).get('x')).toEqual({ cpu: 0, children: 0, wall: 0 });
  });

  it("counts a file's child processes from the same records, and never below zero", () => {
    const out = cpuByFile([
      { ...r('start', 'a', 1, 1.0, 100), children: 0.5 },
      { ...r('start', 'b', 1, 2.0, 110), children: 7.5 },
      { ...r('end', 'b', 1, 2.5, 120), children: 7.4 },
    ]);
    expect(out.get('a')?.children).toBeCloseTo(7, 5);
    expect(out.get('b')?.children).toBe(0);
  });
});
