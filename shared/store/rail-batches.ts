// The operator registry of rail batches still processing (like PROVIDER_ACCOUNTS# and SUMMARY_ACCOUNTS):
// the hourly reconciliation (functions/workers/payout-reconcile.ts) reads it with one Query instead of
// scanning accounts. An item names an account and a batch and holds nothing else. The payout flows put it
// in the transaction that creates a rail batch and delete it in the one that settles the batch's last payout.
import type { Key } from './table';
import type { TransactItem } from './ops';
import { tableName } from './client';

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
