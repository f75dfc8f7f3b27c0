// An account's payment-provider connection: one provider at a time (docs/design/providers.md "Connecting an account").
// Items, written in one transaction:
// - `A#<acct>#PROVIDER` / `PADDLE` (the sk is historical: the account's one provider slot, whatever the
//   kind): `provider` ('paddle' = Paddle Classic, as always; 'paddle-billing'; 'stripe') and the public
//   settings (Classic: vendor id, public key, API base URLs; the others: the API URL). Read by the intakes.
// - `A#<acct>#PROVIDER_SECRET`: the secret that calls the provider's API (Classic auth code, Billing API
//   key, Stripe secret key), under its own partition key so IAM denies it (dynamodb:LeadingKeys) to every
//   function that does not call the provider.
// - `A#<acct>#PROVIDER_WEBHOOK_SECRET` (Billing and Stripe): the secret that verifies their webhooks, in a
//   partition of its own that only their intake routes may read (the intake never holds the API key).
// - `PROVIDER_ACCOUNTS#paddle` / `<acct>`: the registry the background sync pages through (no Scan).
// Secrets are never logged and never returned by any API. Both secret items hold them encrypted
// (shared/secrets: `kms:v1:` in AWS, `local:v1:` under `npm start` and in tests), bound to the account id:
// saveProviderConnection encrypts, connectionFrom and getWebhookSettings decrypt. A value written in plain
// text before encryption existed (legacy) is read as it is and comes back encrypted on the next
// saveProviderConnection of the account (the dashboard's provider form or the CLI's set-* commands), which
// rewrites both secret items whole.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { clearSecretCache, decryptSecret, encryptSecret } from '../secrets';
import { db, tableName } from './client';
import type { ProviderKind } from '../billing/port';
import { batchGet, ConditionsFailedError, getItem, lookup, transact, type TransactItem } from './ops';
import { keys } from './table';

export const DEFAULT_VENDORS_API_URL = 'https://vendors.paddle.com/api';
export const DEFAULT_CHECKOUT_API_URL = 'https://checkout.paddle.com/api';

export interface ProviderSettings {
  vendorId: number;
  publicKey: string;
  vendorsApiUrl: string;
  checkoutApiUrl: string;
}

export interface ProviderCredentials extends ProviderSettings {
  authCode: string;
}

/** Every kind of connection; Classic's keeps the shape its callers have always used. */
export type ProviderConnection =
  | ({ kind: 'paddle-classic' } & ProviderCredentials)
  // The webhook secret is given when connecting; reads for the API (connectionFrom) never carry it.
  | { kind: 'paddle-billing'; apiUrl: string; apiKey: string; webhookSecret?: string }
  | { kind: 'stripe'; apiUrl: string; secretKey: string; webhookSecret?: string };

/** An account's connection without its API secret (the webhook secret included): what an intake needs. */
export type WebhookSettings = { kind: Exclude<ProviderKind, 'paddle-classic'>; webhookSecret: string };

/** Switching an account that already mirrors subscriptions to another provider kind (exit 1 in the CLI). */
export class ProviderSwitchRefusedError extends Error {
  constructor(readonly from: ProviderKind, readonly to: ProviderKind, readonly subscriptions: number) {
    super(
      `refused: the account is connected to ${from} and mirrors ${subscriptions} subscription(s) from it; ` +
        `switching to ${to} would mix two providers' ids (connect a new account for ${to})`,
    );
    this.name = 'ProviderSwitchRefusedError';
  }
}

export class UnknownProviderAccountError extends Error {
  constructor(accountId: string) {
    super(`Account ${accountId} does not exist`);
  }
}

/** Creates or replaces the account's Paddle Classic settings (the account must exist). */
export async function saveProviderSettings(accountId: string, settings: ProviderCredentials): Promise<void> {
  await saveProviderConnection(accountId, { kind: 'paddle-classic', ...settings });
}

const STORED_KIND: Record<ProviderKind, string> = { 'paddle-classic': 'paddle', 'paddle-billing': 'paddle-billing', stripe: 'stripe' };

function kindOf(item: Record<string, unknown> | undefined): ProviderKind | null {
  if (!item || item.type !== 'ProviderSettings') return null;
  if (item.provider === 'paddle-billing' || item.provider === 'stripe') return item.provider;
  return 'paddle-classic';
}

/**
 * Creates or replaces the account's connection (the account must exist). Rotating the same kind's secrets
 * is always allowed; switching to another kind is refused while the account mirrors subscriptions
 * (ProviderSwitchRefusedError). The settings Put is conditioned on the kind read, so a concurrent switch
 * cannot slip between the check and the write.
 */
export async function saveProviderConnection(accountId: string, conn: ProviderConnection): Promise<void> {
  if (conn.kind !== 'paddle-classic' && !conn.webhookSecret) throw new Error(`a ${conn.kind} connection needs its webhook secret`);
  const now = Math.floor(Date.now() / 1000);
  const found = await batchGet([keys.providerSettings(accountId), keys.counter(accountId, 'subscriptions')]);
  const current = lookup(found, keys.providerSettings(accountId));
  const currentKind = kindOf(current);
  const mirrored = Number(lookup(found, keys.counter(accountId, 'subscriptions'))?.n ?? 0);
  if (currentKind !== null && currentKind !== conn.kind && mirrored > 0) throw new ProviderSwitchRefusedError(currentKind, conn.kind, mirrored);

  const publicPart =
    conn.kind === 'paddle-classic'
      ? { vendor_id: conn.vendorId, public_key: conn.publicKey, vendors_api_url: conn.vendorsApiUrl, checkout_api_url: conn.checkoutApiUrl }
      : { api_url: conn.apiUrl };
  // Encrypted once the write is known to be allowed (no KMS call for a refused switch), both at once.
  const [apiSecret, webhookSecret] = await Promise.all([
    encryptSecret(accountId, conn.kind === 'paddle-classic' ? conn.authCode : conn.kind === 'paddle-billing' ? conn.apiKey : conn.secretKey),
    conn.kind === 'paddle-classic' ? null : encryptSecret(accountId, conn.webhookSecret as string),
  ]);
  const secretPart = conn.kind === 'paddle-classic' ? { auth_code: apiSecret } : conn.kind === 'paddle-billing' ? { api_key: apiSecret } : { secret_key: apiSecret };
  const settingsPut: TransactItem = {
    Put: {
      TableName: tableName(),
      Item: { ...keys.providerSettings(accountId), type: 'ProviderSettings', provider: STORED_KIND[conn.kind], ...publicPart, updated_at: now },
      ...(current
        ? { ConditionExpression: '#p = :p', ExpressionAttributeNames: { '#p': 'provider' }, ExpressionAttributeValues: { ':p': current.provider } }
        : { ConditionExpression: 'attribute_not_exists(pk)' }),
    },
  };
  const webhookItem: TransactItem =
    conn.kind === 'paddle-classic'
      ? { Delete: { TableName: tableName(), Key: keys.providerWebhookSecret(accountId) } }
      : { Put: { TableName: tableName(), Item: { ...keys.providerWebhookSecret(accountId), type: 'ProviderSecret', webhook_secret: webhookSecret as string, updated_at: now } } };
  try {
    await transact([
      { ConditionCheck: { TableName: tableName(), Key: keys.account(accountId), ConditionExpression: 'attribute_exists(pk)' } },
      settingsPut,
      { Put: { TableName: tableName(), Item: { ...keys.providerSecret(accountId), type: 'ProviderSecret', ...secretPart, updated_at: now } } },
      webhookItem,
      { Put: { TableName: tableName(), Item: { ...keys.providerAccount(accountId), type: 'ProviderAccount', account_id: accountId, updated_at: now } } },
      // A switch of kinds also re-checks, in the same transaction, that nothing was mirrored meanwhile.
      ...(currentKind !== null && currentKind !== conn.kind
        ? [{ ConditionCheck: { TableName: tableName(), Key: keys.counter(accountId, 'subscriptions'), ConditionExpression: 'attribute_not_exists(pk) OR n <= :zero', ExpressionAttributeValues: { ':zero': 0 } } }]
        : []),
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError && err.failed(0)) throw new UnknownProviderAccountError(accountId);
    if (err instanceof ConditionsFailedError && (err.failed(1) || err.failed(5))) throw new Error("the account's provider or its subscriptions changed meanwhile; run the command again");
    throw err;
  }
  cache.delete(accountId);
  webhookCache.delete(accountId);
}

/** Classic's public settings; null for an account connected to another kind (its Classic intake answers 404). */
function toSettings(item: Record<string, unknown> | undefined): ProviderSettings | null {
  if (kindOf(item) !== 'paddle-classic' || !item) return null;
  return {
    vendorId: Number(item.vendor_id),
    publicKey: String(item.public_key),
    vendorsApiUrl: String(item.vendors_api_url),
    checkoutApiUrl: String(item.checkout_api_url),
  };
}

const cache = new Map<string, { settings: ProviderSettings | null; until: number }>();

/**
 * The account's public provider settings, cached in the container for PROVIDER_CACHE_TTL_SECONDS
 * (the webhook intake then costs no DynamoDB round trip). An account without settings (or an unknown
 * account) is cached as null too, so a flood of alerts for a bad id costs one read per TTL.
 */
export async function getProviderSettings(accountId: string): Promise<ProviderSettings | null> {
  const ttl = config().providerCacheTtlSeconds * 1000;
  const hit = cache.get(accountId);
  if (hit && hit.until > Date.now()) return hit.settings;
  const settings = toSettings(await getItem(keys.providerSettings(accountId), false));
  if (ttl > 0) {
    if (cache.size > 1000) cache.clear();
    cache.set(accountId, { settings, until: Date.now() + ttl });
  }
  return settings;
}

/** The keys to add to a BatchGet to read an account's credentials along with other items. */
export const credentialKeys = (accountId: string) => [keys.providerSettings(accountId), keys.providerSecret(accountId)];

/** Classic settings plus the auth code, for the vendor API (conversion and workers only). One BatchGet. */
export async function getProviderCredentials(accountId: string): Promise<ProviderCredentials | null> {
  return credentialsFrom(await batchGet(credentialKeys(accountId)), accountId);
}

/** Classic credentials out of a BatchGet result that included `credentialKeys(accountId)` (auth code decrypted). */
export async function credentialsFrom(found: Map<string, Record<string, unknown>>, accountId: string): Promise<ProviderCredentials | null> {
  const conn = await connectionFrom(found, accountId);
  if (conn?.kind !== 'paddle-classic') return null;
  const { kind: _kind, ...creds } = conn;
  return creds;
}

/**
 * The connection (without the webhook secret, which the API callers never read: IAM denies it to them)
 * out of a BatchGet result that included `credentialKeys(accountId)`, its API secret decrypted (a KMS
 * Decrypt on a cold container, then cached for PROVIDER_CACHE_TTL_SECONDS); null when not connected.
 */
export async function connectionFrom(found: Map<string, Record<string, unknown>>, accountId: string): Promise<ProviderConnection | null> {
  const item = lookup(found, keys.providerSettings(accountId));
  const secret = lookup(found, keys.providerSecret(accountId));
  const kind = kindOf(item);
  if (!item || !kind || !secret) return null;
  if (kind === 'paddle-classic') {
    const settings = toSettings(item);
    return settings && typeof secret.auth_code === 'string' ? { kind, ...settings, authCode: await decryptSecret(accountId, secret.auth_code) } : null;
  }
  const apiUrl = String(item.api_url);
  if (kind === 'paddle-billing') return typeof secret.api_key === 'string' ? { kind, apiUrl, apiKey: await decryptSecret(accountId, secret.api_key) } : null;
  return typeof secret.secret_key === 'string' ? { kind, apiUrl, secretKey: await decryptSecret(accountId, secret.secret_key) } : null;
}

/** The account's connection, for the provider's API (conversion and workers only). One BatchGet. */
export async function getProviderConnection(accountId: string): Promise<ProviderConnection | null> {
  return connectionFrom(await batchGet(credentialKeys(accountId)), accountId);
}

const webhookCache = new Map<string, { settings: WebhookSettings | null; until: number }>();

/**
 * What the Billing and Stripe intakes need: the connection's kind and its webhook secret (one BatchGet of
 * the settings and the webhook secret item, never the API secret; the secret decrypted), cached in the
 * container for PROVIDER_CACHE_TTL_SECONDS like Classic's public key, so a warm intake makes neither a
 * DynamoDB nor a KMS call; null for an account without such a connection.
 */
export async function getWebhookSettings(accountId: string): Promise<WebhookSettings | null> {
  const ttl = config().providerCacheTtlSeconds * 1000;
  const hit = webhookCache.get(accountId);
  if (hit && hit.until > Date.now()) return hit.settings;
  const found = await batchGet([keys.providerSettings(accountId), keys.providerWebhookSecret(accountId)]);
  const kind = kindOf(lookup(found, keys.providerSettings(accountId)));
  const secret = lookup(found, keys.providerWebhookSecret(accountId))?.webhook_secret;
  const settings = kind && kind !== 'paddle-classic' && typeof secret === 'string' ? { kind, webhookSecret: await decryptSecret(accountId, secret) } : null;
  if (ttl > 0) {
    if (webhookCache.size > 1000) webhookCache.clear();
    webhookCache.set(accountId, { settings, until: Date.now() + ttl });
  }
  return settings;
}

/** One page of the accounts with provider settings (the backfill's list). */
export async function listProviderAccounts(startKey?: Record<string, unknown>): Promise<{ accountIds: string[]; next?: Record<string, unknown> }> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': keys.providerAccounts() },
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      Limit: 500,
    }),
  );
  return { accountIds: (out.Items ?? []).map((i) => String(i.account_id)), ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}) };
}

/** Empties the container's caches of provider settings, webhook settings and decrypted secrets (tests). */
export function clearProviderCache(): void {
  cache.clear();
  webhookCache.clear();
  clearSecretCache();
}
