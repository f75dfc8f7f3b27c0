// The CLIs (infra/admin.ts, infra/chargebee.ts, infra/stripe.ts, infra/paypal.ts, ...) run by the tests: as a
// program (`cliProcess`: tsx in a child process, as `npm run <cli>` runs it), or their main in the Jest process
// (`cliInProcess`, and test/support/admin-cli.ts for the admin CLI): the same code from parsing to the printed
// line, without a tsx child's start-up (one to two CPU-seconds each on a busy 2-core machine). In process, the
// call's environment is laid over process.env and restored after it, and calls run one at a time: the
// process's environment and streams are shared, so two at once would mix theirs. Each test file still runs
// its CLI once as a process, so the program's entry point is tested too.
import { spawn } from 'node:child_process';
import { join } from 'node:path';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

const ROOT = join(__dirname, '..', '..');

/** `node --import tsx <file> ...args` from the repository root, with `env` over this process's environment. */
export function cliProcess(file: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file, ...args], { cwd: ROOT, env: { ...process.env, ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => ok({ code, stdout, stderr }));
  });
}

let queue: Promise<unknown> = Promise.resolve();

/**
 * Runs `fn` after every earlier call has finished, with `env` laid over process.env (an empty string stays an
 * empty string, as a child started with it would see it); the environment is restored after it.
 */
export function withEnvironment<T>(env: NodeJS.ProcessEnv, fn: () => Promise<T>): Promise<T> {
  const run = queue.then(async () => {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    try {
      return await fn();
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
  queue = run.catch(() => undefined);
  return run;
}

/** `main(argv)` in this process, what it writes to stdout and stderr captured; a throw is one stderr line and exit 1, as runCliMain does. */
export function cliInProcess(
  name: string,
  main: (argv: string[]) => Promise<number>,
  argv: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  return withEnvironment(env, async () => {
    let stdout = '';
    let stderr = '';
    const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
    const capture = (append: (text: string) => void) =>
      ((chunk: string | Uint8Array, ...rest: unknown[]) => {
        append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
        const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
        callback?.();
        return true;
      }) as typeof process.stdout.write;
    process.stdout.write = capture((t) => (stdout += t));
    process.stderr.write = capture((t) => (stderr += t));
    try {
      let code: number;
      try {
        code = await main(argv);
      } catch (err) {
        stderr += `${name}: ${String(err).split('\n')[0]}\n`;
        code = 1;
      }
      return { code, stdout, stderr };
    } finally {
      process.stdout.write = writes.stdout;
      process.stderr.write = writes.stderr;
    }
  });
}
