// The machine a bench ran on: the header of BENCHMARKS.md.
import { spawnSync } from 'node:child_process';
import { cpus, loadavg, platform, release, totalmem } from 'node:os';

export interface Machine {
  date: string;
  os: string;
  cpuModel: string;
  cores: number;
  memoryGiB: number;
  node: string;
  java: string;
  /** 1-minute load average when the bench started: other work on the machine shows here. */
  loadAtStart: number;
}

export function describeMachine(): Machine {
  const list = cpus();
  const java = spawnSync('java', ['-version'], { encoding: 'utf8' });
  // `java -version` prints to stderr; its first line names the version.
  const javaLine = `${java.stderr ?? ''}${java.stdout ?? ''}`.split('\n')[0]?.trim() || 'not found';
  return {
    date: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    os: `${platform()} ${release()}`,
    cpuModel: list[0]?.model.trim() ?? 'unknown',
    cores: list.length,
    memoryGiB: totalmem() / 1024 ** 3,
    node: process.version,
    java: javaLine,
    loadAtStart: loadavg()[0] ?? 0,
  };
}
