// Scale invariance (issue 4, item 2). Two accounts of the same shape and three campaigns each: a small
// one (10 referrals, 10 members, 10 subscriptions) and a large one (3,000 referrals, 3,000 members, 300
// subscriptions). For every list and filter, the first page - and in the large account the second
// page, through `next` - must cost the same DynamoDB calls at the same sequential depth (the
// architecture's list budget) whatever the account's size, read only what the page needs (page_size + 1
// items from the Query, the count's items - a sharded counter's 8 shards, shared/store/shards.ts, all present
// in both accounts, or one parent or limit counter - and the page's nested items) and report an exact `count`.
//
// "The same number of items" needs pages that are full in both accounts: at page_size=5 the small
// account's pages are full too, and both accounts must read the same items, call for call. At the
// default page size (20) and page_size=100 the small account has fewer items than a page; there each
// account's Query must read exactly min(matching items, page_size + 1), never more.
//
// Seeding. The small account is written entirely through the store's functions (createMember,
// createReferral, saveSubscription: claims, counters, one transaction each). In the large account the
// campaigns, the subscriptions, the two side members, the hub member and its first referral are
// written the same way; the other 2,997 members and 2,999 referrals are copies of the items the store
// wrote for the hub and that referral (every attribute but the identity ones kept), with their claim
// items, put with BatchWriteItem; the counters move through the store's counterUpdate in one
// transaction. Through createMember/createReferral alone the large account took 150 s on two busy cores
// (15,000+ transactions and batch reads). Set SCALE_REPORT=1 to print the seeding time and the figures.
import { BatchWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { resetConfig } from '../../shared/config';
import { newEntityId } from '../../shared/domain/ids';
import type { Member } from '../../shared/domain/models';
import { db, tableName } from '../../shared/store/client';
import { createMember } from '../../shared/store/members';
import { counterUpdate, getItem, transact } from '../../shared/store/ops';
import { COUNTER_SHARDS } from '../../shared/store/shards';
import { createReferral } from '../../shared/store/referrals';
import { saveSubscription, type SubscriptionData } from '../../shared/store/subscriptions';
import { uniqueKeys, keys, type Key } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { describeCalls, itemsRead, recordDynamoCalls, type DynamoCall } from '../support/dynamo-calls';
import { fillCounterShards } from '../support/counter-shards';
import { newAccount } from '../support/fixtures';

const SMALL = { size: 10, subscriptions: 10 };
const LARGE = { size: 3_000, subscriptions: 300 };
/** Writes in flight at once while seeding (DynamoDB Local on two shared cores). */
const CONCURRENCY = 8;
const DEFAULT_PAGE_SIZE = 20;
/** A page size at which the small account's pages are full too (where it holds at least 6 matching items). */
const FULL_PAGE_SIZE = 5;
/** Keys per BatchGetItem (a DynamoDB limit): nested reads of more keys take more than one call. */
const BATCH_GET_LIMIT = 100;
const report = process.env.SCALE_REPORT === '1';

const STATUS_CYCLE = ['active', 'active', 'active', 'past_due'] as const;
const SIDE_MEMBERS = 2;

type Item = Record<string, unknown>;

interface Seeded {
  size: number;
  accountId: string;
  key: string;
  mainCampaignId: string;
  /** The member with 60 % of the referrals. */
  hubId: string;
  /** A member written as a copy (large account) or by createMember (small), and one of its referred users. */
  sample: { memberId: string; code: string; user: string };
  expected: Record<string, number>;
}

/** Runs fn(0..n-1) with at most `limit` calls in flight. */
async function pool(n: number, limit: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      await fn(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, n) }, worker));
}

function subscriptionData(id: number, status: string): SubscriptionData {
  return {
    id,
    unit_price: '10.00',
    currency: 'USD',
    status,
    email: `billing-${id}@example.com`,
    next_bill_date: '2031-07-01',
    last_bill_date: '2031-06-01',
    plan: {
      id: 9001,
      name: 'Pro monthly',
      amount: '10.00',
      currency: 'USD',
      interval: 'month',
      frequency: 1,
      descriptor: '$10.00 / month',
    },
  };
}

async function createCampaign(key: string, name: string): Promise<string> {
  const res = await api('POST', '/v1/campaigns/', { key, body: { name, allows_credit: true, credit_amount: '5.00' } });
  if (res.status !== 201) throw new Error(`campaign: ${res.status} ${res.text}`);
  return res.body.id as string;
}

async function stored(key: Key): Promise<Item> {
  const item = await getItem(key);
  if (!item) throw new Error(`seeding: no item at ${key.pk} / ${key.sk}`);
  return item;
}

/** Puts items 25 per BatchWriteItem, retrying unprocessed ones (a bounded number of times). */
async function putAll(items: Item[]): Promise<void> {
  const chunks: Item[][] = [];
  for (let i = 0; i < items.length; i += 25) chunks.push(items.slice(i, i + 25));
  await pool(chunks.length, CONCURRENCY, async (c) => {
    let pending = (chunks[c] as Item[]).map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 1; pending.length > 0; attempt++) {
      if (attempt > 20) throw new Error('seeding: BatchWriteItem kept leaving items unprocessed');
      const out = await db().send(new BatchWriteCommand({ RequestItems: { [tableName()]: pending } }));
      pending = (out.UnprocessedItems?.[tableName()] ?? []) as typeof pending;
    }
  });
}

/**
 * `size` members: 2 in a side campaign without a subscription, created first, then `size - 2` in the
 * main campaign, the newest `subscriptions` of them with a subscription each (all of them in the small
 * account); `subscriptions` subscriptions (3 active : 1 past_due); `size` referrals, 60 % by one member
 * (the hub, the oldest main-campaign member), the rest spread over the other main-campaign members.
 */
async function seed({ size, subscriptions }: { size: number; subscriptions: number }, copies: boolean): Promise<Seeded> {
  const { accountId, apiKey: key } = await newAccount('regular');
  const mainCampaignId = await createCampaign(key, 'Main');
  const sideCampaignId = await createCampaign(key, 'Side');
  await createCampaign(key, 'Empty');

  const status = (i: number) => STATUS_CYCLE[i % STATUS_CYCLE.length] as string;
  await pool(subscriptions, CONCURRENCY, async (i) => {
    await saveSubscription(accountId, subscriptionData(i + 1, status(i)));
  });

  const bulkCount = size - SIDE_MEMBERS;
  // Bulk member j (creation order) has subscription `subscriptionOf(j)`, or none.
  const firstWithSubscription = Math.max(0, bulkCount - subscriptions);
  const subscriptionOf = (j: number) => (j >= firstWithSubscription ? j - firstWithSubscription + 1 : null);
  const hubReferrals = Math.ceil(size * 0.6);
  // Referral r's referrer, as an index into the bulk members.
  const referrerOf = (r: number) => (r < hubReferrals ? 0 : 1 + (r % (bulkCount - 1)));

  const member = async (n: number, campaignId: string, subscriptionId: number | null): Promise<Member> =>
    (
      await createMember(accountId, {
        identifier: `m-${n}`,
        email: `m-${n}@example.com`,
        first_name: null,
        last_name: null,
        campaign: { id: campaignId },
        subscription: subscriptionId === null ? null : { id: subscriptionId },
      })
    ).member;
  for (let n = 0; n < SIDE_MEMBERS; n++) await member(n, sideCampaignId, null);

  let bulk: { id: string; code: string }[];
  if (!copies) {
    const created: Member[] = [];
    // Sequentially, so creation order is id order (which members are newest is part of the shape).
    for (let j = 0; j < bulkCount; j++) created.push(await member(SIDE_MEMBERS + j, mainCampaignId, subscriptionOf(j)));
    bulk = created;
    await pool(size, CONCURRENCY, async (r) => {
      const referrer = bulk[referrerOf(r)] as { code: string };
      await createReferral(accountId, { user_identifier: `u-${r}`, member_code: referrer.code }, 'api');
    });
  } else {
    bulk = await copiedMembersAndReferrals();
  }
  // The newest bulk member (a copy in the large account) and the last user it referred.
  const sampleIndex = bulkCount - 1;
  const sample = bulk[sampleIndex] as { id: string; code: string };
  let sampleUser = -1;
  for (let r = 0; r < size; r++) if (referrerOf(r) === sampleIndex) sampleUser = r;
  const active = Array.from({ length: subscriptions }, (_, i) => status(i)).filter((s) => s === 'active').length;
  // Every shard of the listed counts present in both accounts, so their reads return the same items.
  await fillCounterShards(accountId, ['referrals', 'members', 'subscriptions', 'subscriptions#active', 'subscriptions#past_due']);
  return {
    size,
    accountId,
    key,
    mainCampaignId,
    hubId: (bulk[0] as { id: string }).id,
    sample: { memberId: sample.id, code: sample.code, user: `u-${sampleUser}` },
    expected: {
      referrals: size,
      'referrals?member=': hubReferrals,
      members: size,
      'members?campaign=': bulkCount,
      campaigns: 3,
      subscriptions,
      'subscriptions?status=active': active,
      'subscriptions?status=past_due': subscriptions - active,
    },
  };

  /** The hub and its first referral through the store; every other bulk member and referral copied from them. */
  async function copiedMembersAndReferrals(): Promise<{ id: string; code: string }[]> {
    const hub = await member(SIDE_MEMBERS, mainCampaignId, subscriptionOf(0));
    const first = (await createReferral(accountId, { user_identifier: 'u-0', member_code: hub.code }, 'api')).referral;
    const template = {
      member: await stored(keys.member(accountId, hub.id)),
      code: await stored(uniqueKeys.memberCodeClaim(accountId, hub.code)),
      email: await stored(uniqueKeys.memberEmailClaim(accountId, hub.email)),
      identifier: await stored(uniqueKeys.memberIdentifierClaim(accountId, hub.identifier)),
      referral: await stored(keys.referral(accountId, first.id)),
      user: await stored(uniqueKeys.referredUserClaim(accountId, 'u-0')),
    };
    const { subscription_id: _none, ...memberBase } = template.member;
    const now = Math.floor(Date.now() / 1000);

    const members: { id: string; code: string }[] = [{ id: hub.id, code: hub.code }];
    for (let j = 1; j < bulkCount; j++) members.push({ id: newEntityId(), code: `SEED${SIDE_MEMBERS + j}` });
    const referralsOf = new Array<number>(bulkCount).fill(0);
    for (let r = 0; r < size; r++) {
      const k = referrerOf(r);
      referralsOf[k] = (referralsOf[k] ?? 0) + 1;
    }

    const items: Item[] = [];
    const attached: { subscriptionId: number; memberId: string }[] = [];
    for (let j = 1; j < bulkCount; j++) {
      const { id, code } = members[j] as { id: string; code: string };
      const identifier = `m-${SIDE_MEMBERS + j}`;
      const email = `${identifier}@example.com`;
      const subscriptionId = subscriptionOf(j);
      if (subscriptionId !== null) attached.push({ subscriptionId, memberId: id });
      items.push(
        {
          ...memberBase,
          ...keys.member(accountId, id),
          id,
          identifier,
          email,
          code,
          referrals: referralsOf[j],
          created_at: now,
          gsi1sk: id,
          ...(subscriptionId !== null ? { subscription_id: subscriptionId } : {}),
        },
        { ...template.code, ...uniqueKeys.memberCodeClaim(accountId, code), member_id: id },
        { ...template.email, ...uniqueKeys.memberEmailClaim(accountId, email), member_id: id },
        { ...template.identifier, ...uniqueKeys.memberIdentifierClaim(accountId, identifier), member_id: id },
      );
    }
    for (let r = 1; r < size; r++) {
      const id = newEntityId();
      const memberId = (members[referrerOf(r)] as { id: string }).id;
      const user = `u-${r}`;
      items.push(
        {
          ...template.referral,
          ...keys.referral(accountId, id),
          id,
          member_id: memberId,
          user_identifier: user,
          created_at: now,
          gsi1pk: keys.referralsByMember(accountId, memberId),
          gsi1sk: id,
        },
        { ...template.user, ...uniqueKeys.referredUserClaim(accountId, user), referral_id: id, member_id: memberId },
      );
    }
    await putAll(items);
    // What the store's transactions would have changed along with each item.
    await pool(attached.length, CONCURRENCY, async (i) => {
      const { subscriptionId, memberId } = attached[i] as { subscriptionId: number; memberId: string };
      await db().send(
        new UpdateCommand({
          TableName: tableName(),
          Key: keys.subscription(accountId, subscriptionId),
          UpdateExpression: 'SET member_id = :m',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(member_id)',
          ExpressionAttributeValues: { ':m': memberId },
        }),
      );
    });
    await transact([
      counterUpdate(accountId, 'members', bulkCount - 1),
      counterUpdate(accountId, 'referrals', size - 1),
      {
        Update: {
          TableName: tableName(),
          Key: keys.campaign(accountId, mainCampaignId),
          UpdateExpression: 'ADD member_count :d',
          ExpressionAttributeValues: { ':d': bulkCount - 1 },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: keys.member(accountId, hub.id),
          UpdateExpression: 'ADD referrals :d',
          ExpressionAttributeValues: { ':d': (referralsOf[0] as number) - 1 },
        },
      },
    ]);
    return members;
  }
}

interface ListCase {
  name: string;
  path: (s: Seeded) => string;
  /** Sequential round trips of a page: the architecture's list budget (Query || counter, + 1 BatchGet to nest). */
  depth: number;
  /** Keys the page's nested read asks for (members: campaigns not already known + subscriptions), from the response. */
  nested: (results: any[]) => number;
  /** Items the count's read returns: a sharded counter's COUNTER_SHARDS (shared/store/shards.ts), or one item (a limit's counter, the filter's parent). */
  countItems: number;
}

const none = () => 0;
const LISTS: ListCase[] = [
  { name: 'referrals', path: () => '/v1/referrals/', depth: 1, nested: none, countItems: COUNTER_SHARDS },
  { name: 'referrals?member=', path: (s) => `/v1/referrals/?member=${s.hubId}`, depth: 1, nested: none, countItems: 1 },
  {
    name: 'members',
    path: () => '/v1/members/',
    depth: 2,
    nested: (results) =>
      new Set(results.filter((m) => m.campaign).map((m) => m.campaign.id)).size + results.filter((m) => m.subscription).length,
    countItems: COUNTER_SHARDS,
  },
  {
    name: 'members?campaign=',
    path: (s) => `/v1/members/?campaign=${s.mainCampaignId}`,
    depth: 2,
    // The filter's campaign is read along with the page, so only subscriptions are nested.
    nested: (results) => results.filter((m) => m.subscription).length,
    countItems: 1,
  },
  { name: 'campaigns', path: () => '/v1/campaigns/', depth: 1, nested: none, countItems: 1 },
  { name: 'subscriptions', path: () => '/v1/subscriptions/', depth: 1, nested: none, countItems: COUNTER_SHARDS },
  {
    name: 'subscriptions?status=active',
    path: () => '/v1/subscriptions/?status=active',
    depth: 1,
    nested: none,
    countItems: COUNTER_SHARDS,
  },
  {
    name: 'subscriptions?status=past_due',
    path: () => '/v1/subscriptions/?status=past_due',
    depth: 1,
    nested: none,
    countItems: COUNTER_SHARDS,
  },
];

interface Cost {
  status: number;
  body: any;
  calls: DynamoCall[];
  depth: number;
  items: number;
  /** Items the page's Query returned. */
  queried: number;
}

async function cost(s: Seeded, path: string): Promise<Cost> {
  const recording = recordDynamoCalls();
  let res: ApiResponse;
  try {
    res = await api('GET', path, { key: s.key });
  } finally {
    recording.stop();
  }
  const calls = [...recording.calls];
  return {
    status: res.status,
    body: res.body,
    calls,
    depth: recording.depth(),
    items: itemsRead(calls),
    queried: itemsRead(calls.filter((c) => c.command === 'Query')),
  };
}

const withPageSize = (path: string, size: number | null) =>
  size === null ? path : `${path}${path.includes('?') ? '&' : '?'}page_size=${size}`;

/** The path and query of an absolute `next` link. */
const relative = (link: string) => {
  const url = new URL(link);
  return `${url.pathname}${url.search}`;
};

/** Each call's operation and items read, order-free (parallel calls finish in any order). */
const perCall = (c: Cost) =>
  c.calls
    .map((x) => `${x.command}:${x.itemsRead ?? '-'}`)
    .sort()
    .join(', ');

/**
 * What one page must cost (after `skipped` items of earlier pages): the Query reads min(matching items
 * left, page_size + 1) items, the count its countItems, the nested read one item per key;
 * the calls are Query + counter + one BatchGet per 100 nested keys; the depth is the list's budget.
 * Returns what differs.
 */
function checkPage(list: ListCase, c: Cost, matching: number, pageSize: number, where: string, skipped = 0): string[] {
  if (c.status !== 200) return [`${where}: answered ${c.status}: ${JSON.stringify(c.body)}`];
  const problems: string[] = [];
  const detail = `[${describeCalls(c.calls)}]`;
  if (c.body.count !== matching) problems.push(`${where}: count ${c.body.count}, expected ${matching}`);
  const available = matching - skipped;
  const onPage = Math.min(available, pageSize);
  if (c.body.results.length !== onPage) problems.push(`${where}: ${c.body.results.length} results, expected ${onPage}`);
  const nested = list.nested(c.body.results);
  const calls = 2 + Math.ceil(nested / BATCH_GET_LIMIT);
  if (c.depth > list.depth)
    problems.push(
      `${where}: ${c.depth} sequential round trips, over the list budget of ${list.depth} (docs/design/architecture.md "Round-trip budgets") ${detail}`,
    );
  if (c.calls.length !== calls)
    problems.push(`${where}: ${c.calls.length} calls, expected ${calls} (Query, counter, ${nested} nested keys) ${detail}`);
  const queried = Math.min(available, pageSize + 1);
  if (c.queried !== queried) problems.push(`${where}: the Query read ${c.queried} items, expected ${queried} ${detail}`);
  const expected = queried + list.countItems + nested;
  if (c.items !== expected) problems.push(`${where}: ${c.items} items read, expected ${expected} ${detail}`);
  return problems;
}

let small: Seeded;
let large: Seeded;

beforeAll(async () => {
  // A warm container: the API key is resolved from the cache (the suite runs with the cache off), so
  // every measured request shows only its own round trips.
  process.env.AUTH_CACHE_TTL_SECONDS = '3600';
  // The API key's rate-limit window is one constant UpdateItem per request whatever the account's size
  // (round-trips.test.ts counts it); running beside the reads it would blur the depth measured here.
  process.env.API_RATE_LIMITS = 'starter=0,small=0,regular=0,unlimited=0';
  resetConfig();
  const started = Date.now();
  [small, large] = await Promise.all([seed(SMALL, false), seed(LARGE, true)]);
  if (report) process.stdout.write(`\nseeded the ${SMALL.size}- and ${LARGE.size}-item accounts in ${Date.now() - started} ms\n`);
  // Warm the auth cache for both keys.
  for (const s of [small, large]) expect((await api('GET', '/v1/campaigns/', { key: s.key })).status).toBe(200);
}, 240_000);

describe('the seeded accounts', () => {
  it('copied members and referrals read and replay like created ones', async () => {
    for (const s of [small, large]) {
      const member = await api('GET', `/v1/members/${s.sample.memberId}/`, { key: s.key });
      expect({ size: s.size, status: member.status }).toEqual({ size: s.size, status: 200 });
      expect(member.body).toMatchObject({
        id: s.sample.memberId,
        code: s.sample.code,
        campaign: { id: s.mainCampaignId },
        subscription: { id: expect.any(Number) },
      });
      const hub = await api('GET', `/v1/members/${s.hubId}/`, { key: s.key });
      expect(hub.body.stats.referrals).toBe(s.expected['referrals?member=']);
      const byUser = await api('GET', `/v1/referrals/user/${s.sample.user}/`, { key: s.key });
      expect({ size: s.size, status: byUser.status, member: byUser.body.member_id }).toEqual({
        size: s.size,
        status: 200,
        member: s.sample.memberId,
      });
      // The claims are there: the same pair again is a replay (200, the same referral), not a new one.
      const replay = await api('POST', '/v1/referrals/', {
        key: s.key,
        body: { user_identifier: s.sample.user, member_code: s.sample.code },
      });
      expect({ size: s.size, status: replay.status, id: replay.body.id }).toEqual({ size: s.size, status: 200, id: byUser.body.id });
    }
  });
});

describe(`list pages cost the same in a ${SMALL.size}-item and a ${LARGE.size.toLocaleString('en')}-item account`, () => {
  for (const list of LISTS) {
    it(`${list.name}: first page (default, page_size=100, page_size=${FULL_PAGE_SIZE}), then the second page`, async () => {
      const problems: string[] = [];
      const lines: string[] = [];
      for (const size of [null, 100, FULL_PAGE_SIZE]) {
        const pageSize = size ?? DEFAULT_PAGE_SIZE;
        const label = `${list.name} page_size=${size ?? 'default'}`;
        const [a, b] = [await cost(small, withPageSize(list.path(small), size)), await cost(large, withPageSize(list.path(large), size))];
        for (const [s, c] of [
          [small, a],
          [large, b],
        ] as const) {
          problems.push(...checkPage(list, c, s.expected[list.name] as number, pageSize, `${label}, ${s.size}-item account`));
          lines.push(
            `${label}, ${s.size}-item account: calls=${c.calls.length} depth=${c.depth} items=${c.items} count=${c.body?.count} [${describeCalls(c.calls)}]`,
          );
        }
        if (a.depth !== b.depth) problems.push(`${label}: depth ${a.depth} in the small account, ${b.depth} in the large one`);
        // Where both accounts' pages are full, the same calls read the same items.
        const full = Math.min(small.expected[list.name] as number, large.expected[list.name] as number) > pageSize;
        if ((full || list.name === 'campaigns') && perCall(a) !== perCall(b)) {
          problems.push(`${label}: full pages read differently: ${perCall(a)} vs ${perCall(b)}`);
        }

        // The large account's second page, through `next`, costs what its first page cost.
        if (b.status !== 200) continue;
        const next = b.body.next as string | null;
        if (b.body.count > pageSize && !next) problems.push(`${label}, ${large.size}-item account: no next link`);
        if (!next) continue;
        const second = await cost(large, relative(next));
        problems.push(
          ...checkPage(
            list,
            second,
            large.expected[list.name] as number,
            pageSize,
            `${label}, ${large.size}-item account, second page`,
            pageSize,
          ),
        );
        if (second.status === 200) {
          if (second.depth !== b.depth || perCall(second) !== perCall(b)) {
            problems.push(
              `${label}, ${large.size}-item account: second page ${perCall(second)} at depth ${second.depth}, first ${perCall(b)} at depth ${b.depth}`,
            );
          }
          const firstIds = new Set(b.body.results.map((r: { id: unknown }) => r.id));
          if (second.body.results.some((r: { id: unknown }) => firstIds.has(r.id)))
            problems.push(`${label}: the second page repeats items of the first`);
          lines.push(
            `${label}, ${large.size}-item account, second page: calls=${second.calls.length} depth=${second.depth} items=${second.items}`,
          );
        }
      }
      if (report) process.stdout.write(`${lines.join('\n')}\n`);
      expect(problems).toEqual([]);
    });
  }
});
