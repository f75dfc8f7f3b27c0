// Large reward evaluations (issue 23, finding 24): one evaluation that must record many rewards (a
// subscription whose payments piled up while the reward worker was backed up) records them in chunks
// that each fit a DynamoDB transaction (at most 100 items; a reward takes 3), every chunk whole and safe
// to replay. 28, 29, 100 and 150 rewards in one evaluation leave the referral, the ledger and its list
// counters, the member's stats, the payout and the reports exact; the same message twice, two at once,
// a crash between two chunks (DynamoDB faults through test/support/fault-proxy.ts) and a message redriven
// from the rewards DLQ never duplicate a reward. The clawbacks of many refunds in one evaluation are
// written in chunks too.
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { queuePairs, redrive } from '../../infra/ops';
import type { Pollers } from '../../infra/local/pollers';
import { resetConfig } from '../../shared/config';
import { evaluateReferral } from '../../shared/flows/settlement';
import { db, resetClients, tableName } from '../../shared/store/client';
import { REWARDS_PER_TRANSACTION } from '../../shared/store/rewards';
import { refundItem } from '../../shared/store/refunds';
import { applyProviderUpdate, saveSubscription } from '../../shared/store/subscriptions';
import { keys } from '../../shared/store/table';
import { api } from '../support/api';
import { startFaultProxy, type FaultProxy } from '../support/fault-proxy';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let subscriptionSeq = 930_000 + Math.floor(Math.random() * 50_000) * 100;

beforeAll(async () => {
  // A long visibility timeout: a 150-reward evaluation outlasts the test default of 2 s.
  queues = await startTestQueues({ visibilityTimeoutSeconds: 60 });
});

afterAll(async () => {
  await queues?.stop();
});

interface World {
  accountId: string;
  key: string;
  memberId: string;
  campaignId: string;
  referralId: string;
  subscriptionId: number;
  /** Payment ids, oldest first. */
  payments: number[];
  since: number;
}

const call = (w: { key: string }, method: string, path: string, body?: unknown) =>
  api(method, path, { key: w.key, ...(body === undefined ? {} : { body }) });

/**
 * A converted referral whose subscription already has `n` paid payments of 10.00 USD (a commission of
 * 1.00 each, approved at once: hold 0), none of them rewarded yet: one evaluation must record `n` rewards.
 */
async function backlog(n: number): Promise<World> {
  const { accountId, apiKey: key } = await newAccount('unlimited');
  const w = { key };
  const campaign = await call(w, 'POST', '/v1/campaigns/', {
    name: `chunks-${n}`,
    allows_commission: true,
    commission_amount: '1.00',
    commission_currency: 'USD',
    hold_days: 0,
  });
  expect(campaign.status).toBe(201);
  const member = await call(w, 'POST', '/v1/members/', {
    identifier: `m-${n}`,
    email: `m-${n}@example.com`,
    campaign: { id: campaign.body.id },
    payout_email: `pay-${n}@example.com`,
  });
  expect(member.status).toBe(201);
  const referral = await call(w, 'POST', '/v1/referrals/', { user_identifier: `u-${n}`, member_code: member.body.code });
  expect(referral.status).toBe(200);
  const subscriptionId = ++subscriptionSeq;
  const plan = { id: 77, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' };
  await saveSubscription(accountId, {
    id: subscriptionId,
    unit_price: '10.00',
    currency: 'USD',
    status: 'active',
    email: `payer-${subscriptionId}@example.com`,
    next_bill_date: '2030-02-01',
    last_bill_date: '2030-01-01',
    plan,
  });
  const since = Math.floor(Date.now() / 1000) - n * 60 - 60;
  const payments = Array.from({ length: n }, (_, i) => subscriptionId * 1000 + i);
  // Payments a minute apart, ending now: all within the report range below.
  for (let i = 0; i < n; i += 10) {
    await Promise.all(
      payments.slice(i, i + 10).map((id, j) =>
        applyProviderUpdate(accountId, {
          subscriptionId,
          asOfMs: Date.now(),
          fields: {},
          payment: {
            id,
            subscription_id: subscriptionId,
            order_id: `o-${id}`,
            amount: 1000,
            currency: 'USD',
            paid_at: since + (i + j) * 60,
            status: 'paid',
          },
        }),
      ),
    );
  }
  // The conversion queues an evaluation; the tests run it themselves (no pollers on the queue).
  const converted = await call(w, 'POST', `/v1/referrals/${referral.body.id}/conversion/`, { subscription_id: subscriptionId });
  expect({ status: converted.status, body: converted.status === 200 ? null : converted.body }).toEqual({ status: 200, body: null });
  return {
    accountId,
    key,
    memberId: member.body.id,
    campaignId: campaign.body.id,
    referralId: referral.body.id,
    subscriptionId,
    payments,
    since,
  };
}

async function ledgerItems(w: World): Promise<Record<string, unknown>[]> {
  const out: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': keys.reward(w.accountId, 'x').pk },
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    out.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return out.filter((i) => i.referral_id === w.referralId);
}

const usd = (n: number) => `${n}.00`;

/** Everything that counts the referral's `n` rewards says exactly `n` (of 1.00 each). */
async function expectExact(w: World, n: number): Promise<void> {
  const referral = (await call(w, 'GET', `/v1/referrals/${w.referralId}/`)).body;
  expect(referral.rewards).toHaveLength(n);
  expect(new Set(referral.rewards.map((r: { payment_id: number }) => r.payment_id))).toEqual(new Set(w.payments));
  expect(new Set(referral.rewards.map((r: { id: string }) => r.id)).size).toBe(n);
  expect(referral.rewards.every((r: { amount: string; status: string }) => r.amount === '1.00' && r.status === 'approved')).toBe(true);
  expect(referral.stats).toMatchObject({ rewards: n, commission_earned: usd(n) });

  // The ledger: one item per reward, and the lists' counters agree with it.
  const ledger = await ledgerItems(w);
  expect(ledger).toHaveLength(n);
  expect(new Set(ledger.map((i) => i.id))).toEqual(new Set(referral.rewards.map((r: { id: string }) => r.id)));
  for (const query of [`member=${w.memberId}`, `campaign=${w.campaignId}`, 'type=commission', 'status=approved', '']) {
    const list = await call(w, 'GET', `/v1/rewards/?${query}`);
    expect({ query, status: list.status, count: list.body.count }).toEqual({ query, status: 200, count: n });
  }

  const member = (await call(w, 'GET', `/v1/members/${w.memberId}/`)).body;
  expect(member.stats).toMatchObject({
    commission_earned: usd(n),
    commission_pending: '0.00',
    commission_approved: usd(n),
    commission_paid: '0.00',
  });

  // One payout holds them all.
  const payouts = (await call(w, 'GET', `/v1/payouts/?member=${w.memberId}`)).body;
  expect(payouts.count).toBe(1);
  expect(payouts.results[0]).toMatchObject({ amount: usd(n), currency: 'USD', status: 'due', reward_count: n });
  expect((await call(w, 'GET', '/v1/payouts/summary/')).body).toEqual({ due: { USD: usd(n) }, open: {}, processing: {}, paid: {} });

  // The reports: every payment's revenue once, and the commission earned.
  const now = Math.floor(Date.now() / 1000);
  const overview = (await call(w, 'GET', `/v1/reports/overview/?from=${w.since - 86_400}&to=${now}`)).body;
  expect(overview.current).toMatchObject({ conversions: 1, revenue: { USD: usd(10 * n) }, commission_earned: { USD: usd(n) } });
  const top = (await call(w, 'GET', `/v1/reports/members/?sort=commission&from=${w.since - 86_400}&to=${now}`)).body;
  expect(top.results[0]).toMatchObject({ member_id: w.memberId, commission: { USD: usd(n) } });
}

describe('one evaluation records any number of rewards, in chunks', () => {
  it('the chunk size keeps a transaction well under 100 items', () => {
    expect(REWARDS_PER_TRANSACTION * 3 + 20).toBeLessThanOrEqual(100);
  });

  it.each([28, 29, 100])(
    '%i rewards in one evaluation: all recorded, and every figure is exact; the same message again changes nothing',
    async (n) => {
      const w = await backlog(n);
      await evaluateReferral(w.accountId, w.referralId);
      await expectExact(w, n);
      // The same message again, then twice at once.
      await evaluateReferral(w.accountId, w.referralId);
      await Promise.all([evaluateReferral(w.accountId, w.referralId), evaluateReferral(w.accountId, w.referralId)]);
      await expectExact(w, n);
      // A later payment of that referral earns its reward as usual.
      const next = w.subscriptionId * 1000 + n;
      await applyProviderUpdate(w.accountId, {
        subscriptionId: w.subscriptionId,
        asOfMs: Date.now(),
        fields: {},
        payment: {
          id: next,
          subscription_id: w.subscriptionId,
          order_id: `o-${next}`,
          amount: 1000,
          currency: 'USD',
          paid_at: Math.floor(Date.now() / 1000),
          status: 'paid',
        },
      });
      w.payments.push(next);
      await evaluateReferral(w.accountId, w.referralId);
      await expectExact(w, n + 1);
    },
    120_000,
  );

  // 150: six chunks, and four of the email flags' updates of 40 (300 took 22 s of the suite's budget and crossed
  // no boundary that 150 does not).
  it('150 rewards in one evaluation: all recorded, exact; the same message again changes nothing', async () => {
    const w = await backlog(150);
    await evaluateReferral(w.accountId, w.referralId);
    await expectExact(w, 150);
    await evaluateReferral(w.accountId, w.referralId);
    await expectExact(w, 150);
  }, 300_000);
});

describe('one evaluation records any number of clawbacks, in chunks', () => {
  it('full refunds of 35 of 40 approved commissions at once: 35 clawbacks, 70 voided rewards, and the payout keeps the other 5', async () => {
    const w = await backlog(40);
    await evaluateReferral(w.accountId, w.referralId);
    await expectExact(w, 40);
    const refunded = w.payments.slice(0, 35);
    const now = Math.floor(Date.now() / 1000);
    for (const [i, paymentId] of refunded.entries()) {
      await applyProviderUpdate(w.accountId, {
        subscriptionId: w.subscriptionId,
        asOfMs: Date.now(),
        fields: {},
        alertId: `refund-${paymentId}`,
        payment: {
          id: paymentId,
          subscription_id: w.subscriptionId,
          order_id: `o-${paymentId}`,
          amount: 1000,
          currency: 'USD',
          paid_at: w.since + i * 60,
          status: 'refunded',
          refund_amount: 1000,
          refund_type: 'full',
        },
        extraItems: [
          refundItem(w.accountId, w.subscriptionId, {
            id: `refund-${paymentId}`,
            payment_id: paymentId,
            amount: 1000,
            refunded_at: now,
            currency: 'USD',
            refund_type: 'full',
          }),
        ],
      });
    }
    await evaluateReferral(w.accountId, w.referralId);
    await evaluateReferral(w.accountId, w.referralId); // the same message again: nothing new
    const referral = (await call(w, 'GET', `/v1/referrals/${w.referralId}/`)).body;
    expect(referral.rewards).toHaveLength(75);
    const clawbacks = referral.rewards.filter((r: { reverses: string | null }) => r.reverses !== null);
    expect(new Set(clawbacks.map((c: { reverses: string }) => c.reverses)).size).toBe(35);
    expect(clawbacks.every((c: { amount: string; status: string }) => c.amount === '-1.00' && c.status === 'voided')).toBe(true);
    expect(await ledgerItems(w)).toHaveLength(75);
    expect((await call(w, 'GET', `/v1/rewards/?member=${w.memberId}&status=voided`)).body.count).toBe(70);
    expect((await call(w, 'GET', `/v1/rewards/?member=${w.memberId}&status=approved`)).body.count).toBe(5);
    expect((await call(w, 'GET', `/v1/members/${w.memberId}/`)).body.stats).toMatchObject({
      commission_earned: '5.00',
      commission_approved: '5.00',
      commission_pending: '0.00',
    });
    expect((await call(w, 'GET', `/v1/payouts/?member=${w.memberId}`)).body.results[0]).toMatchObject({
      amount: '5.00',
      reward_count: 5,
      status: 'due',
    });
  }, 120_000);
});

describe('a crash between two chunks', () => {
  let proxy: FaultProxy;
  const directDynamo = process.env.DYNAMODB_ENDPOINT as string;
  /** TransactWriteItems calls that append rewards to the watched referral, and whether to fail them. */
  const watch = { referralId: '', seen: 0, fail: (_seen: number) => false };

  beforeAll(async () => {
    proxy = await startFaultProxy({
      target: directDynamo,
      flavour: 'dynamodb',
      faultRate: 1,
      eligible: ({ headers, body }) => {
        if (!String(headers['x-amz-target'] ?? '').endsWith('TransactWriteItems') || watch.referralId === '') return false;
        const text = body.toString('utf8');
        if (!text.includes(watch.referralId) || !text.includes('reward.created')) return false;
        watch.seen++;
        return watch.fail(watch.seen);
      },
    });
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

  it('the evaluation dies after its first chunk; its replay records the rest, once', async () => {
    const n = 3 * REWARDS_PER_TRANSACTION + 5;
    const w = await backlog(n);
    proxy.setModes(['error']);
    // Every attempt of the second chunk fails (the SDK's and the store's retries too): the worker dies there.
    Object.assign(watch, { referralId: w.referralId, seen: 0, fail: (seen: number) => seen >= 2 });
    await expect(evaluateReferral(w.accountId, w.referralId)).rejects.toThrow();
    // The first chunk is committed whole, the rest not at all.
    const partial = (await call(w, 'GET', `/v1/referrals/${w.referralId}/`)).body;
    expect(partial.rewards).toHaveLength(REWARDS_PER_TRANSACTION);
    expect(await ledgerItems(w)).toHaveLength(REWARDS_PER_TRANSACTION);
    expect((await call(w, 'GET', `/v1/members/${w.memberId}/`)).body.stats.commission_earned).toBe(usd(REWARDS_PER_TRANSACTION));
    expect((await call(w, 'GET', `/v1/rewards/?member=${w.memberId}`)).body.count).toBe(REWARDS_PER_TRANSACTION);

    // The message comes back (SQS redelivers it): the rest is recorded, nothing twice.
    watch.fail = () => false;
    await evaluateReferral(w.accountId, w.referralId);
    await expectExact(w, n);
  }, 120_000);

  it('a chunk whose answer is lost after it committed is not written twice', async () => {
    const n = 2 * REWARDS_PER_TRANSACTION + 3;
    const w = await backlog(n);
    proxy.setModes(['drop-response']);
    // Only the first attempt of the second chunk loses its answer (after DynamoDB applied it).
    Object.assign(watch, { referralId: w.referralId, seen: 0, fail: (seen: number) => seen === 2 });
    try {
      await evaluateReferral(w.accountId, w.referralId).catch(() => undefined);
      await evaluateReferral(w.accountId, w.referralId);
    } finally {
      watch.fail = () => false;
    }
    expect(watch.seen).toBeGreaterThanOrEqual(2);
    await expectExact(w, n);
  }, 120_000);
});

describe('a message that failed before is processed when redriven from the rewards DLQ', () => {
  let pollers: Pollers | undefined;
  afterAll(async () => {
    await pollers?.stop();
  });

  it('the evaluate-referral message of a 40-reward backlog (over the 29 that failed before chunking), moved back by the redrive, records them all once', async () => {
    const w = await backlog(40);
    // Where such a message ended up before chunking (each attempt failed on the 100-item limit).
    await queues.receiveAll('rewards');
    await queues.client.send(
      new SendMessageCommand({
        QueueUrl: queues.urlOf('rewards-dlq'),
        MessageBody: JSON.stringify({ kind: 'evaluate-referral', account_id: w.accountId, referral_id: w.referralId }),
      }),
    );
    expect(await queues.count('rewards-dlq')).toBe(1);
    pollers = startTestPollers(queues);
    // What `npm run admin -- queues redrive rewards` does (docs/operations.md, runbook).
    const pair = (await queuePairs(queues.client, true, 'local')).find((p) => p.queue === 'rewards');
    expect(pair).toBeDefined();
    expect(await redrive(queues.client, pair!)).toBe(1);
    await pollUntil(async () => (await call(w, 'GET', `/v1/referrals/${w.referralId}/`)).body.rewards.length === 40, { timeoutMs: 60_000 });
    await pollUntil(async () => (await queues.count('rewards')) === 0 && (await queues.count('rewards-dlq')) === 0, { timeoutMs: 60_000 });
    await expectExact(w, 40);
  }, 180_000);
});
