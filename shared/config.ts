import { join, resolve } from 'node:path';
import { DEFAULT_API_RATES, isPlan, PLANS, type Plan } from './domain/plans';

// Environment -> typed configuration, read once per container. Handlers never read process.env:
// they receive what they need from here through shared/http and shared/store.
import type { QueueName } from './queue/queues';

export interface Config {
  /** DynamoDB table holding every item (single-table design). */
  tableName: string;
  /** Endpoint override for DynamoDB Local; undefined in AWS. */
  dynamodbEndpoint: string | undefined;
  /**
   * DYNAMODB_LOCAL_CONNECTIONS: at most this many calls of this process in flight to a local DynamoDB
   * endpoint at once, the others wait in the client (0: the SDK's 50). Ignored for any other endpoint.
   * `npm start` sets 4 (infra/local/start.ts `localDynamoConnections`, docs/capacity.md).
   */
  dynamodbLocalConnections: number;
  region: string;
  /** How long a resolved API key stays cached in the container (seconds). 0 disables the cache. */
  authCacheTtlSeconds: number;
  /** How long a container remembers that a key is unknown or revoked (seconds); 0 turns it off. */
  authNegativeCacheSeconds: number;
  /** Failed authentications (unknown or revoked keys) allowed per client IP per minute; 0 turns the limit off. */
  authFailuresPerIpPerMinute: number;
  /**
   * The site's origin for absolute links and the CSRF check: PUBLIC_BASE_URL (the stack sets it on every
   * function), else the local gateway's `http://127.0.0.1:<PORT or 3000>`. Never a request's Host header.
   */
  publicBaseUrl: string;
  /** Endpoint override for the local SQS (`npm start`, tests); undefined in AWS. */
  sqsEndpoint: string | undefined;
  /** Queue URLs by queue name (see shared/queue/queues.ts); a function only gets the ones it sends to. */
  queueUrls: Record<QueueName, string | undefined>;
  /** Timeout of one call to the payment provider (milliseconds). */
  providerTimeoutMs: number;
  /**
   * PROVIDER_EVENTS_PER_RECORD=1: the subscription-sync worker applies each record on its own instead of the
   * batch path (functions/workers/subscription-sync.ts).
   */
  providerEventsPerRecord: boolean;
  /** How long provider settings (public key, vendor id, URLs) stay cached in the container (seconds). */
  providerCacheTtlSeconds: number;
  /** Public /js/v1/ endpoints: requests per minute per client IP and per publishable key; 0 turns a limit off. */
  jsRateLimits: { perIpPerMinute: number; perKeyPerMinute: number };
  /** The /v1/ API: requests per second per API key, by plan (over 10-second windows); 0 turns a plan's limit off. */
  apiRates: Record<Plan, number>;
  /** Member emails are written as .eml files here instead of being sent through SES (`npm start`, tests). */
  emailOutboxDir: string | undefined;
  /** SES configuration set whose events (bounces, complaints) reach the email-events queue. */
  sesConfigurationSet: string | undefined;
  /** Sender of member emails for an account without its own (`account set-email`). */
  emailDefaultFrom: { address: string; name: string };
  webhooks: WebhookConfig;
  secrets: SecretsConfig;
}

/** Encryption of provider secrets and webhook signing secrets at rest (shared/secrets/). */
export interface SecretsConfig {
  /** SECRETS_KMS_KEY_ID: the KMS key (ARN) that encrypts secrets; set by the stack only on the functions allowed it. */
  kmsKeyId: string | undefined;
  /** KMS_ENDPOINT: endpoint override for a local KMS (the tests' emulator); undefined in AWS. */
  kmsEndpoint: string | undefined;
  /** The local key file (absolute): SECRETS_KEY_FILE, else `<DATA_DIR or .data>/secrets.key`; unused when kmsKeyId is set. */
  keyFile: string;
  /** True when SECRETS_KEY_FILE names the file explicitly (a local key file is then allowed whatever the table). */
  keyFileExplicit: boolean;
  /** Running in Lambda (AWS_LAMBDA_FUNCTION_NAME): secrets need the KMS key, never a local file. */
  inLambda: boolean;
}

export interface WebhookConfig {
  /** Local mode: http:// and loopback addresses are allowed for endpoint URLs (never in AWS). */
  allowLoopback: boolean;
  /** First retry delay; each later one doubles, up to maxRetrySeconds. */
  retryBaseSeconds: number;
  maxRetrySeconds: number;
  /** A delivery is given up, and an endpoint failing without a success is disabled, after this long (3 days). */
  giveUpSeconds: number;
  /** One delivery attempt's HTTP timeout. */
  timeoutMs: number;
}

export class ConfigError extends Error {}

/** `starter=25,small=50` over the defaults: each named plan gets its rate (requests per second). */
function apiRates(raw: string | undefined): Record<Plan, number> {
  const rates: Record<Plan, number> = { ...DEFAULT_API_RATES };
  for (const part of (raw ?? '')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [plan, value] = part.split('=').map((x) => x.trim());
    const n = Number(value);
    if (!isPlan(plan) || value === undefined || value === '' || !Number.isInteger(n) || n < 0) {
      throw new ConfigError(
        `API_RATE_LIMITS must look like "starter=25,regular=50" (plans ${PLANS.join(', ')}; whole requests per second), got "${raw}"`,
      );
    }
    rates[plan] = n;
  }
  return rates;
}

function integer(name: string, raw: string | undefined, fallback: number): number {
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0) throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  return value;
}

export function readConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const publicBaseUrl = env.PUBLIC_BASE_URL?.replace(/\/+$/, '') || undefined;
  if (publicBaseUrl !== undefined && !/^https?:\/\/[^/]+/.test(publicBaseUrl)) {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute http(s) URL, got "${publicBaseUrl}"`);
  }
  return {
    tableName: env.TABLE_NAME || 'refloop',
    dynamodbEndpoint: env.DYNAMODB_ENDPOINT || undefined,
    dynamodbLocalConnections: integer('DYNAMODB_LOCAL_CONNECTIONS', env.DYNAMODB_LOCAL_CONNECTIONS, 0),
    // DynamoDB Local accepts any region; a fixed default keeps the SDK from failing on a laptop.
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    authCacheTtlSeconds: integer('AUTH_CACHE_TTL_SECONDS', env.AUTH_CACHE_TTL_SECONDS, 60),
    // A flood of unknown keys: each distinct key costs one GetItem, then nothing for 30 s; each IP gets
    // 60 failures a minute (a misconfigured client retrying is far below), then 429 without any read.
    authNegativeCacheSeconds: integer('AUTH_NEGATIVE_CACHE_SECONDS', env.AUTH_NEGATIVE_CACHE_SECONDS, 30),
    authFailuresPerIpPerMinute: integer('AUTH_FAILURES_PER_IP_PER_MINUTE', env.AUTH_FAILURES_PER_IP_PER_MINUTE, 60),
    publicBaseUrl: publicBaseUrl ?? `http://127.0.0.1:${integer('PORT', env.PORT, 3000)}`,
    sqsEndpoint: env.SQS_ENDPOINT || undefined,
    queueUrls: {
      'provider-events': env.PROVIDER_EVENTS_QUEUE_URL || undefined,
      rewards: env.REWARDS_QUEUE_URL || undefined,
      'member-emails': env.MEMBER_EMAILS_QUEUE_URL || undefined,
      'email-events': env.EMAIL_EVENTS_QUEUE_URL || undefined,
      'webhook-events': env.WEBHOOK_EVENTS_QUEUE_URL || undefined,
      'webhook-deliveries': env.WEBHOOK_DELIVERIES_QUEUE_URL || undefined,
      'payout-rails': env.PAYOUT_RAILS_QUEUE_URL || undefined,
      fraud: env.FRAUD_QUEUE_URL || undefined,
    },
    providerTimeoutMs: integer('PROVIDER_TIMEOUT_MS', env.PROVIDER_TIMEOUT_MS, 4000),
    providerEventsPerRecord: env.PROVIDER_EVENTS_PER_RECORD === '1',
    providerCacheTtlSeconds: integer('PROVIDER_CACHE_TTL_SECONDS', env.PROVIDER_CACHE_TTL_SECONDS, 60),
    // Per IP: a visitor makes a click and a signup; 120 a minute leaves room for offices behind one NAT.
    // Per key: 6,000 a minute (100/s) is far below one partition's write limit on the window item.
    jsRateLimits: {
      perIpPerMinute: integer('JS_RATE_LIMIT_PER_IP', env.JS_RATE_LIMIT_PER_IP, 120),
      perKeyPerMinute: integer('JS_RATE_LIMIT_PER_KEY', env.JS_RATE_LIMIT_PER_KEY, 6000),
    },
    apiRates: apiRates(env.API_RATE_LIMITS),
    emailOutboxDir: env.EMAIL_OUTBOX_DIR || undefined,
    sesConfigurationSet: env.SES_CONFIGURATION_SET || undefined,
    emailDefaultFrom: {
      address: env.EMAIL_DEFAULT_FROM || 'no-reply@refloop.local',
      name: env.EMAIL_DEFAULT_FROM_NAME || 'Refloop',
    },
    webhooks: {
      allowLoopback: env.WEBHOOK_ALLOW_LOOPBACK === '1' || env.WEBHOOK_ALLOW_LOOPBACK === 'true',
      retryBaseSeconds: integer('WEBHOOK_RETRY_BASE_SECONDS', env.WEBHOOK_RETRY_BASE_SECONDS, 60),
      maxRetrySeconds: integer('WEBHOOK_RETRY_MAX_SECONDS', env.WEBHOOK_RETRY_MAX_SECONDS, 6 * 3600),
      giveUpSeconds: integer('WEBHOOK_GIVE_UP_SECONDS', env.WEBHOOK_GIVE_UP_SECONDS, 3 * 24 * 3600),
      timeoutMs: integer('WEBHOOK_TIMEOUT_MS', env.WEBHOOK_TIMEOUT_MS, 10_000),
    },
    secrets: {
      kmsKeyId: env.SECRETS_KMS_KEY_ID || undefined,
      kmsEndpoint: env.KMS_ENDPOINT || undefined,
      keyFile: resolve(env.SECRETS_KEY_FILE || join(env.DATA_DIR || '.data', 'secrets.key')),
      keyFileExplicit: Boolean(env.SECRETS_KEY_FILE),
      inLambda: Boolean(env.AWS_LAMBDA_FUNCTION_NAME),
    },
  };
}

let cached: Config | undefined;

/** The container's configuration, read on first use and then kept (fails fast at cold start). */
export function config(): Config {
  cached ??= readConfig();
  return cached;
}

/** For tests and the local runtime, which set the environment before the first request. */
export function resetConfig(): void {
  cached = undefined;
}
