// The registry of accounts with a provider connection (`PROVIDER_ACCOUNTS#paddle` / `<acct>`, written by
// shared/store/provider.ts saveProviderConnection), which the background sync and the lifecycle jobs page
// through (no Scan). A module of its own, without the provider registry: a function that only lists the
// accounts does not carry the provider definitions (docs/operations.md "Bundles").
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { providerRegistryKeys } from './table';

/** One page of the accounts with provider settings (the backfill's list). */
export async function listProviderAccounts(
  startKey?: Record<string, unknown>,
): Promise<{ accountIds: string[]; next?: Record<string, unknown> }> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': providerRegistryKeys.providerAccounts() },
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      Limit: 500,
    }),
  );
  return {
    accountIds: (out.Items ?? []).map((i) => String(i.account_id)),
    ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}),
  };
}
