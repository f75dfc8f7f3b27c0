// Every shard of some counters present (shared/store/shards.ts), as in an account busy enough that each
// shard took a write: a count's BatchGet then returns all COUNTER_SHARDS items whatever the account's
// history, so tests that compare the items two accounts' reads return compare like with like.
import './local-guard';
import { transact, type TransactItem } from '../../shared/store/ops';
import { tableName } from '../../shared/store/client';
import { counterKeys } from '../../shared/store/shards';
import type { CounterName } from '../../shared/store/table';

/** Adds 0 to every shard of each counter (creating the absent ones at 0): the counts do not change. */
export async function fillCounterShards(accountId: string, names: CounterName[]): Promise<void> {
  const items: TransactItem[] = names.flatMap((name) =>
    counterKeys(accountId, name).map((Key) => ({
      Update: {
        TableName: tableName(),
        Key,
        UpdateExpression: 'SET #type = :type ADD n :zero',
        ExpressionAttributeNames: { '#type': 'type' },
        ExpressionAttributeValues: { ':type': 'Counter', ':zero': 0 },
      },
    })),
  );
  for (let i = 0; i < items.length; i += 100) await transact(items.slice(i, i + 100));
}
