// CPU time of the processes a measurement involves (Linux /proc): the service process (gateway, handlers,
// pollers, local SQS, emulator), DynamoDB Local's java, and the load generator. On a machine with few
// cores, CPU per request is what decides the rates; it shows where the time goes.
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

const TICKS_PER_SECOND = (() => {
  const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(out.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** user + system CPU of a process, ms; null when it cannot be read. */
function procCpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after "(comm)": state is field 3; utime and stime are fields 14 and 15.
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(rest[11]) + Number(rest[12])) * 1000) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** The java child of this process (DynamoDB Local), if any. */
export function findJavaChild(): number | null {
  try {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (comm === 'java' && ppid === process.pid) return Number(entry);
      } catch {
        // Gone meanwhile.
      }
    }
  } catch {
    // No /proc: not Linux.
  }
  return null;
}

export interface CpuSample {
  /** This process and, when npm start's workers run in a process of their own, that one too. */
  service: number;
  /** The workers process's part of `service` (null: the workers run in this process). */
  workers: number | null;
  dynamodb: number | null;
  loadgen: number | null;
}

export class CpuMeter {
  constructor(
    private readonly javaPid: number | null,
    private readonly loadgenPid: number | null,
    /** The workers process (infra/local/workers-process.ts), read at each sample: a restarted one has a new pid. */
    private readonly workersPid: () => number | null = () => null,
  ) {}

  sample(): CpuSample {
    const own = process.cpuUsage();
    const workersPid = this.workersPid();
    const workers = workersPid === null ? null : procCpuMs(workersPid);
    return {
      service: (own.user + own.system) / 1000 + (workers ?? 0),
      workers,
      dynamodb: this.javaPid === null ? null : procCpuMs(this.javaPid),
      loadgen: this.loadgenPid === null ? null : procCpuMs(this.loadgenPid),
    };
  }

  /** CPU ms spent since `from`, per unit of work (request or operation). */
  since(from: CpuSample, units: number): CpuSample {
    const now = this.sample();
    const per = (a: number | null, b: number | null) => (a === null || b === null || units <= 0 ? null : (a - b) / units);
    return {
      service: per(now.service, from.service) ?? 0,
      workers: per(now.workers, from.workers),
      dynamodb: per(now.dynamodb, from.dynamodb),
      loadgen: per(now.loadgen, from.loadgen),
    };
  }
}
