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
import { config } from '../config';
import { clearSecretCache, decryptSecret, encryptSecret } from '../secrets';
import { tableName } from './client';
import type { ProviderDefinition } from '../billing/definition';
import {
  definitionOf,
  definitionOfStored,
  LEGACY_PROVIDER,
  type LegacyConnection,
  type ProviderConnection,
  type ProviderKind,
} from '../billing/registry';
import { batchGet, canonicalJson, ConditionsFailedError, getItem, lookup, transact, type TransactItem } from './ops';
import { counterKeys, sumOf } from './shards';
import { keys, providerSecretKey, providerWebhookSecretKey, providerRegistryKeys } from './table';

export type { ProviderConnection } from '../billing/registry';

/** Paddle Classic's credentials, in the shape its callers have always used (saveProviderSettings, ...). */
export type ProviderCredentials = Omit<LegacyConnection, 'kind'>;
/** The same without the auth code: what its alert intake reads. */
export type ProviderSettings = Omit<ProviderCredentials, 'authCode'>;

/** An account's connection without its API secret (the webhook secret included): what an intake needs. */
export type WebhookSettings = { kind: ProviderKind; webhookSecret: string };

/** Switching an account that already mirrors subscriptions to another provider kind (exit 1 in the CLI). */
export class ProviderSwitchRefusedError extends Error {
  constructor(
    readonly from: ProviderKind,
    readonly to: ProviderKind,
    readonly subscriptions: number,
  ) {
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
  await saveProviderConnection(accountId, { kind: LEGACY_PROVIDER.kind, ...settings } as ProviderConnection);
}

const kindOf = (item: Record<string, unknown> | undefined): ProviderKind | null =>
  (definitionOfStored(item)?.kind as ProviderKind | undefined) ?? null;

/**
 * Creates or replaces the account's connection (the account must exist). Rotating the same kind's secrets
 * is always allowed; switching to another kind is refused while the account mirrors subscriptions
 * (ProviderSwitchRefusedError). The settings Put is conditioned on the kind read, so a concurrent switch
 * cannot slip between the check and the write.
 */
export async function saveProviderConnection(accountId: string, conn: ProviderConnection): Promise<void> {
  const definition = definitionOf(conn.kind);
  const stored = definition.toStored(conn);
  if (definition.webhook.key === 'webhook-secret' && !stored.webhookSecret)
    throw new Error(`a ${conn.kind} connection needs its webhook secret`);
  const now = Math.floor(Date.now() / 1000);
  // The subscriptions counter is sharded (store/shards.ts): its items ride along, summed.
  const counted = counterKeys(accountId, 'subscriptions');
  const found = await batchGet([keys.providerSettings(accountId), ...counted]);
  const current = lookup(found, keys.providerSettings(accountId));
  const currentKind = kindOf(current);
  const shards = counted.map((key) => ({ key, n: lookup(found, key)?.n }));
  const mirrored = sumOf(shards);
  if (currentKind !== null && currentKind !== conn.kind && mirrored > 0)
    throw new ProviderSwitchRefusedError(currentKind, conn.kind, mirrored);

  // Encrypted once the write is known to be allowed (no KMS call for a refused switch), both at once.
  const [apiSecret, webhookSecret] = await Promise.all([
    encryptSecret(accountId, stored.apiSecret),
    stored.webhookSecret === null ? null : encryptSecret(accountId, stored.webhookSecret),
  ]);
  const settingsPut: TransactItem = {
    Put: {
      TableName: tableName(),
      Item: {
        ...keys.providerSettings(accountId),
        type: 'ProviderSettings',
        provider: definition.storedKind,
        ...stored.settings,
        updated_at: now,
      },
      ...(current
        ? {
            ConditionExpression: '#p = :p',
            ExpressionAttributeNames: { '#p': 'provider' },
            ExpressionAttributeValues: { ':p': current.provider },
          }
        : { ConditionExpression: 'attribute_not_exists(pk)' }),
    },
  };
  const webhookItem: TransactItem =
    webhookSecret === null
      ? { Delete: { TableName: tableName(), Key: providerWebhookSecretKey(accountId) } }
      : {
          Put: {
            TableName: tableName(),
            Item: { ...providerWebhookSecretKey(accountId), type: 'ProviderSecret', webhook_secret: webhookSecret, updated_at: now },
          },
        };
  try {
    await transact([
      { ConditionCheck: { TableName: tableName(), Key: keys.account(accountId), ConditionExpression: 'attribute_exists(pk)' } },
      settingsPut,
      {
        Put: {
          TableName: tableName(),
          Item: { ...providerSecretKey(accountId), type: 'ProviderSecret', [definition.apiSecretAttribute]: apiSecret, updated_at: now },
        },
      },
      webhookItem,
      {
        Put: {
          TableName: tableName(),
          Item: { ...providerRegistryKeys.providerAccount(accountId), type: 'ProviderAccount', account_id: accountId, updated_at: now },
        },
      },
      // A switch of kinds also re-checks, in the same transaction, that nothing was mirrored meanwhile: every
      // shard of the counter still holds what was read (a condition sees one item, never the sum).
      ...(currentKind !== null && currentKind !== conn.kind
        ? shards.map(
            ({ key, n }): TransactItem => ({
              ConditionCheck: {
                TableName: tableName(),
                Key: key,
                ...(n === undefined
                  ? { ConditionExpression: 'attribute_not_exists(pk)' }
                  : { ConditionExpression: 'n = :n', ExpressionAttributeValues: { ':n': n } }),
              },
            }),
          )
        : []),
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError && err.failed(0)) throw new UnknownProviderAccountError(accountId);
    if (err instanceof ConditionsFailedError && (err.failed(1) || err.codes.slice(5).includes('ConditionalCheckFailed')))
      throw new Error("the account's provider or its subscriptions changed meanwhile; run the command again");
    throw err;
  }
  cache.delete(accountId);
  webhookCache.delete(accountId);
}

/** Classic's public settings; null for an account connected to another kind (its Classic intake answers 404). */
function toSettings(item: Record<string, unknown> | null): ProviderSettings | null {
  if (!item || definitionOfStored(item) !== LEGACY_PROVIDER) return null;
  const { kind: _kind, authCode: _authCode, ...settings } = LEGACY_PROVIDER.fromStored(item, '') as LegacyConnection;
  return settings;
}

/** The public settings items (no secret in them), by account; null for an account without one. */
const cache = new Map<string, { item: Record<string, unknown> | null; until: number }>();

/**
 * The account's public provider settings item, cached in the container for PROVIDER_CACHE_TTL_SECONDS
 * (an intake whose key is public then costs no DynamoDB round trip). An account without settings (or an
 * unknown account) is cached as null too, so a flood of alerts for a bad id costs one read per TTL.
 */
async function settingsItem(accountId: string): Promise<Record<string, unknown> | null> {
  const ttl = config().providerCacheTtlSeconds * 1000;
  const hit = cache.get(accountId);
  if (hit && hit.until > Date.now()) return hit.item;
  const found = (await getItem(keys.providerSettings(accountId), false)) ?? null;
  const item = definitionOfStored(found ?? undefined) ? found : null;
  if (ttl > 0) {
    if (cache.size > 1000) cache.clear();
    cache.set(accountId, { item, until: Date.now() + ttl });
  }
  return item;
}

/** The account's Paddle Classic public settings (cached, see settingsItem); null when not connected to it. */
export async function getProviderSettings(accountId: string): Promise<ProviderSettings | null> {
  return toSettings(await settingsItem(accountId));
}

/** The keys to add to a BatchGet to read an account's credentials along with other items. */
export const credentialKeys = (accountId: string) => [keys.providerSettings(accountId), providerSecretKey(accountId)];

/** Classic settings plus the auth code, for the vendor API (conversion and workers only). One BatchGet. */
export async function getProviderCredentials(accountId: string): Promise<ProviderCredentials | null> {
  return credentialsFrom(await batchGet(credentialKeys(accountId)), accountId);
}

/** Classic credentials out of a BatchGet result that included `credentialKeys(accountId)` (auth code decrypted). */
export async function credentialsFrom(found: Map<string, Record<string, unknown>>, accountId: string): Promise<ProviderCredentials | null> {
  const conn = await connectionFrom(found, accountId);
  if (conn?.kind !== LEGACY_PROVIDER.kind) return null;
  const { kind: _kind, ...creds } = conn as LegacyConnection;
  return creds;
}

/**
 * The connection (without the webhook secret, which the API callers never read: IAM denies it to them)
 * out of a BatchGet result that included `credentialKeys(accountId)`, its API secret decrypted (a KMS
 * Decrypt on a cold container, then cached for PROVIDER_CACHE_TTL_SECONDS); null when not connected.
 */
export async function connectionFrom(found: Map<string, Record<string, unknown>>, accountId: string): Promise<ProviderConnection | null> {
  const item = lookup(found, keys.providerSettings(accountId));
  const secret = lookup(found, providerSecretKey(accountId));
  const definition = definitionOfStored(item);
  if (!item || !definition || !secret) return null;
  const apiSecret = secret[definition.apiSecretAttribute];
  return typeof apiSecret === 'string' ? definition.fromStored(item, await decryptSecret(accountId, apiSecret)) : null;
}

/** The account's connection, for the provider's API (conversion and workers only). One BatchGet. */
export async function getProviderConnection(accountId: string): Promise<ProviderConnection | null> {
  return connectionFrom(await batchGet(credentialKeys(accountId)), accountId);
}

/** A connection and the settings item it was read with (see getProviderConnectionCached). */
export interface CachedConnection {
  connection: ProviderConnection;
  /** The settings item as read: a reader compares it with the one it reads later (sameSettingsItem). */
  settings: Record<string, unknown>;
}

const connectionCache = new Map<string, { entry: CachedConnection; until: number }>();

/**
 * The account's connection, cached in the container for PROVIDER_CACHE_TTL_SECONDS, for the subscription-sync
 * worker's batches only: under a backlog every batch read the same two items again (a BatchGet waiting its
 * turn behind the batch writes, about a sixth of a batch's time on the local runtime). The batch checks the
 * cache is still good in a read it makes anyway (its LOAD BatchGet holds the settings item, compared with
 * sameSettingsItem): a connection changed, switched or removed meanwhile drops the entry, and the batch
 * acts on what it read. Not connected is never cached (a connection made now is seen by the next batch).
 * The API callers (conversion, credits, payouts) keep reading it fresh with getProviderConnection.
 */
export async function getProviderConnectionCached(accountId: string): Promise<CachedConnection | null> {
  const ttl = config().providerCacheTtlSeconds * 1000;
  const hit = connectionCache.get(accountId);
  if (hit && hit.until > Date.now()) return hit.entry;
  const found = await batchGet(credentialKeys(accountId));
  const connection = await connectionFrom(found, accountId);
  const settings = lookup(found, keys.providerSettings(accountId));
  if (!connection || !settings) {
    connectionCache.delete(accountId);
    return null;
  }
  const entry = { connection, settings };
  if (ttl > 0) {
    if (connectionCache.size > 1000) connectionCache.clear();
    connectionCache.set(accountId, { entry, until: Date.now() + ttl });
  }
  return entry;
}

/** Drops the account's cached connection (its settings changed, or a call with it failed). */
export function forgetProviderConnection(accountId: string): void {
  connectionCache.delete(accountId);
}

/** Whether two reads of a settings item found the same item (attribute order aside). */
export function sameSettingsItem(a: Record<string, unknown> | undefined, b: Record<string, unknown> | undefined): boolean {
  return a !== undefined && b !== undefined && canonicalJson(a) === canonicalJson(b);
}

const webhookCache = new Map<string, { settings: WebhookSettings | null; until: number }>();

/**
 * What the intakes of the kinds with a webhook secret (Billing, Stripe) need: the connection's kind and
 * its webhook secret (one BatchGet of the settings and the webhook secret item, never the API secret; the
 * secret decrypted), cached in the container for PROVIDER_CACHE_TTL_SECONDS like the public settings, so a
 * warm intake makes neither a DynamoDB nor a KMS call; null for an account without such a connection.
 */
export async function getWebhookSettings(accountId: string): Promise<WebhookSettings | null> {
  const ttl = config().providerCacheTtlSeconds * 1000;
  const hit = webhookCache.get(accountId);
  if (hit && hit.until > Date.now()) return hit.settings;
  const found = await batchGet([keys.providerSettings(accountId), providerWebhookSecretKey(accountId)]);
  const definition = definitionOfStored(lookup(found, keys.providerSettings(accountId)));
  const secret = lookup(found, providerWebhookSecretKey(accountId))?.webhook_secret;
  const settings =
    definition && definition.webhook.key === 'webhook-secret' && typeof secret === 'string'
      ? { kind: definition.kind as ProviderKind, webhookSecret: await decryptSecret(accountId, secret) }
      : null;
  if (ttl > 0) {
    if (webhookCache.size > 1000) webhookCache.clear();
    webhookCache.set(accountId, { settings, until: Date.now() + ttl });
  }
  return settings;
}

/**
 * The key that verifies the account's webhooks from `definition`'s provider, or null when the account is
 * not connected to it (its intake answers 404): a public key from the settings item (one GetItem), or the
 * webhook secret (one BatchGet, never the API secret); cached either way, so a warm intake reads nothing.
 */
export async function getWebhookKey(accountId: string, definition: ProviderDefinition<ProviderConnection>): Promise<string | null> {
  if (definition.webhook.key === 'settings') {
    const item = await settingsItem(accountId);
    return item && definitionOfStored(item) === definition ? (definition.webhook.keyFromSettings?.(item) ?? null) : null;
  }
  const settings = await getWebhookSettings(accountId);
  return settings && settings.kind === definition.kind ? settings.webhookSecret : null;
}

// The registry's list (listProviderAccounts) is ./provider-accounts.ts, which needs no provider definition.
export { listProviderAccounts } from './provider-accounts';

/** Empties the container's caches of provider settings, webhook settings and decrypted secrets (tests). */
export function clearProviderCache(): void {
  cache.clear();
  webhookCache.clear();
  connectionCache.clear();
  clearSecretCache();
}
