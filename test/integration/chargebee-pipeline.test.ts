// Chargebee end to end on real parts: DynamoDB Local, the local SQS with the real workers behind pollers, and
// the Chargebee emulator on loopback. Its events, with their Basic-auth header, go through the intake
// (POST /webhooks/chargebee/{account_id}/); the worker fetches each applied event again from the emulator
// (GET /api/v2/events/{id}) and applies only that. What only Chargebee has: no signature (a forged body with
// the right pair changes nothing), the referral id on the customer before checkout, promotional credits
// found by reference and deducted only while unspent, refunds that arrive twice (credit_note_created and
// payment_refunded) counted once, the assumed chargeback, past_due from unpaid invoices, and the sync over
// next_offset with include_deleted.
import { type ChargebeeEmulator, type Delivery, startChargebeeEmulator } from '../../infra/local/emulators/chargebee';
import type { Pollers } from '../../infra/local/pollers';
import { basicAuthHeader, webhookSecretOf } from '../../shared/providers/chargebee/signature';
import { publish } from '../../shared/queue/publish';
import { saveProviderConnection } from '../../shared/store/provider';
import { getSubscription, listPayments } from '../../shared/store/subscriptions';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let pollers: Pollers;
let cb: ChargebeeEmulator;

beforeAll(async () => {
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
  cb = await startChargebeeEmulator({ webhookUrl: null });
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  await cb?.stop();
});

interface Tenant {
  accountId: string;
  key: string;
}

async function tenant(): Promise<Tenant> {
  const { accountId, apiKey } = await newAccount();
  await saveProviderConnection(accountId, {
    kind: 'chargebee',
    site: cb.site,
    apiKey: cb.apiKey,
    apiUrl: cb.url,
    webhookUsername: cb.webhookUsername,
    webhookPassword: cb.webhookPassword,
  });
  return { accountId, key: apiKey };
}

const json = (method: string, path: string, t: Tenant, body?: unknown) =>
  api(method, path, { key: t.key, ...(body === undefined ? {} : { body }) });
const auth = () => basicAuthHeader(webhookSecretOf(cb.webhookUsername, cb.webhookPassword));

const post = (t: Tenant, rawBody: string, authorization: string | undefined) =>
  api('POST', `/webhooks/chargebee/${t.accountId}/`, {
    rawBody,
    headers: { 'content-type': 'application/json', ...(authorization === undefined ? {} : { authorization }) },
  });

async function deliver(t: Tenant, deliveries: Delivery[]): Promise<void> {
  for (const d of deliveries) expect((await post(t, d.rawBody, d.headers.authorization)).status).toBe(200);
}

const drained = () => queues.drained(['provider-events', 'rewards']);

async function member(t: Tenant, n: string, body: Record<string, unknown> = {}) {
  const res = await json('POST', '/v1/members/', t, { identifier: `m-${n}`, email: `${n}@example.com`, ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; code: string };
}

async function subscribed(t: Tenant, email: string, referralId?: string, referralOn?: 'customer-cf' | 'customer-meta' | 'subscription-cf') {
  const out = await cb.checkout({ email, deliver: false, taxRate: 0.2, ...(referralId ? { referralId, referralOn } : {}) });
  await deliver(t, out.deliveries);
  const id = out.subscription.id;
  await pollUntil(async () =>
    (await getSubscription(t.accountId, id))?.status === 'active' && (await listPayments(t.accountId, id)).length > 0 ? true : null,
  );
  return out;
}

const referral = async (t: Tenant, id: string) => (await json('GET', `/v1/referrals/${id}/`, t)).body;
const rewardsOf = (t: Tenant, id: string, n: number) =>
  pollUntil(async () => {
    const body = await referral(t, id);
    return body.rewards?.length === n ? body : null;
  });

describe('Chargebee intake: Basic authentication, and only what Chargebee stores is applied', () => {
  it('answers 404 for an unknown account, 403 for a missing or wrong pair, 200 for the right one', async () => {
    const t = await tenant();
    const body = JSON.stringify({ id: 'ev_intake01', object: 'event', event_type: 'customer_changed', occurred_at: 1, content: {} });
    expect((await api('POST', '/webhooks/chargebee/0123456789abcdef/', { rawBody: body, headers: { authorization: auth() } })).status).toBe(
      404,
    );
    for (const authorization of [
      undefined,
      basicAuthHeader(webhookSecretOf(cb.webhookUsername, 'wrong-password-wrong-password')),
      basicAuthHeader(webhookSecretOf('someone', cb.webhookPassword)),
      `Bearer ${cb.apiKey}`,
    ]) {
      const res = await post(t, body, authorization);
      expect({ authorization, status: res.status, body: res.body }).toEqual({
        authorization,
        status: 403,
        body: { detail: 'Invalid signature.' },
      });
    }
    expect((await post(t, body, auth())).status).toBe(200);
  });

  it('a forged body with the right pair changes nothing: an unknown id is ignored, a known id is applied as Chargebee has it', async () => {
    const t = await tenant();
    const out = await cb.checkout({ email: 'forge@example.com', deliver: false });
    const sub = out.subscription.id;
    // An invented event: acknowledged, nothing stored.
    const invented = JSON.stringify({
      id: 'ev_forgedXXXXXXXXXXXX',
      object: 'event',
      api_version: 'v2',
      occurred_at: Math.floor(Date.now() / 1000),
      event_type: 'subscription_created',
      content: { subscription: { ...out.subscription, status: 'active' }, customer: out.customer },
    });
    expect((await post(t, invented, auth())).status).toBe(200);
    await drained();
    expect(await getSubscription(t.accountId, sub)).toBeNull();
    // A real event id with altered content (another email, a cancelled status, a bigger payment): the stored event wins.
    const paid = out.deliveries.find((d) => d.event.event_type === 'payment_succeeded');
    if (!paid) throw new Error('the checkout made no payment_succeeded');
    const altered = JSON.parse(paid.rawBody) as {
      content: { subscription: Record<string, unknown>; customer: Record<string, unknown>; invoice: Record<string, unknown> };
    };
    altered.content.subscription.status = 'cancelled';
    altered.content.customer.email = 'mallory@example.com';
    altered.content.invoice.amount_paid = 999_999;
    expect((await post(t, JSON.stringify(altered), auth())).status).toBe(200);
    const stored = await pollUntil(async () => getSubscription(t.accountId, sub));
    expect(stored).toMatchObject({ status: 'active', email: 'forge@example.com' });
    const payments = await pollUntil(async () => {
      const list = await listPayments(t.accountId, sub);
      return list.length > 0 ? list : null;
    });
    expect(payments.map((p) => p.amount)).toEqual([out.invoice?.amount_paid]);
  });
});

describe('Chargebee from checkout to reward, promotional credit and clawback', () => {
  it('converts from the customer field, credits the referrer once (referral_rewards, found by reference), and deducts it after a refund while unspent', async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `cb-${Date.now()}`,
      allows_credit: true,
      credit_amount: '5.00',
      credit_currency: 'USD',
    });
    expect(campaign.status).toBe(201);
    const alice = await subscribed(t, 'alice@example.com');
    const m = await member(t, 'alice', { campaign: { id: campaign.body.id }, subscription: { id: alice.subscription.id } });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-bob', member_code: m.code });
    expect(ref.status).toBe(200);

    const bob = await subscribed(t, 'bob@example.com', ref.body.id, 'customer-cf');
    const rewarded = await rewardsOf(t, ref.body.id, 1);
    expect(rewarded).toMatchObject({
      is_converted: true,
      subscription: { id: bob.subscription.id, status: 'active', currency: 'USD', email: 'bob@example.com' },
    });
    expect(rewarded.rewards[0]).toMatchObject({ type: 'credit', amount: '5.00', currency: 'USD', payment_id: bob.invoice?.id });

    // The promotional credit: on Alice's customer, in USD, once.
    const customer = alice.customer.id;
    await pollUntil(async () => (cb.balanceOf(customer, 'USD') === 500 ? true : null));
    const added = cb.promotionalCredits(customer);
    expect(added).toHaveLength(1);
    expect(added[0]).toMatchObject({
      type: 'increment',
      amount: 500,
      currency_code: 'USD',
      credit_type: 'referral_rewards',
      reference: `refloop:reward:${rewarded.rewards[0].id}`,
    });
    // Redelivered events change nothing (de-duplicated on the event id).
    await deliver(t, bob.deliveries);
    await drained();
    expect((await referral(t, ref.body.id)).rewards).toHaveLength(1);
    expect(cb.balanceOf(customer, 'USD')).toBe(500);

    // A full refund: credit_note_created and payment_refunded, one refund; the unspent credit is deducted.
    const refund = await cb.refund(bob.invoice?.id as string, { deliver: false });
    expect(refund.deliveries.map((d) => d.event.event_type)).toEqual(['credit_note_created', 'payment_refunded']);
    await deliver(t, refund.deliveries);
    const clawed = await rewardsOf(t, ref.body.id, 2);
    expect(clawed.rewards[1]).toMatchObject({ amount: '-5.00', reverses: clawed.rewards[0].id });
    await pollUntil(async () => (cb.balanceOf(customer, 'USD') === 0 ? true : null));
    expect(cb.promotionalCredits(customer).map((c) => [c.type, c.amount, c.reference])).toEqual([
      ['increment', 500, `refloop:reward:${rewarded.rewards[0].id}`],
      ['decrement', 500, `refloop:reversal:${rewarded.rewards[0].id}`],
    ]);
    await drained();
    expect((await referral(t, ref.body.id)).rewards).toHaveLength(2);
    // Every write carried an idempotency key.
    expect(cb.idempotencyKeysSeen().every((k) => typeof k === 'string' && k.length > 0)).toBe(true);
  });

  it('a credit the next invoice consumed (before tax) stays: the clawback notes it, nothing is deducted', async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `cb-used-${Date.now()}`,
      allows_credit: true,
      credit_amount: '3.00',
      credit_currency: 'USD',
    });
    const carol = await subscribed(t, 'carol@example.com');
    const m = await member(t, 'carol', { campaign: { id: campaign.body.id }, subscription: { id: carol.subscription.id } });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-dan', member_code: m.code });
    const dan = await subscribed(t, 'dan@example.com', ref.body.id, 'customer-meta');
    await rewardsOf(t, ref.body.id, 1);
    await pollUntil(async () => (cb.balanceOf(carol.customer.id, 'USD') === 300 ? true : null));
    // Carol's renewal uses the credit as a discount before tax.
    const renewal = await cb.renew(carol.subscription.id, { deliver: false });
    expect(renewal.creditsUsed).toBe(300);
    expect(renewal.invoice.discounts).toEqual(
      expect.arrayContaining([expect.objectContaining({ entity_type: 'promotional_credits', amount: 300 })]),
    );
    expect(renewal.invoice.tax).toBe(Math.round((1000 - 300) * 0.2));
    await deliver(t, renewal.deliveries);
    const refund = await cb.refund(dan.invoice?.id as string, { deliver: false });
    await deliver(t, refund.deliveries);
    // The credit note's id is the refund's: the reward notes it and stays.
    const kept = await pollUntil(async () => {
      const body = await referral(t, ref.body.id);
      return body.rewards?.[0]?.note ? body : null;
    });
    expect(kept.rewards).toHaveLength(1);
    expect(kept.rewards[0].note).toContain(`refund ${refund.creditNote.id}`);
    expect(kept.rewards[0].note).toContain('the credit stays');
    await drained();
    expect(cb.balanceOf(carol.customer.id, 'USD')).toBe(0);
    expect(cb.promotionalCredits(carol.customer.id).filter((c) => c.type === 'decrement')).toHaveLength(0);
  });

  it('the assumed chargeback (credit_note_created with reason chargeback, then payment_refunded) claws back once, as a chargeback', async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `cb-dispute-${Date.now()}`,
      allows_commission: true,
      commission_amount: '4.00',
      commission_currency: 'USD',
    });
    const m = await member(t, 'erin', { campaign: { id: campaign.body.id } });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-fay', member_code: m.code });
    const fay = await subscribed(t, 'fay@example.com', ref.body.id, 'subscription-cf');
    await rewardsOf(t, ref.body.id, 1);
    const dispute = await cb.dispute(fay.invoice?.id as string, { deliver: false });
    expect(dispute.creditNote).toMatchObject({ reason_code: 'chargeback', type: 'refundable' });
    await deliver(t, dispute.deliveries);
    await deliver(t, dispute.deliveries);
    const clawed = await rewardsOf(t, ref.body.id, 2);
    expect(clawed.rewards.reduce((sum: number, r: { amount: string }) => sum + Number(r.amount), 0)).toBeCloseTo(0, 5);
    await drained();
    expect((await referral(t, ref.body.id)).rewards).toHaveLength(2);
  });
  it('a refund still in progress (credit_note_created refund_due, then refund_initiated) claws back nothing yet', async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `cb-pending-${Date.now()}`,
      allows_commission: true,
      commission_amount: '2.00',
      commission_currency: 'USD',
    });
    const m = await member(t, 'gwen', { campaign: { id: campaign.body.id } });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-hugo', member_code: m.code });
    const hugo = await subscribed(t, 'hugo@example.com', ref.body.id);
    await rewardsOf(t, ref.body.id, 1);
    const pending = await cb.refund(hugo.invoice?.id as string, { pending: true, deliver: false });
    expect(pending.deliveries.map((d) => d.event.event_type)).toEqual(['credit_note_created', 'refund_initiated']);
    await deliver(t, pending.deliveries);
    await drained();
    expect((await referral(t, ref.body.id)).rewards).toHaveLength(1);
  });
});

describe('Chargebee subscription state', () => {
  it('past_due while an invoice is unpaid (Chargebee has no such status); cancelled at the term end, no next bill', async () => {
    const t = await tenant();
    const gus = await subscribed(t, 'gus@example.com');
    const failed = await cb.renew(gus.subscription.id, { fail: true, deliver: false });
    await deliver(t, failed.deliveries);
    await pollUntil(async () => ((await getSubscription(t.accountId, gus.subscription.id))?.status === 'past_due' ? true : null));
    const cancelled = await cb.cancel(gus.subscription.id, { deliver: false });
    await deliver(t, cancelled.deliveries);
    await pollUntil(async () => ((await getSubscription(t.accountId, gus.subscription.id))?.next_bill_date === null ? true : null));
  });

  it('the background sync pages with next_offset: subscriptions whose events were lost are mirrored with email and plan name', async () => {
    const t = await tenant();
    const lost = await cb.checkout({ email: 'hal@example.com', deliver: false });
    expect(await getSubscription(t.accountId, lost.subscription.id)).toBeNull();
    await publish('provider-events', { kind: 'sync-account', account_id: t.accountId, state: 'live', page: 1, started_at: Date.now() });
    const mirrored = await pollUntil(async () => getSubscription(t.accountId, lost.subscription.id), { timeoutMs: 20_000 });
    expect(mirrored).toMatchObject({
      status: 'active',
      email: 'hal@example.com',
      currency: 'USD',
      plan: { id: 'pro-USD-monthly', name: 'Pro USD Monthly' },
    });
  });
});
