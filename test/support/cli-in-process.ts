// An emulator CLI's main (infra/chargebee.ts, infra/stripe.ts, infra/paypal.ts, ...) run in the Jest process:
// the same code from parsing to the printed line as `npm run <cli>`, without a tsx child's start-up (a second
// or more of CPU each on a busy 2-core machine). The CLIs write to process.stdout and process.stderr, so those
// are captured for the call, and the call's environment is laid over process.env; both are restored after it.
// Calls run one at a time (the process's streams and environment are shared). Each test file still runs
// its CLI once as a process, so the program's entry point is tested too.
import type { CliResult } from './admin-cli';

let queue: Promise<unknown> = Promise.resolve();

/** `main(argv)` with `env` over process.env; an error it throws is one stderr line and exit 1, as runCliMain does. */
export function cliInProcess(
  name: string,
  main: (argv: string[]) => Promise<number>,
  argv: string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliResult> {
  const run = queue.then(() => runOne(name, main, argv, env));
  queue = run.catch(() => undefined);
  return run;
}

async function runOne(name: string, main: (argv: string[]) => Promise<number>, argv: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const saved = { ...process.env };
  const writes = { stdout: process.stdout.write, stderr: process.stderr.write };
  const capture = (append: (text: string) => void) =>
    ((chunk: string | Uint8Array, ...rest: unknown[]) => {
      append(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      const callback = rest.find((r) => typeof r === 'function') as (() => void) | undefined;
      callback?.();
      return true;
    }) as typeof process.stdout.write;
  Object.assign(process.env, env);
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
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
  }
}
