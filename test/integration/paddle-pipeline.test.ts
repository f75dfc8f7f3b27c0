// The whole asynchronous Paddle path on real parts: DynamoDB Local, the local SQS with the real workers
// behind pollers, and the Paddle emulator on loopback as the provider. Signed alerts go through the
// webhook handler; conversions through the HTTP handler; rewards and credit modifiers are polled for.
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../shared/store/client';
import { providerRegistryKeys } from '../../shared/store/table';
import { runScheduledJob } from '../../infra/local/pollers';
import { scheduledJobs } from '../../functions/workers';
import { getSubscription, listPayments } from '../../shared/store/subscriptions';
import { api } from '../support/api';
import { pollUntil } from '../support/fixtures';
import { paddleTenants, pipelineWorld, type Tenant } from '../support/paddle-tenant';

const world = pipelineWorld({ ownTable: true });

const {
  tenant,
  json,
  post,
  deliver,
  campaign,
  member,
  referral,
  subscribed: subscribedWith,
  getReferral,
  getMember,
} = paddleTenants(() => world.paddle);
/** A checkout whose alerts reach the service, once both are applied (the subscription active, its payment recorded). */
const subscribed = (t: Tenant, email: string, planId = 9001) => subscribedWith(t, email, { planId });

describe('from a signed webhook to a reward', () => {
  it('credit: checkout -> conversion by checkout_id -> one credit reward and one negative modifier on the referrer', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' });
    const referrerSub = await subscribed(t, 'alice@example.com');
    const alice = await member(t, 'alice', { campaign: { id: c.id }, subscription: { id: referrerSub.subscription.subscription_id } });
    const r = await referral(t, 'user-bob', alice.code);

    const bob = await subscribed(t, 'bob@example.com');
    const converted = await json('POST', `/referrals/${r.id}/conversion/`, t, { checkout_id: bob.checkout_id });
    expect(converted.status).toBe(200);
    expect(converted.body).toMatchObject({
      id: r.id,
      is_converted: true,
      converted_at: expect.any(Number),
      subscription: { id: bob.subscription.subscription_id, status: 'active', currency: 'USD', unit_price: '10.00' },
    });
    expect(converted.body.subscription.plan).toEqual({
      id: 9001,
      name: 'Pro monthly',
      amount: '10.00',
      currency: 'USD',
      interval: 'month',
      frequency: 1,
      descriptor: '$10.00 / month',
    });

    const rewarded = await pollUntil(async () => {
      const body = await getReferral(t, r.id);
      return body.rewards.length === 1 ? body : null;
    });
    expect(rewarded.rewards[0]).toEqual({
      id: expect.stringMatching(/^[0-9a-f]{32}$/),
      type: 'credit',
      amount: '5.00',
      currency: 'USD',
      created_at: expect.any(Number),
      payment_id: bob.payment?.id,
      reverses: null,
      refund_id: null,
      reversed_at: null,
      note: null,
      // A credit is pending until it reaches the referrer's subscription at Paddle, then applied.
      status: expect.stringMatching(/^(pending|applied)$/),
      approves_at: null,
      approved_at: null,
      paid_at: null,
      voided_at: null,
      void_reason: null,
      payout_id: null,
    });
    expect(rewarded.rewards_completed).toBe(true);
    expect(rewarded.stats).toEqual({ rewards: 1, credit_earned: '5.00', commission_earned: '0.00', currency: 'USD' });

    const modifiers = await pollUntil(() => {
      const m = world.paddle.modifiers(referrerSub.subscription.subscription_id);
      return m.length > 0 ? m : null;
    });
    expect(modifiers).toHaveLength(1);
    expect(modifiers[0]).toMatchObject({ amount: '-5.000', is_recurring: false, description: `Referral credit ${rewarded.rewards[0].id}` });
    // Once there, the reward says so (GET /v1/rewards/ lists it applied).
    await pollUntil(async () => ((await getReferral(t, r.id)).rewards[0].status === 'applied' ? true : null));
    const listed = (await json('GET', `/v1/rewards/?status=applied&member=${alice.id}`, t)).body;
    expect(listed).toMatchObject({
      count: 1,
      results: [{ id: rewarded.rewards[0].id, type: 'credit', status: 'applied', referral_id: r.id, member_id: alice.id }],
    });

    const stats = (await getMember(t, alice.id)).stats;
    expect(stats).toMatchObject({ referrals: 1, conversions: 1, credit_earned: '5.00', commission_earned: '0.00' });

    // A renewal of the referred subscription earns nothing more: credit is given once.
    const renewal = await world.paddle.renew(bob.subscription.subscription_id, { deliver: false });
    await deliver(t, renewal.alerts);
    await pollUntil(async () => (await listPayments(t.accountId, bob.subscription.subscription_id)).length === 2);
    await pollUntil(async () => (await world.queues.count('rewards')) === 0);
    expect((await getReferral(t, r.id)).rewards).toHaveLength(1);
    expect(world.paddle.modifiers(referrerSub.subscription.subscription_id)).toHaveLength(1);
  });

  it('commission: conversion by subscription_id, one reward per paid payment for commission_months, the threshold first', async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_commission: true,
      commission_amount: '2.50',
      commission_currency: 'USD',
      commission_months: 12,
      reward_threshold: '15.00',
    });
    const carol = await member(t, 'carol', { campaign: { id: c.id } });
    const r = await referral(t, 'user-dan', carol.code);
    const dan = await subscribed(t, 'dan@example.com');

    const res = await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: String(dan.subscription.subscription_id) });
    expect(res.status).toBe(200);
    expect(res.body.is_converted).toBe(true);

    // 10.00 paid: below the 15.00 threshold, so no reward yet.
    await pollUntil(async () => (await world.queues.count('rewards')) === 0);
    expect((await getReferral(t, r.id)).rewards).toEqual([]);

    // The second payment crosses the threshold (20.00 >= 15.00) and triggers the first commission.
    const second = await world.paddle.renew(dan.subscription.subscription_id, { deliver: false });
    await deliver(t, second.alerts);
    const first = await pollUntil(async () => {
      const body = await getReferral(t, r.id);
      return body.rewards.length === 1 ? body : null;
    });
    expect(first.rewards[0]).toMatchObject({ type: 'commission', amount: '2.50', currency: 'USD', payment_id: second.payment.id });

    const third = await world.paddle.renew(dan.subscription.subscription_id, { deliver: false });
    await deliver(t, third.alerts);
    const after = await pollUntil(async () => {
      const body = await getReferral(t, r.id);
      return body.rewards.length === 2 ? body : null;
    });
    expect(after.rewards.map((w: { payment_id: number }) => w.payment_id)).toEqual([second.payment.id, third.payment.id]);
    expect(after.stats).toMatchObject({ rewards: 2, commission_earned: '5.00' });
    expect(after.rewards_completed).toBe(false);
    expect((await getMember(t, carol.id)).stats).toMatchObject({ conversions: 1, commission_earned: '5.00' });

    // Cancellation ends the commission period.
    const cancel = await world.paddle.cancel(dan.subscription.subscription_id, { deliver: false });
    await deliver(t, cancel.alerts);
    const done = await pollUntil(async () => {
      const body = await getReferral(t, r.id);
      return body.rewards_completed ? body : null;
    });
    expect(done.subscription.status).toBe('deleted');
    expect(done.rewards).toHaveLength(2);
    expect(world.paddle.modifiers()).toEqual(expect.not.arrayContaining([expect.objectContaining({ amount: '-2.500' })]));
  });

  it('a credit for a referrer without a subscription waits until one is attached, then is applied once', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '3.00', credit_currency: 'USD' });
    const erin = await member(t, 'erin', { campaign: { id: c.id } });
    const r = await referral(t, 'user-fay', erin.code);
    const fay = await subscribed(t, 'fay@example.com');
    expect((await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: fay.subscription.subscription_id })).status).toBe(
      200,
    );
    await pollUntil(async () => (await getReferral(t, r.id)).rewards.length === 1);

    const erinSub = await subscribed(t, 'erin@example.com');
    expect(world.paddle.modifiers(erinSub.subscription.subscription_id)).toEqual([]);
    const attached = await json('PATCH', `/v1/members/${erin.id}/`, t, { subscription: { id: erinSub.subscription.subscription_id } });
    expect(attached.status).toBe(200);
    const modifiers = await pollUntil(() => {
      const m = world.paddle.modifiers(erinSub.subscription.subscription_id);
      return m.length > 0 ? m : null;
    });
    expect(modifiers).toEqual([expect.objectContaining({ amount: '-3.000', is_recurring: false })]);

    // Attaching again (a retried PATCH) does not apply it twice.
    expect((await json('PATCH', `/v1/members/${erin.id}/`, t, { subscription: { id: erinSub.subscription.subscription_id } })).status).toBe(
      200,
    );
    await pollUntil(async () => (await world.queues.count('rewards')) === 0);
    expect(world.paddle.modifiers(erinSub.subscription.subscription_id)).toHaveLength(1);
  });
});

describe('conversion errors (docs/design/api-contract.md "Referrals")', () => {
  let t: Tenant;
  let code: string;
  beforeAll(async () => {
    t = await tenant();
    code = (await member(t, 'gus')).code;
  });

  const convert = (id: string, body: unknown) => api('POST', `/referrals/${id}/conversion/`, { key: t.key, body });

  it('neither checkout_id nor subscription_id: 400 non_field_errors', async () => {
    const r = await referral(t, 'e-1', code);
    for (const body of [{}, { checkout_id: null }, { subscription_id: null, checkout_id: null }]) {
      const res = await convert(r.id, body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ non_field_errors: ['Provide checkout_id or subscription_id.'] });
    }
  });

  it('malformed fields: 400 keyed by field', async () => {
    const r = await referral(t, 'e-2', code);
    expect((await convert(r.id, { subscription_id: 'abc' })).body).toEqual({ subscription_id: ['A valid integer is required.'] });
    expect((await convert(r.id, { checkout_id: 'x'.repeat(101) })).body).toEqual({
      checkout_id: ['Ensure this field has no more than 100 characters.'],
    });
    expect((await convert(r.id, { checkout_id: '' })).body).toEqual({ checkout_id: ['This field may not be blank.'] });
  });

  it('a checkout unknown to the provider: 400 on checkout_id', async () => {
    const r = await referral(t, 'e-3', code);
    const res = await convert(r.id, { checkout_id: '999-chre0000-0000000000' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ checkout_id: ['Checkout 999-chre0000-0000000000 could not be found'] });
  });

  it('a checkout still processing: 409, nothing changed', async () => {
    const r = await referral(t, 'e-4', code);
    const out = await world.paddle.checkout({ plan_id: 9001, email: 'slow@example.com', processingMs: 60_000, deliver: false });
    const res = await convert(r.id, { checkout_id: out.checkout_id });
    expect(res.status).toBe(409);
    expect(res.body).toEqual({ detail: `Checkout ${out.checkout_id} is still being processed; retry shortly.` });
    expect((await getReferral(t, r.id)).is_converted).toBe(false);
  });

  it('a subscription unknown to the provider: 400 on subscription_id', async () => {
    const r = await referral(t, 'e-5', code);
    const res = await convert(r.id, { subscription_id: 123456789 });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ subscription_id: ['Subscription 123456789 could not be found'] });
  });

  it('a subscription whose webhook has not arrived yet is fetched from the provider and stored', async () => {
    const r = await referral(t, 'e-6', code);
    const out = await world.paddle.checkout({ plan_id: 9002, email: 'late@example.com', deliver: false });
    const res = await convert(r.id, { checkout_id: out.checkout_id });
    expect(res.status).toBe(200);
    expect(res.body.subscription).toMatchObject({
      id: out.subscription.subscription_id,
      status: 'active',
      plan: { interval: 'year', descriptor: '$100.00 / year' },
    });
    expect(await getSubscription(t.accountId, out.subscription.subscription_id)).toMatchObject({ referral_id: r.id });
  });

  it('already assigned to another referral: 400; the same again: 200 unchanged; another: 400 already converted', async () => {
    const first = await referral(t, 'e-7', code);
    const second = await referral(t, 'e-8', code);
    const out = await subscribed(t, 'shared@example.com');
    const sub = out.subscription.subscription_id;
    const ok = await convert(first.id, { subscription_id: sub });
    expect(ok.status).toBe(200);

    const taken = await convert(second.id, { subscription_id: sub });
    expect(taken.status).toBe(400);
    expect(taken.body).toEqual({ subscription_id: [`Subscription ${sub} is already assigned to another referral`] });
    expect((await getReferral(t, second.id)).is_converted).toBe(false);

    const again = await convert(first.id, { subscription_id: sub });
    expect(again.status).toBe(200);
    // Unchanged (rewards_completed may have turned true meanwhile: this referral has no campaign).
    expect({ ...again.body, rewards_completed: false }).toEqual({ ...ok.body, rewards_completed: false });
    const byCheckout = await convert(first.id, { checkout_id: out.checkout_id });
    expect(byCheckout.status).toBe(400); // converted by subscription id; this checkout is "another" conversion input
    expect(byCheckout.body).toEqual({ non_field_errors: [`Referral ${first.id} is already converted`] });

    const other = await subscribed(t, 'other@example.com');
    const refused = await convert(first.id, { subscription_id: other.subscription.subscription_id });
    expect(refused.status).toBe(400);
    expect(refused.body).toEqual({ non_field_errors: [`Referral ${first.id} is already converted`] });
  });

  it("unknown referral and another account's referral: 404", async () => {
    const other = await tenant();
    const foreign = await referral(other, 'e-9', (await member(other, 'hal')).code);
    for (const id of ['0'.repeat(32), foreign.id, 'not-an-id']) {
      const res = await convert(id, { subscription_id: 1 });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ detail: 'Not found.' });
    }
  });

  it('provider down: 503 with Retry-After and nothing changed', async () => {
    const r = await referral(t, 'e-10', code);
    const out = await world.paddle.checkout({ plan_id: 9001, email: 'down@example.com', deliver: false });
    world.paddle.setMode('down');
    try {
      for (const body of [{ checkout_id: out.checkout_id }, { subscription_id: out.subscription.subscription_id }]) {
        const res = await convert(r.id, body);
        expect(res.status).toBe(503);
        expect(res.headers['retry-after']).toMatch(/^\d+$/);
        expect(res.body).toEqual({ detail: 'The payment provider could not be reached; retry later.' });
      }
    } finally {
      world.paddle.setMode('up');
    }
    expect((await getReferral(t, r.id)).is_converted).toBe(false);
    expect(await getSubscription(t.accountId, out.subscription.subscription_id)).toBeNull();
    expect((await getMember(t, (await getReferral(t, r.id)).member_id)).stats.conversions).toBeGreaterThanOrEqual(0);
  });
});

describe('exactly once', () => {
  it('the same signed alert delivered 20 times concurrently: one payment, one reward, one modifier', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '4.00', credit_currency: 'USD', reward_threshold: '15.00' });
    const ref = await subscribed(t, 'ivy@example.com');
    const ivy = await member(t, 'ivy', { campaign: { id: c.id }, subscription: { id: ref.subscription.subscription_id } });
    const r = await referral(t, 'user-jo', ivy.code);
    const jo = await subscribed(t, 'jo@example.com');
    expect((await json('POST', `/referrals/${r.id}/conversion/`, t, { subscription_id: jo.subscription.subscription_id })).status).toBe(
      200,
    );

    // The renewal crosses the 15.00 threshold; its alert arrives 20 times at once.
    const renewal = await world.paddle.renew(jo.subscription.subscription_id, { deliver: false });
    const alert = renewal.alerts.find((a) => a.fields.alert_name === 'subscription_payment_succeeded');
    expect(alert).toBeDefined();
    const answers = await Promise.all(Array.from({ length: 20 }, () => post(t, alert!.fields)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));

    const rewarded = await pollUntil(async () => {
      const body = await getReferral(t, r.id);
      return body.rewards.length === 1 ? body : null;
    });
    await pollUntil(async () => (await world.queues.count('provider-events')) === 0 && (await world.queues.count('rewards')) === 0, {
      timeoutMs: 20_000,
    });
    await pollUntil(() => world.paddle.modifiers(ref.subscription.subscription_id).length === 1);
    const settled = await pollUntil(async () => {
      const body = await getReferral(t, r.id);
      return body.rewards[0]?.status === 'applied' ? body : null;
    });
    expect(settled.rewards).toEqual(rewarded.rewards.map((w: Record<string, unknown>) => ({ ...w, status: 'applied' })));
    expect(rewarded.rewards[0].payment_id).toBe(renewal.payment.id);
    expect(await listPayments(t.accountId, jo.subscription.subscription_id)).toHaveLength(2);
    expect(world.paddle.modifiers(ref.subscription.subscription_id)).toHaveLength(1);
    expect((await getMember(t, ivy.id)).stats).toMatchObject({ conversions: 1, credit_earned: '4.00' });
    expect(await world.queues.count('provider-events-dlq')).toBe(0);
  });

  it('the same conversion posted 10 times concurrently: one conversion, one reward, one modifier call', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '6.00', credit_currency: 'USD' });
    const ref = await subscribed(t, 'kim@example.com');
    const kim = await member(t, 'kim', { campaign: { id: c.id }, subscription: { id: ref.subscription.subscription_id } });
    const r = await referral(t, 'user-lee', kim.code);
    const lee = await subscribed(t, 'lee@example.com');
    const before = world.paddle.callCounts()['/vendors/api/2.0/subscription/modifiers/create'] ?? 0;

    const answers = await Promise.all(
      Array.from({ length: 10 }, () => json('POST', `/referrals/${r.id}/conversion/`, t, { checkout_id: lee.checkout_id })),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    expect(new Set(answers.map((a) => a.body.converted_at)).size).toBe(1);

    await pollUntil(async () => (await getReferral(t, r.id)).rewards.length === 1);
    await pollUntil(() => world.paddle.modifiers(ref.subscription.subscription_id).length === 1);
    await pollUntil(async () => (await world.queues.count('rewards')) === 0, { timeoutMs: 20_000 });
    expect((await getReferral(t, r.id)).rewards).toHaveLength(1);
    expect(world.paddle.modifiers(ref.subscription.subscription_id)).toHaveLength(1);
    expect((world.paddle.callCounts()['/vendors/api/2.0/subscription/modifiers/create'] ?? 0) - before).toBe(1);
    expect((await getMember(t, kim.id)).stats).toMatchObject({ referrals: 1, conversions: 1, credit_earned: '6.00' });
  });
});

describe('automatic conversion from the checkout passthrough (browser script)', () => {
  const passthrough = (referralId: string) => JSON.stringify({ app_user: 42, refloop_referral_id: referralId });

  it('a subscription_created naming a js referral converts it once, whatever the duplicates, and it earns its reward', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_commission: true, commission_amount: '2.00', commission_currency: 'USD' });
    const ava = await member(t, 'ava', { campaign: { id: c.id } });
    const js = await api('POST', '/js/v1/referrals/', {
      key: t.publishableKey,
      body: { member_code: ava.code, user_identifier: 'user-auto' },
    });
    expect(js.status).toBe(200);
    const referralId = js.body.id as string;

    const out = await world.paddle.checkout({
      plan_id: 9001,
      email: 'auto@example.com',
      deliver: false,
      passthrough: passthrough(referralId),
    });
    await deliver(t, out.alerts);
    const converted = await pollUntil(
      async () => {
        const r = await getReferral(t, referralId);
        return r.is_converted && r.rewards.length === 1 ? r : null;
      },
      { timeoutMs: 15_000 },
    );
    expect(converted).toMatchObject({
      source: 'js',
      subscription: { id: out.subscription.subscription_id },
      rewards: [{ type: 'commission', amount: '2.00' }],
    });
    expect((await getSubscription(t.accountId, out.subscription.subscription_id))?.referral_id).toBe(referralId);

    // Paddle retries: every alert again, twice, concurrently. Still one conversion and one reward.
    await Promise.all([deliver(t, out.alerts), deliver(t, out.alerts)]);
    await pollUntil(async () => (await world.queues.count('provider-events')) === 0 && (await world.queues.count('rewards')) === 0, {
      timeoutMs: 15_000,
    });
    const after = await getReferral(t, referralId);
    expect(after.converted_at).toBe(converted.converted_at);
    expect(after.rewards).toHaveLength(1);
    expect((await getMember(t, ava.id)).stats).toMatchObject({ referrals: 1, conversions: 1, commission_earned: '2.00' });
  });

  it("another account's referral id, an unknown id and a passthrough that is not ours convert nothing; the alerts are acknowledged", async () => {
    const t = await tenant();
    const other = await tenant();
    const om = await member(other, 'oscar');
    const foreign = await referral(other, 'user-foreign', om.code);

    const cases = [
      passthrough(foreign.id),
      passthrough('0'.repeat(32)),
      passthrough('../../x'),
      'not json',
      JSON.stringify(['refloop_referral_id']),
      '',
    ];
    const subscriptions: number[] = [];
    for (const [i, p] of cases.entries()) {
      const out = await world.paddle.checkout({ plan_id: 9001, email: `nobody-${i}@example.com`, deliver: false, passthrough: p });
      await deliver(t, out.alerts);
      subscriptions.push(out.subscription.subscription_id);
    }
    await pollUntil(async () => (await world.queues.count('provider-events')) === 0, { timeoutMs: 15_000 });
    for (const id of subscriptions) {
      const s = await getSubscription(t.accountId, id);
      expect({ id, status: s?.status, referral: s?.referral_id ?? null }).toEqual({ id, status: 'active', referral: null });
    }
    expect((await getReferral(other, foreign.id)).is_converted).toBe(false);
    expect(await world.queues.count('provider-events-dlq')).toBe(0);
  });
});

describe('out of order and unknown alerts', () => {
  it('a subscription_updated older than the stored state is ignored; a newer one applies', async () => {
    const t = await tenant();
    const out = await subscribed(t, 'old@example.com');
    const id = out.subscription.subscription_id;
    const created = out.alerts[0]!.fields;
    const base = {
      alert_name: 'subscription_updated',
      subscription_id: String(id),
      subscription_plan_id: '9001',
      currency: 'USD',
      email: 'old@example.com',
      user_id: created.user_id ?? '1',
      checkout_id: out.checkout_id,
      passthrough: '',
      marketing_consent: '0',
      next_bill_date: '2031-01-01',
      new_unit_price: '10.00',
      old_status: 'active',
    };
    const stale = world.paddle.sign({ ...base, alert_id: '990000001', status: 'paused', event_time: '2001-01-01 00:00:00' });
    expect((await post(t, stale)).status).toBe(200);
    const fresh = world.paddle.sign({ ...base, alert_id: '990000002', status: 'past_due', event_time: '2099-01-01 00:00:00' });
    expect((await post(t, stale)).status).toBe(200);
    expect((await post(t, fresh)).status).toBe(200);
    await pollUntil(async () => (await getSubscription(t.accountId, id))?.status === 'past_due');
    // The stale one, delivered after the fresh one, still changes nothing.
    const staleAgain = world.paddle.sign({ ...base, alert_id: '990000003', status: 'paused', event_time: '2002-01-01 00:00:00' });
    expect((await post(t, staleAgain)).status).toBe(200);
    await pollUntil(async () => (await world.queues.count('provider-events')) === 0);
    expect(await getSubscription(t.accountId, id)).toMatchObject({ status: 'past_due', next_bill_date: '2031-01-01' });
    const counts = (await json('GET', '/v1/subscriptions/?status=paused', t)).body.count;
    expect(counts).toBe(0);
  });

  it('an alert type the service does not handle is acknowledged, not retried', async () => {
    const t = await tenant();
    const fields = world.paddle.sign({
      alert_id: '990000010',
      alert_name: 'transfer_created',
      amount: '1.00',
      currency: 'USD',
      event_time: '2024-01-01 00:00:00',
    });
    expect((await post(t, fields)).status).toBe(200);
    await pollUntil(async () => (await world.queues.count('provider-events')) === 0);
    expect(await world.queues.count('provider-events-dlq')).toBe(0);
  });
});

describe('background sync', () => {
  it('creates subscriptions whose webhooks were missed, and heals a missed payment into a reward', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_commission: true, commission_amount: '1.00', commission_currency: 'USD' });
    const mo = await member(t, 'mo', { campaign: { id: c.id } });
    const r = await referral(t, 'user-ned', mo.code);
    const ned = await subscribed(t, 'ned@example.com');
    expect((await json('POST', `/referrals/${r.id}/conversion/`, t, { subscription_id: ned.subscription.subscription_id })).status).toBe(
      200,
    );
    await pollUntil(async () => (await getReferral(t, r.id)).rewards.length === 1);

    const missed = await world.paddle.checkout({ plan_id: 9002, email: 'missed@example.com', deliver: false });
    const renewal = await world.paddle.renew(ned.subscription.subscription_id, { deliver: false });
    expect(await getSubscription(t.accountId, missed.subscription.subscription_id)).toBeNull();

    // The job syncs every registered account of the table (this file's own). Every account of the file is
    // connected to the same emulator, so each would page through all of its subscriptions: on a loaded CI
    // machine that took more than the deadline. Only this test's account stays registered.
    const registry = await db().send(
      new QueryCommand({
        TableName: tableName(),
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': providerRegistryKeys.providerAccounts() },
      }),
    );
    for (const item of registry.Items ?? []) {
      if (item.sk !== t.accountId) await db().send(new DeleteCommand({ TableName: tableName(), Key: { pk: item.pk, sk: item.sk } }));
    }
    const job = scheduledJobs.find((j) => j.name === 'ProviderBackfill');
    expect(job).toBeDefined();
    expect(await runScheduledJob(job!)).toEqual({ accounts: 1 });

    await pollUntil(async () => (await getSubscription(t.accountId, missed.subscription.subscription_id))?.plan.interval === 'year', {
      timeoutMs: 20_000,
    });
    const healed = await pollUntil(
      async () => {
        const body = await getReferral(t, r.id);
        return body.rewards.length === 2 ? body : null;
      },
      { timeoutMs: 20_000 },
    );
    expect(healed.rewards.map((w: { payment_id: number }) => w.payment_id)).toContain(renewal.payment.id);
  });
});

describe('failing input on the real workers', () => {
  it('a message no worker can read ends in the DLQ of its queue; the queue keeps flowing', async () => {
    const t = await tenant();
    await world.queues.client.send(new SendMessageCommand({ QueueUrl: world.queues.urlOf('provider-events'), MessageBody: 'not json' }));
    await world.queues.client.send(
      new SendMessageCommand({ QueueUrl: world.queues.urlOf('rewards'), MessageBody: JSON.stringify({ kind: 'no-such-kind' }) }),
    );
    // Meanwhile a real alert is still applied.
    const out = await subscribed(t, 'flow@example.com');
    expect(out.subscription.state).toBe('active');
    // The DLQs are shared by the whole file (the background-sync test's syncs could be parked there too):
    // only the two poison messages of this test are looked for.
    const poison = ['not json', JSON.stringify({ kind: 'no-such-kind' })];
    const parked: string[] = [];
    await pollUntil(
      async () => {
        const [events, rewards] = await Promise.all([
          world.queues.receiveAll('provider-events-dlq'),
          world.queues.receiveAll('rewards-dlq'),
        ]);
        parked.push(...events.map((m) => m.body), ...rewards.map((m) => m.body));
        return poison.every((body) => parked.includes(body));
      },
      { timeoutMs: 20_000 },
    );
    expect(parked.filter((body) => poison.includes(body)).sort()).toEqual([...poison].sort());
  });
});

describe('messages queued before the one webhook intake', () => {
  it("a 'paddle-alert' message (the earlier Classic intake's kind, still in a queue or a DLQ redrive) is applied like the alert itself", async () => {
    const t = await tenant();
    const out = await world.paddle.checkout({ plan_id: 9001, email: 'legacy@example.com', deliver: false });
    for (const alert of out.alerts) {
      const { p_signature: _signature, ...fields } = alert.fields;
      const message = { kind: 'paddle-alert', account_id: t.accountId, fields, received_at: Date.now() };
      await world.queues.client.send(
        new SendMessageCommand({ QueueUrl: world.queues.urlOf('provider-events'), MessageBody: JSON.stringify(message) }),
      );
    }
    await pollUntil(async () => {
      const s = await getSubscription(t.accountId, out.subscription.subscription_id);
      return s?.status === 'active' && s.last_bill_date !== null;
    });
  });
});

describe('deleting a rewarded referral', () => {
  it('takes its conversion and its rewards out of the member stats', async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_commission: true, commission_amount: '1.50', commission_currency: 'USD' });
    const pat = await member(t, 'pat', { campaign: { id: c.id } });
    const r = await referral(t, 'user-quinn', pat.code);
    const quinn = await subscribed(t, 'quinn@example.com');
    expect((await json('POST', `/referrals/${r.id}/conversion/`, t, { subscription_id: quinn.subscription.subscription_id })).status).toBe(
      200,
    );
    await pollUntil(async () => (await getReferral(t, r.id)).rewards.length === 1);
    expect((await getMember(t, pat.id)).stats).toMatchObject({ referrals: 1, conversions: 1, commission_earned: '1.50' });

    expect((await json('DELETE', `/v1/referrals/${r.id}/`, t)).status).toBe(204);
    expect((await getMember(t, pat.id)).stats).toMatchObject({ referrals: 0, conversions: 0, commission_earned: '0.00' });
    // The subscription is free for another referral of the same user.
    const again = await referral(t, 'user-quinn', pat.code);
    expect(
      (await json('POST', `/referrals/${again.id}/conversion/`, t, { subscription_id: quinn.subscription.subscription_id })).status,
    ).toBe(200);
  });
});
