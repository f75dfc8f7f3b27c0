// Paddle Billing end to end on real parts: DynamoDB Local, the local SQS with the real workers behind
// pollers, and the Paddle Billing emulator on loopback. The emulator's signed notifications go through the
// intake (POST /webhooks/paddle-billing/{account_id}/); the adapter calls the emulator's JSON API.
// Checkout with customData -> automatic conversion -> credit reward -> a Refloop discount on the referrer's
// subscription -> refund pending, then approved -> clawback and the credit taken back.
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';
import type { Pollers } from '../../infra/local/pollers';
import {
  startPaddleBillingEmulator,
  type DeliveredNotification,
  type PaddleBillingEmulator,
} from '../../infra/local/emulators/paddle-billing';
import { signatureHeader } from '../../shared/providers/paddle-billing/signature';
import { clearProviderCache, saveProviderConnection } from '../../shared/store/provider';
import { getSubscription, listPayments } from '../../shared/store/subscriptions';
import { api } from '../support/api';
import { publish } from '../../shared/queue/publish';
import { newAccount, pollUntil } from '../support/fixtures';

let queues: TestQueues;
let pollers: Pollers;
let paddle: PaddleBillingEmulator;

beforeAll(async () => {
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
  paddle = await startPaddleBillingEmulator({ webhookUrl: null });
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  await paddle?.stop();
});

interface Tenant {
  accountId: string;
  key: string;
}

async function tenant(): Promise<Tenant> {
  const { accountId, apiKey } = await newAccount();
  await saveProviderConnection(accountId, {
    kind: 'paddle-billing',
    apiKey: paddle.apiKey,
    apiUrl: paddle.url,
    webhookSecret: paddle.webhookSecret,
  });
  return { accountId, key: apiKey };
}

const json = (method: string, path: string, t: Tenant, body?: unknown) =>
  api(method, path, { key: t.key, ...(body === undefined ? {} : { body }) });

const post = (t: Tenant, rawBody: string, signature: string | undefined) =>
  api('POST', `/webhooks/paddle-billing/${t.accountId}/`, {
    rawBody,
    headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { 'paddle-signature': signature }) },
  });

async function deliver(t: Tenant, notifications: DeliveredNotification[]): Promise<void> {
  for (const n of notifications) expect((await post(t, n.rawBody, n.signature)).status).toBe(200);
}

async function member(t: Tenant, n: string, body: Record<string, unknown> = {}) {
  const res = await json('POST', '/v1/members/', t, { identifier: `m-${n}`, email: `${n}@example.com`, ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; code: string };
}

/** A checkout whose notifications reached the service, once the subscription and its payment are stored. */
async function subscribed(t: Tenant, email: string, customData?: Record<string, unknown>) {
  const out = await paddle.checkout({ email, deliver: false, ...(customData ? { customData } : {}) });
  await deliver(t, out.delivered);
  const id = out.result.subscription.id;
  await pollUntil(async () =>
    (await getSubscription(t.accountId, id))?.status === 'active' && (await listPayments(t.accountId, id)).length > 0 ? true : null,
  );
  return out.result;
}

describe('Paddle Billing intake', () => {
  it('answers 404 for an unknown account or one not connected to Paddle Billing and 403 for a bad, missing or stale signature', async () => {
    const t = await tenant();
    const classic = await newAccount();
    const body = JSON.stringify({
      event_id: 'evt_01',
      event_type: 'subscription.created',
      occurred_at: new Date().toISOString(),
      data: {},
    });
    const good = signatureHeader(paddle.webhookSecret, body, Math.floor(Date.now() / 1000));
    expect(
      (await api('POST', '/webhooks/paddle-billing/0123456789abcdef/', { rawBody: body, headers: { 'paddle-signature': good } })).status,
    ).toBe(404);
    expect(
      (await api('POST', `/webhooks/paddle-billing/${classic.accountId}/`, { rawBody: body, headers: { 'paddle-signature': good } }))
        .status,
    ).toBe(404);
    expect(
      (await api('POST', '/webhooks/paddle-billing/not-an-id/', { rawBody: body, headers: { 'paddle-signature': good } })).status,
    ).toBe(404);
    for (const signature of [
      undefined,
      'ts=1;h1=00',
      signatureHeader('pdl_ntfset_wrongsecretwrong', body, Math.floor(Date.now() / 1000)),
      signatureHeader(paddle.webhookSecret, body, Math.floor(Date.now() / 1000) - 301),
    ]) {
      const res = await post(t, body, signature);
      expect({ signature, status: res.status, body: res.body }).toEqual({ signature, status: 403, body: { detail: 'Invalid signature.' } });
    }
    const tampered = await post(t, body.replace('evt_01', 'evt_02'), good);
    expect(tampered.status).toBe(403);
    expect((await post(t, 'x'.repeat(129 * 1024), good)).status).toBe(413);
    // A valid signature over a body that is not JSON: acknowledged (retrying cannot fix it), nothing applied.
    const notJson = '{"event_id": ';
    expect((await post(t, notJson, signatureHeader(paddle.webhookSecret, notJson, Math.floor(Date.now() / 1000)))).status).toBe(200);
  });

  it("converts by the checkout's transaction id or by the subscription id, and answers 400 for an unknown one", async () => {
    const t = await tenant();
    const m = await member(t, 'frank');
    const first = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-gina', member_code: m.code });
    const second = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-hal', member_code: m.code });
    const unknown = await json('POST', `/referrals/${first.body.id}/conversion/`, t, { checkout_id: 'txn_01doesnotexist' });
    expect(unknown).toMatchObject({ status: 400, body: { checkout_id: ['Checkout txn_01doesnotexist could not be found'] } });
    // The notifications are late: the conversion asks Paddle for the subscription itself.
    const gina = await paddle.checkout({ email: 'gina@example.com', deliver: false });
    const byCheckout = await json('POST', `/referrals/${first.body.id}/conversion/`, t, { checkout_id: gina.result.transaction.id });
    expect(byCheckout).toMatchObject({
      status: 200,
      body: { is_converted: true, subscription: { id: gina.result.subscription.id, email: 'gina@example.com', status: 'active' } },
    });
    const hal = await paddle.checkout({ email: 'hal@example.com', deliver: false });
    const bySubscription = await json('POST', `/v1/referrals/${second.body.id}/conversion/`, t, {
      subscription_id: hal.result.subscription.id,
    });
    expect(bySubscription).toMatchObject({ status: 200, body: { is_converted: true, subscription: { id: hal.result.subscription.id } } });
    // Classic's intake does not serve a Paddle Billing account.
    expect(
      (
        await api('POST', `/webhooks/paddle/${t.accountId}/`, {
          rawBody: 'alert_name=x&p_signature=y',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
        })
      ).status,
    ).toBe(404);
  });

  it('reconnecting with a new webhook secret takes effect once the cache is refreshed', async () => {
    const t = await tenant();
    const body = JSON.stringify({
      event_id: 'evt_rotate',
      event_type: 'customer.updated',
      occurred_at: new Date().toISOString(),
      data: {},
    });
    await saveProviderConnection(t.accountId, {
      kind: 'paddle-billing',
      apiKey: paddle.apiKey,
      apiUrl: paddle.url,
      webhookSecret: 'pdl_ntfset_rotatedsecret01',
    });
    clearProviderCache();
    expect((await post(t, body, signatureHeader(paddle.webhookSecret, body, Math.floor(Date.now() / 1000)))).status).toBe(403);
    expect((await post(t, body, signatureHeader('pdl_ntfset_rotatedsecret01', body, Math.floor(Date.now() / 1000)))).status).toBe(200);
  });
});

describe('Paddle Billing from checkout to reward, credit and clawback', () => {
  it('converts from customData, credits the referrer with a Refloop discount, and takes it back when the refund is approved', async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `billing-${Date.now()}`,
      allows_credit: true,
      credit_amount: '5.00',
      credit_currency: 'USD',
    });
    expect(campaign.status).toBe(201);
    const referrerSub = await subscribed(t, 'alice@example.com');
    const alice = await member(t, 'alice', { campaign: { id: campaign.body.id }, subscription: { id: referrerSub.subscription.id } });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-bob', member_code: alice.code });
    expect(ref.status).toBe(200);

    // Bob checks out with the browser script's customData: the subscription converts the referral by itself.
    const bob = await subscribed(t, 'bob@example.com', { refloop_referral_id: ref.body.id });
    const rewarded = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.rewards?.length === 1 ? body : null;
    });
    expect(rewarded).toMatchObject({ is_converted: true, subscription: { id: bob.subscription.id, status: 'active', currency: 'USD' } });
    expect(typeof rewarded.subscription.plan.id).toBe('string');
    expect(rewarded.rewards[0]).toMatchObject({ type: 'credit', amount: '5.00', currency: 'USD', payment_id: bob.transaction.id });

    // The credit lands on Alice's subscription as one Refloop discount, exactly once.
    const discounted = await pollUntil(async () => {
      const sub = paddle.ledger.subscriptions.get(referrerSub.subscription.id);
      return sub?.discount ? sub : null;
    });
    const discount = paddle.ledger.discounts.get(discounted.discount!.id);
    expect(discount).toMatchObject({ type: 'flat', amount: '500', currency_code: 'USD', recur: true, maximum_recurring_intervals: 1 });
    // Redelivered notifications change nothing (de-duplicated on event_id).
    const before = paddle.callCounts()['POST /discounts'] ?? 0;
    await deliver(
      t,
      paddle.notifications().filter((n) => n.notification.data && (n.notification.data as { id?: string }).id === bob.subscription.id),
    );
    expect((await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body.rewards).toHaveLength(1);
    expect(paddle.callCounts()['POST /discounts'] ?? 0).toBe(before);

    // A refund starts pending_approval: nothing is clawed back until Paddle approves it.
    const refund = await paddle.refund(bob.transaction.id, { deliver: false });
    await deliver(t, refund.delivered);
    const pending = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
    expect(pending.rewards).toHaveLength(1);
    const approved = await paddle.approve(refund.result.adjustment.id, { deliver: false });
    await deliver(t, approved.delivered);
    const clawed = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.rewards?.length === 2 ? body : null;
    });
    expect(clawed.rewards[1]).toMatchObject({ amount: '-5.00', reverses: clawed.rewards[0].id, refund_id: refund.result.adjustment.id });
    // The credit had not been billed yet: it is removed from Alice's subscription.
    await pollUntil(async () => (paddle.ledger.subscriptions.get(referrerSub.subscription.id)?.discount ? null : true));
    // Every call carried Paddle-Version: 1.
    expect(new Set(paddle.versionsSeen())).toEqual(new Set(['1']));
  });
});

describe('Paddle Billing ordering', () => {
  it('orders notifications by the microseconds of occurred_at: a past_due delivered after the cancel that followed it within the same ms changes nothing', async () => {
    const t = await tenant();
    const sub = await subscribed(t, 'order@example.com');
    const failed = await paddle.failPayment(sub.subscription.id, { deliver: false });
    const canceled = await paddle.cancel(sub.subscription.id, { deliver: false });
    const pastDue = failed.delivered.find((n) => n.notification.event_type === 'subscription.past_due')!;
    const cancel = canceled.delivered.find((n) => n.notification.event_type === 'subscription.canceled')!;
    // Paddle's instants: the same millisecond here, the cancel 100 microseconds later (re-signed).
    expect(pastDue.notification.occurred_at < cancel.notification.occurred_at).toBe(true);
    const resigned = (n: DeliveredNotification, occurredAt: string) => {
      const rawBody = JSON.stringify({ ...n.notification, occurred_at: occurredAt });
      return { rawBody, signature: signatureHeader(paddle.webhookSecret, rawBody, Math.floor(Date.now() / 1000)) };
    };
    const earlyPastDue = resigned(pastDue, '2030-01-01T00:00:00.123400Z');
    const lateCancel = resigned(cancel, '2030-01-01T00:00:00.123500Z');
    expect((await post(t, lateCancel.rawBody, lateCancel.signature)).status).toBe(200);
    await pollUntil(async () => ((await getSubscription(t.accountId, sub.subscription.id))?.status === 'deleted' ? true : null));
    expect((await post(t, earlyPastDue.rawBody, earlyPastDue.signature)).status).toBe(200);
    await pollUntil(async () => ((await queues.count('provider-events')) === 0 ? true : null));
    expect((await getSubscription(t.accountId, sub.subscription.id))?.status).toBe('deleted');
  });
});

describe('Paddle Billing background sync', () => {
  it('pages the subscriptions by cursor: a subscription whose notifications never arrived is mirrored, and a referred one missing its payment is rewarded', async () => {
    const t = await tenant();
    const campaign = await json('POST', '/v1/campaigns/', t, {
      name: `sync-${Date.now()}`,
      allows_commission: true,
      commission_amount: '2.00',
      commission_currency: 'USD',
    });
    expect(campaign.status).toBe(201);
    const carol = await member(t, 'carol', { campaign: { id: campaign.body.id } });
    const ref = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-dan', member_code: carol.code });
    // Dan's checkout: only subscription.created reaches Refloop (with the referral); transaction.completed is lost.
    const dan = await paddle.checkout({ email: 'dan@example.com', deliver: false, customData: { refloop_referral_id: ref.body.id } });
    const created = dan.delivered.filter((n) => n.notification.event_type === 'subscription.created');
    expect(created).toHaveLength(1);
    await deliver(t, created);
    await pollUntil(async () => ((await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body.is_converted ? true : null));
    // Erin's checkout: nothing at all reaches Refloop.
    const erin = await paddle.checkout({ email: 'erin@example.com', deliver: false });
    expect(await getSubscription(t.accountId, erin.result.subscription.id)).toBeNull();

    await publish('provider-events', { kind: 'sync-account', account_id: t.accountId, state: 'live', page: 1, started_at: Date.now() });
    await publish('provider-events', { kind: 'sync-account', account_id: t.accountId, state: 'deleted', page: 1, started_at: Date.now() });
    const mirrored = await pollUntil(async () => getSubscription(t.accountId, erin.result.subscription.id));
    expect(mirrored).toMatchObject({ status: 'active', email: 'erin@example.com', currency: 'USD' });
    const rewarded = await pollUntil(async () => {
      const body = (await json('GET', `/v1/referrals/${ref.body.id}/`, t)).body;
      return body.rewards?.length === 1 ? body : null;
    });
    expect(rewarded.rewards[0]).toMatchObject({ type: 'commission', amount: '2.00', payment_id: dan.result.transaction.id });
  });
});
