// Jest global setup of the unit project (and the first step of the integration project's): the
// environment every suite shares, with no DynamoDB Local and no emulator.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function unitEnvironment(): void {
  // Every temporary file of the run (the workers inherit TMPDIR) goes in one folder, removed when the run
  // ends: CDK writes a cdk.out folder of 2 to 25 MB to the temporary directory for each App a test
  // synthesizes and never removes it, and a failed test leaves its own folders behind. Once per run: both
  // projects' global setups call this in Jest's main process.
  if (!process.env.REFLOOP_TEST_TMPDIR) {
    const runDir = mkdtempSync(join(tmpdir(), 'refloop-test-run-'));
    process.env.REFLOOP_TEST_TMPDIR = runDir;
    process.env.TMPDIR = runDir;
    process.on('exit', () => rmSync(runDir, { recursive: true, force: true }));
  }
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  // The service's logger (shared/log.ts) is silent: expected failure paths (503s, failed records, DLQ moves)
  // would otherwise fill the run. Tests that assert on log lines call setLogLevel; LOG_LEVEL=DEBUG npm test
  // shows everything.
  process.env.LOG_LEVEL ??= 'SILENT';
  process.env.AWS_REGION ??= 'us-east-1';
  // The site's origin (links, the CSRF check): the host test/support/api.ts sends requests to. A local
  // gateway a suite starts replaces it with its own URL while it runs.
  process.env.PUBLIC_BASE_URL ??= 'https://api.test';
}
