// Counter and report-bucket shards: no item of one tenant takes every write of its hot path.
//
// One DynamoDB item (and one partition key) takes at most 1,000 write units per second, and a write inside
// a transaction costs 2 per KB. Every referral, conversion and reward of an account bumps its counters and
// the day's report buckets in the same transaction, so one item per counter capped one tenant at about 500
// of those per second. Each counter and each account-wide report bucket is therefore COUNTER_SHARDS items:
//
// - Counters (`counterUpdate`, `readCounter` in ./ops.ts): shard 0 IS the item every counter always was,
//   `A#<acct>` / `COUNT#<name>`, so nothing moves; shard s (1..7) is `A#<acct>#COUNT#<name>#<s>` /
//   `COUNT#<name>`, one item alone in its partition. A write without a condition goes to one of shards 1..7,
//   picked at random per write: never shard 0, whose partition `A#<acct>` holds shard 0 of every counter
//   and the account's own item (a money transaction bumps six counters: six writes there would make it
//   hotter than any one shard). A read sums the 8 items in one BatchGet (the same single round trip as the
//   GetItem it replaces), so a count stays exact; one shard may hold a negative value (a decrement can land
//   on a shard other than its increment), never the sum. What stays on shard 0, written and read there only:
//   the counters checked by a condition (limits: `campaigns`, `webhook_endpoints`, `owners`; a condition
//   can only see one item), and the `payout_sum#…` amounts the payout summary reads with one prefix Query
//   of `A#<acct>`.
// - Report buckets (`ReportDeltas`, `readDays` in ./reports.ts): scopes `T` (the account) and
//   `C#<campaign>` are sharded; shard 0 is `A#<acct>#REPORT#<scope>` / `<day>` as it always was, shard s
//   (1..7) `A#<acct>#REPORT#<scope>#<s>` / `<day>` (scopes never end in `#<digit>`: campaign ids hold no
//   `#`). One transaction's deltas pick one shard (0..7: these partitions hold nothing else) and merge per
//   bucket; a read Queries the 8 partitions in parallel and sums per day. `M#<member>` and
//   `S#<member>#<sub>` buckets and the monthly member ranking stay one item: their writes are one member's.
//
// Why 8: at 2,000 referral creates per second for one account, a counter's 7 write shards take 2,000 / 7
// = 286 transactional writes of a small item each per second, 571 WCU/s; a report bucket's 8 shards
// 250 x 2 = 500 WCU/s; both far enough below 1,000 that a second's random spread stays under it
// (test/integration/write-rate.test.ts measures it). A read costs 8 strongly consistent item reads
// (8 RCU) where it cost 1.
import type { CounterName, Key } from './table';

export const COUNTER_SHARDS = 8;

/**
 * How many shards the writes spread over (tests only: 1 puts every write on shard 0, as before sharding, so
 * the write-rate test can show what one item would take). Reads always sum all COUNTER_SHARDS.
 */
export const shardWrites = { n: COUNTER_SHARDS };

/** A random shard in [from, shardWrites.n), or 0 when that range is empty. */
export const pickShard = (from: number): number => {
  const n = shardWrites.n - from;
  return n > 0 ? from + Math.floor(Math.random() * n) : 0;
};

/** Counters that stay one item (shard 0): checked by conditions, or read by a prefix Query. */
export const unsharded = (name: CounterName): boolean => /^(campaigns|webhook_endpoints|owners|payout_sum#.*)$/.test(name);

export const counterKey = (acct: string, name: CounterName, shard: number): Key => ({
  pk: shard ? `A#${acct}#COUNT#${name}#${shard}` : `A#${acct}`,
  sk: `COUNT#${name}`,
});

/** Every item of a counter: its shards, or its one item. */
export const counterKeys = (acct: string, name: CounterName): Key[] =>
  unsharded(name) ? [counterKey(acct, name, 0)] : [...Array(COUNTER_SHARDS).keys()].map((s) => counterKey(acct, name, s));

/** The sum of the counters' `n` among items read (absent ones count 0). */
export const sumOf = (items: Iterable<Record<string, unknown> | undefined>): number => {
  let n = 0;
  for (const item of items) n += Number(item?.n ?? 0);
  return n;
};

/** Whether a report scope's buckets are sharded (the account's and a campaign's). */
export const shardedScope = (scope: string): boolean => scope === 'T' || scope.startsWith('C#');

/** Shard `shard` of a report scope's partition (`A#<acct>#REPORT#<scope>`). */
export const reportShard = (partition: string, shard: number): string => (shard ? `${partition}#${shard}` : partition);
