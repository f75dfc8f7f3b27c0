// The operator registry of rail batches still processing (like PROVIDER_ACCOUNTS# and SUMMARY_ACCOUNTS):
// the hourly reconciliation (functions/workers/payout-reconcile.ts) reads it with one Query instead of
// scanning accounts. An item names an account and a batch and holds nothing else. The payout flows put it
// in the transaction that creates a rail batch and delete it in the one that settles the batch's last payout.
// Also the single-item writes of a PayPal re-send (shared/flows/rail-reconcile.ts): its attempt counter and
// the swap of the payout's rail item id.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Payout } from '../domain/lifecycle';
import { db, tableName } from './client';
import { nowSeconds, queryAll, type TransactItem } from './ops';
import { type Key, moneyKeys } from './table';

export const railBatchKeys = {
  /** The registry's partition. */
  open: () => 'RAIL_BATCHES_OPEN',
  openBatch: (acct: string, batchId: string): Key => ({ pk: 'RAIL_BATCHES_OPEN', sk: `${acct}#${batchId}` }),
};

/** Registers a rail batch as open (in the transaction that creates it). */
export function openRailBatchPut(accountId: string, batchId: string, rail: string, nowSeconds: number): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...railBatchKeys.openBatch(accountId, batchId),
        type: 'OpenRailBatch',
        account_id: accountId,
        batch_id: batchId,
        rail,
        opened_at: nowSeconds,
      },
    },
  };
}

/** Removes a batch from the registry (in the transaction that settles its last payout; harmless when absent). */
export function openRailBatchDelete(accountId: string, batchId: string): TransactItem {
  return { Delete: { TableName: tableName(), Key: railBatchKeys.openBatch(accountId, batchId) } };
}

/** An open rail batch as the registry names it. */
export interface OpenRailBatch {
  account_id: string;
  batch_id: string;
  rail: string;
  /** Unix seconds when the batch was created. */
  opened_at: number;
}

/** Every rail batch still open, across accounts: one Query of the registry's partition (paginated). */
export async function openRailBatches(): Promise<OpenRailBatch[]> {
  const items = await queryAll({ partitionValue: railBatchKeys.open() });
  return items
    .filter((i) => typeof i.account_id === 'string' && typeof i.batch_id === 'string')
    .map((i) => ({
      account_id: String(i.account_id),
      batch_id: String(i.batch_id),
      rail: String(i.rail ?? ''),
      opened_at: Number(i.opened_at ?? 0),
    }));
}

/** Takes a batch off the registry outside a transaction (a batch found settled that was left in it). */
export async function forgetOpenRailBatch(accountId: string, batchId: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: railBatchKeys.openBatch(accountId, batchId) }));
}

/**
 * Counts one more re-send of an unclaimed PayPal payout (POST /v1/payouts/{id}/resend/): `resend_attempt`
 * + 1 and a new version, conditioned on the version read and on the payout still being a processing PayPal
 * payout that is unclaimed. The payout as written, or null when the condition failed.
 */
export async function countResend(accountId: string, before: Payout): Promise<Payout | null> {
  const attempt = (before.resend_attempt ?? 0) + 1;
  const now = nowSeconds();
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: moneyKeys.payout(accountId, before.id),
        UpdateExpression: 'SET resend_attempt = :a, version = :nv, updated_at = :now',
        ConditionExpression: 'version = :v AND #st = :processing AND rail = :paypal AND rail_status = :unclaimed',
        ExpressionAttributeNames: { '#st': 'status' },
        ExpressionAttributeValues: {
          ':a': attempt,
          ':nv': before.version + 1,
          ':now': now,
          ':v': before.version,
          ':processing': 'processing',
          ':paypal': 'paypal',
          ':unclaimed': 'UNCLAIMED',
        },
      }),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return null;
    throw err;
  }
  return { ...before, resend_attempt: attempt, version: before.version + 1, updated_at: now };
}

/**
 * Replaces the payout's `rail_item_id` (and sets `extra` attributes) if it is still `expected` and the payout
 * still processing, with a new version: the re-send's steps (docs/payouts.md "Re-sending an unclaimed
 * payout"). False when the payout changed meanwhile.
 */
export async function swapRailItemId(
  accountId: string,
  payoutId: string,
  expected: string,
  next: string,
  extra: Record<string, string | number> = {},
): Promise<boolean> {
  const names: Record<string, string> = { '#st': 'status' };
  const values: Record<string, unknown> = {
    ':expected': expected,
    ':next': next,
    ':now': nowSeconds(),
    ':one': 1,
    ':processing': 'processing',
  };
  const sets = ['rail_item_id = :next', 'updated_at = :now', 'version = version + :one'];
  Object.entries(extra).forEach(([name, value], i) => {
    names[`#x${i}`] = name;
    values[`:x${i}`] = value;
    sets.push(`#x${i} = :x${i}`);
  });
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: moneyKeys.payout(accountId, payoutId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'rail_item_id = :expected AND #st = :processing',
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}
