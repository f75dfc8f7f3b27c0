// The admin CLI's `main` (infra/admin.ts) run in the test process: the same code from parsing to the JSON
// line as `npm run admin`, without a tsx child's start-up. The CLI sets defaults in process.env and resets
// the clients: the environment is restored after it, and the test's own clients and caches start afresh.
import { main as adminMain } from '../../infra/admin';
import { resetConfig } from '../../shared/config';
import { clearProviderCache } from '../../shared/store/provider';
import { resetClients } from '../../shared/store/client';

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * `env` is laid over process.env for the one command, as a child started with it would see it (an empty
 * string stays an empty string); the configuration and the clients are read afresh before and after.
 */
export function adminInProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  // One at a time: a command's environment is the process's, so two at once (Promise.all) would mix theirs.
  const run = queue.then(() => runOne(args, env));
  queue = run.catch(() => undefined);
  return run;
}

let queue: Promise<unknown> = Promise.resolve();

async function runOne(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  let stdout = '';
  let stderr = '';
  const saved = { ...process.env };
  try {
    if (Object.keys(env).length > 0) {
      Object.assign(process.env, env);
      resetConfig();
      resetClients();
      clearProviderCache();
    }
    const code = await adminMain(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
    return { code, stdout, stderr };
  } finally {
    for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
    Object.assign(process.env, saved);
    resetConfig();
    resetClients();
    clearProviderCache();
  }
}
