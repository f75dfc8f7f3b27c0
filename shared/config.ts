// Environment -> typed configuration, read once per container. Handlers never read process.env:
// they receive what they need from here through shared/http and shared/store.

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
  queueUrls: { 'provider-events': string | undefined; rewards: string | undefined; 'member-emails': string | undefined; 'email-events': string | undefined };
  /** Timeout of one call to the payment provider (milliseconds). */
  providerTimeoutMs: number;
  /** How long provider settings (public key, vendor id, URLs) stay cached in the container (seconds). */
  providerCacheTtlSeconds: number;
  /** Member emails are written as .eml files here instead of being sent through SES (`npm start`, tests). */
  emailOutboxDir: string | undefined;
  /** SES configuration set whose events (bounces, complaints) reach the email-events queue. */
  sesConfigurationSet: string | undefined;
  /** Sender of member emails for an account without its own (`account set-email`). */
  emailDefaultFrom: { address: string; name: string };
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
      'member-emails': env.MEMBER_EMAILS_QUEUE_URL || undefined,
      'email-events': env.EMAIL_EVENTS_QUEUE_URL || undefined,
    },
    providerTimeoutMs: integer('PROVIDER_TIMEOUT_MS', env.PROVIDER_TIMEOUT_MS, 4000),
    providerCacheTtlSeconds: integer('PROVIDER_CACHE_TTL_SECONDS', env.PROVIDER_CACHE_TTL_SECONDS, 60),
    emailOutboxDir: env.EMAIL_OUTBOX_DIR || undefined,
    sesConfigurationSet: env.SES_CONFIGURATION_SET || undefined,
    emailDefaultFrom: {
      address: env.EMAIL_DEFAULT_FROM || 'no-reply@refloop.local',
      name: env.EMAIL_DEFAULT_FROM_NAME || 'Refloop',
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
