// What the monthly summary's job reads (functions/workers/affiliate-summary.ts), with Queries, never a Scan:
// the registry of the accounts that turned `affiliate_emails.monthly_summary` on (`SUMMARY_ACCOUNTS` /
// `<acct>`, written or deleted with the setting by the account settings' PATCH, shared/store/
// account-settings.ts), then each such account's members. The job still reads each account and skips one
// whose setting is off, so a stale registry entry costs a read and sends nothing.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { listKeys, programmeKeys } from './table';

/** One page of the registered accounts. */
export async function listSummaryAccounts(
  startKey?: Record<string, unknown>,
): Promise<{ accountIds: string[]; next?: Record<string, unknown> }> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': programmeKeys.summaryAccounts() },
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
      Limit: 100,
    }),
  );
  return {
    accountIds: (out.Items ?? []).map((i) => String(i.account_id ?? i.sk)),
    ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}),
  };
}

/** One page of an account's members who may be emailed: their ids (opted-out members are left out). */
export async function listSummaryMembers(
  accountId: string,
  startKey?: Record<string, unknown>,
): Promise<{ memberIds: string[]; next?: Record<string, unknown> }> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      FilterExpression: '#type = :member AND (attribute_not_exists(email_opt_out) OR email_opt_out = :no)',
      ProjectionExpression: 'sk',
      ExpressionAttributeNames: { '#type': 'type' },
      ExpressionAttributeValues: { ':pk': listKeys.memberCollection(accountId), ':member': 'Member', ':no': false },
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    }),
  );
  return {
    memberIds: (out.Items ?? []).map((i) => String(i.sk)),
    ...(out.LastEvaluatedKey ? { next: out.LastEvaluatedKey } : {}),
  };
}
