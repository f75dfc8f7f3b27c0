// Jest global setup: one in-memory DynamoDB Local for the whole run, handed to the workers through the environment.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, startDynamoLocal, type DynamoLocal } from '../../infra/local/dynamodb';
import type { BrowserServer } from 'playwright-core';
import { launchSharedChromium, SHARED_BROWSER_ENV } from './browser';
import { TEST_JVM_OPTIONS } from './jvm';
import unitEnvironment from './unit-setup';

/** `tsx web/build.ts --if-changed` in a child process (Vite is an ES module; Jest's setup is CommonJS). */
function buildDashboard(): Promise<void> {
  const root = join(__dirname, '..', '..');
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [join(root, 'node_modules', 'tsx', 'dist', 'cli.mjs'), 'web/build.ts', '--if-changed'], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('error', fail);
    child.once('exit', (code) =>
      code === 0 ? ok() : fail(new Error(`the dashboard build failed (exit ${code}): run npx tsx web/build.ts`)),
    );
  });
}

export const TEST_TABLE = 'refloop-test';

/** globalSetup and globalTeardown share this process's globalThis (and only they do). */
export const holder = globalThis as typeof globalThis & {
  __refloopDynamo?: DynamoLocal;
  __refloopOutbox?: string;
  __refloopBrowser?: BrowserServer;
};

/**
 * The run's shared Chromium (./browser.ts). Without one (no Chromium on this machine), the suites that need a
 * browser launch their own and fail with Playwright's message; the others run as before.
 */
async function sharedBrowser(): Promise<BrowserServer | undefined> {
  try {
    return await launchSharedChromium();
  } catch (err) {
    console.warn(`No shared Chromium for the browser suites (${String(err).split('\n')[0]})`);
    return undefined;
  }
}

export default async function globalSetup(): Promise<void> {
  unitEnvironment();
  // The dashboard (web/dist) is built once here, before the workers start: the suites that start the local
  // runtime (npm start's startLocal) then find it up to date instead of building it concurrently.
  const [dynamo, browser] = await Promise.all([
    startDynamoLocal({
      port: await freePort(),
      path: null,
      tableName: TEST_TABLE,
      jvmOptions: TEST_JVM_OPTIONS,
    }),
    sharedBrowser(),
    buildDashboard(),
  ]);
  holder.__refloopDynamo = dynamo;
  holder.__refloopBrowser = browser;
  if (browser) process.env[SHARED_BROWSER_ENV] = browser.wsEndpoint();
  // Workers are started after this and inherit process.env; each test file then gets its own copy.
  process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
  process.env.TABLE_NAME = TEST_TABLE;
  // Tests revoke keys and expect the very next request to be refused.
  process.env.AUTH_CACHE_TTL_SECONDS = '0';
  // Every file sends requests with bad keys from 127.0.0.1, in parallel and within a minute: the per-IP
  // limit of failed authentications would refuse them. test/integration/auth-flood.test.ts sets its own.
  process.env.AUTH_FAILURES_PER_IP_PER_MINUTE ??= '0';
  // Suites send thousands of requests with one key in seconds (the bad-input fuzz): the /v1/ rate limit
  // is raised for them; test/integration/api-rate-limits.test.ts sets its own low limits.
  process.env.API_RATE_LIMITS ??= 'starter=1000,small=1000,regular=1000,unlimited=1000';
  process.env.AWS_REGION = 'us-east-1';
  // Member emails go to an outbox folder, never to SES (every test file with pollers runs the email worker).
  holder.__refloopOutbox = mkdtempSync(join(tmpdir(), 'refloop-test-outbox-'));
  process.env.EMAIL_OUTBOX_DIR = holder.__refloopOutbox;
  // Provider and webhook secrets are encrypted at rest with a local key file (shared/secrets), one for the
  // whole run: every worker, the CLI children and npm start's runtime in the e2e suites read the same key,
  // so every test goes through the encryption code. Created on first use; removed when the run ends.
  const secretsDir = mkdtempSync(join(tmpdir(), 'refloop-test-secrets-'));
  process.env.SECRETS_KEY_FILE = join(secretsDir, 'secrets.key');
  delete process.env.SECRETS_KMS_KEY_ID;
  process.on('exit', () => rmSync(secretsDir, { recursive: true, force: true }));
}
