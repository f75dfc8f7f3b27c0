// Stripe end to end on real parts: DynamoDB Local, the local SQS with the real workers behind pollers, and
// the Stripe emulator on loopback. Its signed events go through the intake (POST /webhooks/stripe/{account_id}/);
// the adapter calls the emulator's API (form bodies, pinned API version, Idempotency-Key on every write).
// Checkout with client_reference_id -> automatic conversion -> credit reward -> a negative customer balance
// transaction for the referrer -> a full refund -> clawback and the credit taken back.
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';
import type { Pollers } from '../../infra/local/pollers';
import { startStripeEmulator, type DeliveredEvent, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { signatureHeader } from '../../shared/providers/stripe/signature';
import { saveProviderConnection } from '../../shared/store/provider';
import { getSubscription, listPayments } from '../../shared/store/subscriptions';
import { api } from '../support/api';
import { publish } from '../../shared/queue/publish';
import { newAccount, pollUntil } from '../support/fixtures';

let queues: TestQueues;
let pollers: Pollers;
let stripe: StripeEmulator;

beforeAll(async () => {
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
  stripe = await startStripeEmulator({ webhookUrl: null });
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  await stripe?.stop();
});

interface Tenant {
  accountId: string;
  key: string;
}

async function tenant(): Promise<Tenant> {
  const { accountId, apiKey } = await newAccount();
  await saveProviderConnection(accountId, {
    kind: 'stripe',
    secretKey: stripe.secretKey,
    apiUrl: stripe.url,
    webhookSecret: stripe.webhookSecret,
  });
  return { accountId, key: apiKey };
}

const json = (method: string, path: string, t: Tenant, body?: unknown) =>
  api(method, path, { key: t.key, ...(body === undefined ? {} : { body }) });

const post = (t: Tenant, rawBody: string, signature: string | undefined) =>
  api('POST', `/webhooks/stripe/${t.accountId}/`, {
    rawBody,
    headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { 'stripe-signature': signature }) },
  });

async function deliver(t: Tenant, events: DeliveredEvent[]): Promise<void> {
  for (const e of events) expect((await post(t, e.rawBody, e.signature)).status).toBe(200);
}

async function member(t: Tenant, n: string, body: Record<string, unknown> = {}) {
  const res = await json('POST', '/v1/members/', t, { identifier: `m-${n}`, email: `${n}@example.com`, ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; code: string };
}

async function subscribed(t: Tenant, email: string, clientReferenceId?: string, currency?: string) {
  const out = await stripe.checkout({
    email,
    deliver: false,
    ...(clientReferenceId ? { clientReferenceId } : {}),
    ...(currency ? { currency } : {}),
  });
  await deliver(t, out.delivered);
  const id = out.result.subscription.id;
  await pollUntil(async () =>
    (await getSubscription(t.accountId, id))?.status === 'active' && (await listPayments(t.accountId, id)).length > 0 ? true : null,
  );
  return out.result;
}

describe('Stripe intake', () => {
  it('answers 404 for an unknown account or one not connected to Stripe, and 403 for a bad, missing or stale signature', async () => {
    const t = await tenant();
    const other = await newAccount();
    const body = JSON.stringify({
      id: 'evt_01',
      object: 'event',
      type: 'customer.updated',
      created: Math.floor(Date.now() / 1000),
      data: { object: {} },
    });
    const now = Math.floor(Date.now() / 1000);
    const good = signatureHeader(stripe.webhookSecret, body, now);
    expect((await api('POST', '/webhooks/stripe/0123456789abcdef/', { rawBody: body, headers: { 'stripe-signature': good } })).status).toBe(
      404,
    );
    expect(
      (await api('POST', `/webhooks/stripe/${other.accountId}/`, { rawBody: body, headers: { 'stripe-signature': good } })).status,
    ).toBe(404);
    for (const signature of [
      undefined,
      't=1,v1=00',
      signatureHeader('whsec_wrongwrongwrong', body, now),
      signatureHeader(stripe.webhookSecret, body, now - 301),
      `t=${now},v0=${good.split('v1=')[1]}`,
    ]) {
      const res = await post(t, body, signature);
      expect({ signature, status: res.status, body: res.body }).toEqual({ signature, status: 403, body: { detail: 'Invalid signature.' } });
    }
    expect((await post(t, body, good)).status).toBe(200);
    // Paddle Billing's intake does not serve a Stripe account.
    expect(
      (await api('POST', `/webhooks/paddle-billing/${t.accountId}/`, { rawBody: body, headers: { 'paddle-signature': 'ts=1;h1=00' } }))
        .status,
    ).toBe(404);
  });
});

describe('Stripe from checkout to reward, credit and clawback', () => {
  it('converts from client_reference_id, credits the referrer with a negative balance transaction once, and takes it back after a full refund', async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `stripe-${Date.now()}`,
      allows_credit: true,
      credit_amount: '5.00',
      credit_currency: 'USD',
    });
    expect(campaign.status).toBe(201);
    const referrerSub = await subscribed(t, 'alice@example.com');
    const alice = await member(t, 'alice', { campaign: { id: campaign.body.id }, subscription: { id: referrerSub.subscription.id } });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-bob', member_code: alice.code });
    expect(ref.status).toBe(200);

    const bob = await subscribed(t, 'bob@example.com', ref.body.id);
    const rewarded = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.rewards?.length === 1 ? body : null;
    });
    expect(rewarded).toMatchObject({ is_converted: true, subscription: { id: bob.subscription.id, status: 'active', currency: 'USD' } });
    expect(rewarded.rewards[0]).toMatchObject({ type: 'credit', amount: '5.00', currency: 'USD', payment_id: bob.invoice.id });

    // The credit: Alice's customer balance in USD goes 500 cents in her favour, once.
    const customer = referrerSub.subscription.customer as string;
    await pollUntil(async () => (stripe.ledger.creditLeft(customer, 'usd') === 500 ? true : null));
    // Redelivered events change nothing (de-duplicated on the event id).
    for (const e of bob.session ? stripe.events().filter((x) => x.event.type === 'invoice.paid') : [])
      await stripe.redeliver(e.event.id).then((d) => post(t, d.rawBody, d.signature));
    expect((await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body.rewards).toHaveLength(1);
    expect(stripe.ledger.creditLeft(customer, 'usd')).toBe(500);

    // A full refund of Bob's first payment: the reward is clawed back and the unused credit taken back.
    const refund = await stripe.refund(bob.charge!.id, { deliver: false });
    await deliver(t, refund.delivered);
    const clawed = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.rewards?.length === 2 ? body : null;
    });
    expect(clawed.rewards[1]).toMatchObject({ amount: '-5.00', reverses: clawed.rewards[0].id });
    await pollUntil(async () => (stripe.ledger.creditLeft(customer, 'usd') === 0 ? true : null));
    // Every call pinned the API version, and every write carried an Idempotency-Key.
    expect(new Set(stripe.versionsSeen()).size).toBe(1);
    expect(stripe.idempotencyKeysSeen().every((k) => typeof k === 'string' && k.length > 0)).toBe(true);
  });

  it('converts zero-decimal currencies: a JPY subscription shows 1200.00, and a 100 JPY credit is 100 yen at Stripe', async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `jpy-${Date.now()}`,
      allows_credit: true,
      credit_amount: '100',
      credit_currency: 'JPY',
    });
    expect(campaign.status).toBe(201);
    const referrerSub = await subscribed(t, 'yuki@example.com', undefined, 'jpy');
    const yuki = await member(t, 'yuki', { campaign: { id: campaign.body.id }, subscription: { id: referrerSub.subscription.id } });
    expect((await json('GET', `/v1/subscriptions/${referrerSub.subscription.id}/`, t)).body).toMatchObject({
      currency: 'JPY',
      unit_price: '1200.00',
      plan: { amount: '1200.00', currency: 'JPY' },
    });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-kenji', member_code: yuki.code });
    const kenji = await subscribed(t, 'kenji@example.com', ref.body.id, 'jpy');
    const rewarded = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.rewards?.length === 1 ? body : null;
    });
    expect(rewarded.rewards[0]).toMatchObject({ type: 'credit', amount: '100.00', currency: 'JPY', payment_id: kenji.invoice.id });
    await pollUntil(async () => (stripe.ledger.creditLeft(referrerSub.subscription.customer as string, 'jpy') === 100 ? true : null));
  });

  it('converts by the Checkout Session id or the subscription id', async () => {
    const t = await tenant();
    const m = await member(t, 'carol');
    const first = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-dan', member_code: m.code });
    const second = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-erin', member_code: m.code });
    const dan = await stripe.checkout({ email: 'dan@example.com', deliver: false });
    const byCheckout = await json('POST', `/referrals/${first.body.id}/conversion/`, t, { checkout_id: dan.result.session.id });
    expect(byCheckout).toMatchObject({
      status: 200,
      body: { is_converted: true, subscription: { id: dan.result.subscription.id, email: 'dan@example.com' } },
    });
    const erin = await stripe.checkout({ email: 'erin@example.com', deliver: false });
    const bySubscription = await json('POST', `/v1/referrals/${second.body.id}/conversion/`, t, {
      subscription_id: erin.result.subscription.id,
    });
    expect(bySubscription).toMatchObject({ status: 200, body: { is_converted: true, subscription: { id: erin.result.subscription.id } } });
    const unknown = await json('POST', `/referrals/${second.body.id}/conversion/`, t, { checkout_id: 'cs_test_doesnotexist' });
    expect(unknown.status).toBe(400);
  });

  it('applies the subscription as Stripe has it when two events of one second arrive in the wrong order', async () => {
    const t = await tenant();
    const out = await subscribed(t, 'frank@example.com');
    const cancelled = await stripe.cancel(out.subscription.id, { deliver: false });
    // The cancellation first, then an older "updated/created" snapshot of the same second: still deleted.
    await deliver(t, cancelled.delivered);
    await pollUntil(async () => ((await getSubscription(t.accountId, out.subscription.id))?.status === 'deleted' ? true : null));
    const older = stripe
      .events()
      .filter(
        (e) => e.event.type === 'customer.subscription.created' && (e.event.data.object as { id?: string }).id === out.subscription.id,
      );
    expect(older).toHaveLength(1);
    const again = await stripe.redeliver(older[0]!.event.id);
    expect((await post(t, again.rawBody, again.signature)).status).toBe(200);
    // Redelivery of an event already processed writes nothing; a fresh id for the same snapshot re-reads Stripe.
    const replay = JSON.parse(again.rawBody) as { id: string };
    replay.id = 'evt_replayedsnapshot01';
    const body = JSON.stringify(replay);
    expect((await post(t, body, stripe.sign(body))).status).toBe(200);
    await pollUntil(async () => ((await queues.count('provider-events')) === 0 ? true : null));
    expect((await getSubscription(t.accountId, out.subscription.id))?.status).toBe('deleted');
  });

  it("a double-sided campaign's single-use promotion code, used at checkout, converts its referral", async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `promo-${Date.now()}`,
      allows_commission: true,
      commission_amount: '3.00',
      commission_currency: 'USD',
      referred_discount_type: 'percentage',
      referred_discount_amount: '10',
      referred_discount_recurring: false,
    });
    expect(campaign.status).toBe(201);
    const m = await member(t, 'gail', { campaign: { id: campaign.body.id } });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-hank', member_code: m.code });
    const withCode = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.coupon_code ? body : null;
    });
    const promo = stripe.ledger.promotionCodeByCode(withCode.coupon_code);
    expect(promo).toMatchObject({ max_redemptions: 1, restrictions: { first_time_transaction: true } });
    const hank = await stripe.checkout({ email: 'hank@example.com', deliver: false, promotionCode: withCode.coupon_code });
    await deliver(t, hank.delivered);
    const rewarded = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.rewards?.length === 1 ? body : null;
    });
    expect(rewarded).toMatchObject({ is_converted: true, subscription: { id: hank.result.subscription.id } });
    expect(rewarded.rewards[0]).toMatchObject({ type: 'commission', amount: '3.00' });
  });

  it('two partial refunds (charge.refunded is cumulative) make two proportional clawbacks, and a dispute counts as a full refund', async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `refunds-${Date.now()}`,
      allows_commission: true,
      commission_amount: '4.00',
      commission_currency: 'USD',
    });
    const m = await member(t, 'ivy', { campaign: { id: campaign.body.id } });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-jack', member_code: m.code });
    const jack = await subscribed(t, 'jack@example.com', ref.body.id);
    await pollUntil(async () => ((await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body.rewards?.length === 1 ? true : null));
    const quarter = Math.round((jack.invoice.amount_paid as number) / 4);
    for (let i = 0; i < 2; i++) {
      const refund = await stripe.refund(jack.charge!.id, { amount: quarter, deliver: false });
      await deliver(t, refund.delivered);
      // Redelivered: nothing more.
      await deliver(t, refund.delivered);
    }
    const clawed = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.rewards?.length === 3 ? body : null;
    });
    expect(clawed.rewards.slice(1).map((r: { amount: string }) => r.amount)).toEqual(['-1.00', '-1.00']);
    const dispute = await stripe.dispute(jack.charge!.id, { deliver: false });
    await deliver(t, dispute.delivered);
    const disputed = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.rewards?.length === 4 ? body : null;
    });
    // The whole reward is taken back, never more: 4.00 earned, 4.00 clawed back in all.
    expect(disputed.rewards.reduce((sum: number, r: { amount: string }) => sum + Number(r.amount), 0)).toBeCloseTo(0, 5);
  });

  it('the background sync pages with status=all: a canceled subscription whose events were lost is mirrored as deleted', async () => {
    const t = await tenant();
    const lost = await stripe.checkout({ email: 'kate@example.com', deliver: false });
    await stripe.cancel(lost.result.subscription.id, { deliver: false });
    expect(await getSubscription(t.accountId, lost.result.subscription.id)).toBeNull();
    await publish('provider-events', { kind: 'sync-account', account_id: t.accountId, state: 'live', page: 1, started_at: Date.now() });
    const mirrored = await pollUntil(async () => getSubscription(t.accountId, lost.result.subscription.id));
    expect(mirrored).toMatchObject({ status: 'deleted', email: 'kate@example.com' });
  });
});
