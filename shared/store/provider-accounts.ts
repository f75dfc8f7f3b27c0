// The registry of accounts with a provider connection (`PROVIDER_ACCOUNTS#paddle` / `<acct>`, written by
// shared/store/provider.ts saveProviderConnection), which the background sync and the lifecycle jobs page
// through (no Scan). A module of its own, without the provider registry: a function that only lists the
// accounts does not carry the provider definitions (docs/operations.md "Bundles").
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { providerRegistryKeys } from './table';

/**
 * One page of the accounts with provider settings (the backfill's list), with each account's sync mark:
 * when (unix ms) the last background sync that applied every subscription started (recordSyncMark).
 */
export async function listProviderAccounts(
  startKey?: Record<string, unknown>,
): Promise<{ accountIds: string[]; syncMarks: Record<string, number>; next?: Record<string, unknown> }> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': providerRegistryKeys.providerAccounts() },
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      Limit: 500,
    }),
  );
  const syncMarks: Record<string, number> = {};
  for (const item of out.Items ?? []) if (typeof item.sync_mark === 'number') syncMarks[String(item.account_id)] = item.sync_mark;
  return {
    accountIds: (out.Items ?? []).map((i) => String(i.account_id)),
    syncMarks,
    ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}),
  };
}

/**
 * Records that a background sync run which started at `startedAtMs` applied every subscription of the
 * account: the next runs may ask the provider only for what changed since (shared/flows/resync.ts). Kept
 * on the account's registry item, so the backfill reads it with the page it already Queries. Never moves
 * back, and never outlives a connection saved after the run started (saving it rewrites the item, with
 * its `updated_at`, so a new provider's first run is a full one).
 */
export async function recordSyncMark(accountId: string, startedAtMs: number): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: { pk: providerRegistryKeys.providerAccounts(), sk: accountId },
        UpdateExpression: 'SET sync_mark = :t',
        ConditionExpression: 'attribute_exists(pk) AND updated_at <= :s AND (attribute_not_exists(sync_mark) OR sync_mark < :t)',
        ExpressionAttributeValues: { ':t': startedAtMs, ':s': Math.floor(startedAtMs / 1000) },
      }),
    );
  } catch (err) {
    if ((err as { name?: string }).name !== 'ConditionalCheckFailedException') throw err;
  }
}
