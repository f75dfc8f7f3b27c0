// The local runtime's workers: the queue pollers (./pollers.ts) and the scheduled jobs, either in this
// process or in a node process of their own. `npm start` runs them in their own (docs/capacity.md
// "Freshness on npm start"): the handlers behind the gateway and the workers behind the queues then stop sharing
// one event loop, as in AWS, where each is a Lambda of its own. Under a mixed load one event loop was the
// limit: the profile of `npm run bench`'s freshness section showed the single node process busy 98% of
// the time while DynamoDB Local had a core of its own.
//
// The child is this file, forked with tsx. It gets the parent's environment at fork time (the table, the
// queues' URLs, the secrets key file, the email outbox: startLocal sets them first) and its settings in
// the first IPC message. The queues stay in the parent (./sqs.ts): the child's pollers call them over
// HTTP, like Lambda's event source mappings call SQS. With short polls, the parent tells the child about
// each burst of sends, so an idle poller wakes at once, as it does in one process.
//
// Messages (IPC): parent -> child: start, hold, release, sends, stop; child -> parent: ready, held, log,
// stopped (sent last, so every log line before it has arrived; the parent needs nothing else from it).
// A child that exits unasked is logged and started again: the queues keep the messages it was working
// on, and they come back after their visibility timeout.
import { fork, type ChildProcess } from 'node:child_process';
import { errorFields, log, logSinkOn, readableLogsOn, useLogSink, useReadableLogs, writeLogLine } from '../../shared/log';
import { holdPoller, releasePoller, startPollers, startSchedules, type PollerOptions, type ScheduleOptions } from './pollers';
import { startCallLog } from './call-log';
import { inProcessEndpoints, noteSend, sqsActivity } from './sqs';

export type PollerSettings = Omit<PollerOptions, 'handlers' | 'workers'>;
export type ScheduleSettings = Omit<ScheduleOptions, 'handlers' | 'jobs'>;

export interface LocalWorkers {
  /** Holds a worker's pollers (the bench's drain): resolves once none of its batches is running. */
  hold(workerName: string): Promise<void>;
  /** Lets a held worker's pollers receive again. */
  release(workerName: string): void;
  /** The workers' own process, or null when they run in this one. */
  readonly pid: number | null;
  /** Stops the schedules, then the pollers (the batches in flight finish first). */
  stop(): Promise<void>;
}

/** The workers in this process (the test suites: a test can change the environment they read). */
export function startWorkersHere(pollerSettings: PollerSettings, scheduleSettings: ScheduleSettings): LocalWorkers {
  const pollers = startPollers(pollerSettings);
  const schedules = startSchedules(scheduleSettings);
  return {
    hold: holdPoller,
    release: releasePoller,
    pid: null,
    stop: async () => {
      await schedules.stop();
      await pollers.stop();
    },
  };
}

interface StartMessage {
  t: 'start';
  pollers: PollerSettings;
  schedules: ScheduleSettings;
  /** Forward every log line to the parent (it has a sink: the bench's log file). */
  forwardLogs: boolean;
  readable: boolean;
}
type ToChild =
  | StartMessage
  | { t: 'hold'; name: string; id: number }
  | { t: 'release'; name: string }
  | { t: 'sends'; endpoint: string }
  | { t: 'stop' };
type ToParent = { t: 'ready' } | { t: 'held'; id: number } | { t: 'log'; lines: string[] } | { t: 'stopped' };

/** How long the child has to load every worker and answer `ready`. */
const START_TIMEOUT_MS = 120_000;
/** How long a stop waits for the batches in flight before the child is killed. */
const STOP_TIMEOUT_MS = 60_000;
const RESTART_DELAY_MS = 1_000;

/** The workers in a child process (npm start, and the bench that measures it). */
export async function startWorkersProcess(pollerSettings: PollerSettings, scheduleSettings: ScheduleSettings): Promise<LocalWorkers> {
  let child: ChildProcess;
  let stopping = false;
  let nextId = 0;
  const waiting = new Map<number, () => void>();
  // Short polls: each burst of sends the parent's queue server answered reaches the child once per tick.
  const shortPolls = pollerSettings.waitTimeSeconds === 0;
  let sendsPending = false;
  const onSend = () => {
    if (sendsPending) return;
    sendsPending = true;
    setImmediate(() => {
      sendsPending = false;
      if (child.connected) child.send({ t: 'sends', endpoint: pollerSettings.endpoint } satisfies ToChild);
    });
  };
  if (shortPolls) sqsActivity.on(pollerSettings.endpoint, onSend);

  const spawnChild = (): Promise<void> =>
    new Promise<void>((ready, failed) => {
      // `env` named: under Jest, process.env here is the test file's copy, which child_process would not see.
      child = fork(__filename, [], {
        env: { ...process.env },
        execArgv: ['--import', 'tsx'],
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      });
      const timer = setTimeout(() => {
        failed(new Error(`the local workers process did not start within ${START_TIMEOUT_MS / 1000} s`));
        child.kill('SIGKILL');
      }, START_TIMEOUT_MS);
      child.on('message', (m: ToParent) => {
        if (m.t === 'ready') {
          clearTimeout(timer);
          ready();
        } else if (m.t === 'held') {
          waiting.get(m.id)?.();
          waiting.delete(m.id);
        } else if (m.t === 'log') for (const line of m.lines) writeLogLine(line);
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        failed(new Error(`the local workers process exited (${signal ?? code}) before it started`));
        if (stopping) return;
        log('error', 'the local workers process exited; starting another (the messages it held come back after their visibility timeout)', {
          code,
          signal,
        });
        setTimeout(() => {
          if (!stopping) spawnChild().catch((err) => log('error', 'the local workers process did not start again', errorFields(err)));
        }, RESTART_DELAY_MS).unref();
      });
      child.send({
        t: 'start',
        pollers: pollerSettings,
        schedules: scheduleSettings,
        forwardLogs: logSinkOn(),
        readable: readableLogsOn(),
      } satisfies ToChild);
    });
  await spawnChild();

  return {
    get pid() {
      return child.pid ?? null;
    },
    hold: (name) =>
      new Promise<void>((held) => {
        const id = nextId++;
        waiting.set(id, held);
        child.send({ t: 'hold', name, id } satisfies ToChild);
      }),
    release: (name) => {
      child.send({ t: 'release', name } satisfies ToChild);
    },
    stop: async () => {
      if (stopping) return;
      stopping = true;
      sqsActivity.off(pollerSettings.endpoint, onSend);
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((done) => child.once('exit', () => done()));
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      if (child.connected) child.send({ t: 'stop' } satisfies ToChild);
      else child.kill('SIGTERM');
      await exited;
      clearTimeout(killer);
    },
  };
}

/** The child: runs the workers with the parent's settings until told to stop. */
function runChild(): void {
  const send = (m: ToParent) => {
    if (process.connected) process.send?.(m);
  };
  let workers: LocalWorkers | undefined;
  // REFLOOP_CALL_LOG (./call-log.ts): this process's calls too, named by the worker whose batch made them.
  const stopCallLog = startCallLog();
  // After the last batch: `stopped` goes after every line the batches logged (IPC keeps the order), then exit.
  let exiting = false;
  const stopAndExit = () => {
    if (exiting) return;
    exiting = true;
    void (workers?.stop() ?? Promise.resolve()).finally(() => {
      stopCallLog();
      if (process.connected) process.send?.({ t: 'stopped' } satisfies ToParent, () => process.exit(0));
      else process.exit(0);
    });
  };
  // One handler's failure never ends the workers (as in one process: see start.ts main).
  process.on('uncaughtException', (err) =>
    log('error', 'uncaught exception in the local workers (they keep running)', errorFields(err, true)),
  );
  process.on('unhandledRejection', (err) =>
    log('error', 'unhandled rejection in the local workers (they keep running)', errorFields(err, true)),
  );
  // The parent gone (killed, or crashed): nothing would stop this process.
  process.on('disconnect', stopAndExit);
  // Ctrl-C reaches every process of the terminal's group: the parent stops this one in its order (the
  // gateway first, then the workers, then the queues they call).
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', () => undefined);
  process.on('message', (m: ToChild) => {
    if (m.t === 'start') {
      if (m.forwardLogs) {
        // One IPC message per tick, not per line: a batch logs a line per record, and each message costs a
        // serialisation and a write on both sides (it made the bench's drain a third more expensive).
        let lines: string[] = [];
        useLogSink((line) => {
          if (lines.length === 0)
            setImmediate(() => {
              send({ t: 'log', lines });
              lines = [];
            });
          lines.push(line);
        });
      } else if (m.readable) useReadableLogs();
      // Short polls wait on this process's sqsActivity, which the parent's `sends` messages drive.
      if (m.pollers.waitTimeSeconds === 0) inProcessEndpoints.add(m.pollers.endpoint);
      workers = startWorkersHere(m.pollers, m.schedules);
      send({ t: 'ready' });
    } else if (m.t === 'sends') noteSend(m.endpoint);
    else if (m.t === 'hold') void holdPoller(m.name).then(() => send({ t: 'held', id: m.id }));
    else if (m.t === 'release') releasePoller(m.name);
    else if (m.t === 'stop') stopAndExit();
  });
}

if (require.main === module) runChild();
