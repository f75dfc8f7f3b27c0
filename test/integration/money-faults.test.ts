// The money endpoints under DynamoDB faults (test/support/fault-proxy.ts): with 30% of the calls dropped,
// delayed, failed, or applied with their answer lost, approvals, a batch (with an Idempotency-Key) and
// mark-paid are retried by the client until they answer. Every answer is 2xx, 4xx or 503 (never 500); once
// the faults stop, every reward is paid exactly once, in exactly one payout, and the money adds up.
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { resetConfig } from '../../shared/config';
import type { LedgerReward, Payout } from '../../shared/domain/lifecycle';
import { createAccount } from '../../shared/store/accounts';
import { db, resetClients, tableName } from '../../shared/store/client';
import { toLedgerReward } from '../../shared/store/ledger';
import { getItem } from '../../shared/store/ops';
import { toPayout } from '../../shared/store/payouts';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys, moneyListKeys } from '../../shared/store/table';
import { api, type ApiResponse } from '../support/api';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';

const SEED = Number(process.env.FAULT_SEED) || 20_261_125;
const REWARDS = 10;
let proxy: FaultProxy;
const directDynamo = process.env.DYNAMODB_ENDPOINT as string;
let accountId: string;
let key: string;
const statuses: number[] = [];

beforeAll(async () => {
  proxy = await startFaultProxy({ target: directDynamo, flavour: 'dynamodb', seed: SEED });
  process.env.DYNAMODB_ENDPOINT = proxy.url;
  resetConfig();
  resetClients();
});

afterAll(async () => {
  process.env.DYNAMODB_ENDPOINT = directDynamo;
  resetConfig();
  resetClients();
  await proxy?.stop();
});

/** The client's retry loop: until the answer is neither a 503 nor a lost connection (at most 40 tries). */
async function until(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  done = (r: ApiResponse) => r.status < 500,
): Promise<ApiResponse> {
  for (let attempt = 1; ; attempt++) {
    const res = await api(method, path, { key, ...(body === undefined ? {} : { body }), headers });
    statuses.push(res.status);
    if (done(res) || attempt >= 40) return res;
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function all(pk: string): Promise<Record<string, unknown>[]> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pk },
      ConsistentRead: true,
    }),
  );
  return out.Items ?? [];
}

it('approvals, a batch and mark-paid, retried under faults, pay every reward exactly once', async () => {
  // Setup without faults.
  const { account, apiKey } = await createAccount({ name: 'money-faults', plan: 'unlimited' });
  accountId = account.accountId;
  key = apiKey;
  const campaign = (
    await api('POST', '/v1/campaigns/', {
      key,
      body: { name: 'faults', allows_commission: true, commission_amount: '3.00', approval: 'manual' },
    })
  ).body;
  const member = (
    await api('POST', '/v1/members/', {
      key,
      body: { identifier: 'payee', email: 'payee@example.com', campaign: { id: campaign.id }, payout_email: 'payee@pay.example.com' },
    })
  ).body;
  const rewardIds: string[] = [];
  for (let i = 0; i < REWARDS; i++) {
    const ref = (await api('POST', '/v1/referrals/', { key, body: { user_identifier: `u${i}`, member_code: member.code } })).body;
    const stored = toReferral(await getItem(keys.referral(accountId, ref.id)))!;
    rewardIds.push(
      (await recordRewards(accountId, stored, [{ payment_id: i + 1, type: 'commission', amount: 300, currency: 'USD' }], false, true))
        .rewards[0]!.id,
    );
  }

  // Faults on: every write retried by the client until it answers.
  proxy.setFaultRate(0.3);
  for (const id of rewardIds) expect((await until('POST', `/v1/rewards/${id}/approve/`)).status).toBe(200);
  const batch = await until(
    'POST',
    '/v1/payout-batches/',
    { format: 'wise', currency: 'USD' },
    { 'Idempotency-Key': 'faults-batch' },
    (r) => r.status === 201 || (r.status < 500 && r.status !== 409),
  );
  expect(batch.status).toBe(201);
  expect(
    (await until('POST', `/v1/payout-batches/${batch.body.id}/mark-paid/`, { reference: 'WISE-F' }, {}, (r) => r.status === 200)).status,
  ).toBe(200);
  const faults = proxy.stats();
  proxy.setFaultRate(0);

  // Never a 500; the faults really happened.
  expect(statuses.filter((s) => s >= 500 && s !== 503)).toEqual([]);
  expect(faults.dropped + faults.errored + faults.responseDropped).toBeGreaterThan(5);
  // Every reward paid, in the batch's one payout; the money adds up everywhere.
  const rewards = (await all(moneyListKeys.rewardCollection(accountId)))
    .map((i) => toLedgerReward(i))
    .filter((r): r is LedgerReward => r !== null);
  const payouts = (await all(moneyListKeys.payoutCollection(accountId))).map((i) => toPayout(i)).filter((p): p is Payout => p !== null);
  expect(rewards.map((r) => r.status)).toEqual(Array(REWARDS).fill('paid'));
  const paid = payouts.filter((p) => p.status === 'paid');
  expect(paid.map((p) => [p.amount, p.reward_ids.length])).toEqual([[REWARDS * 300, REWARDS]]);
  expect(new Set(rewards.map((r) => r.payout_id))).toEqual(new Set([paid[0]!.id]));
  expect(payouts.filter((p) => p.status !== 'paid').every((p) => p.reward_ids.length === 0 && p.amount === 0)).toBe(true);
  const stats = (await api('GET', `/v1/members/${member.id}/`, { key })).body.stats;
  expect(stats).toMatchObject({
    commission_earned: '30.00',
    commission_pending: '0.00',
    commission_approved: '0.00',
    commission_paid: '30.00',
  });
  expect((await api('GET', '/v1/payouts/summary/', { key })).body).toEqual({ due: {}, open: {}, processing: {}, paid: { USD: '30.00' } });
  expect((await api('GET', `/v1/payout-batches/${batch.body.id}/`, { key })).body).toMatchObject({
    status: 'paid',
    payout_ids: [paid[0]!.id],
    amount: '30.00',
  });
}, 120_000);
