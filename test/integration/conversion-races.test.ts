// Conversions racing other writes (issue 11, items 1 and 3) on real parts: DynamoDB Local, a local SQS
// with the real workers, the Paddle emulator.
// - A conversion and a DELETE of the same referral: one wins whole; the subscription is never left tied
//   to a referral that no longer exists, and the member's stats count what exists.
// - A subscription tied to a vanished referral (data written before this rule) never blocks an alert, a
//   conversion or a background-sync page.
// - A conversion and a cancellation alert of its subscription: the referral's snapshot ends at the
//   subscription's latest version, whichever write comes last.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { processSyncPage } from '../../shared/flows/subscription-sync';
import { db, tableName } from '../../shared/store/client';
import { getSubscription, saveSubscription, type SubscriptionData } from '../../shared/store/subscriptions';
import { keys } from '../../shared/store/table';
import { pollUntil } from '../support/fixtures';
import { paddleTenants, pipelineWorld, type Tenant } from '../support/paddle-tenant';

const world = pipelineWorld();
const { tenant, json, deliver, member, referral, subscribed, getReferral, getMember } = paddleTenants(() => world.paddle);

const PAIRS = 40;
const range = (n: number) => Array.from({ length: n }, (_, i) => i);

/** What a conversion left on a subscription: the referral it is tied to, if any. */
const tiedTo = async (t: Tenant, subscriptionId: number) => (await getSubscription(t.accountId, subscriptionId))?.referral_id;

/** Ties a subscription to a referral id that does not exist, as the race used to leave it. */
async function danglingLink(t: Tenant, subscriptionId: number): Promise<void> {
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.subscription(t.accountId, subscriptionId),
      UpdateExpression: 'SET referral_id = :r',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':r': '0190aaaabbbbccccddddeeeeffff0000' },
    }),
  );
}

/** `n` checkouts whose alerts all reach the service, once every subscription is applied. */
async function manySubscribed(t: Tenant, prefix: string, n: number): Promise<number[]> {
  const outs = [];
  for (const i of range(n)) outs.push(await world.paddle.checkout({ plan_id: 9001, email: `${prefix}-${i}@example.com`, deliver: false }));
  for (const out of outs) await deliver(t, out.alerts);
  const ids = outs.map((o) => o.subscription.subscription_id);
  await pollUntil(
    async () => {
      for (const id of ids) {
        const s = await getSubscription(t.accountId, id);
        if (s?.status !== 'active' || s.last_bill_date === null) return false;
      }
      return true;
    },
    { timeoutMs: 60_000 },
  );
  return ids;
}

describe('a conversion racing a DELETE of the same referral', () => {
  it(`${PAIRS} concurrent pairs: one wins whole, nothing stays tied to a deleted referral, and everything after still works`, async () => {
    const t = await tenant();
    const m = await member(t, 'racer');
    const subIds = await manySubscribed(t, 'race', PAIRS);
    const refs = await Promise.all(range(PAIRS).map((i) => referral(t, `race-user-${i}`, m.code)));

    const outcomes = await Promise.all(
      refs.map((r, i) =>
        Promise.all([
          json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: subIds[i] }),
          json('DELETE', `/v1/referrals/${r.id}/`, t),
        ]),
      ),
    );
    for (const [conversion, deletion] of outcomes) {
      expect([200, 404]).toContain(conversion.status);
      expect(deletion.status).toBe(204);
    }
    // Every referral is gone, with its conversion: no subscription stays tied, the stats count nothing.
    for (const [i, r] of refs.entries()) {
      expect((await json('GET', `/v1/referrals/${r.id}/`, t)).status).toBe(404);
      expect(await tiedTo(t, subIds[i] as number)).toBeUndefined();
    }
    expect((await getMember(t, m.id)).stats).toMatchObject({ referrals: 0, conversions: 0 });

    // Each subscription converts again, and the stats count those conversions.
    const again = await Promise.all(range(PAIRS).map((i) => referral(t, `again-user-${i}`, m.code)));
    const reconversions = await Promise.all(
      again.map((r, i) => json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: subIds[i] })),
    );
    expect(reconversions.map((r) => r.status)).toEqual(Array(PAIRS).fill(200));
    expect((await getMember(t, m.id)).stats).toMatchObject({ referrals: PAIRS, conversions: PAIRS });

    // Later alerts apply (none lands in the DLQ), and reach the referrals' snapshots.
    for (const id of subIds) await deliver(t, (await world.paddle.cancel(id, { deliver: false })).alerts);
    await pollUntil(
      async () => {
        const statuses = await Promise.all(again.map(async (r) => (await getReferral(t, r.id)).subscription?.status));
        expect(statuses.filter((s) => s !== 'deleted')).toEqual([]);
        return true;
      },
      { timeoutMs: 60_000 },
    );
    expect(await world.queues.count('provider-events-dlq')).toBe(0);

    // A background-sync page over them completes.
    await expect(
      processSyncPage({ kind: 'sync-account', account_id: t.accountId, state: 'deleted', page: 1, started_at: Date.now() }),
    ).resolves.toBeUndefined();
  }, 240_000);
});

describe('a subscription tied to a referral that no longer exists', () => {
  it('an alert still applies (not to the DLQ) and frees the subscription', async () => {
    const t = await tenant();
    const sub = await subscribed(t, 'orphan-alert@example.com');
    const id = sub.subscription.subscription_id;
    await danglingLink(t, id);
    await deliver(t, (await world.paddle.cancel(id, { deliver: false })).alerts);
    await pollUntil(async () => (await getSubscription(t.accountId, id))?.status === 'deleted', { timeoutMs: 15_000 });
    expect(await tiedTo(t, id)).toBeUndefined();
    expect(await world.queues.count('provider-events-dlq')).toBe(0);
  });

  it('a conversion to it succeeds instead of answering "already assigned"', async () => {
    const t = await tenant();
    const m = await member(t, 'heal');
    const sub = await subscribed(t, 'orphan-convert@example.com');
    const id = sub.subscription.subscription_id;
    await danglingLink(t, id);
    const r = await referral(t, 'orphan-user', m.code);
    const res = await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: id });
    expect(res.status).toBe(200);
    expect(await tiedTo(t, id)).toBe(r.id);
    expect((await getMember(t, m.id)).stats).toMatchObject({ conversions: 1 });
  });

  it('a background-sync page applies it and every subscription after it on the page', async () => {
    const t = await tenant();
    const bad = (await subscribed(t, 'orphan-sync@example.com')).subscription.subscription_id;
    const after = (await subscribed(t, 'after-orphan@example.com')).subscription.subscription_id;
    await danglingLink(t, bad);
    // Both cancelled at the provider, with no alert: only the sync can learn it.
    await world.paddle.cancel(bad, { deliver: false });
    await world.paddle.cancel(after, { deliver: false });
    await processSyncPage({ kind: 'sync-account', account_id: t.accountId, state: 'deleted', page: 1, started_at: Date.now() });
    expect((await getSubscription(t.accountId, bad))?.status).toBe('deleted');
    expect(await tiedTo(t, bad)).toBeUndefined();
    expect((await getSubscription(t.accountId, after))?.status).toBe('deleted');
  });
});

describe('a conversion racing a cancellation of its subscription', () => {
  const data = (id: number, status: string): SubscriptionData => ({
    id,
    unit_price: '10.00',
    currency: 'USD',
    status,
    email: `snap-${id}@example.com`,
    next_bill_date: status === 'deleted' ? null : '2030-01-01',
    last_bill_date: '2029-12-01',
    plan: { id: 9001, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' },
  });

  it(`${PAIRS} concurrent pairs: every referral ends showing its subscription deleted`, async () => {
    const t = await tenant();
    const m = await member(t, 'snap');
    const ids = range(PAIRS).map((i) => 800_000 + i);
    for (const id of ids) await saveSubscription(t.accountId, data(id, 'active'));
    const refs = await Promise.all(range(PAIRS).map((i) => referral(t, `snap-user-${i}`, m.code)));

    const results = await Promise.all(
      refs.map((r, i) =>
        Promise.all([
          json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: ids[i] }),
          // What the subscription-sync worker does with a subscription_cancelled alert.
          saveSubscription(t.accountId, data(ids[i] as number, 'deleted')),
        ]),
      ),
    );
    expect(results.map(([conversion]) => conversion.status)).toEqual(Array(PAIRS).fill(200));
    const stale: string[] = [];
    for (const [i, r] of refs.entries()) {
      const body = await getReferral(t, r.id);
      expect(body.subscription?.id).toBe(ids[i]);
      if (body.subscription?.status !== 'deleted') stale.push(r.id);
      expect(await tiedTo(t, ids[i] as number)).toBe(r.id);
    }
    expect(stale).toEqual([]);
  }, 60_000);
});
