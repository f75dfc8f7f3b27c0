// Scale invariance of the money side: an account with 10 rewards and one with 3,000 (and as many
// payouts), same shape. Every list and filter of rewards and payouts, a page of an export, a 90-day report
// and the summary must cost the same DynamoDB calls at the same depth and read the same items in both.
//
// Seeding: one reward per account goes through the real flows (recorded, approved into a due payout);
// the others are copies of its ledger item and its payout with new ids, written with BatchWriteItem, and
// the counters move through the store's counterUpdate (as scale-invariance.test.ts does for members).
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { resetConfig } from '../../shared/config';
import { newEntityId } from '../../shared/domain/ids';
import { approveReward } from '../../shared/flows/lifecycle';
import { db, tableName } from '../../shared/store/client';
import { counterUpdate, getItem, transact } from '../../shared/store/ops';
import { rewardCounterPrefixes } from '../../shared/store/ledger';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys, type CounterName, moneyKeys } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { describeCalls, itemsRead, recordDynamoCalls, type DynamoCall } from '../support/dynamo-calls';
import { fillCounterShards } from '../support/counter-shards';
import { newAccount } from '../support/fixtures';

interface Seeded {
  accountId: string;
  key: string;
  memberId: string;
  campaignId: string;
}

async function seed(size: number): Promise<Seeded> {
  const { accountId, apiKey: key } = await newAccount('unlimited');
  const call = (method: string, path: string, body?: unknown) => api(method, path, { key, ...(body === undefined ? {} : { body }) });
  const campaign = (
    await call('POST', '/v1/campaigns/', { name: 'scale', allows_commission: true, commission_amount: '2.00', hold_days: 0 })
  ).body;
  const member = (
    await call('POST', '/v1/members/', {
      identifier: 'hub',
      email: 'hub@example.com',
      campaign: { id: campaign.id },
      payout_email: 'hub@pay.example.com',
    })
  ).body;
  const ref = (await call('POST', '/v1/referrals/', { user_identifier: 'u0', member_code: member.code })).body;
  const stored = toReferral(await getItem(keys.referral(accountId, ref.id)))!;
  const recorded = await recordRewards(
    accountId,
    stored,
    [{ payment_id: 1, type: 'commission', amount: 200, currency: 'USD' }],
    false,
    true,
  );
  const approved = await approveReward(accountId, recorded.rewards[0]!.id);
  const rewardItem = (await getItem(keys.reward(accountId, approved.id)))!;
  const payoutItem = (await getItem(moneyKeys.payout(accountId, approved.payout_id!)))!;
  const copies: Record<string, unknown>[] = [];
  for (let i = 1; i < size; i++) {
    const id = newEntityId();
    const payoutId = `po_${newEntityId()}`;
    copies.push({ ...rewardItem, ...keys.reward(accountId, id), id, gsi1sk: id, gsi2sk: id, payout_id: payoutId });
    copies.push({
      ...payoutItem,
      ...moneyKeys.payout(accountId, payoutId),
      id: payoutId,
      gsi1sk: payoutId,
      gsi2sk: payoutId,
      reward_ids: new Set([id]),
    });
  }
  for (let i = 0; i < copies.length; i += 25) {
    await db().send(
      new BatchWriteCommand({ RequestItems: { [tableName()]: copies.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
    );
  }
  const n = size - 1;
  const names: CounterName[] = [
    // Every reward counter the real reward counts in (each filter and combination, with its status).
    ...rewardCounterPrefixes({ member_id: member.id, campaign_id: campaign.id, type: 'commission' }).flatMap(
      (p) => [p, `${p}#s#approved`] as CounterName[],
    ),
    'payouts',
    'payouts#s#due',
    `payouts#m#${member.id}`,
    `payouts#m#${member.id}#s#due`,
    'payouts#c#USD',
    'payouts#c#USD#s#due',
  ];
  if (n > 0) await transact(names.map((name) => counterUpdate(accountId, name, n)));
  // Every shard of these counters present in both accounts (shared/store/shards.ts): a count's read then
  // returns the same items whatever the account's history.
  await fillCounterShards(accountId, names);
  return { accountId, key, memberId: member.id, campaignId: campaign.id };
}

interface Measure {
  status: number;
  count: number | undefined;
  calls: DynamoCall[];
  depth: number;
}

async function measure(s: Seeded, path: string): Promise<Measure> {
  const recording = recordDynamoCalls();
  let res: ApiResponse;
  try {
    res = await api('GET', path, { key: s.key });
  } finally {
    recording.stop();
  }
  return { status: res.status, count: res.body?.count, calls: [...recording.calls], depth: recording.depth() };
}

let small: Seeded;
let large: Seeded;

beforeAll(async () => {
  // Warm containers: keys resolved from the cache (the suite runs with AUTH_CACHE_TTL_SECONDS=0).
  process.env.AUTH_CACHE_TTL_SECONDS = '3600';
  resetConfig();
  [small, large] = await Promise.all([seed(10), seed(3_000)]);
}, 180_000);

afterAll(() => {
  delete process.env.AUTH_CACHE_TTL_SECONDS;
  process.env.AUTH_CACHE_TTL_SECONDS = '0';
  resetConfig();
});

const now = Math.floor(Date.now() / 1000);
const PATHS: [string, (s: Seeded) => string, number | null][] = [
  ['rewards', () => '/v1/rewards/?page_size=5', 1],
  ['rewards by status', () => '/v1/rewards/?status=approved&page_size=5', 1],
  ['rewards of a member', (s) => `/v1/rewards/?member=${s.memberId}&page_size=5`, 1],
  ['rewards of a member by status', (s) => `/v1/rewards/?member=${s.memberId}&status=approved&page_size=5`, 1],
  ['rewards of a campaign', (s) => `/v1/rewards/?campaign=${s.campaignId}&page_size=5`, 1],
  // Combined filters (issue 23 #14): the member's partition or the status's, the rest filtered, the combination's counter.
  ['rewards of a member by type', (s) => `/v1/rewards/?member=${s.memberId}&type=commission&page_size=5`, 1],
  [
    'rewards of a campaign by type and status',
    (s) => `/v1/rewards/?campaign=${s.campaignId}&type=commission&status=approved&page_size=5`,
    1,
  ],
  ['rewards of a member by type and status', (s) => `/v1/rewards/?member=${s.memberId}&type=commission&status=approved&page_size=5`, 1],
  ['payouts', () => '/v1/payouts/?page_size=5', 1],
  ['due payouts', () => '/v1/payouts/?status=due&page_size=5', 1],
  ['payouts in USD', () => '/v1/payouts/?currency=USD&page_size=5', 1],
  ['summary', () => '/v1/payouts/summary/', null],
  ['90-day report', () => `/v1/reports/timeseries/?metric=commission_earned&from=${now - 90 * 86_400}&to=${now}`, null],
  ['export page', () => '/v1/exports/rewards.csv?page_size=5', null],
];

it.each(PATHS)('%s: the same calls, depth and items with 10 or 3,000 rewards', async (label, path, countFactor) => {
  const [a, b] = [await measure(small, path(small)), await measure(large, path(large))];
  expect([a.status, b.status]).toEqual([200, 200]);
  if (countFactor !== null) expect([a.count, b.count]).toEqual([10, 3_000]);
  // The report's day buckets are 8 shards (shared/store/shards.ts), each written by a random transaction: how
  // many of them hold a given day differs between the accounts by chance, never with their size. Its items
  // are bounded instead: at most one bucket per shard per day of the range.
  const sharded = label === '90-day report';
  if (sharded) for (const m of [a, b]) expect(itemsRead(m.calls)).toBeLessThanOrEqual(8 * 91);
  const shape = (m: Measure) => ({
    depth: m.depth,
    calls: m.calls.map((c) => `${c.command}${c.index ? `/${c.index}` : ''}`).sort(),
    items: sharded ? 'at most one per shard and day' : itemsRead(m.calls),
  });
  expect({ large: shape(b), why: describeCalls(b.calls) }).toEqual({ large: shape(a), why: expect.any(String) });
});
