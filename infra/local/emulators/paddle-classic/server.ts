// Paddle Classic emulator for `npm start` and the integration tests: the vendor API (/vendors/api/2.0/...),
// the checkout order lookup (/checkout/api/1.0/order) and signed, form-encoded webhook alerts, with the
// shapes of ../../shared/reference/paddle-classic.md (sections 1, 3, 4). Test code drives the money
// side (checkout, renewals, failures, cancellations, refunds) through the methods below; the
// `paddle` CLI drives the same methods through the /_emulator control endpoints.
//
// Deliberate simplifications: no taxes (payment_tax "0.00"), no currency conversion (balance_* are in
// the payment's own currency), modifiers are recorded but never change a payment amount (a renewal
// marks the subscription's pending modifiers billed, after which deleting one answers error 124), and
// every step happens "now" (a renewal is paid today and moves next_bill_date on by one interval).
// Coupons (/2.1/product/create_coupon) discount the checkout's first payment (and renewals when
// recurring) and appear in the payment alerts' `coupon` field and the order's `coupon_code`.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { dirname } from 'node:path';
import { signPaddleFields } from '../../../../shared/providers/paddle-classic/signature';

export interface EmulatorPlan {
  id: number;
  name: string;
  billing_type: 'day' | 'week' | 'month' | 'year';
  billing_period: number;
  trial_days: number;
  initial_price: Record<string, string>;
  recurring_price: Record<string, string>;
}

export interface EmulatorSubscription {
  subscription_id: number;
  plan_id: number;
  user_id: number;
  user_email: string;
  state: 'active' | 'trialing' | 'past_due' | 'paused' | 'deleted';
  currency: string;
  unit_price: string;
  quantity: number;
  /** YYYY-MM-DD HH:MM:SS (UTC). */
  signup_date: string;
  next_bill_date: string | null;
  last_payment: { amount: number; currency: string; date: string } | null;
  checkout_id: string;
  passthrough: string;
  /** The coupon used at checkout, when it is recurring (it discounts every renewal too). */
  coupon?: string;
}

export interface EmulatorPayment {
  id: number;
  subscription_id: number;
  amount: number;
  currency: string;
  /** YYYY-MM-DD */
  payout_date: string;
  is_paid: 0 | 1;
  order_id: string;
  refunded_amount?: number;
}

export interface EmulatorModifier {
  modifier_id: number;
  subscription_id: number;
  /** Three decimals, like "-5.000". */
  amount: string;
  currency: string;
  is_recurring: boolean;
  description: string;
  /** Set by the renewal that billed it; a billed modifier can no longer be deleted (error 124). */
  billed_payment_id?: number;
}

export interface EmulatorCoupon {
  coupon_code: string;
  coupon_type: 'checkout' | 'product';
  discount_type: 'flat' | 'percentage';
  /** Flat: a money amount ("5.00"); percentage: the percent ("10"). */
  discount_amount: string;
  currency: string | null;
  allowed_uses: number;
  times_used: number;
  recurring: boolean;
  description: string;
  /** YYYY-MM-DD or null. */
  expires: string | null;
}

export interface DeliveredAlert {
  /** Signed: includes p_signature. */
  fields: Record<string, string>;
  /** HTTP status from the webhook target; null if not delivered or the connection failed. */
  status: number | null;
}

export interface PaddleEmulatorOptions {
  /** Default 0 = a free port; listens on 127.0.0.1. */
  port?: number;
  /** JSON file persisting state + key pair across restarts; null/undefined = memory only. */
  dataFile?: string | null;
  /** Default 12345 (or the data file's). */
  vendorId?: number;
  /** Default random hex (or the data file's). */
  authCode?: string;
  /** Where signed alerts are POSTed (application/x-www-form-urlencoded); null = do not deliver. */
  webhookUrl?: string | null;
}

type Mode = 'up' | 'down' | 'error';
type Deliver = { deliver?: boolean };

export interface PaddleEmulator {
  /** http://127.0.0.1:<port> */
  url: string;
  /** `${url}/vendors/api`: the client appends /2.0/subscription/users etc. */
  vendorsApiUrl: string;
  /** `${url}/checkout/api`: the client appends /1.0/order?checkout_id=... */
  checkoutApiUrl: string;
  vendorId: number;
  authCode: string;
  publicKeyPem: string;
  setWebhookUrl(url: string | null): void;
  /** 'up' normal; 'down' = every API request answers HTTP 503; 'error' = HTTP 200 with Paddle error 120. */
  setMode(mode: Mode): void;
  createPlan(p: {
    name: string;
    billing_type: EmulatorPlan['billing_type'];
    billing_period?: number;
    trial_days?: number;
    prices: Record<string, string>;
  }): EmulatorPlan;
  plans(): EmulatorPlan[];
  /**
   * Creates subscription + first paid payment + order. Sends subscription_created then
   * subscription_payment_succeeded (if no trial). `processingMs`: the order answers "processing" for
   * this long after the checkout. `deliver: false` builds and signs the alerts but does not POST them.
   */
  checkout(p: {
    plan_id: number;
    email: string;
    currency?: string;
    quantity?: number;
    passthrough?: string;
    processingMs?: number;
    deliver?: boolean;
    /** A coupon code (created through /2.1/product/create_coupon): discounts the first payment. */
    coupon?: string;
  }): Promise<{ checkout_id: string; subscription: EmulatorSubscription; payment: EmulatorPayment | null; alerts: DeliveredAlert[] }>;
  /** Next paid payment (status active), next_bill_date moves on by one plan interval. */
  renew(subscription_id: number, o?: Deliver): Promise<{ payment: EmulatorPayment; alerts: DeliveredAlert[] }>;
  /** subscription_payment_failed; the subscription becomes past_due. */
  failPayment(subscription_id: number, o?: Deliver): Promise<{ alerts: DeliveredAlert[] }>;
  /** subscription_updated with old_* / new_* fields. */
  updateSubscription(
    subscription_id: number,
    p: { plan_id?: number; state?: EmulatorSubscription['state'] },
    o?: Deliver,
  ): Promise<{ subscription: EmulatorSubscription; alerts: DeliveredAlert[] }>;
  /** subscription_cancelled; state deleted. */
  cancel(subscription_id: number, o?: Deliver): Promise<{ subscription: EmulatorSubscription; alerts: DeliveredAlert[] }>;
  /** subscription_payment_refunded, refund_type full or partial. */
  refund(payment_id: number, p?: { amount?: string; deliver?: boolean }): Promise<{ payment: EmulatorPayment; alerts: DeliveredAlert[] }>;
  subscriptions(): EmulatorSubscription[];
  payments(subscription_id?: number): EmulatorPayment[];
  modifiers(subscription_id?: number): EmulatorModifier[];
  coupons(): EmulatorCoupon[];
  /** Vendor/checkout API requests received per path, for exactly-once assertions. */
  callCounts(): Record<string, number>;
  /** Signs arbitrary alert fields with the emulator's private key. */
  sign(fields: Record<string, string>): Record<string, string>;
  stop(): Promise<void>;
}

/** A bad call to an emulator method (unknown id, impossible transition); the control endpoints answer `status`. */
export class EmulatorError extends Error {
  override readonly name = 'EmulatorError';
  constructor(
    message: string,
    readonly status: 400 | 404 | 409 = 400,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------------
// State (everything the data file holds)

interface Order {
  checkout_id: string;
  /** The integer the checkout API reports; alerts carry `${order_number}-${n}` strings. */
  order_number: number;
  subscription_id: number;
  payment_id: number | null;
  /** Cents. */
  total: number;
  currency: string;
  quantity: number;
  title: string;
  completed_at: string;
  /** Epoch ms until which the lookup answers "processing". */
  processing_until: number;
  coupon_code?: string | null;
}

interface SubscriptionExtra {
  /** Failed attempts on the current unpaid instalment. */
  attempts: number;
  paused_at?: string;
  paused_from?: string;
}

interface State {
  version: 1;
  vendorId: number;
  authCode: string;
  publicKeyPem: string;
  privateKeyPem: string;
  plans: EmulatorPlan[];
  subscriptions: EmulatorSubscription[];
  payments: EmulatorPayment[];
  modifiers: EmulatorModifier[];
  coupons: EmulatorCoupon[];
  orders: Order[];
  users: Record<string, number>;
  extras: Record<string, SubscriptionExtra>;
  next: { plan: number; subscription: number; payment: number; user: number; modifier: number; alert: number; order: number; checkout: number };
  lastEventTime: string;
}

function freshState(vendorId: number, authCode: string): State {
  const { publicKey, privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  });
  return {
    version: 1,
    vendorId,
    authCode,
    publicKeyPem: publicKey,
    privateKeyPem: privateKey,
    plans: [
      { id: 9001, name: 'Pro monthly', billing_type: 'month', billing_period: 1, trial_days: 0, initial_price: { USD: '10.00', EUR: '9.00' }, recurring_price: { USD: '10.00', EUR: '9.00' } },
      { id: 9002, name: 'Pro yearly', billing_type: 'year', billing_period: 1, trial_days: 0, initial_price: { USD: '100.00' }, recurring_price: { USD: '100.00' } },
    ],
    subscriptions: [],
    payments: [],
    modifiers: [],
    coupons: [],
    orders: [],
    users: {},
    extras: {},
    next: { plan: 9003, subscription: 70001, payment: 80001, user: 60001, modifier: 50001, alert: 1000000001, order: 400001, checkout: 1100001 },
    lastEventTime: '',
  };
}

function loadState(file: string): State | null {
  if (!existsSync(file)) return null;
  let state: State;
  try {
    state = JSON.parse(readFileSync(file, 'utf8')) as State;
  } catch (err) {
    // Refuse rather than start empty and overwrite someone's data on the first mutation.
    throw new Error(`Paddle emulator data file ${file} is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (state?.version !== 1 || typeof state.privateKeyPem !== 'string' || !Array.isArray(state.subscriptions)) {
    throw new Error(`Paddle emulator data file ${file} is not an emulator state file (version 1)`);
  }
  state.coupons ??= []; // files written before coupons existed
  return state;
}

function saveState(file: string, state: State): void {
  mkdirSync(dirname(file), { recursive: true });
  // Temp file + rename: a crash mid-write never leaves a truncated file behind. 0600: it holds keys.
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });
  renameSync(tmp, file);
}

// ---------------------------------------------------------------------------------------------------
// Dates and money

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function dateOf(d: Date): string {
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
}

function dateTimeOf(d: Date): string {
  return `${dateOf(d)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
}

/** `YYYY-MM-DD` plus a number of days / weeks / months / years; month ends clamp (Jan 31 + 1 month = Feb 28). */
function addInterval(date: string, unit: EmulatorPlan['billing_type'], count: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  if (unit === 'day' || unit === 'week') {
    return dateOf(new Date(Date.UTC(y, m - 1, d + count * (unit === 'week' ? 7 : 1))));
  }
  const months = (m - 1) + count * (unit === 'year' ? 12 : 1);
  const year = y + Math.floor(months / 12);
  const month = months % 12;
  const lastDay = new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
  return dateOf(new Date(Date.UTC(year, month, Math.min(d, lastDay))));
}

/** Decimal string or number to integer cents; null when it is not a money amount. */
function toCents(value: string | number): number | null {
  const text = typeof value === 'number' ? value.toFixed(2) : value.trim();
  const m = /^(-)?(\d+)(?:\.(\d{1,2}))?$/.exec(text);
  if (!m) return null;
  const cents = Number(m[2]) * 100 + Number((m[3] ?? '').padEnd(2, '0'));
  return m[1] ? -cents : cents;
}

const money = (cents: number) => (cents / 100).toFixed(2);
const amountOf = (cents: number) => Math.round(cents) / 100;

const SYMBOLS: Record<string, string> = { USD: '$', EUR: '€', GBP: '£' };
const formatted = (cents: number, currency: string) => `${SYMBOLS[currency] ?? `${currency} `}${money(cents)}`;

/** Paddle Classic's standard fee, 5% + 0.50, so fee and earnings look like real numbers. */
const feeOf = (gross: number) => (gross <= 0 ? 0 : Math.round(gross * 0.05) + 50);

/** Stable per-record token for the hosted-page URLs, so they survive restarts. */
const token = (...parts: (string | number)[]) => createHash('sha256').update(parts.join(':')).digest('hex').slice(0, 10);

// ---------------------------------------------------------------------------------------------------
// The emulator

const copy = <T>(value: T): T => structuredClone(value);
const STATES: EmulatorSubscription['state'][] = ['active', 'trialing', 'past_due', 'paused', 'deleted'];
const BILLING_TYPES: EmulatorPlan['billing_type'][] = ['day', 'week', 'month', 'year'];
const DELIVERY_TIMEOUT_MS = 5_000;
const MAX_BODY_BYTES = 1024 * 1024;

export async function startPaddleEmulator(options: PaddleEmulatorOptions = {}): Promise<PaddleEmulator> {
  const dataFile = options.dataFile ?? null;
  const loaded = dataFile ? loadState(dataFile) : null;
  const state = loaded ?? freshState(options.vendorId ?? 12345, options.authCode ?? randomBytes(16).toString('hex'));
  // Explicit options win over the file, so the service's configuration and the emulator always agree.
  if (options.vendorId !== undefined) state.vendorId = options.vendorId;
  if (options.authCode !== undefined) state.authCode = options.authCode;
  const persist = () => {
    if (dataFile) saveState(dataFile, state);
  };
  persist();

  let webhookUrl = options.webhookUrl ?? null;
  let mode: Mode = 'up';
  const counts: Record<string, number> = {};
  // Alerts go out one at a time in creation order, across concurrent calls too.
  let deliveryChain: Promise<unknown> = Promise.resolve();
  const inFlight = new Set<AbortController>();
  let stopped = false;

  // --- lookups -----------------------------------------------------------------------------------

  const plan = (id: number): EmulatorPlan => {
    const found = state.plans.find((p) => p.id === id);
    if (!found) throw new EmulatorError(`unknown plan ${id}`, 404);
    return found;
  };
  const subscription = (id: number): EmulatorSubscription => {
    const found = state.subscriptions.find((s) => s.subscription_id === id);
    if (!found) throw new EmulatorError(`unknown subscription ${id}`, 404);
    return found;
  };
  const live = (id: number): EmulatorSubscription => {
    const sub = subscription(id);
    if (sub.state === 'deleted') throw new EmulatorError(`subscription ${id} is cancelled (deleted)`, 409);
    return sub;
  };
  const extra = (id: number): SubscriptionExtra => (state.extras[String(id)] ??= { attempts: 0 });
  const totalCents = (sub: EmulatorSubscription) => (toCents(sub.unit_price) ?? 0) * sub.quantity;
  const paidCount = (id: number) => state.payments.filter((p) => p.subscription_id === id && p.is_paid === 1).length;
  const updateUrl = (id: number) =>
    `https://sandbox-subscription-management.paddle.com/subscription/${id}/hash/${token('u', state.vendorId, id)}/update`;
  const cancelUrl = (id: number) =>
    `https://sandbox-subscription-management.paddle.com/subscription/${id}/hash/${token('c', state.vendorId, id)}/cancel`;
  const receiptUrl = (orderId: string) => `https://sandbox-my.paddle.com/receipt/${orderId}/${token('r', state.vendorId, orderId)}`;

  const newOrderId = () => {
    const n = state.next.order++;
    return { number: n, id: `${n}-${3600000 + n}` };
  };

  // --- alerts ----------------------------------------------------------------------------------

  /** Strictly increasing alert_id, non-decreasing event_time, every value a string, then signed. */
  const buildAlert = (name: string, fields: Record<string, string | number>): Record<string, string> => {
    const now = dateTimeOf(new Date());
    state.lastEventTime = now > state.lastEventTime ? now : state.lastEventTime;
    const all: Record<string, string> = { alert_id: String(state.next.alert++), alert_name: name, event_time: state.lastEventTime };
    for (const [k, v] of Object.entries(fields)) all[k] = String(v);
    return signPaddleFields(all, state.privateKeyPem);
  };

  const post = async (fields: Record<string, string>): Promise<number | null> => {
    const target = webhookUrl;
    if (!target || stopped) return null;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), DELIVERY_TIMEOUT_MS);
    inFlight.add(abort);
    try {
      const res = await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields).toString(),
        signal: abort.signal,
      });
      await res.arrayBuffer().catch(() => undefined);
      return res.status;
    } catch {
      // A down target is part of what the emulator is for; report it, never throw.
      return null;
    } finally {
      clearTimeout(timer);
      inFlight.delete(abort);
    }
  };

  /** Persists the mutation that built the alerts, then POSTs them in order (unless deliver is false). */
  const send = async (alerts: Record<string, string>[], deliver = true): Promise<DeliveredAlert[]> => {
    persist();
    if (!deliver) return alerts.map((fields) => ({ fields, status: null }));
    const run = deliveryChain.then(async () => {
      const out: DeliveredAlert[] = [];
      for (const fields of alerts) out.push({ fields, status: await post(fields) });
      return out;
    });
    deliveryChain = run.catch(() => undefined);
    return run;
  };

  const common = (sub: EmulatorSubscription) => ({
    checkout_id: sub.checkout_id,
    currency: sub.currency,
    email: sub.user_email,
    marketing_consent: '0',
    passthrough: sub.passthrough,
    subscription_id: sub.subscription_id,
    subscription_plan_id: sub.plan_id,
    user_id: sub.user_id,
  });

  const findCoupon = (code: string) => state.coupons.find((c) => c.coupon_code.toUpperCase() === code.trim().toUpperCase());

  /** The amount after a coupon's discount (never below zero). */
  const discounted = (cents: number, coupon: EmulatorCoupon | undefined): number => {
    if (!coupon) return cents;
    if (coupon.discount_type === 'percentage') return Math.max(0, Math.round((cents * (100 - Number(coupon.discount_amount))) / 100));
    return Math.max(0, cents - (toCents(coupon.discount_amount) ?? 0));
  };

  const paymentSucceeded = (sub: EmulatorSubscription, payment: EmulatorPayment, coupon = ''): Record<string, string> => {
    const gross = toCents(payment.amount) ?? 0;
    const fee = feeOf(gross);
    const instalments = paidCount(sub.subscription_id);
    return buildAlert('subscription_payment_succeeded', {
      ...common(sub),
      balance_currency: payment.currency,
      balance_earnings: money(gross - fee),
      balance_fee: money(fee),
      balance_gross: money(gross),
      balance_tax: '0.00',
      country: 'US',
      coupon,
      custom_data: '',
      customer_name: 'Emulated Customer',
      earnings: money(gross - fee),
      fee: money(fee),
      initial_payment: instalments === 1 ? '1' : '0',
      instalments,
      next_bill_date: sub.next_bill_date ?? '',
      next_payment_amount: money(totalCents(sub)),
      order_id: payment.order_id,
      payment_method: 'card',
      payment_tax: '0.00',
      plan_name: plan(sub.plan_id).name,
      quantity: sub.quantity,
      receipt_url: receiptUrl(payment.order_id),
      sale_gross: money(gross),
      status: sub.state,
      subscription_payment_id: payment.id,
      unit_price: sub.unit_price,
    });
  };

  const changeFields = (sub: EmulatorSubscription, before: EmulatorSubscription) => {
    const pause = sub.state === 'paused' ? extra(sub.subscription_id) : undefined;
    return buildAlert('subscription_updated', {
      ...common(sub),
      cancel_url: cancelUrl(sub.subscription_id),
      update_url: updateUrl(sub.subscription_id),
      custom_data: '',
      linked_subscriptions: '',
      status: sub.state,
      next_bill_date: sub.next_bill_date ?? '',
      new_price: money(totalCents(sub)),
      new_quantity: sub.quantity,
      new_unit_price: sub.unit_price,
      old_price: money(totalCents(before)),
      old_quantity: before.quantity,
      old_unit_price: before.unit_price,
      old_next_bill_date: before.next_bill_date ?? '',
      old_status: before.state,
      old_subscription_plan_id: before.plan_id,
      ...(pause ? { paused_at: pause.paused_at ?? '', paused_from: pause.paused_from ?? '', paused_reason: 'voluntary' } : {}),
    });
  };

  // --- the money side ----------------------------------------------------------------------------

  const createPlan: PaddleEmulator['createPlan'] = (p) => {
    if (typeof p.name !== 'string' || p.name.trim() === '') throw new EmulatorError('plan name is required');
    if (!BILLING_TYPES.includes(p.billing_type)) throw new EmulatorError(`billing_type must be one of ${BILLING_TYPES.join(', ')}`);
    const period = p.billing_period ?? 1;
    const trial = p.trial_days ?? 0;
    if (!Number.isInteger(period) || period < 1) throw new EmulatorError('billing_period must be a positive integer');
    if (!Number.isInteger(trial) || trial < 0) throw new EmulatorError('trial_days must be a non-negative integer');
    const prices: Record<string, string> = {};
    for (const [currency, price] of Object.entries(p.prices ?? {})) {
      const cents = toCents(price);
      if (!/^[A-Z]{3}$/.test(currency) || cents === null || cents < 0) throw new EmulatorError(`bad price ${currency} "${price}"`);
      prices[currency] = money(cents);
    }
    if (Object.keys(prices).length === 0) throw new EmulatorError('a plan needs at least one price');
    const created: EmulatorPlan = {
      id: state.next.plan++,
      name: p.name,
      billing_type: p.billing_type,
      billing_period: period,
      trial_days: trial,
      // A trial's checkout charges nothing; the first recurring price is due when the trial ends.
      initial_price: trial > 0 ? Object.fromEntries(Object.keys(prices).map((c) => [c, '0.00'])) : { ...prices },
      recurring_price: prices,
    };
    state.plans.push(created);
    persist();
    return copy(created);
  };

  const checkout: PaddleEmulator['checkout'] = async (p) => {
    const chosen = plan(p.plan_id);
    if (typeof p.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(p.email)) throw new EmulatorError(`bad email "${String(p.email)}"`);
    const currency = p.currency ?? ('USD' in chosen.recurring_price ? 'USD' : Object.keys(chosen.recurring_price)[0] ?? 'USD');
    const price = chosen.recurring_price[currency];
    if (price === undefined) throw new EmulatorError(`plan ${chosen.id} has no ${currency} price`);
    const quantity = p.quantity ?? 1;
    if (!Number.isInteger(quantity) || quantity < 1) throw new EmulatorError('quantity must be a positive integer');
    const processingMs = p.processingMs ?? 0;
    if (!Number.isFinite(processingMs) || processingMs < 0) throw new EmulatorError('processingMs must be >= 0');
    const coupon = p.coupon === undefined || p.coupon === '' ? undefined : findCoupon(p.coupon);
    if (p.coupon && !coupon) throw new EmulatorError(`unknown coupon "${p.coupon}"`, 404);
    if (coupon) {
      if (coupon.times_used >= coupon.allowed_uses) throw new EmulatorError(`coupon ${coupon.coupon_code} has been used up`, 409);
      if (coupon.expires !== null && coupon.expires <= dateOf(new Date())) throw new EmulatorError(`coupon ${coupon.coupon_code} has expired`, 409);
      if (coupon.discount_type === 'flat' && coupon.currency !== currency) throw new EmulatorError(`coupon ${coupon.coupon_code} is in ${coupon.currency ?? 'no currency'}, the checkout in ${currency}`, 409);
    }

    const now = new Date();
    const today = dateOf(now);
    const trialing = chosen.trial_days > 0;
    const checkoutId = `${state.next.checkout++}-chre${randomBytes(6).toString('hex').slice(0, 11)}-${randomBytes(5).toString('hex')}`;
    const userId = (state.users[p.email.toLowerCase()] ??= state.next.user++);
    const sub: EmulatorSubscription = {
      subscription_id: state.next.subscription++,
      plan_id: chosen.id,
      user_id: userId,
      user_email: p.email,
      state: trialing ? 'trialing' : 'active',
      currency,
      unit_price: price,
      quantity,
      signup_date: dateTimeOf(now),
      next_bill_date: trialing ? addInterval(today, 'day', chosen.trial_days) : addInterval(today, chosen.billing_type, chosen.billing_period),
      last_payment: null,
      checkout_id: checkoutId,
      passthrough: p.passthrough ?? '',
      ...(coupon?.recurring ? { coupon: coupon.coupon_code } : {}),
    };
    state.subscriptions.push(sub);
    if (coupon) coupon.times_used += 1;
    const order = newOrderId();
    const charged = discounted((toCents(chosen.initial_price[currency] ?? price) ?? 0) * quantity, coupon);
    let payment: EmulatorPayment | null = null;
    if (!trialing) {
      payment = {
        id: state.next.payment++,
        subscription_id: sub.subscription_id,
        amount: amountOf(charged),
        currency,
        payout_date: today,
        is_paid: 1,
        order_id: order.id,
      };
      state.payments.push(payment);
      sub.last_payment = { amount: payment.amount, currency, date: today };
    }
    state.orders.push({
      checkout_id: checkoutId,
      order_number: order.number,
      subscription_id: sub.subscription_id,
      payment_id: payment?.id ?? null,
      total: charged,
      currency,
      quantity,
      title: chosen.name,
      completed_at: dateTimeOf(now),
      processing_until: now.getTime() + processingMs,
      coupon_code: coupon?.coupon_code ?? null,
    });
    const alerts = [
      buildAlert('subscription_created', {
        ...common(sub),
        cancel_url: cancelUrl(sub.subscription_id),
        update_url: updateUrl(sub.subscription_id),
        custom_data: '',
        linked_subscriptions: '',
        next_bill_date: sub.next_bill_date ?? '',
        quantity,
        source: '',
        status: sub.state,
        unit_price: sub.unit_price,
      }),
    ];
    if (payment) alerts.push(paymentSucceeded(sub, payment, coupon?.coupon_code ?? ''));
    const delivered = await send(alerts, p.deliver);
    return { checkout_id: checkoutId, subscription: copy(sub), payment: copy(payment), alerts: delivered };
  };

  const renew: PaddleEmulator['renew'] = async (id, o = {}) => {
    const sub = live(id);
    const today = dateOf(new Date());
    // A failed instalment (past_due) is the one that gets paid; otherwise a new one is due.
    let payment = state.payments.find((p) => p.subscription_id === id && p.is_paid === 0);
    if (payment) {
      payment.is_paid = 1;
      payment.payout_date = today;
    } else {
      payment = {
        id: state.next.payment++,
        subscription_id: id,
        amount: amountOf(discounted(totalCents(sub), sub.coupon ? findCoupon(sub.coupon) : undefined)),
        currency: sub.currency,
        payout_date: today,
        is_paid: 1,
        order_id: newOrderId().id,
      };
      state.payments.push(payment);
    }
    // This payment bills the subscription's pending modifiers: from now on they cannot be deleted.
    for (const m of state.modifiers) {
      if (m.subscription_id === id && m.billed_payment_id === undefined) m.billed_payment_id = payment.id;
    }
    const chosen = plan(sub.plan_id);
    sub.next_bill_date = addInterval(sub.next_bill_date ?? today, chosen.billing_type, chosen.billing_period);
    sub.state = 'active';
    sub.last_payment = { amount: payment.amount, currency: payment.currency, date: today };
    const ext = extra(id);
    ext.attempts = 0;
    delete ext.paused_at;
    delete ext.paused_from;
    const alerts = await send([paymentSucceeded(sub, payment, sub.coupon ?? '')], o.deliver);
    return { payment: copy(payment), alerts };
  };

  const failPayment: PaddleEmulator['failPayment'] = async (id, o = {}) => {
    const sub = live(id);
    let payment = state.payments.find((p) => p.subscription_id === id && p.is_paid === 0);
    if (!payment) {
      payment = {
        id: state.next.payment++,
        subscription_id: id,
        amount: amountOf(totalCents(sub)),
        currency: sub.currency,
        payout_date: sub.next_bill_date ?? dateOf(new Date()),
        is_paid: 0,
        order_id: newOrderId().id,
      };
      state.payments.push(payment);
    }
    const ext = extra(id);
    ext.attempts += 1;
    sub.state = 'past_due';
    const alert = buildAlert('subscription_payment_failed', {
      ...common(sub),
      amount: money(toCents(payment.amount) ?? 0),
      attempt_number: ext.attempts,
      cancel_url: cancelUrl(id),
      update_url: updateUrl(id),
      instalments: paidCount(id) + 1,
      next_retry_date: addInterval(dateOf(new Date()), 'day', 3),
      order_id: payment.order_id,
      quantity: sub.quantity,
      status: sub.state,
      subscription_payment_id: payment.id,
      unit_price: sub.unit_price,
    });
    return { alerts: await send([alert], o.deliver) };
  };

  const updateSubscription: PaddleEmulator['updateSubscription'] = async (id, p, o = {}) => {
    const sub = live(id);
    if (p.state !== undefined && !STATES.includes(p.state)) throw new EmulatorError(`state must be one of ${STATES.join(', ')}`);
    if (p.state === 'deleted') throw new EmulatorError('use cancel to delete a subscription (Paddle sends subscription_cancelled)');
    const before = copy(sub);
    if (p.plan_id !== undefined) {
      const target = plan(p.plan_id);
      const price = target.recurring_price[sub.currency];
      if (price === undefined) throw new EmulatorError(`plan ${target.id} has no ${sub.currency} price`);
      sub.plan_id = target.id;
      sub.unit_price = price;
    }
    if (p.state !== undefined) {
      sub.state = p.state;
      const ext = extra(id);
      if (p.state === 'paused' && before.state !== 'paused') {
        ext.paused_at = dateTimeOf(new Date());
        ext.paused_from = ext.paused_at;
      } else if (p.state !== 'paused') {
        delete ext.paused_at;
        delete ext.paused_from;
      }
    }
    const alerts = await send([changeFields(sub, before)], o.deliver);
    return { subscription: copy(sub), alerts };
  };

  const cancel: PaddleEmulator['cancel'] = async (id, o = {}) => {
    const sub = live(id);
    // Access lasts until the end of the period already paid for (or of the trial).
    const effective = sub.next_bill_date ?? dateOf(new Date());
    sub.state = 'deleted';
    sub.next_bill_date = null;
    const alert = buildAlert('subscription_cancelled', {
      ...common(sub),
      cancellation_effective_date: effective,
      custom_data: '',
      linked_subscriptions: '',
      quantity: sub.quantity,
      status: 'deleted',
      unit_price: sub.unit_price,
    });
    return { subscription: copy(sub), alerts: await send([alert], o.deliver) };
  };

  const refund: PaddleEmulator['refund'] = async (paymentId, p = {}) => {
    const payment = state.payments.find((x) => x.id === paymentId);
    if (!payment) throw new EmulatorError(`unknown payment ${paymentId}`, 404);
    if (payment.is_paid !== 1) throw new EmulatorError(`payment ${paymentId} is not paid`, 409);
    const gross = toCents(payment.amount) ?? 0;
    const already = toCents(payment.refunded_amount ?? 0) ?? 0;
    const remaining = gross - already;
    const amount = p.amount === undefined ? remaining : toCents(p.amount);
    if (amount === null || amount <= 0) throw new EmulatorError(`bad refund amount "${String(p.amount)}"`);
    if (amount > remaining) throw new EmulatorError(`refund ${money(amount)} exceeds the ${money(remaining)} left on payment ${paymentId}`, 409);
    const sub = subscription(payment.subscription_id);
    const feeRefund = gross === 0 ? 0 : Math.round((feeOf(gross) * amount) / gross);
    payment.refunded_amount = amountOf(already + amount);
    const instalment = state.payments
      .filter((x) => x.subscription_id === sub.subscription_id && x.is_paid === 1)
      .sort((a, b) => a.id - b.id)
      .findIndex((x) => x.id === payment.id) + 1;
    const alert = buildAlert('subscription_payment_refunded', {
      ...common(sub),
      amount: money(amount),
      balance_currency: payment.currency,
      balance_earnings_decrease: money(amount - feeRefund),
      balance_fee_refund: money(feeRefund),
      balance_gross_refund: money(amount),
      balance_tax_refund: '0.00',
      custom_data: '',
      earnings_decrease: money(amount - feeRefund),
      fee_refund: money(feeRefund),
      gross_refund: money(amount),
      tax_refund: '0.00',
      initial_payment: instalment === 1 ? '1' : '0',
      instalments: instalment,
      order_id: payment.order_id,
      quantity: sub.quantity,
      refund_reason: 'Emulated refund',
      refund_type: already === 0 && amount === gross ? 'full' : 'partial',
      status: sub.state,
      subscription_payment_id: payment.id,
      unit_price: sub.unit_price,
    });
    return { payment: copy(payment), alerts: await send([alert], p.deliver) };
  };

  // --- the vendor and checkout APIs --------------------------------------------------------------

  type Params = Record<string, string>;
  type ApiResult = { error: [number, string] } | { response: unknown };
  const fail = (code: number, message: string): ApiResult => ({ error: [code, message] });

  /** An optional integer parameter: undefined when absent, null when present but not an integer. */
  const intParam = (params: Params, name: string): number | undefined | null => {
    const raw = params[name];
    if (raw === undefined || raw === '') return undefined;
    return /^\d+$/.test(raw) ? Number(raw) : null;
  };
  const invalid = (name: string) => fail(116, `The ${name} argument is invalid`);

  const vendorRoutes: Record<string, (params: Params) => ApiResult> = {
    '/2.0/subscription/users': (params) => {
      const subscriptionId = intParam(params, 'subscription_id');
      const planId = intParam(params, 'plan_id');
      const page = intParam(params, 'page') ?? 1;
      const perPage = intParam(params, 'results_per_page') ?? 200;
      if (subscriptionId === null) return invalid('subscription_id');
      if (planId === null) return invalid('plan_id');
      if (page === null) return invalid('page');
      if (perPage === null) return invalid('results_per_page');
      const wanted = params.state;
      if (wanted !== undefined && wanted !== '' && !STATES.includes(wanted as EmulatorSubscription['state'])) return invalid('state');
      const size = Math.min(Math.max(perPage, 1), 200);
      const start = (Math.max(page, 1) - 1) * size;
      const rows = state.subscriptions
        .filter((s) => subscriptionId === undefined || s.subscription_id === subscriptionId)
        .filter((s) => planId === undefined || s.plan_id === planId)
        .filter((s) => (wanted ? s.state === wanted : s.state !== 'deleted'))
        .sort((a, b) => a.subscription_id - b.subscription_id)
        .slice(start, start + size)
        .map((s) => {
          const ext = state.extras[String(s.subscription_id)];
          return {
            subscription_id: s.subscription_id,
            plan_id: s.plan_id,
            user_id: s.user_id,
            user_email: s.user_email,
            marketing_consent: false,
            state: s.state,
            signup_date: s.signup_date,
            ...(s.last_payment ? { last_payment: { ...s.last_payment } } : {}),
            ...(s.state !== 'deleted' && s.next_bill_date
              ? { next_payment: { amount: amountOf(totalCents(s)), currency: s.currency, date: s.next_bill_date } }
              : {}),
            update_url: updateUrl(s.subscription_id),
            cancel_url: cancelUrl(s.subscription_id),
            ...(s.state === 'paused' && ext?.paused_at
              ? { paused_at: ext.paused_at, paused_from: ext.paused_from ?? ext.paused_at, paused_reason: 'voluntary' }
              : {}),
            payment_information: { payment_method: 'card', card_type: 'visa', last_four_digits: '1111', expiry_date: '02/2030' },
            linked_subscriptions: [],
            quantity: s.quantity,
          };
        });
      return { response: rows };
    },
    '/2.0/subscription/payments': (params) => {
      const subscriptionId = intParam(params, 'subscription_id');
      const isPaid = intParam(params, 'is_paid');
      if (subscriptionId === null) return invalid('subscription_id');
      if (isPaid === null || (isPaid !== undefined && isPaid > 1)) return invalid('is_paid');
      const plans = params.plan ? params.plan.split(',').map((x) => Number(x.trim())) : null;
      const { from, to } = params;
      const planOf = new Map(state.subscriptions.map((s) => [s.subscription_id, s.plan_id]));
      const rows = state.payments
        .filter((p) => subscriptionId === undefined || p.subscription_id === subscriptionId)
        .filter((p) => isPaid === undefined || p.is_paid === isPaid)
        .filter((p) => !plans || plans.includes(planOf.get(p.subscription_id) ?? -1))
        .filter((p) => (!from || p.payout_date >= from) && (!to || p.payout_date < to))
        .sort((a, b) => (a.payout_date === b.payout_date ? a.id - b.id : a.payout_date < b.payout_date ? -1 : 1))
        .map((p) => ({
          id: p.id,
          subscription_id: p.subscription_id,
          amount: p.amount,
          currency: p.currency,
          payout_date: p.payout_date,
          is_paid: p.is_paid,
          is_one_off_charge: 0,
          receipt_url: p.is_paid === 1 ? receiptUrl(p.order_id) : '',
        }));
      return { response: rows };
    },
    '/2.0/subscription/plans': (params) => {
      const wanted = intParam(params, 'plan');
      if (wanted === null) return invalid('plan');
      return { response: copy(state.plans.filter((p) => wanted === undefined || p.id === wanted)) };
    },
    '/2.0/subscription/modifiers/create': (params) => {
      const subscriptionId = intParam(params, 'subscription_id');
      if (subscriptionId === undefined) return fail(116, 'The subscription_id argument is required');
      if (subscriptionId === null) return invalid('subscription_id');
      const sub = state.subscriptions.find((s) => s.subscription_id === subscriptionId);
      if (!sub) return fail(119, 'The subscription was not found');
      const rawAmount = params.modifier_amount;
      if (rawAmount === undefined || rawAmount === '') return fail(116, 'The modifier_amount argument is required');
      const amount = Number(rawAmount);
      if (!/^-?\d+(\.\d+)?$/.test(rawAmount.trim()) || !Number.isFinite(amount)) return invalid('modifier_amount');
      const rawRecurring = (params.modifier_recurring ?? 'true').toLowerCase();
      if (!['true', 'false', '1', '0', ''].includes(rawRecurring)) return invalid('modifier_recurring');
      const modifier: EmulatorModifier = {
        modifier_id: state.next.modifier++,
        subscription_id: sub.subscription_id,
        amount: amount.toFixed(3),
        currency: sub.currency,
        is_recurring: rawRecurring !== 'false' && rawRecurring !== '0',
        description: params.modifier_description ?? '',
      };
      state.modifiers.push(modifier);
      persist();
      return { response: { subscription_id: sub.subscription_id, modifier_id: modifier.modifier_id } };
    },
    '/2.0/subscription/modifiers/delete': (params) => {
      const modifierId = intParam(params, 'modifier_id');
      if (modifierId === undefined) return fail(116, 'The modifier_id argument is required');
      if (modifierId === null) return invalid('modifier_id');
      const index = state.modifiers.findIndex((m) => m.modifier_id === modifierId);
      const found = state.modifiers[index];
      if (!found) return fail(123, 'The modifier was not found');
      if (found.billed_payment_id !== undefined) return fail(124, 'Paid modifiers cannot be altered or deleted');
      state.modifiers.splice(index, 1);
      persist();
      return { response: undefined };
    },
    '/2.1/product/create_coupon': (params) => {
      const type = params.coupon_type;
      if (!type) return fail(116, 'The coupon_type argument is required');
      if (type !== 'checkout' && type !== 'product') return fail(127, 'The coupon type is invalid');
      if (type === 'product' && !params.product_ids) return fail(116, 'The product_ids argument is required');
      const discountType = params.discount_type;
      if (!discountType) return fail(116, 'The discount_type argument is required');
      if (discountType !== 'flat' && discountType !== 'percentage') return invalid('discount_type');
      const rawAmount = (params.discount_amount ?? '').trim();
      if (rawAmount === '') return fail(116, 'The discount_amount argument is required');
      const amount = Number(rawAmount);
      if (!/^\d+(\.\d+)?$/.test(rawAmount) || !Number.isFinite(amount)) return invalid('discount_amount');
      if (discountType === 'percentage' && amount >= 100) return fail(128, 'Percentage discounts must be below 100');
      if (discountType === 'flat' && amount < 0.01) return fail(129, 'Flat discounts must be at least 0.01');
      const currency = params.currency ? params.currency : null;
      if (discountType === 'flat' && !currency) return fail(116, 'The currency argument is required for flat coupons');
      if (currency !== null && !/^[A-Z]{3}$/.test(currency)) return invalid('currency');
      const uses = params.allowed_uses === undefined || params.allowed_uses === '' ? 999_999 : Number(params.allowed_uses);
      if (!Number.isInteger(uses) || uses < 1) return fail(130, 'allowed_uses must be numeric');
      const expires = params.expires ? params.expires : null;
      if (expires !== null && !/^\d{4}-\d{2}-\d{2}$/.test(expires)) return fail(133, 'The expiry date is invalid');
      const code = params.coupon_code ? params.coupon_code.trim() : `EMU-${randomBytes(4).toString('hex').toUpperCase()}`;
      if (code.length < 5 || code.length > 300) return fail(131, 'The coupon code must be at least 5 characters');
      if (findCoupon(code)) return fail(132, 'The coupon code already exists');
      const coupon: EmulatorCoupon = {
        coupon_code: code,
        coupon_type: type,
        discount_type: discountType,
        discount_amount: discountType === 'flat' ? amount.toFixed(2) : String(amount),
        currency,
        allowed_uses: uses,
        times_used: 0,
        recurring: params.recurring === '1' || params.recurring === 'true',
        description: params.description ?? '',
        expires,
      };
      state.coupons.push(coupon);
      persist();
      return { response: { coupon_codes: [code] } };
    },
    '/2.0/subscription/modifiers': (params) => {
      const subscriptionId = intParam(params, 'subscription_id');
      const planId = intParam(params, 'plan_id');
      if (subscriptionId === null) return invalid('subscription_id');
      if (planId === null) return invalid('plan_id');
      const planOf = new Map(state.subscriptions.map((s) => [s.subscription_id, s.plan_id]));
      return {
        response: state.modifiers
          .filter((m) => subscriptionId === undefined || m.subscription_id === subscriptionId)
          .filter((m) => planId === undefined || planOf.get(m.subscription_id) === planId)
          .map(copy),
      };
    },
  };

  const orderLookup = (checkoutId: string | null): unknown => {
    const order = checkoutId ? state.orders.find((o) => o.checkout_id === checkoutId) : undefined;
    if (!order) return { error: { code: 101, message: 'Could not find a checkout matching this ID' } };
    const checkoutInfo = { checkout_id: order.checkout_id, image_url: null, title: order.title };
    if (Date.now() < order.processing_until) return { state: 'processing', checkout: checkoutInfo };
    const sub = state.subscriptions.find((s) => s.subscription_id === order.subscription_id);
    const payment = state.payments.find((p) => p.id === order.payment_id);
    return {
      state: 'processed',
      checkout: checkoutInfo,
      order: {
        order_id: order.order_number,
        total: money(order.total),
        total_tax: '0.00',
        currency: order.currency,
        formatted_total: formatted(order.total, order.currency),
        formatted_tax: formatted(0, order.currency),
        coupon_code: order.coupon_code ?? null,
        receipt_url: receiptUrl(payment?.order_id ?? String(order.order_number)),
        customer_success_redirect_url: '',
        has_locker: false,
        is_subscription: true,
        subscription_id: order.subscription_id,
        quantity: order.quantity,
        completed: { date: `${order.completed_at}.000000`, timezone_type: 3, timezone: 'UTC' },
        customer: { email: sub?.user_email ?? '', marketing_consent: false },
        access_management: { software_key: [] },
      },
      lockers: [],
    };
  };

  // --- HTTP ----------------------------------------------------------------------------------------

  const json = (res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    const text = JSON.stringify(body);
    res.writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(text)), ...headers });
    res.end(text);
  };

  const readBody = (req: IncomingMessage): Promise<string> =>
    new Promise((ok, failRead) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_BODY_BYTES) {
          failRead(new EmulatorError('body too large'));
          req.pause();
        } else chunks.push(chunk);
      });
      req.on('end', () => ok(Buffer.concat(chunks).toString('utf8')));
      req.on('error', failRead);
    });

  /** Form or JSON body to a flat string map (JSON numbers and booleans become their text, as in a form). */
  const parseParams = (req: IncomingMessage, body: string): Params | null => {
    if ((req.headers['content-type'] ?? '').toLowerCase().includes('application/json')) {
      let parsed: unknown;
      try {
        parsed = body.trim() === '' ? {} : JSON.parse(body);
      } catch {
        return null;
      }
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
      const out: Params = {};
      for (const [k, v] of Object.entries(parsed)) {
        if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k] = String(v);
      }
      return out;
    }
    return Object.fromEntries(new URLSearchParams(body));
  };

  const handleVendor = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (req.method !== 'POST') return json(res, 405, { error: 'Method Not Allowed' }, { allow: 'POST' });
    const route = vendorRoutes[path.slice('/vendors/api'.length)];
    const body = await readBody(req);
    if (!route) return json(res, 200, { success: false, error: { code: 101, message: 'Bad method call' } });
    const params = parseParams(req, body);
    if (!params) return json(res, 200, { success: false, error: { code: 101, message: 'Bad method call' } });
    if (params.vendor_id !== String(state.vendorId) || params.vendor_auth_code !== state.authCode) {
      return json(res, 200, { success: false, error: { code: 107, message: "You don't have permission to access this resource" } });
    }
    const result = route(params);
    if ('error' in result) return json(res, 200, { success: false, error: { code: result.error[0], message: result.error[1] } });
    return json(res, 200, { success: true, response: result.response });
  };

  const handleCheckout = (req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams) => {
    if (path !== '/checkout/api/1.0/order') return json(res, 404, { error: { code: 101, message: 'Bad method call' } });
    if (req.method !== 'GET') return json(res, 405, { error: 'Method Not Allowed' }, { allow: 'GET' });
    return json(res, 200, orderLookup(query.get('checkout_id')));
  };

  /** The CLI's side door: JSON in, JSON out, the same methods as the tests call. */
  const summary = (alerts: DeliveredAlert[]) =>
    alerts.map((a) => ({ alert_name: a.fields.alert_name, alert_id: a.fields.alert_id, status: a.status }));

  const handleControl = async (req: IncomingMessage, res: ServerResponse, path: string) => {
    const action = path.slice('/_emulator/'.length);
    if (action === 'state') {
      if (req.method !== 'GET') return json(res, 405, { error: 'Method Not Allowed' }, { allow: 'GET' });
      return json(res, 200, {
        vendor_id: state.vendorId,
        webhook_url: webhookUrl,
        mode,
        plans: copy(state.plans),
        subscriptions: copy(state.subscriptions),
        payments: copy(state.payments),
        modifiers: copy(state.modifiers),
        coupons: copy(state.coupons),
      });
    }
    if (req.method !== 'POST') return json(res, 405, { error: 'Method Not Allowed' }, { allow: 'POST' });
    let input: Record<string, unknown>;
    try {
      const body = await readBody(req);
      const parsed: unknown = body.trim() === '' ? {} : JSON.parse(body);
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
      input = parsed as Record<string, unknown>;
    } catch {
      return json(res, 400, { error: 'the body must be a JSON object' });
    }
    const int = (name: string): number => {
      const value = typeof input[name] === 'string' ? Number(input[name]) : input[name];
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new EmulatorError(`${name} must be an integer`);
      return value;
    };
    const optional = <T>(name: string, read: (n: string) => T): T | undefined => (input[name] === undefined ? undefined : read(name));
    const str = (name: string): string => {
      if (typeof input[name] !== 'string') throw new EmulatorError(`${name} must be a string`);
      return input[name] as string;
    };
    const run: Record<string, () => Promise<unknown> | unknown> = {
      checkout: async () => {
        const out = await checkout({
          plan_id: int('plan_id'),
          email: str('email'),
          currency: optional('currency', str),
          quantity: optional('quantity', int),
          passthrough: optional('passthrough', str),
          processingMs: optional('processing_ms', int),
          coupon: optional('coupon', str),
        });
        return { ...out, alerts: summary(out.alerts) };
      },
      renew: async () => {
        const out = await renew(int('subscription_id'));
        return { ...out, alerts: summary(out.alerts) };
      },
      fail: async () => ({ alerts: summary((await failPayment(int('subscription_id'))).alerts) }),
      update: async () => {
        const out = await updateSubscription(int('subscription_id'), {
          plan_id: optional('plan_id', int),
          state: optional('state', str) as EmulatorSubscription['state'] | undefined,
        });
        return { ...out, alerts: summary(out.alerts) };
      },
      cancel: async () => {
        const out = await cancel(int('subscription_id'));
        return { ...out, alerts: summary(out.alerts) };
      },
      refund: async () => {
        const out = await refund(int('payment_id'), { amount: optional('amount', str) });
        return { ...out, alerts: summary(out.alerts) };
      },
      plan: () =>
        createPlan({
          name: str('name'),
          billing_type: str('billing_type') as EmulatorPlan['billing_type'],
          billing_period: optional('billing_period', int),
          trial_days: optional('trial_days', int),
          prices: (input.prices ?? {}) as Record<string, string>,
        }),
      mode: () => {
        const wanted = str('mode');
        if (wanted !== 'up' && wanted !== 'down' && wanted !== 'error') throw new EmulatorError('mode must be up, down or error');
        mode = wanted;
        return { mode };
      },
    };
    const handler = run[action];
    if (!handler) return json(res, 404, { error: `unknown control action "${action}"` });
    try {
      return json(res, 200, await handler());
    } catch (err) {
      if (err instanceof EmulatorError) return json(res, err.status, { error: err.message });
      throw err;
    }
  };

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const path = url.pathname;
    const isVendor = path.startsWith('/vendors/api/');
    const isCheckout = path.startsWith('/checkout/api/');
    if (isVendor || isCheckout) {
      counts[path] = (counts[path] ?? 0) + 1;
      if (mode === 'down') return json(res, 503, { error: 'Service Unavailable' });
      if (mode === 'error') {
        // The checkout API has no success/response envelope; its errors are a bare `error` object.
        const error = { code: 120, message: 'Internal error' };
        return json(res, 200, isVendor ? { success: false, error } : { error });
      }
      return isVendor ? handleVendor(req, res, path) : handleCheckout(req, res, path, url.searchParams);
    }
    if (path.startsWith('/_emulator/')) return handleControl(req, res, path);
    return json(res, 404, { error: 'Not Found' });
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      console.error('[paddle-emulator] failed to answer:', err);
      if (!res.headersSent) json(res, err instanceof EmulatorError ? err.status : 500, { error: String(err) });
      else res.end();
    });
  });
  const port = await new Promise<number>((ok, failListen) => {
    server.once('error', failListen);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', failListen);
      const address = server.address();
      ok(typeof address === 'object' && address ? address.port : (options.port ?? 0));
    });
  });
  const baseUrl = `http://127.0.0.1:${port}`;

  return {
    url: baseUrl,
    vendorsApiUrl: `${baseUrl}/vendors/api`,
    checkoutApiUrl: `${baseUrl}/checkout/api`,
    vendorId: state.vendorId,
    authCode: state.authCode,
    publicKeyPem: state.publicKeyPem,
    setWebhookUrl: (url) => {
      webhookUrl = url;
    },
    setMode: (m) => {
      mode = m;
    },
    createPlan,
    plans: () => copy(state.plans),
    checkout,
    renew,
    failPayment,
    updateSubscription,
    cancel,
    refund,
    subscriptions: () => copy(state.subscriptions),
    payments: (id) => copy(state.payments.filter((p) => id === undefined || p.subscription_id === id)),
    modifiers: (id) => copy(state.modifiers.filter((m) => id === undefined || m.subscription_id === id)),
    coupons: () => copy(state.coupons),
    callCounts: () => ({ ...counts }),
    sign: (fields) => signPaddleFields(fields, state.privateKeyPem),
    stop: async () => {
      stopped = true;
      for (const abort of inFlight) abort.abort();
      await deliveryChain;
      await new Promise<void>((done, failClose) => {
        server.close((err) => (err ? failClose(err) : done()));
        // Keep-alive sockets (fetch keeps them) would otherwise hold close() open.
        server.closeAllConnections();
      });
    },
  };
}
