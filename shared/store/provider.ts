// Provider (Paddle Classic) settings per account. Three items, written in one transaction:
// - `A#<acct>#PROVIDER`: vendor id, public key and API base URLs (read by the webhook intake, cached);
// - `A#<acct>#PROVIDER_SECRET`: the vendor auth code, under its own partition key so IAM denies it
//   (dynamodb:LeadingKeys) to every function that does not call the vendor API;
// - `PROVIDER_ACCOUNTS#paddle` / `<acct>`: the registry the background sync pages through (no Scan).
// The auth code is never logged and never returned by any API.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '../config';
import { db, tableName } from './client';
import { batchGet, ConditionsFailedError, getItem, lookup, transact } from './ops';
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

export class UnknownProviderAccountError extends Error {
  constructor(accountId: string) {
    super(`Account ${accountId} does not exist`);
  }
}

/** Creates or replaces the account's Paddle settings (the account must exist). */
export async function saveProviderSettings(accountId: string, settings: ProviderCredentials): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  try {
    await transact([
      { ConditionCheck: { TableName: tableName(), Key: keys.account(accountId), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...keys.providerSettings(accountId),
            type: 'ProviderSettings',
            provider: 'paddle',
            vendor_id: settings.vendorId,
            public_key: settings.publicKey,
            vendors_api_url: settings.vendorsApiUrl,
            checkout_api_url: settings.checkoutApiUrl,
            updated_at: now,
          },
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: { ...keys.providerSecret(accountId), type: 'ProviderSecret', auth_code: settings.authCode, updated_at: now },
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: { ...keys.providerAccount(accountId), type: 'ProviderAccount', account_id: accountId, updated_at: now },
        },
      },
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError && err.failed(0)) throw new UnknownProviderAccountError(accountId);
    throw err;
  }
  cache.delete(accountId);
}

function toSettings(item: Record<string, unknown> | undefined): ProviderSettings | null {
  if (!item || item.type !== 'ProviderSettings') return null;
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

/** Settings plus the auth code, for the vendor API (conversion and workers only). One BatchGet. */
export async function getProviderCredentials(accountId: string): Promise<ProviderCredentials | null> {
  return credentialsFrom(await batchGet(credentialKeys(accountId)), accountId);
}

/** Credentials out of a BatchGet result that included `credentialKeys(accountId)`. */
export function credentialsFrom(found: Map<string, Record<string, unknown>>, accountId: string): ProviderCredentials | null {
  const settings = toSettings(lookup(found, keys.providerSettings(accountId)));
  const secret = lookup(found, keys.providerSecret(accountId));
  if (!settings || typeof secret?.auth_code !== 'string') return null;
  return { ...settings, authCode: secret.auth_code };
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

export function clearProviderCache(): void {
  cache.clear();
}
