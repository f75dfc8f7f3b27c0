// Counter exactness (issue 4, item 3). Random sequences of campaign, member and referral writes -
// creates, deletes, campaign moves, duplicate retries, the same user with another code - run through
// the real HTTP handlers, partly concurrently (groups of 2-5 requests under Promise.all). After each
// sequence every `count` the API reports (the three lists, `?member=`, `?campaign=`), every member's
// `stats.referrals` and the raw counter attributes behind them must equal the real number of items,
// found by a Scan of the account's items. The Scan goes through verificationClient() (not instrumented), never the
// app's (instrumented) client: the app itself must never Scan or COUNT.
//
// A 503 (a transaction conflict still lost after the retries) is an accepted answer for a request of a
// concurrent group, never for one running alone; whatever the answers, the state must be consistent.
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { campaignLimit, type Plan } from '../../shared/domain/plans';
import { api, type ApiResponse } from '../support/api';
import { closeVerificationClient, verificationClient } from '../support/dynamo-calls';
import { newAccount } from '../support/fixtures';
import { useOwnTable } from '../support/own-table';

// This file Scans the table to check what requests wrote: a table of its own keeps those Scans small.
beforeAll(useOwnTable);

// ---- verification reads (uninstrumented) ----------------------------------------------------------

afterAll(() => {
  closeVerificationClient();
});

type Item = Record<string, unknown>;

/** Every item of one account (pk `A#<acct>...`), strongly consistent. Test-only. */
async function scanAccount(accountId: string): Promise<Item[]> {
  const items: Item[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await verificationClient().send(
      new ScanCommand({
        TableName: process.env.TABLE_NAME,
        FilterExpression: 'begins_with(pk, :p)',
        ExpressionAttributeValues: { ':p': `A#${accountId}` },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

// ---- operations ---------------------------------------------------------------------------------

/** Targets are indices into the ids seen so far (deleted ones included), resolved when the op runs. */
type Op =
  | { kind: 'createCampaign'; name: number }
  | { kind: 'deleteCampaign'; campaign: number }
  | { kind: 'createMember'; who: number; campaign: number | null }
  | { kind: 'deleteMember'; member: number }
  | { kind: 'moveMember'; member: number; campaign: number | null }
  | { kind: 'createReferral'; member: number; user: number; self: boolean }
  | { kind: 'deleteReferral'; referral: number };

type Step = { concurrent: false; ops: [Op] } | { concurrent: true; ops: Op[] };

const idx = fc.nat({ max: 40 });
const opArb: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('createCampaign' as const), name: fc.nat({ max: 6 }) }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('deleteCampaign' as const), campaign: idx }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('createMember' as const), who: fc.nat({ max: 10 }), campaign: fc.option(idx) }), weight: 6 },
  { arbitrary: fc.record({ kind: fc.constant('deleteMember' as const), member: idx }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('moveMember' as const), member: idx, campaign: fc.option(idx) }), weight: 6 },
  {
    arbitrary: fc.record({
      kind: fc.constant('createReferral' as const),
      member: idx,
      // A small pool of users: the same pair again (a duplicate retry) and the same user with another
      // member's code happen often.
      user: fc.nat({ max: 8 }),
      self: fc.constant(false),
    }),
    weight: 10,
  },
  {
    arbitrary: fc.record({ kind: fc.constant('createReferral' as const), member: idx, user: fc.constant(0), self: fc.constant(true) }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('deleteReferral' as const), referral: idx }), weight: 4 },
);

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { arbitrary: opArb.map((op): Step => ({ concurrent: false, ops: [op] })), weight: 3 },
  // Independent requests at once.
  { arbitrary: fc.array(opArb, { minLength: 2, maxLength: 5 }).map((ops): Step => ({ concurrent: true, ops })), weight: 2 },
  // The same request 2-4 times at once (a client retrying before its first attempt answered).
  {
    arbitrary: fc
      .tuple(opArb, fc.integer({ min: 2, max: 4 }))
      .map(([op, n]): Step => ({ concurrent: true, ops: Array.from({ length: n }, () => op) })),
    weight: 1,
  },
);

const sequenceArb = fc.record({
  plan: fc.constantFrom<Plan>('small', 'regular', 'unlimited'),
  steps: fc.array(stepArb, { minLength: 8, maxLength: 16 }),
});

interface Pools {
  campaigns: string[];
  members: { id: string; code: string; identifier: string }[];
  referrals: { id: string; user: string; code: string }[];
}

const pick = <T>(pool: T[], i: number): T | undefined => (pool.length === 0 ? undefined : pool[i % pool.length]);

/** Statuses each operation may answer (besides 503 in a concurrent group). */
const ALLOWED: Record<Op['kind'], number[]> = {
  createCampaign: [201, 400, 403],
  deleteCampaign: [204, 404],
  createMember: [201, 400],
  deleteMember: [204, 404],
  moveMember: [200, 400, 404],
  createReferral: [200, 400],
  deleteReferral: [204, 404],
};

async function runOp(op: Op, key: string, pools: Pools): Promise<ApiResponse | null> {
  switch (op.kind) {
    case 'createCampaign': {
      const res = await api('POST', '/v1/campaigns/', { key, body: { name: `Campaign ${op.name}` } });
      if (res.status === 201) pools.campaigns.push(res.body.id);
      return res;
    }
    case 'deleteCampaign': {
      const id = pick(pools.campaigns, op.campaign);
      return id === undefined ? null : api('DELETE', `/v1/campaigns/${id}/`, { key });
    }
    case 'createMember': {
      const campaign = op.campaign === null ? undefined : pick(pools.campaigns, op.campaign);
      const res = await api('POST', '/v1/members/', {
        key,
        body: {
          identifier: `member-${op.who}`,
          email: `member-${op.who}@example.com`,
          ...(campaign ? { campaign: { id: campaign } } : {}),
        },
      });
      if (res.status === 201) pools.members.push({ id: res.body.id, code: res.body.code, identifier: res.body.identifier });
      return res;
    }
    case 'deleteMember': {
      const member = pick(pools.members, op.member);
      return member === undefined ? null : api('DELETE', `/v1/members/${member.id}/`, { key });
    }
    case 'moveMember': {
      const member = pick(pools.members, op.member);
      if (member === undefined) return null;
      const campaign = op.campaign === null ? null : pick(pools.campaigns, op.campaign);
      return api('PATCH', `/v1/members/${member.id}/`, { key, body: { campaign: campaign ? { id: campaign } : null } });
    }
    case 'createReferral': {
      const member = pick(pools.members, op.member);
      if (member === undefined) return null;
      const user = op.self ? member.identifier : `user-${op.user}`;
      const res = await api('POST', '/v1/referrals/', { key, body: { user_identifier: user, member_code: member.code } });
      if (res.status === 200 && !pools.referrals.some((r) => r.id === res.body.id)) {
        pools.referrals.push({ id: res.body.id, user, code: member.code });
      }
      return res;
    }
    case 'deleteReferral': {
      const referral = pick(pools.referrals, op.referral);
      return referral === undefined ? null : api('DELETE', `/v1/referrals/${referral.id}/`, { key });
    }
  }
}

function describeOp(op: Op, res: ApiResponse | null): string {
  return `${JSON.stringify(op)} -> ${res === null ? 'skipped (no target yet)' : `${res.status} ${res.text.slice(0, 300)}`}`;
}

// ---- the invariants -----------------------------------------------------------------------------

const countOf = (items: Item[], pred: (i: Item) => boolean) => items.filter(pred).length;

async function listCount(key: string, path: string): Promise<number> {
  const res = await api('GET', path, { key });
  if (res.status !== 200) throw new Error(`GET ${path} -> ${res.status} ${res.text.slice(0, 200)}`);
  return res.body.count as number;
}

/** Every count the API and the raw counters report, next to the same number counted from the Scan. */
async function checkConsistency(accountId: string, key: string, plan: Plan): Promise<void> {
  const items = await scanAccount(accountId);
  const byPk = (suffix: string) => items.filter((i) => i.pk === `A#${accountId}#${suffix}`);
  const campaigns = byPk('CAMPAIGN').filter((i) => i.type === 'Campaign');
  const live = campaigns.filter((c) => c.deleted_at === undefined);
  const deleted = campaigns.filter((c) => c.deleted_at !== undefined);
  const members = byPk('MEMBER').filter((i) => i.type === 'Member');
  const referrals = byPk('REFERRAL').filter((i) => i.type === 'Referral');
  // A counter is the sum of its shards (shared/store/shards.ts): `A#<acct>` and `A#<acct>#COUNT#<name>#<s>`.
  const counter = (name: string) =>
    items
      .filter((i) => i.sk === `COUNT#${name}` && (i.pk === `A#${accountId}` || String(i.pk).startsWith(`A#${accountId}#COUNT#${name}#`)))
      .reduce((n, i) => n + Number(i.n ?? 0), 0);
  const claims = (kind: string) =>
    items.filter((i) => typeof i.pk === 'string' && i.pk.startsWith(`A#${accountId}#${kind}#`) && i.sk === 'CLAIM');

  // What the API says, and what the raw attributes say, side by side with the truth (one toEqual
  // shows every difference at once).
  const actual: Record<string, unknown> = {};
  const expected: Record<string, unknown> = {};
  const compare = (what: string, got: unknown, want: unknown) => {
    actual[what] = got;
    expected[what] = want;
  };

  const limit = campaignLimit(plan);
  compare('campaigns within plan limit', limit === null || live.length <= limit, true);

  const [campaignCount, memberCount, referralCount] = await Promise.all([
    listCount(key, '/v1/campaigns/?page_size=100'),
    listCount(key, '/v1/members/?page_size=100'),
    listCount(key, '/v1/referrals/?page_size=100'),
  ]);
  compare('GET /v1/campaigns/ count', campaignCount, live.length);
  compare('GET /v1/members/ count', memberCount, members.length);
  compare('GET /v1/referrals/ count', referralCount, referrals.length);
  compare('COUNT#campaigns', counter('campaigns'), live.length);
  compare('COUNT#members', counter('members'), members.length);
  compare('COUNT#referrals', counter('referrals'), referrals.length);

  await Promise.all([
    ...members.map(async (m) => {
      const id = String(m.id);
      const made = countOf(referrals, (r) => r.member_id === id);
      const [filtered, detail] = await Promise.all([
        listCount(key, `/v1/referrals/?member=${id}`),
        api('GET', `/v1/members/${id}/`, { key }),
      ]);
      compare(`member ${id} GET ?member= count`, filtered, made);
      compare(`member ${id} stats.referrals`, detail.body?.stats?.referrals, made);
      compare(`member ${id} raw referrals`, Number(m.referrals ?? 0), made);
    }),
    ...live.map(async (c) => {
      const id = String(c.id);
      const inCampaign = countOf(members, (m) => m.campaign_id === id);
      compare(`campaign ${id} GET ?campaign= count`, await listCount(key, `/v1/members/?campaign=${id}`), inCampaign);
      compare(`campaign ${id} raw member_count`, Number(c.member_count ?? 0), inCampaign);
    }),
    ...deleted.map(async (c) => {
      const id = String(c.id);
      compare(`deleted campaign ${id} GET ?campaign= count`, await listCount(key, `/v1/members/?campaign=${id}`), 0);
    }),
  ]);

  // The uniqueness claims behind the counts: exactly one per live owner, pointing back at it.
  const sortedPairs = (pairs: string[]) => [...pairs].sort();
  compare(
    'campaign name claims',
    sortedPairs(claims('CAMPAIGN_NAME').map((c) => String(c.campaign_id))),
    sortedPairs(live.map((c) => String(c.id))),
  );
  for (const kind of ['MEMBER_EMAIL', 'MEMBER_IDENTIFIER']) {
    compare(`${kind} claims`, sortedPairs(claims(kind).map((c) => String(c.member_id))), sortedPairs(members.map((m) => String(m.id))));
  }
  // The code claim carries the member's campaign (referral creation reads it from there).
  compare(
    'MEMBER_CODE claims (member, campaign)',
    sortedPairs(claims('MEMBER_CODE').map((c) => `${String(c.member_id)}/${String(c.campaign_id ?? '-')}`)),
    sortedPairs(members.map((m) => `${String(m.id)}/${String(m.campaign_id ?? '-')}`)),
  );
  compare(
    'REFERRED_USER claims (referral, member)',
    sortedPairs(claims('REFERRED_USER').map((c) => `${String(c.referral_id)}/${String(c.member_id)}`)),
    sortedPairs(referrals.map((r) => `${String(r.id)}/${String(r.member_id)}`)),
  );
  // One referral per referred user.
  const users = referrals.map((r) => String(r.user_identifier));
  compare('referred users are distinct', new Set(users).size, users.length);

  expect(actual).toEqual(expected);
}

// ---- the property -------------------------------------------------------------------------------

describe('counter exactness under random, partly concurrent sequences', () => {
  it('every count and member stat equals the real number of items', async () => {
    let sequences = 0;
    let requests = 0;
    let unavailable = 0;
    const outcomes: Record<string, number> = {};
    await fc.assert(
      fc.asyncProperty(sequenceArb, async ({ plan, steps }) => {
        sequences++;
        const { accountId, apiKey: key } = await newAccount(plan);
        const pools: Pools = { campaigns: [], members: [], referrals: [] };
        const log: string[] = [];
        for (const step of steps) {
          const results = await Promise.all(step.ops.map((op) => runOp(op, key, pools)));
          step.ops.forEach((op, i) => {
            const res = results[i] ?? null;
            log.push(`${step.concurrent ? '  [concurrent] ' : ''}${describeOp(op, res)}`);
            if (res === null) return;
            requests++;
            if (res.status === 503) unavailable++;
            outcomes[`${op.kind} ${res.status}`] = (outcomes[`${op.kind} ${res.status}`] ?? 0) + 1;
            const allowed = [...ALLOWED[op.kind], ...(step.concurrent ? [503] : [])];
            if (!allowed.includes(res.status)) {
              throw new Error(
                `unexpected status ${res.status} for ${describeOp(op, res)}\n(plan ${plan})\nsequence so far:\n${log.join('\n')}`,
              );
            }
          });
        }
        try {
          await checkConsistency(accountId, key, plan);
        } catch (err) {
          throw new Error(`inconsistent after (plan ${plan}):\n${log.join('\n')}\n\n${(err as Error).message}`);
        }
      }),
      { numRuns: 24 },
    );
    if (process.env.TEST_REPORTS === '1')
      console.log(`counters: ${sequences} sequences, ${requests} write requests, ${unavailable} answered 503`, outcomes);
  }, 240_000);
});
