// Environment -> typed configuration, read once per container. Handlers never read process.env:
// they receive what they need from here through shared/http and shared/store.
import type { QueueName } from './queue/queues';

export interface Config {
  /** DynamoDB table holding every item (single-table design). */
  tableName: string;
  /** Endpoint override for DynamoDB Local; undefined in AWS. */
  dynamodbEndpoint: string | undefined;
  region: string;
  /** How long a resolved API key stays cached in the container (seconds). 0 disables the cache. */
  authCacheTtlSeconds: number;
  /** Public base URL for absolute pagination links; when unset the request's scheme and host are used. */
  publicBaseUrl: string | undefined;
  /** Endpoint override for the local SQS (`npm start`, tests); undefined in AWS. */
  sqsEndpoint: string | undefined;
  /** Queue URLs by queue name (see shared/queue/queues.ts); a function only gets the ones it sends to. */
  queueUrls: Record<QueueName, string | undefined>;
  /** Timeout of one call to the payment provider (milliseconds). */
  providerTimeoutMs: number;
  /** How long provider settings (public key, vendor id, URLs) stay cached in the container (seconds). */
  providerCacheTtlSeconds: number;
  webhooks: WebhookConfig;
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
    // DynamoDB Local accepts any region; a fixed default keeps the SDK from failing on a laptop.
    region: env.AWS_REGION || env.AWS_DEFAULT_REGION || 'us-east-1',
    authCacheTtlSeconds: integer('AUTH_CACHE_TTL_SECONDS', env.AUTH_CACHE_TTL_SECONDS, 60),
    publicBaseUrl,
    sqsEndpoint: env.SQS_ENDPOINT || undefined,
    queueUrls: {
      'provider-events': env.PROVIDER_EVENTS_QUEUE_URL || undefined,
      rewards: env.REWARDS_QUEUE_URL || undefined,
      'webhook-events': env.WEBHOOK_EVENTS_QUEUE_URL || undefined,
      'webhook-deliveries': env.WEBHOOK_DELIVERIES_QUEUE_URL || undefined,
    },
    providerTimeoutMs: integer('PROVIDER_TIMEOUT_MS', env.PROVIDER_TIMEOUT_MS, 4000),
    providerCacheTtlSeconds: integer('PROVIDER_CACHE_TTL_SECONDS', env.PROVIDER_CACHE_TTL_SECONDS, 60),
    webhooks: {
      allowLoopback: env.WEBHOOK_ALLOW_LOOPBACK === '1' || env.WEBHOOK_ALLOW_LOOPBACK === 'true',
      retryBaseSeconds: integer('WEBHOOK_RETRY_BASE_SECONDS', env.WEBHOOK_RETRY_BASE_SECONDS, 60),
      maxRetrySeconds: integer('WEBHOOK_RETRY_MAX_SECONDS', env.WEBHOOK_RETRY_MAX_SECONDS, 6 * 3600),
      giveUpSeconds: integer('WEBHOOK_GIVE_UP_SECONDS', env.WEBHOOK_GIVE_UP_SECONDS, 3 * 24 * 3600),
      timeoutMs: integer('WEBHOOK_TIMEOUT_MS', env.WEBHOOK_TIMEOUT_MS, 10_000),
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
