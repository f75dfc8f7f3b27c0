// The admin CLI's `main` (infra/admin.ts) run in the test process: the same code from parsing to the JSON
// line as `npm run admin`, without a tsx child's start-up. The CLI sets defaults in process.env and resets
// the clients: the environment is restored after it, and the test's own clients and caches start afresh.
import { main as adminMain } from '../../infra/admin';
import { resetConfig } from '../../shared/config';
import { clearProviderCache } from '../../shared/store/provider';
import { resetClients } from '../../shared/store/client';
import { type CliResult, withEnvironment } from './cli-in-process';

export type { CliResult };

const resetAll = () => {
  resetConfig();
  resetClients();
  clearProviderCache();
};

/**
 * `env` is laid over process.env for the one command (test/support/cli-in-process.ts withEnvironment: one
 * command at a time); the configuration and the clients are read afresh before and after.
 */
export function adminInProcess(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return withEnvironment(env, async () => {
    let stdout = '';
    let stderr = '';
    if (Object.keys(env).length > 0) resetAll();
    try {
      const code = await adminMain(args, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t) });
      return { code, stdout, stderr };
    } finally {
      // The caches are dropped; whoever uses them next reads the restored environment.
      resetAll();
    }
  });
}
