// Counter and report-bucket shards (shared/store/shards.ts): where each write lands, what a read covers, and
// the write-rate accountant's item sizes (test/support/write-rate.ts).
import { counterUpdate } from '../../shared/store/ops';
import { MoneyTxn } from '../../shared/store/ledger';
import { ReportDeltas } from '../../shared/store/reports';
import { COUNTER_SHARDS, counterKeys, reportShard, shardWrites, sumOf } from '../../shared/store/shards';
import type { CounterName } from '../../shared/store/table';
import { itemSize, unitsOf, valueSize } from '../support/write-rate';

const ACCT = 'acct1';
type Update = { Key: { pk: string; sk: string }; ConditionExpression?: string };
const updateOf = (item: unknown) => (item as { Update: Update }).Update;
const keyOf = (item: unknown) => updateOf(item).Key;

afterEach(() => {
  shardWrites.n = COUNTER_SHARDS;
});

describe('counters', () => {
  it('a write without a condition lands on one of shards 1..7, each its own partition; never on shard 0', () => {
    const pks = new Set<string>();
    for (let i = 0; i < 500; i++) {
      const key = keyOf(counterUpdate(ACCT, 'referrals', 1));
      expect(key.sk).toBe('COUNT#referrals');
      pks.add(key.pk);
    }
    expect([...pks].sort()).toEqual([1, 2, 3, 4, 5, 6, 7].map((s) => `A#${ACCT}#COUNT#referrals#${s}`));
  });

  it('a conditional write (a limit) and the counters that stay one item are on shard 0, today’s item', () => {
    const shard0 = (name: CounterName) => ({ pk: `A#${ACCT}`, sk: `COUNT#${name}` });
    expect(keyOf(counterUpdate(ACCT, 'members', 1, { below: 10 }))).toEqual(shard0('members'));
    for (const name of ['campaigns', 'webhook_endpoints', 'owners', 'payout_sum#due#EUR'] as CounterName[]) {
      for (let i = 0; i < 20; i++) expect(keyOf(counterUpdate(ACCT, name, -1))).toEqual(shard0(name));
      expect(counterKeys(ACCT, name)).toEqual([shard0(name)]);
    }
  });

  it('a read covers shard 0 and the 7 others, and sums them (a shard may be negative)', () => {
    const keys = counterKeys(ACCT, 'rewards#s#pending');
    expect(keys).toHaveLength(COUNTER_SHARDS);
    expect(keys[0]).toEqual({ pk: `A#${ACCT}`, sk: 'COUNT#rewards#s#pending' });
    expect(new Set(keys.map((k) => k.pk)).size).toBe(COUNTER_SHARDS);
    expect(sumOf([{ n: 3 }, undefined, { n: -1 }, { n: 2 }])).toBe(4);
  });

  it('with writes on 1 shard (the tests’ switch) every write is on shard 0', () => {
    shardWrites.n = 1;
    for (let i = 0; i < 20; i++) expect(keyOf(counterUpdate(ACCT, 'referrals', 1)).pk).toBe(`A#${ACCT}`);
  });

  it('a money transaction bumps each counter once (merged), each on one shard', () => {
    const txn = new MoneyTxn(ACCT).count('rewards', 1).count('rewards', 1).count('rewards#s#pending', 1).count('payout_sum#due#EUR', 500);
    const counters = txn.build().filter((i) => 'Update' in i && keyOf(i).sk.startsWith('COUNT#'));
    expect(counters.map((i) => keyOf(i).sk).sort()).toEqual(['COUNT#payout_sum#due#EUR', 'COUNT#rewards', 'COUNT#rewards#s#pending']);
    const sum = counters.find((i) => keyOf(i).sk === 'COUNT#payout_sum#due#EUR');
    expect(keyOf(sum).pk).toBe(`A#${ACCT}`);
  });
});

describe('report buckets', () => {
  const at = Date.parse('2026-11-25T12:00:00Z') / 1000;

  it("the account's and the campaign's buckets take one shard per transaction; a member's and a sub-id's stay one item", () => {
    const seen = new Set<number>();
    for (let i = 0; i < 300; i++) {
      const deltas = new ReportDeltas(ACCT)
        .add(at, { campaignId: 'c1', memberId: 'm1', sub: 'video' }, 'referrals', 1)
        .add(at, { campaignId: 'c1', memberId: 'm1' }, 'revenue', 500, 'EUR')
        .add(at, { campaignId: 'c1', memberId: 'm1' }, 'revenue', 300, 'EUR');
      const keys = deltas.items().map(keyOf);
      // One Update per bucket: T, C, M, S and the member's month (revenue ranks).
      expect(new Set(keys.map((k) => `${k.pk}|${k.sk}`)).size).toBe(keys.length);
      const t = keys.find((k) => k.pk.startsWith(`A#${ACCT}#REPORT#T`)) as { pk: string };
      const shard = t.pk === `A#${ACCT}#REPORT#T` ? 0 : Number(t.pk.split('#').pop());
      seen.add(shard);
      expect(keys.map((k) => k.pk).sort()).toEqual(
        [
          reportShard(`A#${ACCT}#REPORT#C#c1`, shard),
          `A#${ACCT}#REPORT#M#m1`,
          `A#${ACCT}#REPORT#S#m1#video`,
          reportShard(`A#${ACCT}#REPORT#T`, shard),
          `A#${ACCT}#REPORT_MEMBERS#2026-11`,
        ].sort(),
      );
    }
    expect([...seen].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

describe('the write-rate accountant’s item sizes (DynamoDB’s rules)', () => {
  it('names and values', () => {
    expect(valueSize({ S: 'abc' })).toBe(3);
    expect(valueSize({ S: 'é' })).toBe(2);
    expect(valueSize({ N: '1' })).toBe(2);
    expect(valueSize({ N: '12345' })).toBe(4);
    expect(valueSize({ BOOL: true })).toBe(1);
    expect(valueSize({ L: [{ S: 'ab' }, { N: '7' }] })).toBe(3 + 1 + 2 + 1 + 2);
    expect(valueSize({ M: { k: { S: 'v' } } })).toBe(3 + 1 + 1 + 1);
    expect(itemSize({ pk: { S: 'A#1' }, n: { N: '10' } })).toBe(2 + 3 + 1 + 2);
  });

  it('units: whole KB, at least one', () => {
    expect(unitsOf(0)).toBe(1);
    expect(unitsOf(1024)).toBe(1);
    expect(unitsOf(1025)).toBe(2);
  });
});
