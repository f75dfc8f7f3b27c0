// Money races of issue 23 on DynamoDB Local, through the API:
// - #23: mark-failed racing mark-paid (of the payout, or of its batch) on a payout of 21, 50 and 100
//   rewards (2, 3 and 5 chunks; 200 took 28 s of the suite's budget and crossed no boundary 100 does not).
//   The rewards move in chunks of 20, so without a claim a failure's first chunk could commit between a
//   payment's read and its chunks: the payout ended paid with all its rewards listed while 20 of
//   them had gone to a new payout, which a later batch paid again. Exactly one outcome must win.
//   Each case runs with the interleaving of the report forced (the payment's first reward chunk and the
//   failure's last write are held back 300 ms, so without a claim the failure's first chunk lands in
//   between), and the 21-reward ones with natural timing too.
// - #31: a referral delete racing a batch that takes the payout holding the referral's commissions: a
//   delete that answers 409 must not have voided any of them.
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { LedgerReward, Payout } from '../../shared/domain/lifecycle';
import { approveReward } from '../../shared/flows/lifecycle';
import { createBatch } from '../../shared/flows/payouts';
import { db, rawClient, tableName } from '../../shared/store/client';
import { toLedgerReward } from '../../shared/store/ledger';
import { getItem } from '../../shared/store/ops';
import { toPayout } from '../../shared/store/payouts';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys, moneyListKeys, moneyKeys } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { newAccount } from '../support/fixtures';

const AMOUNT = 100;
let serial = 0;

interface World {
  accountId: string;
  key: string;
  memberId: string;
  campaignId: string;
}

async function world(): Promise<World> {
  const { accountId, apiKey: key } = await newAccount('unlimited');
  const campaign = await api('POST', '/v1/campaigns/', {
    key,
    body: { name: `races-${++serial}`, allows_commission: true, commission_amount: '1.00', approval: 'manual' },
  });
  expect(campaign.status).toBe(201);
  const member = await api('POST', '/v1/members/', {
    key,
    body: {
      identifier: `payee-${serial}`,
      email: `payee-${serial}@example.com`,
      campaign: { id: campaign.body.id },
      payout_email: `payee-${serial}@pay.example.com`,
    },
  });
  expect(member.status).toBe(201);
  return { accountId, key, memberId: member.body.id, campaignId: campaign.body.id };
}

/** `count` commissions of 1.00 recorded on referrals of the member (10 each) and approved: their ids. */
async function commissions(
  w: World,
  count: number,
  opts: { approve?: boolean } = {},
): Promise<{ rewardIds: string[]; referralIds: string[] }> {
  const rewardIds: string[] = [];
  const referralIds: string[] = [];
  const code = (await api('GET', `/v1/members/${w.memberId}/`, { key: w.key })).body.code as string;
  for (let made = 0; made < count; made += 10) {
    const ref = await api('POST', '/v1/referrals/', { key: w.key, body: { user_identifier: `u-${++serial}`, member_code: code } });
    expect({ status: ref.status, body: ref.status < 300 ? null : ref.body }).toEqual({
      status: ref.status < 300 ? ref.status : 201,
      body: null,
    });
    referralIds.push(ref.body.id);
    const stored = toReferral(await getItem(keys.referral(w.accountId, ref.body.id)))!;
    const planned = Array.from({ length: Math.min(10, count - made) }, (_, i) => ({
      payment_id: serial * 1000 + i + 1,
      type: 'commission' as const,
      amount: AMOUNT,
      currency: 'USD',
    }));
    const after = await recordRewards(w.accountId, stored, planned, false, true);
    rewardIds.push(...after.rewards.map((r) => r.id));
  }
  if (opts.approve !== false) for (const id of rewardIds) await approveReward(w.accountId, id);
  return { rewardIds, referralIds };
}

async function all(pk: string): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const out = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': pk },
        ConsistentRead: true,
        ...(start ? { ExclusiveStartKey: start } : {}),
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}

const money = (cents: number) => (cents / 100).toFixed(2);

/**
 * The ledger, the payouts, the summary, the member's stats and the reports agree: every reward is in at
 * most one live payout (its own payout_id), each payout's amount is the sum of what it lists, and what
 * is paid is the same everywhere.
 */
async function expectMoneyAgrees(w: World): Promise<{ rewards: LedgerReward[]; payouts: Payout[] }> {
  const rewards = (await all(moneyListKeys.rewardCollection(w.accountId)))
    .map((i) => toLedgerReward(i))
    .filter((r): r is LedgerReward => r !== null);
  const payouts = (await all(moneyListKeys.payoutCollection(w.accountId))).map((i) => toPayout(i)).filter((p): p is Payout => p !== null);
  const live = payouts.filter((p) => p.status !== 'failed' && p.status !== 'canceled');
  const holders = new Map<string, string[]>();
  for (const p of live) for (const id of p.reward_ids) holders.set(id, [...(holders.get(id) ?? []), p.id]);
  // No reward in two payouts, and each listed where its own item says.
  expect([...holders].filter(([, ps]) => ps.length > 1)).toEqual([]);
  for (const r of rewards.filter((x) => x.status === 'approved' || x.status === 'paid'))
    expect({ reward: r.id, in: holders.get(r.id) ?? [] }).toEqual({ reward: r.id, in: [r.payout_id] });
  for (const p of live) {
    const listed = rewards.filter((r) => p.reward_ids.includes(r.id));
    expect({ payout: p.id, amount: p.amount, rewards: listed.length }).toEqual({
      payout: p.id,
      amount: listed.reduce((a, r) => a + r.amount, 0),
      rewards: p.reward_ids.length,
    });
    if (p.status === 'paid') expect(listed.filter((r) => r.status !== 'paid').map((r) => r.id)).toEqual([]);
  }
  const paidLedger = rewards.filter((r) => r.status === 'paid').reduce((a, r) => a + r.amount, 0);
  const paidPayouts = payouts.filter((p) => p.status === 'paid').reduce((a, p) => a + p.amount, 0);
  expect(paidPayouts).toBe(paidLedger);
  const summary = (await api('GET', '/v1/payouts/summary/', { key: w.key })).body;
  expect(summary.paid).toEqual(paidLedger > 0 ? { USD: money(paidLedger) } : {});
  const stats = (await api('GET', `/v1/members/${w.memberId}/`, { key: w.key })).body.stats;
  expect(stats.commission_paid).toBe(money(paidLedger));
  const now = Math.floor(Date.now() / 1000);
  const overview = (await api('GET', `/v1/reports/overview/?from=${now - 86_400}&to=${now + 60}`, { key: w.key })).body;
  expect(overview.current.commission_paid).toEqual(paidLedger > 0 ? { USD: money(paidLedger) } : {});
  return { rewards, payouts };
}

/** A string attribute as the client sees it: marshalled ({S}) or not yet. */
const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof (v as { S?: unknown } | undefined)?.S === 'string' ? (v as { S: string }).S : undefined;

/**
 * Holds back, once each, the first transaction that pays rewards and the first that writes a payout
 * `failed` (a middleware on the client every store call goes through).
 */
function forceInterleaving(client: DynamoDBClient, ms: number): () => void {
  const held = { paid: false, failed: false };
  const name = 'issue23-interleaving';
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (/^TransactWrite/.test(String(context.commandName))) {
        const items = (args.input as { TransactItems?: Record<string, any>[] }).TransactItems ?? [];
        const paysRewards = items.some((i) => str(i.Update?.ExpressionAttributeValues?.[':status']) === 'paid');
        const failsPayout = items.some((i) => str(i.Put?.Item?.type) === 'Payout' && str(i.Put.Item.status) === 'failed');
        if (paysRewards && !held.paid) {
          held.paid = true;
          await new Promise((r) => setTimeout(r, ms));
        } else if (failsPayout && !held.failed) {
          held.failed = true;
          await new Promise((r) => setTimeout(r, ms));
        }
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return () => client.middlewareStack.remove(name);
}

describe('issue 23 #23: mark-paid racing mark-failed on a payout of more than 20 rewards', () => {
  const cases: [number, 'payout' | 'batch', boolean][] = [];
  // Natural timing and the batch's mark-paid on the smallest payout only: seeding 100 approvals takes a while,
  // and the batch path claims the payout through the same code as the payout's own mark-paid.
  for (const size of [21, 50, 100])
    for (const via of size === 21 ? (['payout', 'batch'] as const) : (['payout'] as const))
      for (const forced of size === 21 ? [true, false] : [true]) cases.push([size, via, forced]);

  it.each(cases)(
    '%i rewards, mark-paid of the %s vs mark-failed (interleaving forced: %s): one outcome, paid once',
    async (size, via, forced) => {
      const w = await world();
      const { rewardIds } = await commissions(w, size);
      const payoutId = (await getItem(keys.reward(w.accountId, rewardIds[0]!)))!.payout_id as string;
      const batch = await createBatch(w.accountId, { format: 'paypal', currency: 'USD', payout_ids: [payoutId] });
      const release = forced ? forceInterleaving(rawClient(), 300) : () => undefined;
      let answers: [ApiResponse, ApiResponse];
      try {
        answers = await Promise.all([
          via === 'payout'
            ? api('POST', `/v1/payouts/${payoutId}/mark-paid/`, { key: w.key, body: { reference: 'PAY-1' } })
            : api('POST', `/v1/payout-batches/${batch.id}/mark-paid/`, { key: w.key, body: { reference: 'PAY-1' } }),
          api('POST', `/v1/payouts/${payoutId}/mark-failed/`, { key: w.key, body: { reason: 'bounced' } }),
        ]);
      } finally {
        release();
      }
      const [paid, failed] = answers;
      expect([paid.status, failed.status].filter((s) => s !== 200 && s !== 409)).toEqual([]);
      const payout = toPayout(await getItem(moneyKeys.payout(w.accountId, payoutId)))!;
      // Exactly one outcome, and the call that lost says so (a batch's mark-paid skips a failed payout).
      expect(['paid', 'failed']).toContain(payout.status);
      if (payout.status === 'paid') expect(failed.status).toBe(409);
      else if (via === 'payout') expect(paid.status).toBe(409);

      // Whatever comes next cannot pay anything twice: batch and pay whatever is due now.
      const next = await api('POST', '/v1/payout-batches/', { key: w.key, body: { format: 'wise', currency: 'USD' } });
      if (next.status === 201)
        expect((await api('POST', `/v1/payout-batches/${next.body.id}/mark-paid/`, { key: w.key, body: {} })).status).toBe(200);
      const { rewards, payouts } = await expectMoneyAgrees(w);
      expect(rewards).toHaveLength(size);
      // Every reward paid once, in one payout, for the amount earned.
      expect(rewards.filter((r) => r.status === 'paid')).toHaveLength(payout.status === 'paid' || next.status === 201 ? size : 0);
      expect(payouts.filter((p) => p.status === 'paid').reduce((a, p) => a + p.amount, 0)).toBe(
        payout.status === 'paid' || next.status === 201 ? size * AMOUNT : 0,
      );
    },
    240_000,
  );

  it("a mark-paid interrupted after its claim is finished by a retry, with the claim's reference; mark-failed meanwhile answers 409", async () => {
    const w = await world();
    const { rewardIds } = await commissions(w, 45);
    const payoutId = (await getItem(keys.reward(w.accountId, rewardIds[0]!)))!.payout_id as string;
    await createBatch(w.accountId, { format: 'csv', currency: 'USD', payout_ids: [payoutId] });
    // Every reward chunk's transaction of this first call fails (as a crash right after the claim leaves it).
    const name = 'issue23-crash';
    rawClient().middlewareStack.add(
      (next, context) => async (args) => {
        const items = (args.input as { TransactItems?: Record<string, any>[] }).TransactItems ?? [];
        if (
          /^TransactWrite/.test(String(context.commandName)) &&
          items.some((i) => str(i.Update?.ExpressionAttributeValues?.[':status']) === 'paid')
        ) {
          throw Object.assign(new Error('simulated crash'), {
            name: 'InternalServerError',
            $fault: 'server',
            $metadata: { httpStatusCode: 500 },
          });
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    let first: ApiResponse;
    try {
      first = await api('POST', `/v1/payouts/${payoutId}/mark-paid/`, { key: w.key, body: { reference: 'FIRST-REF' } });
    } finally {
      rawClient().middlewareStack.remove(name);
    }
    expect(first.status).toBeGreaterThanOrEqual(500);
    // Claimed: still processing, and no other transition may start.
    expect(toPayout(await getItem(moneyKeys.payout(w.accountId, payoutId)))!.status).toBe('processing');
    const refused = await api('POST', `/v1/payouts/${payoutId}/mark-failed/`, { key: w.key, body: { reason: 'bounced' } });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/being marked paid/);
    const retry = await api('POST', `/v1/payouts/${payoutId}/mark-paid/`, { key: w.key, body: { reference: 'SECOND-REF' } });
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ status: 'paid', reference: 'FIRST-REF', amount: '45.00' });
    const { rewards } = await expectMoneyAgrees(w);
    expect(rewards.map((r) => r.status)).toEqual(Array(45).fill('paid'));
  }, 120_000);
});

describe('issue 23 #31: a referral delete racing a batch', () => {
  /**
   * A member with two referrals of 5 commissions each, all approved into one due payout. The referral to
   * delete is the first; the other keeps the payout due after the delete, so a batch can still take it.
   */
  async function setup() {
    const w = await world();
    const doomed = await commissions(w, 5);
    const kept = await commissions(w, 5);
    const payoutId = (await getItem(keys.reward(w.accountId, doomed.rewardIds[0]!)))!.payout_id as string;
    return { w, doomed, kept, payoutId };
  }

  /** Whatever the two answered, the delete was all or nothing. */
  async function expectOneDecision(
    w: World,
    deleteStatus: number,
    doomed: { rewardIds: string[]; referralIds: string[] },
    payoutId: string,
  ) {
    expect([204, 409]).toContain(deleteStatus);
    const doomedRewards = (await Promise.all(doomed.rewardIds.map((id) => getItem(keys.reward(w.accountId, id))))).map((i) =>
      toLedgerReward(i),
    );
    const referral = await getItem(keys.referral(w.accountId, doomed.referralIds[0]!));
    if (deleteStatus === 409) {
      // Refused: nothing of it changed (before the fix, one commission could be voided already).
      expect(referral).toBeDefined();
      expect(doomedRewards.map((r) => [r?.status, r?.payout_id])).toEqual(Array(5).fill(['approved', payoutId]));
      expect(toPayout(await getItem(moneyKeys.payout(w.accountId, payoutId)))!.reward_ids).toEqual(
        expect.arrayContaining(doomed.rewardIds),
      );
    } else {
      expect(referral).toBeUndefined();
      expect(doomedRewards).toEqual(Array(5).fill(null));
    }
    await expectMoneyAgrees(w);
  }

  it("forced: the batch takes the payout right after the delete's first void commits; the delete is all or nothing", async () => {
    const { w, doomed, payoutId } = await setup();
    const name = 'issue31-batch-after-first-void';
    let batched: Promise<unknown> | null = null;
    rawClient().middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        const items = (args.input as { TransactItems?: Record<string, any>[] }).TransactItems ?? [];
        if (
          !batched &&
          /^TransactWrite/.test(String(context.commandName)) &&
          items.some((i) => str(i.Update?.ExpressionAttributeValues?.[':status']) === 'voided')
        ) {
          batched = createBatch(w.accountId, { format: 'csv', currency: 'USD' }).catch((err: unknown) => err);
          await batched;
        }
        return out;
      },
      { step: 'initialize', name },
    );
    let res: ApiResponse;
    try {
      res = await api('DELETE', `/v1/referrals/${doomed.referralIds[0]}/`, { key: w.key });
    } finally {
      rawClient().middlewareStack.remove(name);
    }
    expect(batched).not.toBeNull();
    await expectOneDecision(w, res.status, doomed, payoutId);
  }, 120_000);

  it.each([1, 2, 3, 4, 5, 6])(
    'natural timing, round %i: DELETE and POST /v1/payout-batches/ at once',
    async () => {
      const { w, doomed, payoutId } = await setup();
      const [del, batch] = await Promise.all([
        api('DELETE', `/v1/referrals/${doomed.referralIds[0]}/`, { key: w.key }),
        api('POST', '/v1/payout-batches/', { key: w.key, body: { format: 'paypal', currency: 'USD' } }),
      ]);
      expect([201, 409]).toContain(batch.status);
      await expectOneDecision(w, del.status, doomed, payoutId);
    },
    120_000,
  );
});
