// `npm start`: the service on a laptop (DynamoDB Local + the HTTP gateway in front of the real handlers).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resetConfig } from '../../shared/config';
import { useReadableLogs } from '../../shared/log';
import { scheduledJobs } from '../../functions/workers';
import { resetQueueClient } from '../../shared/queue/publish';
import { QUEUE_NAMES } from '../../shared/queue/queues';
import { createAccount, ensurePublishableKey, findPrincipalByApiKey } from '../../shared/store/accounts';
import { resetClients } from '../../shared/store/client';
import { saveProviderSettings } from '../../shared/store/provider';
import { startDynamoLocal } from './dynamodb';
import { startGateway } from './gateway';
import { startPaddleEmulator, type PaddleEmulator } from './paddle-emulator';
import { runScheduledJob, startPollers, startSchedules } from './pollers';
import { setQueueEnvironment, startLocalSqs } from './sqs';

export interface LocalOptions {
  port?: number;
  dynamodbPort?: number;
  /** Relative paths resolve against the working directory. */
  dataDir?: string;
  tableName?: string;
  /** Local SQS port (default 9324; 0 = a free port). */
  sqsPort?: number;
  /** Paddle emulator port (default 8025; 0 = a free port). */
  paddlePort?: number;
  /** Minutes between background-sync runs (default: the stack's schedule). */
  backfillMinutes?: number;
}

export interface DemoAccount {
  accountId: string;
  apiKey: string;
  /** The browser-safe key of the /js/v1/ endpoints (the script tag's data-key). */
  publishableKey: string;
}

export interface LocalRuntime {
  url: string;
  dynamodbEndpoint: string;
  dataDir: string;
  sqsEndpoint: string;
  paddle: PaddleEmulator;
  demo: DemoAccount;
  /** True when this start created the demo account (first start on this data directory). */
  demoCreated: boolean;
  stop(): Promise<void>;
}

function readMarker(marker: string): Omit<DemoAccount, 'publishableKey'> | null {
  try {
    const saved = JSON.parse(readFileSync(marker, 'utf8')) as { account_id?: unknown; api_key?: unknown };
    if (typeof saved.account_id === 'string' && typeof saved.api_key === 'string') {
      return { accountId: saved.account_id, apiKey: saved.api_key };
    }
  } catch {
    // Missing or unreadable: a new demo account replaces it.
  }
  return null;
}

/** The demo key lives in DATA_DIR (gitignored) so every start can print the same one. */
async function ensureDemoAccount(dataDir: string): Promise<{ demo: DemoAccount; created: boolean }> {
  const marker = join(dataDir, 'demo-account.json');
  const saved = readMarker(marker);
  // A wiped database or a revoked demo key gets a fresh demo account instead of a dead key.
  if (saved && (await findPrincipalByApiKey(saved.apiKey))) {
    // A demo account from before publishable keys gets one now.
    const { publishableKey } = await ensurePublishableKey(saved.accountId);
    return { demo: { ...saved, publishableKey: publishableKey as string }, created: false };
  }
  const { account, apiKey } = await createAccount({ name: 'Demo', plan: 'regular' });
  writeFileSync(marker, JSON.stringify({ account_id: account.accountId, api_key: apiKey }, null, 2) + '\n', { mode: 0o600 });
  return { demo: { accountId: account.accountId, apiKey, publishableKey: account.publishableKey as string }, created: true };
}

export async function startLocal(options: LocalOptions = {}): Promise<LocalRuntime> {
  const dataDir = resolve(options.dataDir ?? '.data');
  const tableName = options.tableName ?? 'refloop';
  mkdirSync(join(dataDir, 'dynamodb'), { recursive: true });
  // The SDK warns on Node 20 that support ends in 2027; on a laptop that is noise on every start.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

  const stops: Array<() => Promise<void>> = [];
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s();
    resetClients();
  };
  try {
    const dynamo = await startDynamoLocal({ port: options.dynamodbPort ?? 8000, path: join(dataDir, 'dynamodb'), tableName });
    stops.push(dynamo.stop);
    // The handlers read their configuration once; set it before the first request and drop any cached copy.
    process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
    process.env.TABLE_NAME = tableName;
    // Auth caches resolved keys per container (60 s in AWS). Locally that would let a key revoked with
    // the CLI keep working for a minute, so the cache is off unless the user asks for it.
    process.env.AUTH_CACHE_TTL_SECONDS ??= '0';
    // Member emails are written to DATA_DIR/outbox as .eml files (one per message) instead of SES.
    process.env.EMAIL_OUTBOX_DIR = join(dataDir, 'outbox');
    // Local mode: webhook endpoints may be http:// on loopback (a receiver on this laptop). Never in AWS.
    process.env.WEBHOOK_ALLOW_LOOPBACK ??= '1';
    resetConfig();
    resetClients();

    // The stack's queues and DLQs on the local SQS (in memory: messages do not survive a restart), and
    // pollers playing the Lambda event source mappings. Stops run in reverse: the gateway, then the
    // schedules and pollers, then the emulator they may be calling, then the queues.
    const sqs = await startLocalSqs({ port: options.sqsPort ?? 9324 });
    stops.push(sqs.stop);
    setQueueEnvironment(sqs);
    stops.push(async () => resetQueueClient());
    // The Paddle emulator stands in for vendors.paddle.com and checkout.paddle.com; its state and key
    // pair persist in DATA_DIR so a restart keeps the demo's subscriptions and signatures valid.
    const paddle = await startPaddleEmulator({ port: options.paddlePort ?? 8025, dataFile: join(dataDir, 'paddle-emulator.json') });
    stops.push(paddle.stop);
    const pollers = startPollers({ endpoint: sqs.endpoint, queueUrls: sqs.queueUrls, dlqUrls: sqs.dlqUrls });
    stops.push(pollers.stop);
    const schedules = startSchedules(options.backfillMinutes ? { everyMinutesOverride: options.backfillMinutes } : {});
    stops.push(schedules.stop);

    const { demo, created } = await ensureDemoAccount(dataDir);
    // The demo account is wired to the emulator on every start (its settings follow the emulator's).
    await saveProviderSettings(demo.accountId, {
      vendorId: paddle.vendorId,
      authCode: paddle.authCode,
      publicKey: paddle.publicKeyPem,
      vendorsApiUrl: paddle.vendorsApiUrl,
      checkoutApiUrl: paddle.checkoutApiUrl,
    });
    const gateway = await startGateway({ port: options.port ?? 3000 });
    stops.push(gateway.close);
    paddle.setWebhookUrl(`${gateway.url}/webhooks/paddle/${demo.accountId}/`);
    // One background sync at start: whatever the emulator did while the service was down is caught up.
    const backfill = scheduledJobs.find((j) => j.name === 'ProviderBackfill');
    if (backfill) await runScheduledJob(backfill);
    return { url: gateway.url, dynamodbEndpoint: dynamo.endpoint, sqsEndpoint: sqs.endpoint, paddle, dataDir, demo, demoCreated: created, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

function portFromEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${name} must be a port number, got "${raw}"`);
  return port;
}

async function main(): Promise<void> {
  // Readable lines with timestamps on this console (JSON is for CloudWatch); LOG_LEVEL=DEBUG shows more.
  useReadableLogs();
  const tableName = process.env.TABLE_NAME || 'refloop';
  let runtime: LocalRuntime;
  try {
    runtime = await startLocal({
      port: portFromEnv('PORT', 3000),
      dynamodbPort: portFromEnv('DYNAMODB_PORT', 8000),
      dataDir: process.env.DATA_DIR || '.data',
      tableName,
      sqsPort: portFromEnv('SQS_PORT', 9324),
      paddlePort: portFromEnv('PADDLE_PORT', 8025),
    });
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
  const { url, dynamodbEndpoint, sqsEndpoint, paddle, dataDir, demo, demoCreated } = runtime;
  console.log(`Refloop API      ${url}`);
  console.log(`DynamoDB Local   ${dynamodbEndpoint} (data in ${dataDir})`);
  console.log(`Local SQS        ${sqsEndpoint} (queues: ${QUEUE_NAMES.join(', ')}, and their DLQs)`);
  console.log(`Member emails    ${join(dataDir, 'outbox')} (one .eml file per message)`);
  console.log(`Paddle emulator  ${paddle.url} (vendor ${paddle.vendorId}; alerts go to the demo account)`);
  console.log(`Demo account     ${demo.accountId}${demoCreated ? ' (created now)' : ''}`);
  console.log(`Demo API key     ${demo.apiKey}`);
  console.log(`Publishable key  ${demo.publishableKey}`);
  console.log(`Script tag       <script src="${url}/js/refloop.js" data-key="${demo.publishableKey}" async></script>`);
  console.log('');
  console.log(`Try: curl -H "Authorization: Bearer ${demo.apiKey}" ${url}/v1/campaigns/`);
  // The CLI's defaults match `npm start`'s; anything else has to be passed on.
  const cliEnv =
    dynamodbEndpoint === 'http://127.0.0.1:8000' && tableName === 'refloop'
      ? ''
      : `DYNAMODB_ENDPOINT=${dynamodbEndpoint} TABLE_NAME=${tableName} `;
  console.log(`Accounts and keys: ${cliEnv}npm run --silent admin -- account create --name <name>`);
  const paddleEnv = paddle.url === 'http://127.0.0.1:8025' ? '' : `PADDLE_EMULATOR_URL=${paddle.url} `;
  console.log(`Simulate Paddle:   ${paddleEnv}npm run --silent paddle -- checkout --plan 9001 --email buyer@example.com`);
  console.log('Ctrl-C stops everything.');

  let stopping = false;
  const shutdown = () => {
    if (stopping) return;
    stopping = true;
    runtime.stop().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error(`Failed to stop cleanly: ${String(err)}`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

if (require.main === module) void main();
