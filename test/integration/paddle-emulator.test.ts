// The Paddle Classic emulator over real loopback HTTP: signed alerts to a webhook receiver, the vendor
// and checkout APIs, outage modes, persistence across restarts, and the `paddle` CLI as a child process.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPaddleEmulator, type PaddleEmulator } from '../../infra/local/emulators/paddle-classic';
import { verifyPaddleSignature } from '../../shared/providers/paddle-classic/signature';
import { main as paddleMain } from '../../infra/paddle';
import { cliInProcess } from '../support/cli-in-process';

const ROOT = join(__dirname, '..', '..');
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** A webhook target that records every form-encoded alert it receives and answers `status`. */
interface Receiver {
  url: string;
  alerts: Record<string, string>[];
  status: number;
  close(): Promise<void>;
}

async function startReceiver(): Promise<Receiver> {
  const alerts: Record<string, string>[] = [];
  const receiver = { alerts, status: 200 } as Receiver;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      expect(req.method).toBe('POST');
      expect(req.headers['content-type']).toBe('application/x-www-form-urlencoded');
      alerts.push(Object.fromEntries(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))));
      res.writeHead(receiver.status).end();
    });
  });
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const address = server.address();
  receiver.url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/webhooks/paddle`;
  receiver.close = () =>
    new Promise<void>((ok) => {
      server.close(() => ok());
      server.closeAllConnections();
    });
  return receiver;
}

type Body = Record<string, unknown> & { success?: boolean; response?: unknown; error?: { code: number; message: string } };

/** A vendor API call, form-encoded (the documented way) or JSON (what some clients send). */
async function vendor(
  em: PaddleEmulator,
  path: string,
  params: Record<string, string | number | boolean> = {},
  { as = 'form', auth = em.authCode }: { as?: 'form' | 'json'; auth?: string } = {},
): Promise<{ status: number; body: Body }> {
  const all = { vendor_id: em.vendorId, vendor_auth_code: auth, ...params };
  const res = await fetch(`${em.vendorsApiUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': as === 'json' ? 'application/json' : 'application/x-www-form-urlencoded' },
    body:
      as === 'json'
        ? JSON.stringify(all)
        : new URLSearchParams(Object.entries(all).map(([k, v]): [string, string] => [k, String(v)])).toString(),
  });
  return { status: res.status, body: (await res.json()) as Body };
}

async function order(em: PaddleEmulator, checkoutId: string): Promise<Body> {
  const res = await fetch(`${em.checkoutApiUrl}/1.0/order?checkout_id=${encodeURIComponent(checkoutId)}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Body;
}

async function waitFor<T>(probe: () => Promise<T | undefined> | T | undefined, deadlineMs = 3_000, intervalMs = 25): Promise<T> {
  const deadline = Date.now() + deadlineMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('condition not met before the deadline');
    await new Promise((ok) => setTimeout(ok, intervalMs));
  }
}

const keys = (fields: Record<string, string>) => Object.keys(fields).sort();
const withCommon = (...names: string[]) =>
  [
    'alert_id',
    'alert_name',
    'checkout_id',
    'currency',
    'email',
    'event_time',
    'marketing_consent',
    'p_signature',
    'passthrough',
    'subscription_id',
    'subscription_plan_id',
    'user_id',
    ...names,
  ].sort();

const CREATED = withCommon(
  'cancel_url',
  'custom_data',
  'linked_subscriptions',
  'next_bill_date',
  'quantity',
  'source',
  'status',
  'unit_price',
  'update_url',
);
const SUCCEEDED = withCommon(
  'balance_currency',
  'balance_earnings',
  'balance_fee',
  'balance_gross',
  'balance_tax',
  'country',
  'coupon',
  'custom_data',
  'customer_name',
  'earnings',
  'fee',
  'initial_payment',
  'instalments',
  'next_bill_date',
  'next_payment_amount',
  'order_id',
  'payment_method',
  'payment_tax',
  'plan_name',
  'quantity',
  'receipt_url',
  'sale_gross',
  'status',
  'subscription_payment_id',
  'unit_price',
);
const FAILED = withCommon(
  'amount',
  'attempt_number',
  'cancel_url',
  'update_url',
  'instalments',
  'next_retry_date',
  'order_id',
  'quantity',
  'status',
  'subscription_payment_id',
  'unit_price',
);
const UPDATED = withCommon(
  'cancel_url',
  'update_url',
  'custom_data',
  'linked_subscriptions',
  'status',
  'next_bill_date',
  'new_price',
  'new_quantity',
  'new_unit_price',
  'old_price',
  'old_quantity',
  'old_unit_price',
  'old_next_bill_date',
  'old_status',
  'old_subscription_plan_id',
);
const CANCELLED = withCommon('cancellation_effective_date', 'custom_data', 'linked_subscriptions', 'quantity', 'status', 'unit_price');
const REFUNDED = withCommon(
  'amount',
  'balance_currency',
  'balance_earnings_decrease',
  'balance_fee_refund',
  'balance_gross_refund',
  'balance_tax_refund',
  'custom_data',
  'earnings_decrease',
  'fee_refund',
  'gross_refund',
  'tax_refund',
  'initial_payment',
  'instalments',
  'order_id',
  'quantity',
  'refund_reason',
  'refund_type',
  'status',
  'subscription_payment_id',
  'unit_price',
);

function expectSigned(em: PaddleEmulator, fields: Record<string, string>): void {
  for (const value of Object.values(fields)) expect(typeof value).toBe('string');
  expect(fields.event_time).toMatch(DATE_TIME);
  expect(verifyPaddleSignature(fields, em.publicKeyPem)).toBe(true);
  expect(verifyPaddleSignature({ ...fields, passthrough: `${fields.passthrough ?? ''}x` }, em.publicKeyPem)).toBe(false);
}

function utcDate(offsetDays = 0): string {
  const d = new Date();
  d.setUTCDate(d.getUTCDate() + offsetDays);
  return d.toISOString().slice(0, 10);
}

describe('Paddle emulator', () => {
  let em: PaddleEmulator;
  let receiver: Receiver;

  beforeAll(async () => {
    receiver = await startReceiver();
    em = await startPaddleEmulator({ webhookUrl: receiver.url, authCode: 'test-auth-code' });
  });
  afterAll(async () => {
    await em?.stop();
    await receiver?.close();
  });
  beforeEach(() => {
    receiver.alerts.length = 0;
    receiver.status = 200;
    em.setMode('up');
    em.setWebhookUrl(receiver.url);
  });

  it('starts with the two default plans and the documented defaults', () => {
    expect(em.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(em.vendorsApiUrl).toBe(`${em.url}/vendors/api`);
    expect(em.checkoutApiUrl).toBe(`${em.url}/checkout/api`);
    expect(em.vendorId).toBe(12345);
    expect(em.publicKeyPem).toContain('-----BEGIN PUBLIC KEY-----');
    expect(em.plans().slice(0, 2)).toEqual([
      {
        id: 9001,
        name: 'Pro monthly',
        billing_type: 'month',
        billing_period: 1,
        trial_days: 0,
        initial_price: { USD: '10.00', EUR: '9.00' },
        recurring_price: { USD: '10.00', EUR: '9.00' },
      },
      {
        id: 9002,
        name: 'Pro yearly',
        billing_type: 'year',
        billing_period: 1,
        trial_days: 0,
        initial_price: { USD: '100.00' },
        recurring_price: { USD: '100.00' },
      },
    ]);
  });

  it('checkout posts signed subscription_created then subscription_payment_succeeded to the webhook', async () => {
    const out = await em.checkout({ plan_id: 9001, email: 'ada@example.com', quantity: 2, passthrough: '{"ref":"abc"}' });
    expect(out.checkout_id).toMatch(/^\d+-chre[0-9a-f]+-[0-9a-f]{10}$/);
    expect(out.subscription).toMatchObject({
      plan_id: 9001,
      user_email: 'ada@example.com',
      state: 'active',
      currency: 'USD',
      unit_price: '10.00',
      quantity: 2,
      checkout_id: out.checkout_id,
      passthrough: '{"ref":"abc"}',
      next_bill_date: expect.stringMatching(DATE),
    });
    expect(out.subscription.subscription_id).toBeGreaterThanOrEqual(70001);
    expect(out.subscription.user_id).toBeGreaterThanOrEqual(60001);
    expect(out.subscription.signup_date).toMatch(DATE_TIME);
    expect(out.payment).toMatchObject({
      subscription_id: out.subscription.subscription_id,
      amount: 20,
      currency: 'USD',
      is_paid: 1,
      payout_date: utcDate(),
    });
    expect(out.payment?.id).toBeGreaterThanOrEqual(80001);
    expect(out.payment?.order_id).toMatch(/^\d+-\d+$/);
    expect(out.alerts.map((a) => a.status)).toEqual([200, 200]);

    expect(receiver.alerts.map((a) => a.alert_name)).toEqual(['subscription_created', 'subscription_payment_succeeded']);
    expect(receiver.alerts).toEqual(out.alerts.map((a) => a.fields));
    const [created, paid] = receiver.alerts as [Record<string, string>, Record<string, string>];
    for (const alert of receiver.alerts) expectSigned(em, alert);
    expect(keys(created)).toEqual(CREATED);
    expect(keys(paid)).toEqual(SUCCEEDED);
    expect(Number(paid.alert_id)).toBeGreaterThan(Number(created.alert_id));
    expect((paid.event_time as string) >= (created.event_time as string)).toBe(true);
    expect(created).toMatchObject({
      subscription_id: String(out.subscription.subscription_id),
      subscription_plan_id: '9001',
      status: 'active',
      unit_price: '10.00',
      quantity: '2',
      passthrough: '{"ref":"abc"}',
      checkout_id: out.checkout_id,
      marketing_consent: '0',
      next_bill_date: out.subscription.next_bill_date,
    });
    expect(paid).toMatchObject({
      sale_gross: '20.00',
      payment_tax: '0.00',
      fee: '1.50',
      earnings: '18.50',
      balance_gross: '20.00',
      initial_payment: '1',
      instalments: '1',
      order_id: out.payment?.order_id,
      subscription_payment_id: String(out.payment?.id),
      plan_name: 'Pro monthly',
      country: 'US',
      coupon: '',
      status: 'active',
      currency: 'USD',
      user_id: String(out.subscription.user_id),
      email: 'ada@example.com',
    });

    // The same customer keeps their user_id; EUR prices come from the plan.
    const again = await em.checkout({ plan_id: 9001, email: 'ada@example.com', currency: 'EUR' });
    expect(again.subscription).toMatchObject({ user_id: out.subscription.user_id, currency: 'EUR', unit_price: '9.00' });
    await expect(em.checkout({ plan_id: 9002, email: 'ada@example.com', currency: 'GBP' })).rejects.toThrow('no GBP price');
    await expect(em.checkout({ plan_id: 1, email: 'ada@example.com' })).rejects.toThrow('unknown plan 1');
  });

  it('a trial checkout sends only subscription_created with status trialing and no payment', async () => {
    const trial = em.createPlan({ name: 'Trial weekly', billing_type: 'week', billing_period: 2, trial_days: 14, prices: { USD: '5' } });
    expect(trial).toMatchObject({ id: expect.any(Number), initial_price: { USD: '0.00' }, recurring_price: { USD: '5.00' } });
    const out = await em.checkout({ plan_id: trial.id, email: 'trial@example.com' });
    expect(out.payment).toBeNull();
    expect(out.subscription).toMatchObject({ state: 'trialing', next_bill_date: utcDate(14), last_payment: null });
    expect(receiver.alerts.map((a) => [a.alert_name, a.status])).toEqual([['subscription_created', 'trialing']]);

    // The first charge at the end of the trial is the initial payment and moves the bill date one interval on.
    const renewed = await em.renew(out.subscription.subscription_id);
    expect(renewed.alerts[0]?.fields).toMatchObject({
      alert_name: 'subscription_payment_succeeded',
      status: 'active',
      initial_payment: '1',
      next_bill_date: utcDate(28),
    });
  });

  it('renew, failPayment, updateSubscription, cancel and refund send their signed alerts', async () => {
    const { subscription: sub, payment: first } = await em.checkout({ plan_id: 9001, email: 'life@example.com' });
    const id = sub.subscription_id;
    receiver.alerts.length = 0;

    const renewed = await em.renew(id);
    expect(renewed.payment).toMatchObject({ subscription_id: id, amount: 10, is_paid: 1 });
    expect(renewed.payment.id).toBeGreaterThan(first?.id ?? 0);
    const afterRenew = em.subscriptions().find((s) => s.subscription_id === id);
    expect(afterRenew?.next_bill_date).not.toBe(sub.next_bill_date);
    expect(renewed.alerts[0]?.fields).toMatchObject({ initial_payment: '0', instalments: '2', next_bill_date: afterRenew?.next_bill_date });

    const failed = await em.failPayment(id);
    expect(failed.alerts[0]?.fields).toMatchObject({
      alert_name: 'subscription_payment_failed',
      status: 'past_due',
      amount: '10.00',
      attempt_number: '1',
      next_retry_date: utcDate(3),
      instalments: '3',
    });
    expect((await em.failPayment(id)).alerts[0]?.fields.attempt_number).toBe('2');
    const unpaid = em.payments(id).filter((p) => p.is_paid === 0);
    expect(unpaid).toHaveLength(1);
    // Paying the failed instalment settles that same payment.
    const recovered = await em.renew(id);
    expect(recovered.payment.id).toBe(unpaid[0]?.id);
    expect(em.payments(id).map((p) => p.is_paid)).toEqual([1, 1, 1]);

    const upgraded = await em.updateSubscription(id, { plan_id: 9002 });
    expect(upgraded.subscription).toMatchObject({ plan_id: 9002, unit_price: '100.00', state: 'active' });
    expect(upgraded.alerts[0]?.fields).toMatchObject({
      alert_name: 'subscription_updated',
      old_subscription_plan_id: '9001',
      subscription_plan_id: '9002',
      old_unit_price: '10.00',
      new_unit_price: '100.00',
      old_price: '10.00',
      new_price: '100.00',
      old_status: 'active',
      status: 'active',
    });
    const paused = await em.updateSubscription(id, { state: 'paused' });
    expect(paused.alerts[0]?.fields).toMatchObject({ old_status: 'active', status: 'paused', paused_reason: 'voluntary' });
    expect(paused.alerts[0]?.fields.paused_at).toMatch(DATE_TIME);
    await em.updateSubscription(id, { state: 'active' });

    const refundedPart = await em.refund(renewed.payment.id, { amount: '4.00' });
    expect(refundedPart.payment.refunded_amount).toBe(4);
    expect(refundedPart.alerts[0]?.fields).toMatchObject({
      refund_type: 'partial',
      amount: '4.00',
      gross_refund: '4.00',
      instalments: '2',
      initial_payment: '0',
    });
    await expect(em.refund(renewed.payment.id, { amount: '7.00' })).rejects.toThrow('exceeds');
    const refundedFull = await em.refund(first?.id ?? 0);
    expect(refundedFull.alerts[0]?.fields).toMatchObject({
      refund_type: 'full',
      amount: '10.00',
      initial_payment: '1',
      order_id: first?.order_id,
    });

    const nextBill = em.subscriptions().find((s) => s.subscription_id === id)?.next_bill_date;
    const cancelled = await em.cancel(id);
    expect(cancelled.subscription).toMatchObject({ state: 'deleted', next_bill_date: null });
    expect(cancelled.alerts[0]?.fields).toMatchObject({
      alert_name: 'subscription_cancelled',
      status: 'deleted',
      cancellation_effective_date: nextBill,
    });
    await expect(em.renew(id)).rejects.toThrow('cancelled');

    const expected: Record<string, string[]> = {
      subscription_payment_succeeded: SUCCEEDED,
      subscription_payment_failed: FAILED,
      subscription_updated: UPDATED,
      subscription_cancelled: CANCELLED,
      subscription_payment_refunded: REFUNDED,
    };
    const names = receiver.alerts.map((a) => a.alert_name);
    expect(names).toEqual([
      'subscription_payment_succeeded',
      'subscription_payment_failed',
      'subscription_payment_failed',
      'subscription_payment_succeeded',
      'subscription_updated',
      'subscription_updated',
      'subscription_updated',
      'subscription_payment_refunded',
      'subscription_payment_refunded',
      'subscription_cancelled',
    ]);
    receiver.alerts.forEach((alert, i) => {
      expectSigned(em, alert);
      const allowed = expected[alert.alert_name as string] as string[];
      const extra =
        alert.status === 'paused' && alert.alert_name === 'subscription_updated' ? ['paused_at', 'paused_from', 'paused_reason'] : [];
      expect(keys(alert)).toEqual([...allowed, ...extra].sort());
      const previous = receiver.alerts[i - 1];
      if (previous) {
        expect(Number(alert.alert_id)).toBeGreaterThan(Number(previous.alert_id));
        expect((alert.event_time as string) >= (previous.event_time as string)).toBe(true);
      }
    });
  });

  it('deliver:false signs but does not post; a failing or absent target never throws', async () => {
    const quiet = await em.checkout({ plan_id: 9001, email: 'quiet@example.com', deliver: false });
    expect(quiet.alerts.map((a) => a.status)).toEqual([null, null]);
    for (const a of quiet.alerts) expectSigned(em, a.fields);
    expect(receiver.alerts).toHaveLength(0);

    receiver.status = 500;
    expect((await em.renew(quiet.subscription.subscription_id)).alerts[0]?.status).toBe(500);

    // Nothing listens on the receiver's port once it is closed.
    const dead = await startReceiver();
    await dead.close();
    em.setWebhookUrl(dead.url);
    expect((await em.renew(quiet.subscription.subscription_id)).alerts[0]?.status).toBeNull();
    em.setWebhookUrl(null);
    expect((await em.renew(quiet.subscription.subscription_id)).alerts[0]?.status).toBeNull();

    const signed = em.sign({ alert_name: 'custom', foo: 'bär' });
    expect(verifyPaddleSignature(signed, em.publicKeyPem)).toBe(true);
  });

  it('lists subscription users with form and JSON bodies, filters and pagination', async () => {
    const a = (await em.checkout({ plan_id: 9002, email: 'users-a@example.com' })).subscription;
    const b = (await em.checkout({ plan_id: 9002, email: 'users-b@example.com' })).subscription;
    const c = (await em.checkout({ plan_id: 9002, email: 'users-c@example.com' })).subscription;
    await em.cancel(c.subscription_id);

    const form = await vendor(em, '/2.0/subscription/users', { subscription_id: a.subscription_id });
    const json = await vendor(em, '/2.0/subscription/users', { subscription_id: a.subscription_id }, { as: 'json' });
    expect(form.status).toBe(200);
    expect(json.body).toEqual(form.body);
    expect(form.body).toEqual({
      success: true,
      response: [
        {
          subscription_id: a.subscription_id,
          plan_id: 9002,
          user_id: a.user_id,
          user_email: 'users-a@example.com',
          marketing_consent: false,
          state: 'active',
          signup_date: a.signup_date,
          last_payment: { amount: 100, currency: 'USD', date: utcDate() },
          next_payment: { amount: 100, currency: 'USD', date: a.next_bill_date },
          update_url: expect.stringMatching(/^https:\/\//),
          cancel_url: expect.stringMatching(/^https:\/\//),
          payment_information: { payment_method: 'card', card_type: 'visa', last_four_digits: '1111', expiry_date: '02/2030' },
          linked_subscriptions: [],
          quantity: 1,
        },
      ],
    });

    const ids = (body: Body) => (body.response as { subscription_id: number }[]).map((u) => u.subscription_id);
    const byPlan = await vendor(em, '/2.0/subscription/users', { plan_id: 9002 });
    expect(ids(byPlan.body)).toEqual(expect.arrayContaining([a.subscription_id, b.subscription_id]));
    expect(ids(byPlan.body)).not.toContain(c.subscription_id);
    expect(ids(byPlan.body)).toEqual([...ids(byPlan.body)].sort((x, y) => x - y));
    const deleted = await vendor(em, '/2.0/subscription/users', { subscription_id: c.subscription_id, state: 'deleted' }, { as: 'json' });
    expect(deleted.body.response).toEqual([expect.objectContaining({ state: 'deleted', subscription_id: c.subscription_id })]);
    expect((deleted.body.response as Record<string, unknown>[])[0]).not.toHaveProperty('next_payment');

    const page1 = await vendor(em, '/2.0/subscription/users', { plan_id: 9002, results_per_page: 1, page: 1 });
    const page2 = await vendor(em, '/2.0/subscription/users', { plan_id: 9002, results_per_page: 1, page: 2 });
    expect([...ids(page1.body), ...ids(page2.body)]).toEqual(ids(byPlan.body).slice(0, 2));

    expect((await vendor(em, '/2.0/subscription/users', { subscription_id: 1 })).body).toEqual({ success: true, response: [] });
    expect((await vendor(em, '/2.0/subscription/users', { state: 'bogus' })).body).toMatchObject({ success: false, error: { code: 116 } });
  });

  it('lists payments and plans, creates and lists modifiers exactly once per call', async () => {
    const { subscription: sub } = await em.checkout({ plan_id: 9001, email: 'mods@example.com', currency: 'EUR' });
    await em.failPayment(sub.subscription_id);
    const before = em.callCounts()['/vendors/api/2.0/subscription/modifiers/create'] ?? 0;

    const payments = await vendor(em, '/2.0/subscription/payments', { subscription_id: sub.subscription_id }, { as: 'json' });
    expect(payments.body.response).toEqual([
      expect.objectContaining({
        subscription_id: sub.subscription_id,
        amount: 9,
        currency: 'EUR',
        is_paid: 1,
        is_one_off_charge: 0,
        payout_date: utcDate(),
        receipt_url: expect.any(String),
      }),
      expect.objectContaining({ is_paid: 0 }),
    ]);
    const paidOnly = await vendor(em, '/2.0/subscription/payments', { subscription_id: sub.subscription_id, is_paid: 1 });
    expect(paidOnly.body.response).toHaveLength(1);

    const plans = await vendor(em, '/2.0/subscription/plans', { plan: 9002 });
    expect(plans.body).toEqual({ success: true, response: [em.plans()[1]] });
    expect(((await vendor(em, '/2.0/subscription/plans', {}, { as: 'json' })).body.response as unknown[]).length).toBe(em.plans().length);

    const created = await vendor(em, '/2.0/subscription/modifiers/create', {
      subscription_id: sub.subscription_id,
      modifier_amount: -5,
      modifier_recurring: false,
      modifier_description: 'Referral credit',
    });
    expect(created.body).toEqual({ success: true, response: { subscription_id: sub.subscription_id, modifier_id: expect.any(Number) } });
    const modifierId = (created.body.response as { modifier_id: number }).modifier_id;
    expect(modifierId).toBeGreaterThanOrEqual(50001);
    const viaJson = await vendor(
      em,
      '/2.0/subscription/modifiers/create',
      { subscription_id: sub.subscription_id, modifier_amount: '2.5', modifier_recurring: 'true' },
      { as: 'json' },
    );
    expect(viaJson.body.success).toBe(true);
    const defaulted = await vendor(em, '/2.0/subscription/modifiers/create', { subscription_id: sub.subscription_id, modifier_amount: 1 });
    expect(defaulted.body.success).toBe(true);
    expect(em.callCounts()['/vendors/api/2.0/subscription/modifiers/create']).toBe(before + 3);

    const listed = await vendor(em, '/2.0/subscription/modifiers', { subscription_id: sub.subscription_id });
    expect(listed.body.response).toEqual([
      {
        modifier_id: modifierId,
        subscription_id: sub.subscription_id,
        amount: '-5.000',
        currency: 'EUR',
        is_recurring: false,
        description: 'Referral credit',
      },
      expect.objectContaining({ amount: '2.500', is_recurring: true, description: '' }),
      expect.objectContaining({ amount: '1.000', is_recurring: true }),
    ]);
    expect(em.modifiers(sub.subscription_id)).toEqual(listed.body.response);

    expect((await vendor(em, '/2.0/subscription/modifiers/create', { subscription_id: 1, modifier_amount: -5 })).body).toEqual({
      success: false,
      error: { code: 119, message: 'The subscription was not found' },
    });
    expect((await vendor(em, '/2.0/subscription/modifiers/create', { subscription_id: sub.subscription_id })).body).toMatchObject({
      success: false,
      error: { code: 116 },
    });
    expect(
      (await vendor(em, '/2.0/subscription/modifiers/create', { subscription_id: sub.subscription_id, modifier_amount: 'abc' })).body,
    ).toMatchObject({ success: false, error: { code: 116 } });
    expect(em.modifiers(sub.subscription_id)).toHaveLength(3);
  });

  it('creates coupons like Paddle (duplicates 132, validations 116/128/129/131), discounts checkouts and names the coupon in alerts and orders', async () => {
    const created = await vendor(em, '/2.1/product/create_coupon', {
      coupon_type: 'checkout',
      coupon_code: 'TENOFF1',
      discount_type: 'percentage',
      discount_amount: '10',
      allowed_uses: 1,
      recurring: 1,
      description: 'test',
    });
    expect(created.body).toEqual({ success: true, response: { coupon_codes: ['TENOFF1'] } });
    expect(
      (
        await vendor(em, '/2.1/product/create_coupon', {
          coupon_type: 'checkout',
          coupon_code: 'tenoff1',
          discount_type: 'percentage',
          discount_amount: '5',
        })
      ).body,
    ).toEqual({
      success: false,
      error: { code: 132, message: 'The coupon code already exists' },
    });
    const error = async (params: Record<string, string | number>) =>
      ((await vendor(em, '/2.1/product/create_coupon', params)).body as { error?: { code: number } }).error?.code;
    expect(await error({ discount_type: 'flat', discount_amount: '1.00' })).toBe(116);
    expect(await error({ coupon_type: 'checkout', discount_type: 'percentage', discount_amount: '100' })).toBe(128);
    expect(await error({ coupon_type: 'checkout', discount_type: 'flat', discount_amount: '0', currency: 'USD' })).toBe(129);
    expect(await error({ coupon_type: 'checkout', discount_type: 'flat', discount_amount: '2.00' })).toBe(116);
    expect(await error({ coupon_type: 'checkout', coupon_code: 'ABC', discount_type: 'percentage', discount_amount: '5' })).toBe(131);

    const out = await em.checkout({ plan_id: 9001, email: 'coupon@example.com', coupon: 'tenoff1' });
    expect(out.payment?.amount).toBe(9);
    expect(receiver.alerts[1]?.coupon).toBe('TENOFF1');
    expect(receiver.alerts[1]?.sale_gross).toBe('9.00');
    const order = await fetch(`${em.checkoutApiUrl}/1.0/order?checkout_id=${out.checkout_id}`).then(
      (r) => r.json() as Promise<{ order: { coupon_code: string } }>,
    );
    expect(order.order.coupon_code).toBe('TENOFF1');
    // Recurring: renewals are discounted too and carry the code.
    const renewal = await em.renew(out.subscription.subscription_id);
    expect(renewal.payment.amount).toBe(9);
    expect(renewal.alerts[0]?.fields.coupon).toBe('TENOFF1');
    expect(em.coupons().find((c) => c.coupon_code === 'TENOFF1')).toMatchObject({ times_used: 1, allowed_uses: 1 });
    await expect(em.checkout({ plan_id: 9001, email: 'again@example.com', coupon: 'TENOFF1' })).rejects.toThrow(/used up/);
    await expect(em.checkout({ plan_id: 9001, email: 'again@example.com', coupon: 'NOPE-NOPE' })).rejects.toThrow(/unknown coupon/);
  });

  it('deletes unbilled modifiers; a renewal bills them and deleting one then answers 124; unknown ids 123', async () => {
    const { subscription: sub } = await em.checkout({ plan_id: 9001, email: 'delmods@example.com' });
    const create = async () =>
      (
        (
          await vendor(em, '/2.0/subscription/modifiers/create', {
            subscription_id: sub.subscription_id,
            modifier_amount: -1,
            modifier_recurring: false,
          })
        ).body.response as { modifier_id: number }
      ).modifier_id;
    const first = await create();
    expect((await vendor(em, '/2.0/subscription/modifiers/delete', { modifier_id: first })).body).toEqual({ success: true });
    expect(em.modifiers(sub.subscription_id)).toEqual([]);
    expect((await vendor(em, '/2.0/subscription/modifiers/delete', { modifier_id: first })).body).toMatchObject({
      success: false,
      error: { code: 123 },
    });
    const second = await create();
    const renewal = await em.renew(sub.subscription_id);
    expect(em.modifiers(sub.subscription_id)).toEqual([
      expect.objectContaining({ modifier_id: second, billed_payment_id: renewal.payment.id }),
    ]);
    expect((await vendor(em, '/2.0/subscription/modifiers/delete', { modifier_id: second })).body).toMatchObject({
      success: false,
      error: { code: 124 },
    });
  });

  it('refuses a wrong auth code (107), an unknown method (101) and GET (405)', async () => {
    const denied = await vendor(em, '/2.0/subscription/users', {}, { auth: 'wrong' });
    expect(denied).toEqual({
      status: 200,
      body: { success: false, error: { code: 107, message: "You don't have permission to access this resource" } },
    });
    expect((await vendor(em, '/2.0/subscription/users', {}, { auth: 'wrong', as: 'json' })).body.error?.code).toBe(107);
    expect((await vendor(em, '/2.0/subscription/nope')).body).toEqual({ success: false, error: { code: 101, message: 'Bad method call' } });
    expect((await fetch(`${em.vendorsApiUrl}/2.0/subscription/users`)).status).toBe(405);
    const counts = em.callCounts();
    expect(counts['/vendors/api/2.0/subscription/nope']).toBe(1);
  });

  it('order lookup: processing for processingMs, then processed; unknown ids give error 101', async () => {
    const out = await em.checkout({ plan_id: 9001, email: 'order@example.com', quantity: 3, processingMs: 400 });
    const first = await order(em, out.checkout_id);
    expect(first).toEqual({ state: 'processing', checkout: { checkout_id: out.checkout_id, image_url: null, title: 'Pro monthly' } });
    const processed = await waitFor(async () => {
      const body = await order(em, out.checkout_id);
      return body.state === 'processed' ? body : undefined;
    });
    expect(Object.keys(processed).sort()).toEqual(['checkout', 'lockers', 'order', 'state']);
    expect(processed.order).toEqual({
      order_id: expect.any(Number),
      total: '30.00',
      total_tax: '0.00',
      currency: 'USD',
      formatted_total: '$30.00',
      formatted_tax: '$0.00',
      coupon_code: null,
      receipt_url: expect.any(String),
      customer_success_redirect_url: '',
      has_locker: false,
      is_subscription: true,
      subscription_id: out.subscription.subscription_id,
      quantity: 3,
      completed: { date: expect.stringMatching(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.000000$/), timezone_type: 3, timezone: 'UTC' },
      customer: { email: 'order@example.com', marketing_consent: false },
      access_management: { software_key: [] },
    });
    expect(String((processed.order as { order_id: number }).order_id)).toBe(out.payment?.order_id.split('-')[0]);

    expect(await order(em, '1-chre0-0000000000')).toEqual({ error: { code: 101, message: 'Could not find a checkout matching this ID' } });
    expect((await fetch(`${em.checkoutApiUrl}/1.0/order?checkout_id=${out.checkout_id}`, { method: 'POST' })).status).toBe(405);
  });

  it('mode down answers 503, mode error answers Paddle error 120; the control endpoints stay up', async () => {
    em.setMode('down');
    expect((await fetch(`${em.vendorsApiUrl}/2.0/subscription/users`, { method: 'POST' })).status).toBe(503);
    expect((await fetch(`${em.checkoutApiUrl}/1.0/order?checkout_id=x`)).status).toBe(503);
    expect((await fetch(`${em.url}/_emulator/state`)).status).toBe(200);
    em.setMode('error');
    expect(await vendor(em, '/2.0/subscription/users')).toEqual({
      status: 200,
      body: { success: false, error: { code: 120, message: 'Internal error' } },
    });
    expect(await order(em, 'x')).toEqual({ error: { code: 120, message: 'Internal error' } });
    em.setMode('up');
    expect((await vendor(em, '/2.0/subscription/users')).body.success).toBe(true);
  });

  it('control endpoints run the same methods and report each alert', async () => {
    const res = await fetch(`${em.url}/_emulator/checkout`, {
      method: 'POST',
      body: JSON.stringify({ plan_id: 9001, email: 'ctl@example.com' }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { subscription: { subscription_id: number }; alerts: unknown[] };
    expect(body.alerts).toEqual([
      { alert_name: 'subscription_created', alert_id: expect.stringMatching(/^\d+$/), status: 200 },
      { alert_name: 'subscription_payment_succeeded', alert_id: expect.stringMatching(/^\d+$/), status: 200 },
    ]);
    expect(receiver.alerts).toHaveLength(2);
    const missing = await fetch(`${em.url}/_emulator/renew`, { method: 'POST', body: JSON.stringify({ subscription_id: 1 }) });
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: 'unknown subscription 1' });
    const state = (await (await fetch(`${em.url}/_emulator/state`)).json()) as Record<string, unknown[]>;
    expect(state.subscriptions).toContainEqual(expect.objectContaining({ subscription_id: body.subscription.subscription_id }));
  });
});

describe('Paddle emulator persistence', () => {
  const dir = mkdtempSync(join(tmpdir(), 'paddle-emulator-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps state, keys and credentials across a restart on the same data file', async () => {
    const dataFile = join(dir, 'nested', 'paddle.json');
    const first = await startPaddleEmulator({ dataFile, vendorId: 777 });
    const out = await first.checkout({ plan_id: 9001, email: 'keep@example.com' });
    await vendor(first, '/2.0/subscription/modifiers/create', { subscription_id: out.subscription.subscription_id, modifier_amount: -1 });
    const plan = first.createPlan({ name: 'Kept', billing_type: 'day', prices: { USD: '1.00' } });
    const signed = first.sign({ alert_name: 'x' });
    await first.stop();
    expect(statSync(dataFile).mode & 0o777).toBe(0o600);

    const second = await startPaddleEmulator({ dataFile });
    try {
      expect(second.vendorId).toBe(777);
      expect(second.authCode).toBe(first.authCode);
      expect(second.publicKeyPem).toBe(first.publicKeyPem);
      expect(verifyPaddleSignature(signed, second.publicKeyPem)).toBe(true);
      expect(second.subscriptions()).toEqual([out.subscription]);
      expect(second.payments()).toEqual([out.payment]);
      expect(second.modifiers()).toHaveLength(1);
      expect(second.plans()).toContainEqual(plan);
      const next = await second.checkout({ plan_id: 9001, email: 'keep@example.com' });
      expect(next.subscription.subscription_id).toBe(out.subscription.subscription_id + 1);
      expect(next.subscription.user_id).toBe(out.subscription.user_id);
      expect(Number(next.alerts[0]?.fields.alert_id)).toBeGreaterThan(Number(out.alerts[1]?.fields.alert_id));
      expect((await order(second, out.checkout_id)).state).toBe('processed');
    } finally {
      await second.stop();
    }
  });
});

describe('paddle CLI', () => {
  let em: PaddleEmulator;
  let receiver: Receiver;
  beforeAll(async () => {
    receiver = await startReceiver();
    em = await startPaddleEmulator({ webhookUrl: receiver.url });
  });
  afterAll(async () => {
    await em?.stop();
    await receiver?.close();
  });

  /**
   * `npx tsx infra/paddle.ts ...` as `npm run paddle` runs it (npm's own config warnings are dropped), or,
   * with `viaNpx` false, the same tsx loader straight from node: half the start-up cost on a busy machine;
   * with `inProcess`, the CLI's main in this process (test/support/cli-in-process.ts), no start-up at all.
   */
  function cli(
    args: string[],
    { url = em.url, viaNpx = false, inProcess = false } = {},
  ): Promise<{ code: number; stdout: string; stderr: string[] }> {
    if (inProcess)
      return cliInProcess('paddle', paddleMain, args, { PADDLE_EMULATOR_URL: url }).then((r) => ({
        code: r.code ?? -1,
        stdout: r.stdout,
        stderr: r.stderr.split('\n').filter((l) => l !== ''),
      }));
    const [file, argv] = viaNpx
      ? ['npx', ['tsx', 'infra/paddle.ts', ...args]]
      : [process.execPath, ['--import', 'tsx', 'infra/paddle.ts', ...args]];
    return new Promise((ok) => {
      execFile(file, argv, { cwd: ROOT, env: { ...process.env, PADDLE_EMULATOR_URL: url } }, (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        ok({ code, stdout, stderr: stderr.split('\n').filter((l) => l !== '' && !/^npm warn/i.test(l)) });
      });
    });
  }

  it('runs commands against a running emulator and exits 0, 1 or 2', async () => {
    const dead = await startReceiver();
    await dead.close();
    const deadUrl = new URL(dead.url).origin;
    const [checkout, state, badArgs, unknown, unreachable, missingSub] = await Promise.all([
      cli(['checkout', '--plan', '9001', '--email', 'cli@example.com', '--quantity', '2']),
      cli(['state'], { viaNpx: true }),
      cli(['renew', '--subscription', 'abc'], { inProcess: true }),
      cli(['checkout', '--plan', '9001', '--email', 'x@example.com', '--force'], { inProcess: true }),
      cli(['state'], { url: deadUrl, inProcess: true }),
      cli(['cancel', '--subscription', '1'], { inProcess: true }),
    ]);

    expect(checkout).toMatchObject({ code: 0, stderr: [] });
    const out = JSON.parse(checkout.stdout) as { subscription: { quantity: number }; alerts: { alert_name: string; status: number }[] };
    expect(out.subscription.quantity).toBe(2);
    expect(out.alerts.map((a) => [a.alert_name, a.status])).toEqual([
      ['subscription_created', 200],
      ['subscription_payment_succeeded', 200],
    ]);
    expect(receiver.alerts.map((a) => a.email)).toEqual(['cli@example.com', 'cli@example.com']);

    expect(state).toMatchObject({ code: 0, stderr: [] });
    expect(JSON.parse(state.stdout)).toMatchObject({ vendor_id: 12345, plans: expect.any(Array), subscriptions: expect.any(Array) });

    for (const bad of [badArgs, unknown]) {
      expect(bad.code).toBe(2);
      expect(bad.stdout).toBe('');
      expect(bad.stderr).toHaveLength(1);
      expect(bad.stderr[0]).toMatch(/^paddle: .*usage: paddle/);
    }
    expect(unreachable).toMatchObject({
      code: 1,
      stdout: '',
      stderr: [
        `Paddle emulator not reachable at ${deadUrl}; is \`npm start\` running? PADDLE_EMULATOR_URL or PADDLE_PORT sets its address`,
      ],
    });
    expect(missingSub).toMatchObject({ code: 1, stdout: '', stderr: ['paddle: unknown subscription 1'] });
  });
});
