// `npm start`: the service on a laptop (DynamoDB Local + the HTTP gateway in front of the real handlers).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { resetConfig } from '../../shared/config';
import { useReadableLogs } from '../../shared/log';
import { scheduledJobs } from '../../functions/workers';
import { resetQueueClient } from '../../shared/queue/publish';
import { QUEUE_NAMES } from '../../shared/queue/queues';
import { createAccount, ensurePublishableKey, findPrincipalByApiKey } from '../../shared/store/accounts';
import { addTeamMember, membershipsOf } from '../../shared/store/team';
import { handOverLoginLink } from '../../shared/email/login-links';
import { errorFields, log } from '../../shared/log';
import { rawClient, resetClients } from '../../shared/store/client';
import { ensureTable } from '../../shared/store/create-table';
import { resetSecrets } from '../../shared/secrets';
import { recordServiceSecretsKey } from '../../shared/secrets/fingerprint';
import type { ProviderKind } from '../../shared/billing/registry';
import { ProviderSwitchRefusedError, saveProviderConnection, type ProviderConnection } from '../../shared/store/provider';
import type { RailKind } from '../../shared/rails/definition';
import type { RailConnection } from '../../shared/rails/port';
import { railConnections, saveRailConnection } from '../../shared/store/rail-connections';
import { LOCAL_KEYS as BILLING_LOCAL_KEYS, type PaddleBillingEmulator } from './emulators/paddle-billing';
import { LOCAL_KEYS as STRIPE_LOCAL_KEYS, type StripeEmulator } from './emulators/stripe';
import { startEmulator as startPaypalRail, type PaypalEmulator } from './emulators/paypal-payouts';
import { startEmulator as startWiseRail, type WiseEmulator } from './emulators/wise';
import type { RunningEmulator, StartEmulator } from './emulators/types';
import { definitionOf, PROVIDER_DEFINITIONS, PROVIDER_KINDS } from '../../shared/billing/registry';
import { startDynamoLocal } from './dynamodb';
import { startGateway } from './gateway';
import { startCallLog } from './call-log';
import { removeRuntimeFile, writeRuntimeFile } from './runtime-file';
import type { PaddleEmulator } from './emulators/paddle-classic';
import { runScheduledJob } from './pollers';
import { type LocalWorkers, type PollerSettings, startWorkersHere, startWorkersProcess } from './workers-process';
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
  /** Paddle Billing emulator port (default 8026, what `npm run paddle-billing` calls; 0 = a free port). */
  paddleBillingPort?: number;
  /** Stripe emulator port (default 12111, what `npm run stripe` calls; 0 = a free port). */
  stripePort?: number;
  /** Any provider emulator's port by kind (main() reads `<KIND>_PORT`, e.g. CHARGEBEE_PORT); 0 = a free one. */
  emulatorPorts?: Partial<Record<ProviderKind, number>>;
  /** PayPal Payouts emulator port (a payout rail; default 12131, what `npm run paypal` calls; 0 = a free port). */
  paypalPort?: number;
  /** Wise emulator port (a payout rail; default 12121, what `npm run wise` calls; 0 = a free port). */
  wisePort?: number;
  /** The provider the demo account is connected to (default paddle-classic; env DEMO_PROVIDER). */
  demoProvider?: ProviderKind;
  /**
   * Connect the demo account's payout rails (PayPal, Stripe Connect, Wise) to their emulators at start
   * (default false; npm start passes true unless DEMO_RAILS=0). A connection to a non-local api_url is kept.
   */
  connectDemoRails?: boolean;
  /** Minutes between background-sync runs (default: the stack's schedule). */
  backfillMinutes?: number;
  /** The demo account's dashboard owner (default DEMO_OWNER_EMAIL or owner@example.com). */
  demoOwnerEmail?: string;
  /** Build the dashboard (web/) when its sources changed since the last build (default true). */
  buildDashboard?: boolean;
  /** The site's origin for links and the CSRF check (PUBLIC_BASE_URL); default the gateway's own URL. */
  publicBaseUrl?: string;
  /**
   * A DynamoDB Local already running (the test run's, in memory) instead of starting one on DATA_DIR: the
   * table is created on it if missing. For the browser suites, which need npm start's parts, not a second Java.
   */
  dynamodbEndpoint?: string;
  /**
   * Short polls between which a send to the local queues wakes the pollers at once, instead of the Lambda's
   * 1 s batching window that npm start plays (default false). For the test suites: a flow crosses its
   * queues in milliseconds instead of up to a second per queue.
   */
  shortPolls?: boolean;
  /**
   * Run the queue pollers and the schedules in a node process of their own (./workers-process.ts), as npm
   * start does, instead of in this one (default false: the test suites, which may change the environment the
   * workers read after the start).
   */
  workersProcess?: boolean;
  /** JVM options of the DynamoDB Local it starts (the test suites: test/support/jvm.ts). */
  dynamodbJvmOptions?: string[];
}

export interface DemoAccount {
  accountId: string;
  apiKey: string;
  /** The dashboard owner of the demo account (DEMO_OWNER_EMAIL, default owner@example.com). */
  ownerEmail: string;
  /** The browser-safe key of the /js/v1/ endpoints (the script tag's data-key). */
  publishableKey: string;
}

export interface LocalRuntime {
  url: string;
  dynamodbEndpoint: string;
  dataDir: string;
  sqsEndpoint: string;
  paddle: PaddleEmulator;
  paddleBilling: PaddleBillingEmulator;
  /** The Stripe emulator; its Connect side (the Stripe payout rail) is `stripe.connect`. */
  stripe: StripeEmulator;
  /** The payout rails' emulators: the demo account is connected to them and they deliver to its rail intakes. */
  paypal: PaypalEmulator;
  wise: WiseEmulator;
  /** Every provider's emulator as npm start runs it (its URL, connection and handle), by kind. */
  emulators: RunningEmulator<unknown>[];
  demo: DemoAccount;
  /** The provider the demo account is connected to. */
  demoProvider: ProviderKind;
  /** Set when the demo could not switch to the asked provider (it mirrors subscriptions of another). */
  demoProviderNote: string | null;
  /** True when this start created the demo account (first start on this data directory). */
  demoCreated: boolean;
  /** The queue pollers and schedules (their process's pid, a hold on one worker's pollers). */
  workers: LocalWorkers;
  stop(): Promise<void>;
}

/** Whether a rail connection's api_url is a local emulator's (npm start re-points those at its own). */
function isLocalUrl(apiUrl: string): boolean {
  try {
    return ['127.0.0.1', 'localhost', '[::1]'].includes(new URL(apiUrl).hostname);
  } catch {
    return false;
  }
}

function readMarker(marker: string): Omit<DemoAccount, 'publishableKey' | 'ownerEmail'> | null {
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
async function ensureDemoAccount(dataDir: string, ownerEmail: string): Promise<{ demo: DemoAccount; created: boolean }> {
  const marker = join(dataDir, 'demo-account.json');
  const saved = readMarker(marker);
  // A wiped database or a revoked demo key gets a fresh demo account instead of a dead key.
  if (saved && (await findPrincipalByApiKey(saved.apiKey))) {
    // A demo account from before publishable keys gets one now.
    const { publishableKey } = await ensurePublishableKey(saved.accountId);
    await ensureDemoOwner(saved.accountId, ownerEmail);
    return { demo: { ...saved, publishableKey: publishableKey as string, ownerEmail }, created: false };
  }
  const { account, apiKey } = await createAccount({ name: 'Demo', plan: 'regular' });
  writeFileSync(marker, `${JSON.stringify({ account_id: account.accountId, api_key: apiKey }, null, 2)}\n`, { mode: 0o600 });
  await ensureDemoOwner(account.accountId, ownerEmail);
  return { demo: { accountId: account.accountId, apiKey, publishableKey: account.publishableKey as string, ownerEmail }, created: true };
}

/** The demo account's dashboard owner (added once; an existing team is left as it is). */
async function ensureDemoOwner(accountId: string, email: string): Promise<void> {
  if ((await membershipsOf(email)).some((m) => m.accountId === accountId)) return;
  await addTeamMember(accountId, email, 'owner');
}

/**
 * A fresh login link for the demo owner, printed by `npm start` and written to the outbox like every
 * login email (POST /auth/login-links/ sends the next ones there too).
 */
export async function demoLoginLink(runtime: Pick<LocalRuntime, 'url' | 'demo' | 'dataDir'>): Promise<{ url: string; file?: string }> {
  const member = (await membershipsOf(runtime.demo.ownerEmail)).find((m) => m.accountId === runtime.demo.accountId);
  if (!member) throw new Error(`${runtime.demo.ownerEmail} is not in the demo account's team`);
  return handOverLoginLink({
    accountId: member.accountId,
    operatorId: member.operatorId,
    accountName: 'Demo',
    to: runtime.demo.ownerEmail,
    baseUrl: runtime.url,
    outboxDir: join(runtime.dataDir, 'outbox'),
  });
}

/** The local emulators' keys (not secrets: they only open the emulators on this machine). */
export const LOCAL_SECRETS = {
  billingApiKey: BILLING_LOCAL_KEYS.apiKey,
  billingWebhookSecret: BILLING_LOCAL_KEYS.webhookSecret,
  stripeSecretKey: STRIPE_LOCAL_KEYS.secretKey,
  stripeWebhookSecret: STRIPE_LOCAL_KEYS.webhookSecret,
} as const;

/** The demo account's provider unless DEMO_PROVIDER says: the first of the registry (Paddle Classic). */
const DEFAULT_DEMO_PROVIDER: ProviderKind = PROVIDER_KINDS[0] as ProviderKind;

function demoProviderFromEnv(): ProviderKind {
  const raw = process.env.DEMO_PROVIDER || DEFAULT_DEMO_PROVIDER;
  if (!(PROVIDER_KINDS as readonly string[]).includes(raw))
    throw new Error(`DEMO_PROVIDER must be one of ${PROVIDER_KINDS.join(', ')}, got "${raw}"`);
  return raw as ProviderKind;
}

/**
 * Batches of each worker in flight at once: LOCAL_POLLER_CONCURRENCY, else 5 when the workers run in a process
 * of their own (npm start: in AWS an event source runs up to its MaximumConcurrency, the stack's 5; idle lanes
 * cost nothing, infra/local/pollers.ts), else 1 (the test suites' runtime: one batch at a time per worker).
 */
export function localPollerConcurrency(workersProcess: boolean): number {
  const set = Number(process.env.LOCAL_POLLER_CONCURRENCY);
  return Number.isInteger(set) && set >= 1 ? set : workersProcess ? 5 : 1;
}

/**
 * Calls each node process keeps in flight to DynamoDB Local at once: DYNAMODB_LOCAL_CONNECTIONS when set (0:
 * the SDK's 50; the configuration refuses anything but an integer), else 4 when the workers run in a process
 * of their own (npm start, the bench), else 0 (the test suites). DynamoDB Local does its SQLite work on one
 * thread behind one write lock; under npm start's full load 30 to 70 calls waited inside it, and it served
 * fewer of them than when they wait in the client (docs/capacity.md "DynamoDB Local's connections").
 */
export function localDynamoConnections(workersProcess: boolean): string {
  return process.env.DYNAMODB_LOCAL_CONNECTIONS || (workersProcess ? '4' : '0');
}

export async function startLocal(options: LocalOptions = {}): Promise<LocalRuntime> {
  const dataDir = resolve(options.dataDir ?? '.data');
  const tableName = options.tableName ?? 'refloop';
  mkdirSync(join(dataDir, 'dynamodb'), { recursive: true });
  // The SDK warns on Node 20 that support ends in 2027; on a laptop that is noise on every start.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

  const stops: Array<() => Promise<void>> = [];
  // REFLOOP_CALL_LOG (./call-log.ts): every DynamoDB call of this process, written until the runtime stops.
  const stopCallLog = startCallLog();
  stops.push(async () => stopCallLog());
  const stop = async () => {
    for (const s of stops.splice(0).reverse()) await s();
    resetClients();
  };
  try {
    const dynamo = options.dynamodbEndpoint
      ? { endpoint: options.dynamodbEndpoint }
      : await startDynamoLocal({
          port: options.dynamodbPort ?? 8000,
          path: join(dataDir, 'dynamodb'),
          tableName,
          ...(options.dynamodbJvmOptions ? { jvmOptions: options.dynamodbJvmOptions } : {}),
        });
    if ('stop' in dynamo) stops.push(dynamo.stop);
    // The handlers read their configuration once; set it before the first request and drop any cached copy.
    process.env.DYNAMODB_ENDPOINT = dynamo.endpoint;
    process.env.TABLE_NAME = tableName;
    // Read by both processes' clients (the workers' process gets this environment when it is forked).
    const connectionsWereSet = process.env.DYNAMODB_LOCAL_CONNECTIONS !== undefined;
    process.env.DYNAMODB_LOCAL_CONNECTIONS = localDynamoConnections(options.workersProcess ?? false);
    stops.push(async () => {
      if (!connectionsWereSet) delete process.env.DYNAMODB_LOCAL_CONNECTIONS;
    });
    // Auth caches resolved keys per container (60 s in AWS). Locally that would let a key revoked with
    // the CLI keep working for a minute, so the cache is off unless the user asks for it.
    process.env.AUTH_CACHE_TTL_SECONDS ??= '0';
    // Member emails are written to DATA_DIR/outbox as .eml files (one per message) instead of SES.
    process.env.EMAIL_OUTBOX_DIR = join(dataDir, 'outbox');
    // Local mode: webhook endpoints may be http:// on loopback (a receiver on this laptop). Never in AWS.
    process.env.WEBHOOK_ALLOW_LOOPBACK ??= '1';
    // Provider and webhook secrets are encrypted at rest with a local key file (shared/secrets), the one of
    // this data directory unless SECRETS_KEY_FILE names another (the tests' run-wide key). The admin CLI
    // against this DynamoDB Local finds the same file by default (DATA_DIR or .data).
    const ownKeyFile = !process.env.SECRETS_KEY_FILE;
    if (ownKeyFile) process.env.SECRETS_KEY_FILE = join(dataDir, 'secrets.key');
    stops.push(async () => {
      if (ownKeyFile) delete process.env.SECRETS_KEY_FILE;
      resetSecrets();
    });
    resetConfig();
    resetClients();
    resetSecrets();
    if (options.dynamodbEndpoint) await ensureTable(rawClient(), tableName);
    // The table records which key its secrets are under (shared/secrets/fingerprint.ts): the admin CLI then
    // refuses to write a secret with another key file (run without this DATA_DIR, say).
    const secretsKey = await recordServiceSecretsKey();
    if (secretsKey.replaced) {
      log(
        'warn',
        `the secrets key file ${process.env.SECRETS_KEY_FILE} is not the one this table's secrets were written with: provider and webhook secrets written before answer 503 until they are set again`,
        { previous: secretsKey.replaced, now: secretsKey.fingerprint },
      );
    }

    // The stack's queues and DLQs on the local SQS (in memory: messages do not survive a restart), and
    // pollers playing the Lambda event source mappings. Stops run in reverse: the gateway, then the
    // schedules and pollers, then the emulator they may be calling, then the queues.
    const sqs = await startLocalSqs({ port: options.sqsPort ?? 9324 });
    stops.push(sqs.stop);
    setQueueEnvironment(sqs);
    stops.push(async () => resetQueueClient());
    // Every provider's emulator, resolved from its definition (./emulators/<folder>/index.ts, the
    // definitions' `emulator`). Paddle Classic's state and key pair persist in DATA_DIR so a restart keeps
    // the demo's subscriptions and signatures valid; Paddle Billing's and Stripe's keep their state in
    // memory with fixed keys, so a demo account connected to them keeps working across restarts (emulator
    // values, not real secrets).
    const ports: Partial<Record<ProviderKind, number>> = {
      'paddle-classic': options.paddlePort,
      'paddle-billing': options.paddleBillingPort,
      stripe: options.stripePort,
      ...options.emulatorPorts,
    };
    const emulators: RunningEmulator<unknown>[] = [];
    for (const definition of PROVIDER_DEFINITIONS) {
      if (!definition.emulator) continue;
      const { startEmulator } = (await import(`./emulators/${definition.emulator.folder}`)) as { startEmulator: StartEmulator };
      // A kind with no port option of its own takes a free port when the caller asked for free ones (the
      // tests run several runtimes at once), else its EMULATOR_PORT.
      const freePorts = Object.values(ports).includes(0);
      const port = ports[definition.kind as ProviderKind] ?? (freePorts ? 0 : undefined);
      const running = await startEmulator({ port, dataDir });
      stops.push(running.close);
      emulators.push(running);
    }
    const handleOf = <H>(kind: ProviderKind): H => {
      const running = emulators.find((e) => e.kind === kind);
      if (!running) throw new Error(`npm start runs no emulator for ${kind}`);
      return running.handle as H;
    };
    // The payout rails' emulators (PayPal Payouts, Wise; Stripe Connect is the Stripe emulator's Connect
    // side): fixed local credentials, state in memory (Wise's signing key in DATA_DIR). Once the gateway
    // listens, each delivers its signed events to the demo account's rail intake (below).
    const paypalRail = await startPaypalRail({ port: options.paypalPort, dataDir });
    stops.push(paypalRail.close);
    const wiseRail = await startWiseRail({ port: options.wisePort, dataDir });
    stops.push(wiseRail.close);
    const paddle = handleOf<PaddleEmulator>('paddle-classic');
    const paddleBilling = handleOf<PaddleBillingEmulator>('paddle-billing');
    const stripe = handleOf<StripeEmulator>('stripe');
    const pollerSettings: PollerSettings = {
      endpoint: sqs.endpoint,
      queueUrls: sqs.queueUrls,
      dlqUrls: sqs.dlqUrls,
      ...(options.shortPolls ? { waitTimeSeconds: 0 } : {}),
      concurrency: localPollerConcurrency(options.workersProcess === true),
    };
    const scheduleSettings = options.backfillMinutes ? { everyMinutesOverride: options.backfillMinutes } : {};
    // The pollers and schedules: in a process of their own for npm start (./workers-process.ts), else here.
    const workers = options.workersProcess
      ? await startWorkersProcess(pollerSettings, scheduleSettings)
      : startWorkersHere(pollerSettings, scheduleSettings);
    stops.push(workers.stop);

    const { demo, created } = await ensureDemoAccount(
      dataDir,
      options.demoOwnerEmail ?? (process.env.DEMO_OWNER_EMAIL || 'owner@example.com'),
    );
    // The demo account is wired to its emulator on every start (its settings follow the emulator's). One
    // provider per account: a demo that already mirrors another provider's subscriptions keeps that one.
    const connectionOf = (kind: ProviderKind): ProviderConnection => {
      const emulator = emulators.find((e) => e.kind === kind);
      if (!emulator) throw new Error(`npm start runs no emulator for ${kind}`);
      return emulator.connection;
    };
    let demoProvider = options.demoProvider ?? DEFAULT_DEMO_PROVIDER;
    let demoProviderNote: string | null = null;
    try {
      await saveProviderConnection(demo.accountId, connectionOf(demoProvider));
    } catch (err) {
      if (!(err instanceof ProviderSwitchRefusedError)) throw err;
      demoProviderNote = `The demo account stays on ${err.from}: it mirrors ${err.subscriptions} subscription(s) from it (delete ${dataDir} for a fresh demo on ${demoProvider}).`;
      demoProvider = err.from;
      await saveProviderConnection(demo.accountId, connectionOf(demoProvider));
    }
    // The dashboard is built here when its sources changed (a few seconds; nothing when they did not), so
    // `npm start` serves /app/ with no extra command.
    if (options.buildDashboard ?? true) await ensureDashboard();
    const gateway = await startGateway({
      port: options.port ?? 3000,
      ...(options.publicBaseUrl ? { publicBaseUrl: options.publicBaseUrl } : {}),
    });
    stops.push(gateway.close);
    // Each emulator delivers to the demo account's intake of its kind (the other kinds answer 404).
    for (const emulator of emulators)
      emulator.setWebhookUrl(`${gateway.url}/webhooks/${definitionOf(emulator.kind).webhook.path}/${demo.accountId}/`);
    // The payout rails: with connectDemoRails, the demo account is connected to each rail's emulator (its fixed
    // local credentials; a connection to anything but a local emulator is left as it is); each emulator delivers to the
    // demo's intake of its rail (docs/payouts.md "Webhooks"): Stripe's Connect side to /webhooks/stripe-connect/.
    const railEmulators: [RailKind, RailConnection][] = [
      ['paypal', paypalRail.connection],
      [
        'stripe',
        {
          apiUrl: stripe.url,
          credentials: {
            secret_key: stripe.secretKey,
            webhook_secret: stripe.connect.webhookSecret,
            connect_webhook_secret: stripe.connect.connectWebhookSecret,
          },
        },
      ],
      ['wise', wiseRail.connection],
    ];
    if (options.connectDemoRails) {
      const connectedRails = await railConnections(demo.accountId);
      for (const [kind, connection] of railEmulators) {
        const existing = connectedRails.find((c) => c.kind === kind);
        if (!existing || isLocalUrl(existing.api_url)) await saveRailConnection(demo.accountId, kind, connection);
      }
    }
    paypalRail.setWebhookUrl(`${gateway.url}/webhooks/paypal/${demo.accountId}/`);
    wiseRail.setWebhookUrl(`${gateway.url}/webhooks/wise/${demo.accountId}/`);
    stripe.connect.setWebhookUrl(`${gateway.url}/webhooks/stripe-connect/${demo.accountId}/`);
    // One background sync at start: whatever the emulator did while the service was down is caught up.
    const backfill = scheduledJobs.find((j) => j.name === 'ProviderBackfill');
    if (backfill) await runScheduledJob(backfill);
    // Where it runs, for the CLIs (./runtime-file.ts): removed first when it stops.
    writeRuntimeFile(dataDir, {
      api_url: gateway.url,
      dynamodb_endpoint: dynamo.endpoint,
      sqs_endpoint: sqs.endpoint,
      paddle_url: paddle.url,
      paddle_billing_url: paddleBilling.url,
      stripe_url: stripe.url,
      paypal_url: paypalRail.url,
      wise_url: wiseRail.url,
      emulator_urls: Object.fromEntries(emulators.map((e) => [e.kind, e.url])),
    });
    stops.push(async () => removeRuntimeFile(dataDir));
    return {
      url: gateway.url,
      dynamodbEndpoint: dynamo.endpoint,
      sqsEndpoint: sqs.endpoint,
      paddle,
      paddleBilling,
      stripe,
      paypal: paypalRail.handle,
      wise: wiseRail.handle,
      emulators,
      dataDir,
      demo,
      demoCreated: created,
      demoProvider,
      demoProviderNote,
      workers,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

export type DashboardBuilder = (options: { onBuildStart?: () => void }) => Promise<{ built: boolean }>;

/** web/build.ts's ensureWebBuilt: nothing when web/dist matches the sources. */
const webBuilder: DashboardBuilder = async (options) => {
  // Loaded at run time (web/ has its own tsconfig; its build script pulls in Vite only when it builds).
  const build = (await import(join(__dirname, '..', '..', 'web', 'build'))) as { ensureWebBuilt: DashboardBuilder };
  return build.ensureWebBuilt(options);
};

/**
 * Builds the dashboard when its sources changed. A first start builds it for about a minute: the line
 * before the build says so (nothing is printed when no build runs).
 */
export async function ensureDashboard(builder: DashboardBuilder = webBuilder): Promise<void> {
  const started = Date.now();
  const { built } = await builder({ onBuildStart: () => log('info', 'building the dashboard (first start only)…') });
  if (built) log('info', `dashboard built in ${((Date.now() - started) / 1000).toFixed(1)} s`);
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
  // One request's failure never ends `npm start` (DynamoDB Local and the queued messages live in this
  // process): the gateway answers it 500, and anything thrown outside a request is logged, not fatal.
  process.on('uncaughtException', (err) => log('error', 'uncaught exception (the service keeps running)', errorFields(err, true)));
  process.on('unhandledRejection', (err) => log('error', 'unhandled rejection (the service keeps running)', errorFields(err, true)));
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
      paddleBillingPort: portFromEnv('PADDLE_BILLING_PORT', 8026),
      stripePort: portFromEnv('STRIPE_PORT', 12111),
      // Emulators added later: `<KIND>_PORT` (CHARGEBEE_PORT), else their own EMULATOR_PORT.
      emulatorPorts: Object.fromEntries(
        PROVIDER_KINDS.flatMap((kind) => {
          const name = `${kind.toUpperCase().replace(/-/g, '_')}_PORT`;
          return process.env[name] ? [[kind, portFromEnv(name, 0)]] : [];
        }),
      ),
      paypalPort: portFromEnv('PAYPAL_PORT', 12131),
      wisePort: portFromEnv('WISE_PORT', 12121),
      demoProvider: demoProviderFromEnv(),
      connectDemoRails: process.env.DEMO_RAILS !== '0',
      // The workers in a process of their own: two event loops, as in AWS each function is its own Lambda.
      workersProcess: true,
      ...(process.env.PUBLIC_BASE_URL ? { publicBaseUrl: process.env.PUBLIC_BASE_URL } : {}),
    });
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
  const {
    url,
    dynamodbEndpoint,
    sqsEndpoint,
    paddle,
    paddleBilling,
    stripe,
    paypal,
    wise,
    dataDir,
    demo,
    demoCreated,
    demoProvider,
    demoProviderNote,
  } = runtime;
  console.log(`Refloop API      ${url}`);
  console.log(`DynamoDB Local   ${dynamodbEndpoint} (data in ${dataDir})`);
  console.log(`Local SQS        ${sqsEndpoint} (queues: ${QUEUE_NAMES.join(', ')}, and their DLQs)`);
  console.log(`Member emails    ${join(dataDir, 'outbox')} (one .eml file per message)`);
  console.log(`Paddle emulator  ${paddle.url} (Classic, vendor ${paddle.vendorId})`);
  console.log(`Paddle Billing   ${paddleBilling.url} (emulator; API key ${paddleBilling.apiKey})`);
  // The rail CLIs find a non-default emulator through DATA_DIR/runtime.json; the URL variable says it anyway.
  const railCli = (variable: string, url: string, fallback: string, cli: string) =>
    `${url === fallback ? '' : `${variable}=${url} `}npm run --silent ${cli}`;
  console.log(
    `Stripe           ${stripe.url} (emulator; secret key ${stripe.secretKey}; Connect: \`${railCli('STRIPE_EMULATOR_URL', stripe.url, 'http://127.0.0.1:12111', 'stripe -- connect-state')}\`)`,
  );
  console.log(
    `PayPal Payouts   ${paypal.url} (rail emulator; client id ${paypal.clientId}; \`${railCli('PAYPAL_EMULATOR_URL', paypal.url, 'http://127.0.0.1:12131', 'paypal -- help')}\`)`,
  );
  console.log(
    `Wise             ${wise.url} (rail emulator; profile ${wise.profileId}; \`${railCli('WISE_EMULATOR_URL', wise.url, 'http://127.0.0.1:12121', 'wise -- help')}\`)`,
  );
  console.log(
    `Demo account     ${demo.accountId}${demoCreated ? ' (created now)' : ''}, connected to ${demoProvider} (DEMO_PROVIDER=${PROVIDER_KINDS.join('|')})`,
  );
  if (demoProviderNote) console.log(demoProviderNote);
  console.log(`Demo API key     ${demo.apiKey}`);
  console.log(`Publishable key  ${demo.publishableKey}`);
  console.log(`Script tag       <script src="${url}/js/refloop.js" data-key="${demo.publishableKey}" async></script>`);
  console.log('');
  const link = await demoLoginLink(runtime);
  console.log(`Dashboard        ${url}/app/ (log in as ${demo.ownerEmail}; login links land in ${join(dataDir, 'outbox')})`);
  console.log(`Login link       ${link.url} (works once, for 15 minutes)`);
  console.log('');
  console.log(`Try: curl -H "Authorization: Bearer ${demo.apiKey}" ${url}/v1/campaigns/`);
  // The CLI's defaults match `npm start`'s; anything else has to be passed on.
  // (PORT for the links it prints, DATA_DIR for the secrets key file and the outbox: the CLI refuses to
  // write a provider secret with another key file than this service's.)
  const cliEnv = [
    dynamodbEndpoint === 'http://127.0.0.1:8000' ? '' : `DYNAMODB_ENDPOINT=${dynamodbEndpoint} `,
    tableName === 'refloop' ? '' : `TABLE_NAME=${tableName} `,
    new URL(url).port === '3000' ? '' : `PORT=${new URL(url).port} `,
    dataDir === resolve('.data') ? '' : `DATA_DIR=${dataDir} `,
    sqsEndpoint === 'http://127.0.0.1:9324' ? '' : `SQS_ENDPOINT=${sqsEndpoint} `,
    !process.env.SECRETS_KEY_FILE || resolve(process.env.SECRETS_KEY_FILE) === join(dataDir, 'secrets.key')
      ? ''
      : `SECRETS_KEY_FILE=${process.env.SECRETS_KEY_FILE} `,
  ].join('');
  console.log(`Accounts and keys: ${cliEnv}npm run --silent admin -- account create --name <name>`);
  const paddleEnv = paddle.url === 'http://127.0.0.1:8025' ? '' : `PADDLE_EMULATOR_URL=${paddle.url} `;
  // An emulator that prints its own checkout command (RunningEmulator.checkoutCommand) needs no entry here.
  const simulate: Partial<Record<ProviderKind, string>> = {
    'paddle-classic': `${paddleEnv}npm run --silent paddle -- checkout --plan 9001 --email buyer@example.com`,
    'paddle-billing': `${paddleBilling.url === 'http://127.0.0.1:8026' ? '' : `PADDLE_BILLING_EMULATOR_URL=${paddleBilling.url} `}npm run --silent paddle-billing -- checkout --email buyer@example.com`,
    stripe: `${stripe.url === 'http://127.0.0.1:12111' ? '' : `STRIPE_EMULATOR_URL=${stripe.url} `}npm run --silent stripe -- checkout --email buyer@example.com`,
  };
  const checkoutCommand = simulate[demoProvider] ?? runtime.emulators.find((e) => e.kind === demoProvider)?.checkoutCommand;
  if (checkoutCommand) console.log(`Simulate a checkout: ${checkoutCommand}`);
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
