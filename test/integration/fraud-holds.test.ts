// Held rewards (docs/fraud.md "Holds") on DynamoDB Local, through the flows the flags and the API call:
// a hold takes a referral's (or a member's) unpaid commissions out of approval and payouts, counted on its
// flag in the same transactions; a release puts them back (pending with their approval time, or approved at
// once when it has passed); a void voids them; a referral under a hold earns held commissions; nothing is
// held, released or voided twice, and every figure (payouts, stats, counts) follows.
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { eventId } from '../../shared/domain/events';
import { newEntityId } from '../../shared/domain/ids';
import { holdRewards, releaseHeld, releaseReward, voidHeld } from '../../shared/flows/fraud-holds';
import { approveDue, approveReward } from '../../shared/flows/lifecycle';
import { createBatch } from '../../shared/flows/payouts';
import { evaluateReferral } from '../../shared/flows/settlement';
import { loadSettlement } from '../../shared/flows/settlement/load';
import { planSettlement } from '../../shared/flows/settlement/plan';
import { recordSettlement } from '../../shared/flows/settlement/record';
import { recordClawbacks } from '../../shared/store/clawbacks';
import { db, tableName } from '../../shared/store/client';
import { toLedgerReward, type LedgerReward } from '../../shared/store/ledger';
import { getItem } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards, RewardRaceError } from '../../shared/store/rewards';
import { applyProviderUpdate, saveSubscription } from '../../shared/store/subscriptions';
import { fraudKeys, keys, moneyKeys } from '../../shared/store/table';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';
import { startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;

beforeAll(async () => {
  // Conversions queue an evaluation; the tests run evaluations themselves (no pollers).
  queues = await startTestQueues();
});

afterAll(async () => {
  await queues?.stop();
});

const DAY = 86_400;
const cents = (s: string) => Math.round(Number(s) * 100);

/** An account with a commission campaign (hold 30 days unless told) and one member with a payout email. */
async function world(terms: Record<string, unknown> = {}) {
  const { accountId, apiKey } = await newAccount('unlimited');
  const call = (method: string, path: string, body?: unknown, key = apiKey) =>
    api(method, path, { key, ...(body === undefined ? {} : { body }) });
  const campaign = await call('POST', '/v1/campaigns/', {
    name: 'holds',
    allows_commission: true,
    commission_amount: '1.00',
    commission_currency: 'USD',
    hold_days: 30,
    ...terms,
  });
  expect(campaign.status).toBe(201);
  const member = await call('POST', '/v1/members/', {
    identifier: 'payee',
    email: 'payee@example.com',
    campaign: { id: campaign.body.id },
    payout_email: 'payee@pay.example.com',
  });
  expect(member.status).toBe(201);
  let payment = 0;
  let users = 0;
  const w = {
    accountId,
    apiKey,
    call,
    memberId: member.body.id as string,
    /** A referral of the member with commissions of these amounts (cents), recorded as the reward worker does. */
    async referral(amounts: number[]): Promise<{ id: string; rewards: LedgerReward[] }> {
      const ref = await call('POST', '/v1/referrals/', { user_identifier: `u${++users}`, member_code: member.body.code });
      expect(ref.status).toBe(200);
      const stored = toReferral(await getItem(keys.referral(accountId, ref.body.id)))!;
      await recordRewards(
        accountId,
        stored,
        amounts.map((amount) => ({ payment_id: ++payment, type: 'commission' as const, amount, currency: 'USD' })),
        false,
        true,
      );
      return { id: ref.body.id, rewards: await w.ledgerOf(ref.body.id) };
    },
    async ledgerOf(referralId: string): Promise<LedgerReward[]> {
      const referral = toReferral(await getItem(keys.referral(accountId, referralId)))!;
      return Promise.all(referral.rewards.map(async (r) => toLedgerReward(await getItem(keys.reward(accountId, r.id)))!));
    },
    async reward(id: string): Promise<LedgerReward> {
      return toLedgerReward(await getItem(keys.reward(accountId, id)))!;
    },
    /** The review-queue item a flag helper writes before holding (the fields the holds read and write). */
    async flag(fields: Record<string, unknown> = {}): Promise<string> {
      const id = `ff_${newEntityId()}`;
      await db().send(
        new PutCommand({
          TableName: tableName(),
          Item: { ...fraudKeys.flag(accountId, id), type: 'FraudFlag', id, status: 'open', held_count: 0, held_reward_ids: [], ...fields },
        }),
      );
      return id;
    },
    async flagOf(id: string) {
      return (await getItem(fraudKeys.flag(accountId, id))) as { held_count: number; held_reward_ids: string[] };
    },
    async stats() {
      const s = (await call('GET', `/v1/members/${member.body.id}/`)).body.stats;
      return {
        earned: cents(s.commission_earned),
        pending: cents(s.commission_pending),
        approved: cents(s.commission_approved),
        held: cents(s.commission_held),
        paid: cents(s.commission_paid),
      };
    },
    async count(query: string): Promise<number> {
      const list = await call('GET', `/v1/rewards/?${query}`);
      expect(list.status).toBe(200);
      return list.body.count;
    },
    async payout(id: string) {
      return (await call('GET', `/v1/payouts/${id}/`)).body as { amount: string; status: string; reward_count: number };
    },
    async dueItem(r: LedgerReward) {
      return getItem(moneyKeys.approvalDue(accountId, r.approves_at as number, r.id));
    },
  };
  return w;
}

describe('a referral hold', () => {
  it('takes its pending and collecting commissions with their clawbacks out of approval and the payout, counted on its flag; a repeat holds nothing', async () => {
    const w = await world();
    const one = await w.referral([400, 300]);
    const other = await w.referral([200]);
    const [pending, approved] = one.rewards as [LedgerReward, LedgerReward];
    // A partial refund of the pending one: its clawback follows it.
    const stored = toReferral(await getItem(keys.referral(w.accountId, one.id)))!;
    await recordClawbacks(
      w.accountId,
      stored,
      [{ type: 'commission', amount: -100, currency: 'USD', payment_id: pending.payment_id, reverses: pending.id, refund_id: 'rf1' }],
      true,
    );
    const approvedNow = await approveReward(w.accountId, approved.id);
    const kept = await approveReward(w.accountId, other.rewards[0]!.id);
    expect(approvedNow.payout_id).toBe(kept.payout_id);
    const payoutId = approvedNow.payout_id as string;
    expect(await w.payout(payoutId)).toMatchObject({ amount: '5.00', status: 'due', reward_count: 2 });
    expect(await w.dueItem(pending)).toBeDefined();
    const before = await w.stats();
    expect(before).toEqual({ earned: 800, pending: 300, approved: 500, held: 0, paid: 0 });

    const flag = await w.flag();
    const held = await holdRewards(w.accountId, { referralId: one.id }, flag);
    expect(held.sort()).toEqual([pending.id, approved.id].sort());

    const after = await w.ledgerOf(one.id);
    expect(after.map((r) => [r.status, r.held_by, r.payout_id])).toEqual([
      ['held', flag, null],
      ['held', flag, null],
      ['held', flag, null], // the clawback
    ]);
    // The approval time is kept (a release restores it); the approval-due item is gone.
    expect(after[0]!.approves_at).toBe(pending.approves_at);
    expect(await w.dueItem(pending)).toBeUndefined();
    // The payout keeps only the other referral's commission; the stats move to held, earned unchanged.
    expect(await w.payout(payoutId)).toMatchObject({ amount: '2.00', status: 'due', reward_count: 1 });
    expect(await w.stats()).toEqual({ earned: 800, pending: 0, approved: 200, held: 600, paid: 0 });
    expect(await w.count('status=held')).toBe(3);
    expect(await w.count(`status=held&member=${w.memberId}`)).toBe(3);
    expect(await w.count('status=pending')).toBe(0);
    expect(await w.count('status=approved')).toBe(1);
    // The flag counts the two rewards (not the clawback) in the same transactions.
    const f = await w.flagOf(flag);
    expect({ count: f.held_count, ids: [...f.held_reward_ids].sort() }).toEqual({ count: 2, ids: [pending.id, approved.id].sort() });
    // One reward.held event per reward.
    for (const r of [pending, approved]) {
      const event = await getItem(keys.event(w.accountId, eventId('reward.held', `${r.id}:${flag}`)));
      expect(JSON.parse(String(event?.payload)).data).toMatchObject({ id: r.id, status: 'held', held_by: flag, payout_id: null });
    }
    // The API shows it held, by its flag.
    const view = (await w.call('GET', `/v1/rewards/${pending.id}/`)).body;
    expect(view).toMatchObject({ status: 'held', held_by: flag, payout_id: null });

    // A repeat (the same flag again) holds nothing and counts nothing twice.
    expect(await holdRewards(w.accountId, { referralId: one.id }, flag)).toEqual([]);
    expect((await w.flagOf(flag)).held_count).toBe(2);
    expect((await w.flagOf(flag)).held_reward_ids).toHaveLength(2);

    // Approving a held reward is 409; the hourly job passes it by and removes a stale approval-due item.
    const refused = await w.call('POST', `/v1/rewards/${pending.id}/approve/`);
    expect(refused).toMatchObject({ status: 409, body: { detail: 'This reward is held by a fraud rule: release it first.' } });
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...moneyKeys.approvalDue(w.accountId, 1000, pending.id), type: 'ApprovalDue', reward_id: pending.id },
      }),
    );
    expect(await approveDue(w.accountId)).toEqual({ approved: 0, failed: 0 });
    expect(await getItem(moneyKeys.approvalDue(w.accountId, 1000, pending.id))).toBeUndefined();
    expect((await w.reward(pending.id)).status).toBe('held');

    // No held reward reaches a payout batch.
    const batch = await createBatch(w.accountId, { format: 'csv', currency: 'USD' });
    expect(batch.payout_ids).toEqual([payoutId]);
    const batched = (await w.call('GET', `/v1/payouts/${payoutId}/`)).body;
    expect(batched).toMatchObject({ status: 'processing', amount: '2.00', reward_count: 1 });
    for (const r of await w.ledgerOf(one.id)) expect(r).toMatchObject({ status: 'held', payout_id: null });
  });

  it('leaves a commission in a payout being paid and every credit alone; a member hold takes every referral; a flag gone or resolved holds nothing', async () => {
    const w = await world({ hold_days: 0 });
    const paidSoon = await w.referral([500]);
    await approveReward(w.accountId, paidSoon.rewards[0]!.id);
    await createBatch(w.accountId, { format: 'csv', currency: 'USD' }); // processing now
    const later = await w.referral([250]);
    const creditRef = await w.call('POST', '/v1/referrals/', {
      user_identifier: 'credit-user',
      member_code: (await w.call('GET', `/v1/members/${w.memberId}/`)).body.code,
    });
    const creditStored = toReferral(await getItem(keys.referral(w.accountId, creditRef.body.id)))!;
    await recordRewards(w.accountId, creditStored, [{ payment_id: 999, type: 'credit', amount: 700, currency: 'USD' }], true, true);

    // A flag that does not exist, or is resolved, holds nothing.
    expect(await holdRewards(w.accountId, { memberId: w.memberId }, `ff_${newEntityId()}`)).toEqual([]);
    const resolved = await w.flag({ status: 'released' });
    expect(await holdRewards(w.accountId, { memberId: w.memberId }, resolved)).toEqual([]);
    expect(await w.count('status=held')).toBe(0);

    const flag = await w.flag();
    expect(await holdRewards(w.accountId, { memberId: w.memberId }, flag)).toEqual([later.rewards[0]!.id]);
    expect((await w.reward(paidSoon.rewards[0]!.id)).status).toBe('approved');
    expect((await w.ledgerOf(creditRef.body.id))[0]!.status).toBe('pending');
    expect(await w.stats()).toMatchObject({ approved: 500, held: 250, pending: 0 });
    expect((await w.flagOf(flag)).held_count).toBe(1);
    // Malformed or unknown scopes hold nothing.
    expect(await holdRewards(w.accountId, { referralId: 'nope' }, flag)).toEqual([]);
    expect(await holdRewards(w.accountId, { memberId: newEntityId() }, flag)).toEqual([]);
  });

  it('a hold racing an approval ends with the reward held and the payout the sum of its rewards', async () => {
    const w = await world();
    const ref = await w.referral([300, 200]);
    const flag = await w.flag();
    await Promise.all([
      approveReward(w.accountId, ref.rewards[0]!.id).catch(() => undefined),
      holdRewards(w.accountId, { referralId: ref.id }, flag),
      approveReward(w.accountId, ref.rewards[1]!.id).catch(() => undefined),
    ]);
    const rewards = await w.ledgerOf(ref.id);
    expect(rewards.map((r) => r.status)).toEqual(['held', 'held']);
    expect((await w.flagOf(flag)).held_count).toBe(2);
    const payouts = (await w.call('GET', `/v1/payouts/?member=${w.memberId}`)).body.results as { amount: string }[];
    for (const p of payouts) expect(p.amount).toBe('0.00');
    expect(await w.stats()).toEqual({ earned: 500, pending: 0, approved: 0, held: 500, paid: 0 });
  });
});

describe('releasing and voiding', () => {
  it('a release puts a reward back to pending with its approval time, or approved at once once that has passed; a second release is 409; unknown is 404', async () => {
    const w = await world();
    const ref = await w.referral([400, 300]);
    const [a, b] = ref.rewards as [LedgerReward, LedgerReward];
    const flag = await w.flag();
    await holdRewards(w.accountId, { referralId: ref.id }, flag);

    const released = await w.call('POST', `/v1/rewards/${a.id}/release/`);
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ id: a.id, status: 'pending', approves_at: a.approves_at, held_by: flag, payout_id: null });
    expect(a.approves_at).toBe(a.created_at + 30 * DAY);
    expect(await w.dueItem(a)).toBeDefined();
    expect((await w.flagOf(flag)).held_count).toBe(1);
    const event = await getItem(keys.event(w.accountId, eventId('reward.released', `${a.id}:${flag}`)));
    expect(JSON.parse(String(event?.payload)).data).toMatchObject({ id: a.id, status: 'pending' });

    // Released twice: 409 (the operator's endpoint); releaseHeld passes it by.
    expect((await w.call('POST', `/v1/rewards/${a.id}/release/`)).status).toBe(409);
    await releaseHeld(w.accountId, [a.id]);
    expect((await w.reward(a.id)).status).toBe('pending');
    // Unknown, malformed and another account's ids: 404.
    expect((await w.call('POST', `/v1/rewards/${newEntityId()}/release/`)).status).toBe(404);
    expect((await w.call('POST', '/v1/rewards/nope/release/')).status).toBe(404);
    const stranger = await world();
    expect((await stranger.call('POST', `/v1/rewards/${b.id}/release/`)).status).toBe(404);
    expect((await w.reward(b.id)).status).toBe('held');

    // Its hold period over: approved at once into the member's collecting payout.
    const approvedNow = await releaseReward(w.accountId, b.id, { now: (b.approves_at as number) + 1 });
    expect(approvedNow).toMatchObject({ status: 'approved', payout_id: expect.stringMatching(/^po_/) });
    expect(await w.payout(approvedNow.payout_id as string)).toMatchObject({ amount: '3.00', status: 'due', reward_count: 1 });
    expect((await w.flagOf(flag)).held_count).toBe(0);
    expect(await w.stats()).toEqual({ earned: 700, pending: 400, approved: 300, held: 0, paid: 0 });
    expect(await w.count('status=held')).toBe(0);
    // The same flag never takes them again.
    expect(await holdRewards(w.accountId, { referralId: ref.id }, flag)).toEqual([]);
  });

  it('a manual-approval campaign releases to pending with no approval time', async () => {
    const w = await world({ approval: 'manual' });
    const ref = await w.referral([400]);
    const flag = await w.flag();
    await holdRewards(w.accountId, { referralId: ref.id }, flag);
    const released = await releaseReward(w.accountId, ref.rewards[0]!.id, { now: Math.floor(Date.now() / 1000) + 400 * DAY });
    expect(released).toMatchObject({ status: 'pending', approves_at: null });
  });

  it('a void of a held reward (the reward endpoint or the flag action) un-earns it and takes it off its flag; a flag release takes only its own', async () => {
    const w = await world();
    const ref = await w.referral([400, 300, 200]);
    const [a, b, c] = ref.rewards as [LedgerReward, LedgerReward, LedgerReward];
    const stored = toReferral(await getItem(keys.referral(w.accountId, ref.id)))!;
    await recordClawbacks(
      w.accountId,
      stored,
      [{ type: 'commission', amount: -100, currency: 'USD', payment_id: a.payment_id, reverses: a.id, refund_id: 'rf1' }],
      true,
    );
    const flag = await w.flag();
    await holdRewards(w.accountId, { referralId: ref.id }, flag);
    expect(await w.stats()).toEqual({ earned: 800, pending: 0, approved: 0, held: 800, paid: 0 });

    const voided = await w.call('POST', `/v1/rewards/${a.id}/void/`, { reason: 'fraud' });
    expect(voided.body).toMatchObject({ status: 'voided', void_reason: 'fraud' });
    const rewards = await w.ledgerOf(ref.id);
    expect(rewards[3]).toMatchObject({ reverses: a.id, status: 'voided' }); // its clawback with it
    expect((await w.flagOf(flag)).held_count).toBe(2);
    expect(await w.stats()).toEqual({ earned: 500, pending: 0, approved: 0, held: 500, paid: 0 });

    // b released by hand, then held by another flag: the first flag's release leaves it held.
    await releaseReward(w.accountId, b.id);
    const second = await w.flag();
    expect(await holdRewards(w.accountId, { referralId: ref.id }, second)).toEqual([b.id]);
    await releaseHeld(w.accountId, [a.id, b.id, c.id], { flagId: flag });
    expect((await w.reward(b.id)).status).toBe('held');
    expect((await w.reward(c.id)).status).toBe('pending');
    expect((await w.flagOf(flag)).held_count).toBe(0);

    // The second flag's void: reason fraud, off its flag; a repeat changes nothing.
    await voidHeld(w.accountId, [b.id], { flagId: second });
    await voidHeld(w.accountId, [b.id], { flagId: second });
    expect(await w.reward(b.id)).toMatchObject({ status: 'voided', void_reason: 'fraud' });
    expect((await w.flagOf(second)).held_count).toBe(0);
    expect(await w.stats()).toEqual({ earned: 200, pending: 200, approved: 0, held: 0, paid: 0 });
    expect(await w.count('status=voided')).toBe(3);
    expect(await w.count('status=held')).toBe(0);
  });
});

describe('a referral deleted', () => {
  it('takes its held rewards out of the ledger and off their flag', async () => {
    const w = await world();
    const ref = await w.referral([400, 300]);
    const flag = await w.flag();
    await holdRewards(w.accountId, { referralId: ref.id }, flag);
    expect((await w.flagOf(flag)).held_count).toBe(2);
    expect((await w.call('DELETE', `/v1/referrals/${ref.id}/`)).status).toBe(204);
    expect((await w.flagOf(flag)).held_count).toBe(0);
    expect(await w.stats()).toEqual({ earned: 0, pending: 0, approved: 0, held: 0, paid: 0 });
    expect(await w.count('status=held')).toBe(0);
  });
});

describe('races', () => {
  it('two releases, or a release and a void, at once: one outcome each, counted once on the flag', async () => {
    const w = await world();
    const ref = await w.referral([400, 300, 200]);
    const [a, b, c] = ref.rewards as [LedgerReward, LedgerReward, LedgerReward];
    const flag = await w.flag();
    await holdRewards(w.accountId, { referralId: ref.id }, flag);

    const answers = await Promise.all([w.call('POST', `/v1/rewards/${a.id}/release/`), w.call('POST', `/v1/rewards/${a.id}/release/`)]);
    expect(answers.map((x) => x.status).sort()).toEqual([200, 409]);
    await Promise.all([releaseHeld(w.accountId, [b.id, c.id], { flagId: flag }), voidHeld(w.accountId, [b.id, c.id], { flagId: flag })]);
    const end = await w.ledgerOf(ref.id);
    for (const r of end.slice(1)) expect(['pending', 'voided']).toContain(r.status);
    expect((await w.flagOf(flag)).held_count).toBe(0);
    const voided = end.filter((r) => r.status === 'voided');
    expect(await w.stats()).toEqual({
      earned: 900 - voided.reduce((x, r) => x + r.amount, 0),
      pending: 900 - voided.reduce((x, r) => x + r.amount, 0),
      approved: 0,
      held: 0,
      paid: 0,
    });
    expect(await w.count('status=held')).toBe(0);
  });
});

describe('many rewards', () => {
  it('a member with 70 unpaid commissions is held in several transactions, each whole; released again the same way', async () => {
    const w = await world();
    const ref = await w.referral(Array.from({ length: 70 }, () => 100));
    const flag = await w.flag();
    const held = await holdRewards(w.accountId, { memberId: w.memberId }, flag);
    expect(new Set(held).size).toBe(70);
    const f = await w.flagOf(flag);
    expect({ count: f.held_count, ids: new Set(f.held_reward_ids).size, total: f.held_reward_ids.length }).toEqual({
      count: 70,
      ids: 70,
      total: 70,
    });
    expect(await w.count('status=held')).toBe(70);
    expect(await w.stats()).toEqual({ earned: 7000, pending: 0, approved: 0, held: 7000, paid: 0 });
    expect(await holdRewards(w.accountId, { memberId: w.memberId }, flag)).toEqual([]);

    await releaseHeld(w.accountId, f.held_reward_ids, { flagId: flag });
    expect((await w.flagOf(flag)).held_count).toBe(0);
    expect(await w.count('status=pending')).toBe(70);
    expect(await w.stats()).toEqual({ earned: 7000, pending: 7000, approved: 0, held: 0, paid: 0 });
    for (const r of (await w.ledgerOf(ref.id)).slice(0, 5)) expect(await w.dueItem(r)).toBeDefined();
  });
});

describe('a referral under a hold', () => {
  let subscriptionSeq = 960_000 + Math.floor(Math.random() * 30_000) * 100;

  /** A converted referral whose subscription has `n` paid payments of 10.00 not rewarded yet. */
  async function converted(w: Awaited<ReturnType<typeof world>>, n: number) {
    const member = (await w.call('GET', `/v1/members/${w.memberId}/`)).body;
    const ref = await w.call('POST', '/v1/referrals/', { user_identifier: `sub-${subscriptionSeq}`, member_code: member.code });
    const subscriptionId = ++subscriptionSeq;
    const plan = { id: 77, name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' };
    await saveSubscription(w.accountId, {
      id: subscriptionId,
      unit_price: '10.00',
      currency: 'USD',
      status: 'active',
      email: `payer-${subscriptionId}@example.com`,
      next_bill_date: '2030-02-01',
      last_bill_date: '2030-01-01',
      plan,
    });
    const since = Math.floor(Date.now() / 1000) - 3600;
    for (let i = 0; i < n; i++) {
      await applyProviderUpdate(w.accountId, {
        subscriptionId,
        asOfMs: Date.now(),
        fields: {},
        payment: {
          id: subscriptionId * 1000 + i,
          subscription_id: subscriptionId,
          order_id: `o-${subscriptionId}-${i}`,
          amount: 1000,
          currency: 'USD',
          paid_at: since + i * 60,
          status: 'paid',
        },
      });
    }
    const conv = await w.call('POST', `/v1/referrals/${ref.body.id}/conversion/`, { subscription_id: subscriptionId });
    expect(conv.status).toBe(200);
    return ref.body.id as string;
  }

  const setHold = (w: Awaited<ReturnType<typeof world>>, referralId: string, flagId: string) =>
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.referral(w.accountId, referralId),
        UpdateExpression: 'SET fraud_hold = :f',
        ExpressionAttributeValues: { ':f': flagId },
      }),
    );

  it('earns its new commissions held by the flag, counted on it in the same transaction; with the flag gone they are pending', async () => {
    const w = await world({ hold_days: 0 });
    const referralId = await converted(w, 2);
    const flag = await w.flag();
    await setHold(w, referralId, flag);
    await evaluateReferral(w.accountId, referralId);
    const rewards = await w.ledgerOf(referralId);
    expect(rewards.map((r) => [r.status, r.held_by])).toEqual([
      ['held', flag],
      ['held', flag],
    ]);
    const f = await w.flagOf(flag);
    expect({ count: f.held_count, ids: [...f.held_reward_ids].sort() }).toEqual({ count: 2, ids: rewards.map((r) => r.id).sort() });
    expect(await w.stats()).toMatchObject({ earned: 200, held: 200, pending: 0, approved: 0 });
    // A hold of 0 days: released, they are approved at once.
    await releaseHeld(w.accountId, f.held_reward_ids);
    expect((await w.ledgerOf(referralId)).map((r) => r.status)).toEqual(['approved', 'approved']);

    // An evaluation that read the referral before a hold was set on it writes nothing: it reads again.
    const racing = await converted(w, 1);
    const stale = (await loadSettlement(w.accountId, racing))!;
    const late = await w.flag();
    await setHold(w, racing, late);
    const plan = planSettlement(stale, { now: Math.floor(Date.now() / 1000), newId: newEntityId });
    await expect(recordSettlement(stale, plan)).rejects.toBeInstanceOf(RewardRaceError);
    await evaluateReferral(w.accountId, racing);
    expect((await w.ledgerOf(racing)).map((r) => [r.status, r.held_by])).toEqual([['held', late]]);

    // A referral whose flag is gone earns as usual.
    const other = await converted(w, 1);
    await setHold(w, other, `ff_${newEntityId()}`);
    await evaluateReferral(w.accountId, other);
    expect((await w.ledgerOf(other)).map((r) => r.status)).toEqual(['approved']);
    const raw = await db().send(new GetCommand({ TableName: tableName(), Key: keys.referral(w.accountId, other) }));
    expect(raw.Item?.fraud_hold).toBeDefined(); // the flags' side removes it; the evaluation only reads it
  });
});
