// No hot item (shared/store/shards.ts): one account creating 2,000 referrals per second never puts more than
// DynamoDB's 1,000 write units per second on one counter or report-bucket partition key, nor on any item.
//
// Real creates, through the function POST /v1/referrals/ runs (createReferralWithCoupon), several at a time,
// on DynamoDB Local; the write-rate accountant (test/support/write-rate.ts) records what each write would
// cost on DynamoDB and stamps it with a virtual time: create i at i / 2,000 s. The laptop performs far fewer
// than 2,000 creates per second, so the time is compressed: the first 0.15 virtual seconds (300 creates) are
// the sample, and its units / 0.15 are the rate per second.
//
// The statistics. A create's transaction writes each counter to one of its 7 write shards and the account's
// and the campaign's report buckets to one of their 8, at random. In a 300-create sample a counter shard
// takes Binomial(300, 1/7) writes: mean 42.9, standard deviation 6.1, each 2 WCU (a small item in a
// transaction), so 571 WCU/s on average; 1,000 WCU/s needs 76 writes, 5.4 standard deviations above the mean
// (about 3e-8 per shard). A report bucket's shard: Binomial(300, 1/8), mean 37.5, sd 5.7, 500 WCU/s; 76
// writes is 6.7 sd away. The test does not flake on chance.
//
// The same run with sharding off (every write on shard 0, as before) must show the accountant fail: the
// account's referrals counter then takes every create, 2 x 2,000 = 4,000 WCU/s (120 creates suffice: all in
// the first sample, 1,600 WCU/s).
//
// Its time is DynamoDB Local's: it applies about 30 of these 10-item transactions per second on a busy
// laptop, so the 520 creates take most of the file's 20-30 s.
//
// The entity collections (the referral collection `A#<acct>#REFERRAL`, the members, the outbox events) take
// one write per create too, but each on a distinct item: a partition key of many items is spread by
// DynamoDB's split for heat; an item is not. Their rates are printed (WRITE_RATE_REPORT=1), not bounded.
import { createReferralWithCoupon } from '../../shared/flows/coupons';
import * as v from 'valibot';
import { createCampaignBody } from '../../shared/schemas/campaign';
import { createCampaign } from '../../shared/store/campaigns';
import { createMember } from '../../shared/store/members';
import { readCounter } from '../../shared/store/ops';
import { readDays } from '../../shared/store/reports';
import { shardWrites, COUNTER_SHARDS } from '../../shared/store/shards';
import { closeVerificationClient } from '../support/dynamo-calls';
import { newAccount } from '../support/fixtures';
import { WriteRateAccountant, type Rate } from '../support/write-rate';

const RATE = 2_000; // creates per virtual second
const SAMPLE = 0.15; // virtual seconds per window
const LIMIT = 1_000; // WCU per second on one partition key or item
const MEMBERS = 40;
const CONCURRENCY = 12;
const report = process.env.WRITE_RATE_REPORT === '1';

async function pool(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}

interface World {
  accountId: string;
  campaignId: string;
  codes: string[];
}

/** A fresh account with one campaign and MEMBERS members in it (through the store, as the API writes them). */
async function world(): Promise<World> {
  const { accountId } = await newAccount('regular');
  const input = v.parse(createCampaignBody, { name: 'Main', allows_credit: true, credit_amount: '5.00' });
  const { id: campaignId } = await createCampaign({ accountId, plan: 'regular' }, input);
  const codes: string[] = [];
  await pool(MEMBERS, CONCURRENCY, async (i) => {
    const { member } = await createMember(accountId, {
      identifier: `m-${i}`,
      email: `m-${i}@example.com`,
      first_name: null,
      last_name: null,
      campaign: { id: campaignId },
      subscription: null,
    });
    codes[i] = member.code;
  });
  return { accountId, campaignId, codes };
}

/** `creates` referrals, create i at virtual time i / RATE; the accountant's rates per partition key and per item. */
async function run(w: World, creates: number, users: string): Promise<{ partitions: Rate[]; items: Rate[]; conflicts: number }> {
  const accountant = new WriteRateAccountant().attach();
  try {
    await pool(creates, CONCURRENCY, async (i) => {
      const input = { user_identifier: `${users}-${i}`, member_code: w.codes[i % MEMBERS] as string };
      await accountant.at(i / RATE, () => createReferralWithCoupon(w.accountId, input, 'api'));
    });
  } finally {
    accountant.detach();
  }
  await accountant.settle();
  return { partitions: accountant.rates('partition', SAMPLE), items: accountant.rates('item', SAMPLE), conflicts: accountant.conflicts };
}

/** Counter and report-bucket partition keys of the account (shard 0 of a counter is `A#<acct>` itself). */
const hotPathKey = (accountId: string, pk: string) =>
  pk === `A#${accountId}` || pk.startsWith(`A#${accountId}#COUNT#`) || pk.startsWith(`A#${accountId}#REPORT`);

const line = (r: Rate) =>
  `${r.key}: ${Math.round(r.perSecond)} WCU/s (${r.writes} writes in the ${SAMPLE} s from ${r.windowStart.toFixed(1)} s)`;

afterAll(() => closeVerificationClient());

describe('one account at 2,000 referral creates per second (time compressed)', () => {
  let w: World;
  beforeAll(async () => {
    w = await world();
  }, 30_000);

  afterEach(() => {
    shardWrites.n = COUNTER_SHARDS;
  });

  it('puts at most 1,000 WCU/s on any counter or report-bucket partition key and on any item; counts stay exact', async () => {
    const creates = 300;
    const { accountId, campaignId } = w;
    const { partitions, items, conflicts } = await run(w, creates, 'sharded');
    const hot = partitions.filter((r) => hotPathKey(accountId, r.key));
    // Every counter and account-wide bucket shard was written: the spread is real, not an empty measurement.
    expect(hot.filter((r) => r.key.startsWith(`A#${accountId}#COUNT#referrals#`)).length).toBe(COUNTER_SHARDS - 1);
    expect(hot.filter((r) => r.key.startsWith(`A#${accountId}#REPORT#T`)).length).toBe(COUNTER_SHARDS);
    const collections = partitions.filter((r) => !hotPathKey(accountId, r.key)).slice(0, 8);
    if (report) {
      console.log(
        [
          `${creates} creates, ${conflicts} transactions retried after a conflict on a shared item`,
          'hottest counter / report partitions:',
          ...hot.slice(0, 6).map(line),
          'hottest items:',
          ...items.slice(0, 4).map(line),
          'entity collections and index partitions (many items each):',
          ...collections.map(line),
        ].join('\n'),
      );
    }
    expect(hot.filter((r) => r.perSecond > LIMIT).map(line)).toEqual([]);
    expect(items.filter((r) => r.perSecond > LIMIT).map(line)).toEqual([]);

    // Exact: the shards sum to every create.
    expect(await readCounter(accountId, 'referrals')).toBe(creates);
    const sum = async (scope: string) =>
      [...(await readDays(accountId, scope, '2000-01-01', '2999-12-31')).values()].reduce((n, d) => n + (d.referrals ?? 0), 0);
    expect(await sum('T')).toBe(creates);
    expect(await sum(`C#${campaignId}`)).toBe(creates);
  }, 60_000);

  it('with sharding off, the accountant sees the counter item over 1,000 WCU/s', async () => {
    shardWrites.n = 1;
    const { accountId } = w;
    const before = await readCounter(accountId, 'referrals');
    const creates = 120;
    const { partitions, items, conflicts } = await run(w, creates, 'unsharded');
    const counter = items.find((r) => r.key === `A#${accountId} | COUNT#referrals`);
    if (report) console.log(`unsharded: ${counter && line(counter)}; ${conflicts} conflicts in ${creates} creates`);
    // All 120 creates fall in the first 0.15 s sample (virtual 0 to 0.06 s), 2 WCU each on the one item:
    // 240 WCU in 0.15 s = 1,600 WCU/s, exactly (at 2,000 creates per second it would be 4,000).
    expect(counter?.perSecond).toBeGreaterThan(LIMIT);
    expect(partitions.find((r) => r.key === `A#${accountId}#REPORT#T`)?.perSecond).toBeGreaterThan(LIMIT);
    expect(await readCounter(accountId, 'referrals')).toBe(before + creates);
  }, 60_000);
});
