// Accounts and their secret API keys. Managed by the operator CLI, read by the auth middleware.
import { GetCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { generateApiKey, generatePublishableKey, hashApiKey, PUBLISHABLE_KEY_PREFIX } from '../domain/api-keys';
import { newAccountId } from '../domain/ids';
import { isPlan, type Plan } from '../domain/plans';
import { db, tableName } from './client';
import { accessKeys, keys, type Key } from './table';
import { ensureAccountSlug } from './account-slugs';
import { apiKeyRecordItem, keyPrefix, newKeyId, teamKeys, type ApiKeyRecord, type Session } from './team';

import { JS_REFERRAL_MODES, isJsReferralMode, type JsReferralMode } from '../domain/accounts';

export { JS_REFERRAL_MODES, isJsReferralMode, type JsReferralMode };

export interface Account {
  accountId: string;
  name: string;
  plan: Plan;
  createdAt: number;
  /** The browser-safe key for the /js/v1/ endpoints; null for an account created before they existed. */
  publishableKey: string | null;
  jsReferrals: JsReferralMode;
}

/** What a request's key resolves to. The plan is copied onto the key item so auth is one GetItem. */
export interface Principal {
  accountId: string;
  plan: Plan;
  /** A short digest of the key used (for per-key rate limits); set by the auth middleware. */
  keyId?: string;
  /** Publishable keys: the account's js referral mode (absent: `open`). */
  jsReferrals?: JsReferralMode;
  /** Set when a dashboard session (not an API key) authenticated the request: who, with which role. */
  session?: Session;
}

export class UnknownAccountError extends Error {
  constructor(accountId: string) {
    super(`Account ${accountId} does not exist`);
  }
}
export class UnknownApiKeyError extends Error {
  constructor() {
    super('No such API key');
  }
}

const now = () => Math.floor(Date.now() / 1000);

function apiKeyItem(key: string, accountId: string, plan: Plan, keyId: string) {
  // Only the hash is stored; the plaintext key is returned once and never written anywhere. `key_id` names
  // its record in the account's key list (store/team.ts), which the dashboard shows and revokes by.
  return { ...accessKeys.apiKey(hashApiKey(key)), type: 'ApiKey', account_id: accountId, plan, key_id: keyId, created_at: now() };
}

/** The lookup item and the account's record of a new secret key, for one transaction, and the record's view. */
function apiKeyPuts(key: string, accountId: string, plan: Plan, name: string) {
  const id = newKeyId();
  const createdAt = now();
  return {
    items: [
      { Put: { TableName: tableName(), Item: apiKeyItem(key, accountId, plan, id), ConditionExpression: 'attribute_not_exists(pk)' } },
      {
        Put: {
          TableName: tableName(),
          Item: apiKeyRecordItem(accountId, id, key, name, createdAt),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    ],
    record: { id, name, prefix: keyPrefix(key), created_at: createdAt, revoked_at: null } satisfies ApiKeyRecord,
  };
}

function publishableKeyItem(key: string, accountId: string, plan: Plan, jsReferrals: JsReferralMode = 'open') {
  return {
    ...accessKeys.publishableKey(hashApiKey(key)),
    type: 'PublishableKey',
    account_id: accountId,
    plan,
    js_referrals: jsReferrals,
    created_at: now(),
  };
}

export async function createAccount(input: { name: string; plan: Plan }): Promise<{ account: Account; apiKey: string }> {
  const account: Account = {
    accountId: newAccountId(),
    name: input.name,
    plan: input.plan,
    createdAt: now(),
    publishableKey: generatePublishableKey(),
    jsReferrals: 'open',
  };
  const apiKey = generateApiKey();
  await db().send(
    new TransactWriteCommand({
      TransactItems: [
        {
          Put: {
            TableName: tableName(),
            Item: {
              ...keys.account(account.accountId),
              type: 'Account',
              account_id: account.accountId,
              name: account.name,
              plan: account.plan,
              created_at: account.createdAt,
              publishable_key: account.publishableKey,
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        ...apiKeyPuts(apiKey, account.accountId, account.plan, 'First key').items,
        {
          Put: {
            TableName: tableName(),
            Item: publishableKeyItem(account.publishableKey as string, account.accountId, account.plan),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      ],
    }),
  );
  // Its public name in the affiliate pages' addresses, derived from its name (editable in the settings).
  await ensureAccountSlug(account.accountId, account.name);
  return { account, apiKey };
}

export async function getAccount(accountId: string): Promise<Account | null> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: keys.account(accountId) }));
  if (!Item || !isPlan(Item.plan)) return null;
  return {
    accountId,
    name: String(Item.name),
    plan: Item.plan,
    createdAt: Number(Item.created_at),
    publishableKey: typeof Item.publishable_key === 'string' ? Item.publishable_key : null,
    jsReferrals: isJsReferralMode(Item.js_referrals) ? Item.js_referrals : 'open',
  };
}

/**
 * Sets the account's js referral mode, on the account and on its publishable key item in one transaction
 * (a key cached by a warm container keeps the old mode for up to AUTH_CACHE_TTL_SECONDS).
 */
export async function setJsReferralMode(accountId: string, mode: JsReferralMode): Promise<Account> {
  const account = await ensurePublishableKey(accountId);
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.account(accountId),
              UpdateExpression: 'SET js_referrals = :m',
              // The key read above is still the account's (a concurrent revoke would replace it).
              ConditionExpression: 'attribute_exists(pk) AND publishable_key = :k',
              ExpressionAttributeValues: { ':m': mode, ':k': account.publishableKey },
            },
          },
          {
            Update: {
              TableName: tableName(),
              Key: accessKeys.publishableKey(hashApiKey(account.publishableKey as string)),
              UpdateExpression: 'SET js_referrals = :m',
              ConditionExpression: 'attribute_exists(pk)',
              ExpressionAttributeValues: { ':m': mode },
            },
          },
        ],
      }),
    );
  } catch (err) {
    if (err instanceof TransactionCanceledException)
      throw new Error(`account ${accountId} changed its publishable key meanwhile; run the command again`);
    throw err;
  }
  return { ...account, jsReferrals: mode };
}

/**
 * The account's publishable key, created on first request for an account that predates them (the
 * operator's `account show`). Concurrent calls agree: the key is set only where none is.
 */
export async function ensurePublishableKey(accountId: string): Promise<Account> {
  const account = await getAccount(accountId);
  if (!account) throw new UnknownAccountError(accountId);
  if (account.publishableKey) return account;
  const key = generatePublishableKey();
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Update: {
              TableName: tableName(),
              Key: keys.account(accountId),
              UpdateExpression: 'SET publishable_key = :k',
              ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(publishable_key)',
              ExpressionAttributeValues: { ':k': key },
            },
          },
          {
            Put: {
              TableName: tableName(),
              Item: publishableKeyItem(key, accountId, account.plan, account.jsReferrals),
              ConditionExpression: 'attribute_not_exists(pk)',
            },
          },
        ],
      }),
    );
  } catch (err) {
    if (!(err instanceof TransactionCanceledException)) throw err;
    // Another call set one first: read it back.
  }
  const fresh = await getAccount(accountId);
  if (!fresh?.publishableKey) throw new UnknownAccountError(accountId);
  return fresh;
}

/** The CLI's `key create`: a new secret key for an account (its plan read first), named in its record. */
export async function createApiKey(accountId: string): Promise<string> {
  const account = await getAccount(accountId);
  if (!account) throw new UnknownAccountError(accountId);
  return (await createNamedApiKey(accountId, account.plan, 'Created with the CLI')).key;
}

/**
 * A new secret key with its record (the dashboard's key list), under the condition that the account
 * exists; the plaintext is returned once.
 */
export async function createNamedApiKey(accountId: string, plan: Plan, name: string): Promise<{ record: ApiKeyRecord; key: string }> {
  const key = generateApiKey();
  const { items, record } = apiKeyPuts(key, accountId, plan, name);
  try {
    await db().send(
      new TransactWriteCommand({
        TransactItems: [
          { ConditionCheck: { TableName: tableName(), Key: keys.account(accountId), ConditionExpression: 'attribute_exists(pk)' } },
          ...items,
        ],
      }),
    );
  } catch (err) {
    if (err instanceof TransactionCanceledException) throw new UnknownAccountError(accountId);
    throw err;
  }
  return { record, key };
}

/** The lookup item of a key of either kind (secret or publishable), by its hash. */
function keyItem(key: string): Key {
  return key.startsWith(PUBLISHABLE_KEY_PREFIX) ? accessKeys.publishableKey(hashApiKey(key)) : accessKeys.apiKey(hashApiKey(key));
}

/**
 * Revokes a key: the item stays (audit trail) with `revoked_at`, and auth refuses it. A revoked
 * publishable key is also taken off its account, so `account show` issues a new one.
 */
export async function revokeApiKey(apiKey: string): Promise<void> {
  let accountId: string;
  try {
    const { Attributes } = await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keyItem(apiKey),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': now() },
        ReturnValues: 'ALL_NEW',
      }),
    );
    accountId = String(Attributes?.account_id);
    // The key's record in the account's list (keys made before records existed have none).
    if (typeof Attributes?.key_id === 'string') {
      await db()
        .send(
          new UpdateCommand({
            TableName: tableName(),
            Key: teamKeys.apiKeyRecord(accountId, Attributes.key_id),
            UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: { ':now': now() },
          }),
        )
        .catch((err: unknown) => {
          if (!(err instanceof ConditionalCheckFailedException)) throw err;
        });
    }
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) throw new UnknownApiKeyError();
    throw err;
  }
  if (!apiKey.startsWith(PUBLISHABLE_KEY_PREFIX)) return;
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression: 'REMOVE publishable_key',
        ConditionExpression: 'publishable_key = :k',
        ExpressionAttributeValues: { ':k': apiKey },
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err; // already replaced
  }
}

/** One GetItem of a key's lookup item. Null for unknown and revoked keys. */
async function findPrincipal(item: Key): Promise<Principal | null> {
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: item }));
  if (!Item || Item.revoked_at !== undefined || typeof Item.account_id !== 'string' || !isPlan(Item.plan)) return null;
  return {
    accountId: Item.account_id,
    plan: Item.plan,
    ...(isJsReferralMode(Item.js_referrals) ? { jsReferrals: Item.js_referrals } : {}),
  };
}

/** A secret key's account (never a publishable key's, whatever the string). */
export const findPrincipalByApiKey = (key: string) => findPrincipal(accessKeys.apiKey(hashApiKey(key)));
/** A publishable key's account (never a secret key's). */
export const findPrincipalByPublishableKey = (key: string) => findPrincipal(accessKeys.publishableKey(hashApiKey(key)));
