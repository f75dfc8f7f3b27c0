// The Paddle Classic emulator's ledger: plans, subscriptions, payments, modifiers, coupons and orders, the
// key pair that signs alerts, and the rules that change them. Each simulation (checkout, renewal, failed
// payment, update, cancellation, refund) returns the signed alerts Paddle would send, in order; the server
// (./server.ts) delivers them. The vendor API's methods and the checkout API's order lookup answer here in
// Paddle's shapes (docs/providers/paddle-classic.md); the server only routes, authenticates and counts.
// With a data file, every change is saved to it (the state and key pair survive a restart).
//
// Deliberate simplifications: no taxes (payment_tax "0.00"), no currency conversion (balance_* are in
// the payment's own currency), modifiers are recorded but never change a payment amount (a renewal
// marks the subscription's pending modifiers billed, after which deleting one answers error 124), and
// every step happens "now" (a renewal is paid today and moves next_bill_date on by one interval).
// Coupons (/2.1/product/create_coupon) discount the checkout's first payment (and renewals when
// recurring) and appear in the payment alerts' `coupon` field and the order's `coupon_code`.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
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
  next: {
    plan: number;
    subscription: number;
    payment: number;
    user: number;
    modifier: number;
    alert: number;
    order: number;
    checkout: number;
  };
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
    ],
    subscriptions: [],
    payments: [],
    modifiers: [],
    coupons: [],
    orders: [],
    users: {},
    extras: {},
    next: {
      plan: 9003,
      subscription: 70001,
      payment: 80001,
      user: 60001,
      modifier: 50001,
      alert: 1000000001,
      order: 400001,
      checkout: 1100001,
    },
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
  writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
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
  const months = m - 1 + count * (unit === 'year' ? 12 : 1);
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
// The ledger

const copy = <T>(value: T): T => structuredClone(value);
const STATES: EmulatorSubscription['state'][] = ['active', 'trialing', 'past_due', 'paused', 'deleted'];
const BILLING_TYPES: EmulatorPlan['billing_type'][] = ['day', 'week', 'month', 'year'];

export interface LedgerOptions {
  /** JSON file persisting state + key pair across restarts; null/undefined = memory only. */
  dataFile?: string | null;
  /** Default 12345 (or the data file's). */
  vendorId?: number;
  /** Default random hex (or the data file's). */
  authCode?: string;
}

/** A customer's checkout of a plan. */
export interface CheckoutInput {
  plan_id: number;
  email: string;
  currency?: string;
  quantity?: number;
  passthrough?: string;
  /** The order answers "processing" for this long after the checkout (default 0). */
  processingMs?: number;
  /** A coupon code (created through /2.1/product/create_coupon): discounts the first payment. */
  coupon?: string;
}

/** An alert's fields, every value a string, signed (p_signature included). */
export type SignedAlert = Record<string, string>;

/** A vendor API method's parameters: the form (or JSON) body as a flat string map. */
export type VendorParams = Record<string, string>;

/** A vendor API answer: Paddle's error [code, message], or the `response` of a success. */
export type VendorResult = { error: [number, string] } | { response: unknown };

const fail = (code: number, message: string): VendorResult => ({ error: [code, message] });

/** An optional integer parameter: undefined when absent, null when present but not an integer. */
const intParam = (params: VendorParams, name: string): number | undefined | null => {
  const raw = params[name];
  if (raw === undefined || raw === '') return undefined;
  return /^\d+$/.test(raw) ? Number(raw) : null;
};
const invalid = (name: string) => fail(116, `The ${name} argument is invalid`);

export class Ledger {
  private readonly state: State;
  private readonly dataFile: string | null;

  constructor(options: LedgerOptions = {}) {
    this.dataFile = options.dataFile ?? null;
    const loaded = this.dataFile ? loadState(this.dataFile) : null;
    this.state = loaded ?? freshState(options.vendorId ?? 12345, options.authCode ?? randomBytes(16).toString('hex'));
    // Explicit options win over the file, so the service's configuration and the emulator always agree.
    if (options.vendorId !== undefined) this.state.vendorId = options.vendorId;
    if (options.authCode !== undefined) this.state.authCode = options.authCode;
    this.persist();
  }

  get vendorId(): number {
    return this.state.vendorId;
  }
  get authCode(): string {
    return this.state.authCode;
  }
  get publicKeyPem(): string {
    return this.state.publicKeyPem;
  }

  /** Saves the state to the data file (when there is one); every change calls it. */
  private persist(): void {
    if (this.dataFile) saveState(this.dataFile, this.state);
  }

  // --- reads (copies) ------------------------------------------------------------------------------

  plans(): EmulatorPlan[] {
    return copy(this.state.plans);
  }
  subscriptions(): EmulatorSubscription[] {
    return copy(this.state.subscriptions);
  }
  payments(subscriptionId?: number): EmulatorPayment[] {
    return copy(this.state.payments.filter((p) => subscriptionId === undefined || p.subscription_id === subscriptionId));
  }
  modifiers(subscriptionId?: number): EmulatorModifier[] {
    return copy(this.state.modifiers.filter((m) => subscriptionId === undefined || m.subscription_id === subscriptionId));
  }
  coupons(): EmulatorCoupon[] {
    return copy(this.state.coupons);
  }

  /** Signs arbitrary alert fields with the emulator's private key. */
  sign(fields: Record<string, string>): SignedAlert {
    return signPaddleFields(fields, this.state.privateKeyPem);
  }

  // --- lookups -----------------------------------------------------------------------------------

  private plan(id: number): EmulatorPlan {
    const found = this.state.plans.find((p) => p.id === id);
    if (!found) throw new EmulatorError(`unknown plan ${id}`, 404);
    return found;
  }
  private subscription(id: number): EmulatorSubscription {
    const found = this.state.subscriptions.find((s) => s.subscription_id === id);
    if (!found) throw new EmulatorError(`unknown subscription ${id}`, 404);
    return found;
  }
  private live(id: number): EmulatorSubscription {
    const sub = this.subscription(id);
    if (sub.state === 'deleted') throw new EmulatorError(`subscription ${id} is cancelled (deleted)`, 409);
    return sub;
  }
  private extra(id: number): SubscriptionExtra {
    return (this.state.extras[String(id)] ??= { attempts: 0 });
  }
  private totalCents(sub: EmulatorSubscription): number {
    return (toCents(sub.unit_price) ?? 0) * sub.quantity;
  }
  private paidCount(id: number): number {
    return this.state.payments.filter((p) => p.subscription_id === id && p.is_paid === 1).length;
  }
  private updateUrl(id: number): string {
    return `https://sandbox-subscription-management.paddle.com/subscription/${id}/hash/${token('u', this.state.vendorId, id)}/update`;
  }
  private cancelUrl(id: number): string {
    return `https://sandbox-subscription-management.paddle.com/subscription/${id}/hash/${token('c', this.state.vendorId, id)}/cancel`;
  }
  private receiptUrl(orderId: string): string {
    return `https://sandbox-my.paddle.com/receipt/${orderId}/${token('r', this.state.vendorId, orderId)}`;
  }

  private newOrderId(): { number: number; id: string } {
    const n = this.state.next.order++;
    return { number: n, id: `${n}-${3600000 + n}` };
  }

  private findCoupon(code: string): EmulatorCoupon | undefined {
    return this.state.coupons.find((c) => c.coupon_code.toUpperCase() === code.trim().toUpperCase());
  }

  // --- alerts ----------------------------------------------------------------------------------

  /** Strictly increasing alert_id, non-decreasing event_time, every value a string, then signed. */
  private buildAlert(name: string, fields: Record<string, string | number>): SignedAlert {
    const now = dateTimeOf(new Date());
    // biome-ignore lint/complexity/useMathMinMax: event times are date strings, compared as text.
    this.state.lastEventTime = now > this.state.lastEventTime ? now : this.state.lastEventTime;
    const all: Record<string, string> = {
      alert_id: String(this.state.next.alert++),
      alert_name: name,
      event_time: this.state.lastEventTime,
    };
    for (const [k, v] of Object.entries(fields)) all[k] = String(v);
    return signPaddleFields(all, this.state.privateKeyPem);
  }

  private common(sub: EmulatorSubscription) {
    return {
      checkout_id: sub.checkout_id,
      currency: sub.currency,
      email: sub.user_email,
      marketing_consent: '0',
      passthrough: sub.passthrough,
      subscription_id: sub.subscription_id,
      subscription_plan_id: sub.plan_id,
      user_id: sub.user_id,
    };
  }

  /** The amount after a coupon's discount (never below zero). */
  private discounted(cents: number, coupon: EmulatorCoupon | undefined): number {
    if (!coupon) return cents;
    if (coupon.discount_type === 'percentage') return Math.max(0, Math.round((cents * (100 - Number(coupon.discount_amount))) / 100));
    return Math.max(0, cents - (toCents(coupon.discount_amount) ?? 0));
  }

  private paymentSucceeded(sub: EmulatorSubscription, payment: EmulatorPayment, coupon = ''): SignedAlert {
    const gross = toCents(payment.amount) ?? 0;
    const fee = feeOf(gross);
    const instalments = this.paidCount(sub.subscription_id);
    return this.buildAlert('subscription_payment_succeeded', {
      ...this.common(sub),
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
      next_payment_amount: money(this.totalCents(sub)),
      order_id: payment.order_id,
      payment_method: 'card',
      payment_tax: '0.00',
      plan_name: this.plan(sub.plan_id).name,
      quantity: sub.quantity,
      receipt_url: this.receiptUrl(payment.order_id),
      sale_gross: money(gross),
      status: sub.state,
      subscription_payment_id: payment.id,
      unit_price: sub.unit_price,
    });
  }

  private changeFields(sub: EmulatorSubscription, before: EmulatorSubscription): SignedAlert {
    const pause = sub.state === 'paused' ? this.extra(sub.subscription_id) : undefined;
    return this.buildAlert('subscription_updated', {
      ...this.common(sub),
      cancel_url: this.cancelUrl(sub.subscription_id),
      update_url: this.updateUrl(sub.subscription_id),
      custom_data: '',
      linked_subscriptions: '',
      status: sub.state,
      next_bill_date: sub.next_bill_date ?? '',
      new_price: money(this.totalCents(sub)),
      new_quantity: sub.quantity,
      new_unit_price: sub.unit_price,
      old_price: money(this.totalCents(before)),
      old_quantity: before.quantity,
      old_unit_price: before.unit_price,
      old_next_bill_date: before.next_bill_date ?? '',
      old_status: before.state,
      old_subscription_plan_id: before.plan_id,
      ...(pause ? { paused_at: pause.paused_at ?? '', paused_from: pause.paused_from ?? '', paused_reason: 'voluntary' } : {}),
    });
  }

  // --- the money side ----------------------------------------------------------------------------

  createPlan(p: {
    name: string;
    billing_type: EmulatorPlan['billing_type'];
    billing_period?: number;
    trial_days?: number;
    prices: Record<string, string>;
  }): EmulatorPlan {
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
      id: this.state.next.plan++,
      name: p.name,
      billing_type: p.billing_type,
      billing_period: period,
      trial_days: trial,
      // A trial's checkout charges nothing; the first recurring price is due when the trial ends.
      initial_price: trial > 0 ? Object.fromEntries(Object.keys(prices).map((c) => [c, '0.00'])) : { ...prices },
      recurring_price: prices,
    };
    this.state.plans.push(created);
    this.persist();
    return copy(created);
  }

  /**
   * Creates subscription + first paid payment + order: alerts subscription_created then
   * subscription_payment_succeeded (if no trial). `processingMs`: the order answers "processing" for
   * this long after the checkout.
   */
  checkout(p: CheckoutInput): {
    checkout_id: string;
    subscription: EmulatorSubscription;
    payment: EmulatorPayment | null;
    alerts: SignedAlert[];
  } {
    const { state } = this;
    const chosen = this.plan(p.plan_id);
    if (typeof p.email !== 'string' || !/^[^@\s]+@[^@\s]+$/.test(p.email)) throw new EmulatorError(`bad email "${String(p.email)}"`);
    const currency = p.currency ?? ('USD' in chosen.recurring_price ? 'USD' : (Object.keys(chosen.recurring_price)[0] ?? 'USD'));
    const price = chosen.recurring_price[currency];
    if (price === undefined) throw new EmulatorError(`plan ${chosen.id} has no ${currency} price`);
    const quantity = p.quantity ?? 1;
    if (!Number.isInteger(quantity) || quantity < 1) throw new EmulatorError('quantity must be a positive integer');
    const processingMs = p.processingMs ?? 0;
    if (!Number.isFinite(processingMs) || processingMs < 0) throw new EmulatorError('processingMs must be >= 0');
    const coupon = p.coupon === undefined || p.coupon === '' ? undefined : this.findCoupon(p.coupon);
    if (p.coupon && !coupon) throw new EmulatorError(`unknown coupon "${p.coupon}"`, 404);
    if (coupon) {
      if (coupon.times_used >= coupon.allowed_uses) throw new EmulatorError(`coupon ${coupon.coupon_code} has been used up`, 409);
      if (coupon.expires !== null && coupon.expires <= dateOf(new Date()))
        throw new EmulatorError(`coupon ${coupon.coupon_code} has expired`, 409);
      if (coupon.discount_type === 'flat' && coupon.currency !== currency)
        throw new EmulatorError(`coupon ${coupon.coupon_code} is in ${coupon.currency ?? 'no currency'}, the checkout in ${currency}`, 409);
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
      next_bill_date: trialing
        ? addInterval(today, 'day', chosen.trial_days)
        : addInterval(today, chosen.billing_type, chosen.billing_period),
      last_payment: null,
      checkout_id: checkoutId,
      passthrough: p.passthrough ?? '',
      ...(coupon?.recurring ? { coupon: coupon.coupon_code } : {}),
    };
    state.subscriptions.push(sub);
    if (coupon) coupon.times_used += 1;
    const order = this.newOrderId();
    const charged = this.discounted((toCents(chosen.initial_price[currency] ?? price) ?? 0) * quantity, coupon);
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
      this.buildAlert('subscription_created', {
        ...this.common(sub),
        cancel_url: this.cancelUrl(sub.subscription_id),
        update_url: this.updateUrl(sub.subscription_id),
        custom_data: '',
        linked_subscriptions: '',
        next_bill_date: sub.next_bill_date ?? '',
        quantity,
        source: '',
        status: sub.state,
        unit_price: sub.unit_price,
      }),
    ];
    if (payment) alerts.push(this.paymentSucceeded(sub, payment, coupon?.coupon_code ?? ''));
    this.persist();
    return { checkout_id: checkoutId, subscription: copy(sub), payment: copy(payment), alerts };
  }

  /** Next paid payment (status active), next_bill_date moves on by one plan interval. */
  renew(id: number): { payment: EmulatorPayment; alerts: SignedAlert[] } {
    const { state } = this;
    const sub = this.live(id);
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
        amount: amountOf(this.discounted(this.totalCents(sub), sub.coupon ? this.findCoupon(sub.coupon) : undefined)),
        currency: sub.currency,
        payout_date: today,
        is_paid: 1,
        order_id: this.newOrderId().id,
      };
      state.payments.push(payment);
    }
    // This payment bills the subscription's pending modifiers: from now on they cannot be deleted.
    for (const m of state.modifiers) {
      if (m.subscription_id === id && m.billed_payment_id === undefined) m.billed_payment_id = payment.id;
    }
    const chosen = this.plan(sub.plan_id);
    sub.next_bill_date = addInterval(sub.next_bill_date ?? today, chosen.billing_type, chosen.billing_period);
    sub.state = 'active';
    sub.last_payment = { amount: payment.amount, currency: payment.currency, date: today };
    const ext = this.extra(id);
    ext.attempts = 0;
    delete ext.paused_at;
    delete ext.paused_from;
    const alerts = [this.paymentSucceeded(sub, payment, sub.coupon ?? '')];
    this.persist();
    return { payment: copy(payment), alerts };
  }

  /** subscription_payment_failed; the subscription becomes past_due. */
  failPayment(id: number): { alerts: SignedAlert[] } {
    const { state } = this;
    const sub = this.live(id);
    let payment = state.payments.find((p) => p.subscription_id === id && p.is_paid === 0);
    if (!payment) {
      payment = {
        id: state.next.payment++,
        subscription_id: id,
        amount: amountOf(this.totalCents(sub)),
        currency: sub.currency,
        payout_date: sub.next_bill_date ?? dateOf(new Date()),
        is_paid: 0,
        order_id: this.newOrderId().id,
      };
      state.payments.push(payment);
    }
    const ext = this.extra(id);
    ext.attempts += 1;
    sub.state = 'past_due';
    const alert = this.buildAlert('subscription_payment_failed', {
      ...this.common(sub),
      amount: money(toCents(payment.amount) ?? 0),
      attempt_number: ext.attempts,
      cancel_url: this.cancelUrl(id),
      update_url: this.updateUrl(id),
      instalments: this.paidCount(id) + 1,
      next_retry_date: addInterval(dateOf(new Date()), 'day', 3),
      order_id: payment.order_id,
      quantity: sub.quantity,
      status: sub.state,
      subscription_payment_id: payment.id,
      unit_price: sub.unit_price,
    });
    this.persist();
    return { alerts: [alert] };
  }

  /** subscription_updated with old_* / new_* fields. */
  updateSubscription(
    id: number,
    p: { plan_id?: number; state?: EmulatorSubscription['state'] },
  ): { subscription: EmulatorSubscription; alerts: SignedAlert[] } {
    const sub = this.live(id);
    if (p.state !== undefined && !STATES.includes(p.state)) throw new EmulatorError(`state must be one of ${STATES.join(', ')}`);
    if (p.state === 'deleted') throw new EmulatorError('use cancel to delete a subscription (Paddle sends subscription_cancelled)');
    const before = copy(sub);
    if (p.plan_id !== undefined) {
      const target = this.plan(p.plan_id);
      const price = target.recurring_price[sub.currency];
      if (price === undefined) throw new EmulatorError(`plan ${target.id} has no ${sub.currency} price`);
      sub.plan_id = target.id;
      sub.unit_price = price;
    }
    if (p.state !== undefined) {
      sub.state = p.state;
      const ext = this.extra(id);
      if (p.state === 'paused' && before.state !== 'paused') {
        ext.paused_at = dateTimeOf(new Date());
        ext.paused_from = ext.paused_at;
      } else if (p.state !== 'paused') {
        delete ext.paused_at;
        delete ext.paused_from;
      }
    }
    const alerts = [this.changeFields(sub, before)];
    this.persist();
    return { subscription: copy(sub), alerts };
  }

  /** subscription_cancelled; state deleted. */
  cancel(id: number): { subscription: EmulatorSubscription; alerts: SignedAlert[] } {
    const sub = this.live(id);
    // Access lasts until the end of the period already paid for (or of the trial).
    const effective = sub.next_bill_date ?? dateOf(new Date());
    sub.state = 'deleted';
    sub.next_bill_date = null;
    const alert = this.buildAlert('subscription_cancelled', {
      ...this.common(sub),
      cancellation_effective_date: effective,
      custom_data: '',
      linked_subscriptions: '',
      quantity: sub.quantity,
      status: 'deleted',
      unit_price: sub.unit_price,
    });
    this.persist();
    return { subscription: copy(sub), alerts: [alert] };
  }

  /** subscription_payment_refunded, refund_type full or partial. */
  refund(paymentId: number, p: { amount?: string } = {}): { payment: EmulatorPayment; alerts: SignedAlert[] } {
    const { state } = this;
    const payment = state.payments.find((x) => x.id === paymentId);
    if (!payment) throw new EmulatorError(`unknown payment ${paymentId}`, 404);
    if (payment.is_paid !== 1) throw new EmulatorError(`payment ${paymentId} is not paid`, 409);
    const gross = toCents(payment.amount) ?? 0;
    const already = toCents(payment.refunded_amount ?? 0) ?? 0;
    const remaining = gross - already;
    const amount = p.amount === undefined ? remaining : toCents(p.amount);
    if (amount === null || amount <= 0) throw new EmulatorError(`bad refund amount "${String(p.amount)}"`);
    if (amount > remaining)
      throw new EmulatorError(`refund ${money(amount)} exceeds the ${money(remaining)} left on payment ${paymentId}`, 409);
    const sub = this.subscription(payment.subscription_id);
    const feeRefund = gross === 0 ? 0 : Math.round((feeOf(gross) * amount) / gross);
    payment.refunded_amount = amountOf(already + amount);
    const instalment =
      state.payments
        .filter((x) => x.subscription_id === sub.subscription_id && x.is_paid === 1)
        .sort((a, b) => a.id - b.id)
        .findIndex((x) => x.id === payment.id) + 1;
    const alert = this.buildAlert('subscription_payment_refunded', {
      ...this.common(sub),
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
    this.persist();
    return { payment: copy(payment), alerts: [alert] };
  }

  // --- the vendor and checkout APIs --------------------------------------------------------------

  /** The vendor API's methods by path below /vendors/api (`/2.0/subscription/users`…). */
  private readonly vendorRoutes: Record<string, (params: VendorParams) => VendorResult> = {
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
      const rows = this.state.subscriptions
        .filter((s) => subscriptionId === undefined || s.subscription_id === subscriptionId)
        .filter((s) => planId === undefined || s.plan_id === planId)
        .filter((s) => (wanted ? s.state === wanted : s.state !== 'deleted'))
        .sort((a, b) => a.subscription_id - b.subscription_id)
        .slice(start, start + size)
        .map((s) => {
          const ext = this.state.extras[String(s.subscription_id)];
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
              ? { next_payment: { amount: amountOf(this.totalCents(s)), currency: s.currency, date: s.next_bill_date } }
              : {}),
            update_url: this.updateUrl(s.subscription_id),
            cancel_url: this.cancelUrl(s.subscription_id),
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
      const planOf = new Map(this.state.subscriptions.map((s) => [s.subscription_id, s.plan_id]));
      const rows = this.state.payments
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
          receipt_url: p.is_paid === 1 ? this.receiptUrl(p.order_id) : '',
        }));
      return { response: rows };
    },
    '/2.0/subscription/plans': (params) => {
      const wanted = intParam(params, 'plan');
      if (wanted === null) return invalid('plan');
      return { response: copy(this.state.plans.filter((p) => wanted === undefined || p.id === wanted)) };
    },
    '/2.0/subscription/modifiers/create': (params) => {
      const subscriptionId = intParam(params, 'subscription_id');
      if (subscriptionId === undefined) return fail(116, 'The subscription_id argument is required');
      if (subscriptionId === null) return invalid('subscription_id');
      const sub = this.state.subscriptions.find((s) => s.subscription_id === subscriptionId);
      if (!sub) return fail(119, 'The subscription was not found');
      const rawAmount = params.modifier_amount;
      if (rawAmount === undefined || rawAmount === '') return fail(116, 'The modifier_amount argument is required');
      const amount = Number(rawAmount);
      if (!/^-?\d+(\.\d+)?$/.test(rawAmount.trim()) || !Number.isFinite(amount)) return invalid('modifier_amount');
      const rawRecurring = (params.modifier_recurring ?? 'true').toLowerCase();
      if (!['true', 'false', '1', '0', ''].includes(rawRecurring)) return invalid('modifier_recurring');
      const modifier: EmulatorModifier = {
        modifier_id: this.state.next.modifier++,
        subscription_id: sub.subscription_id,
        amount: amount.toFixed(3),
        currency: sub.currency,
        is_recurring: rawRecurring !== 'false' && rawRecurring !== '0',
        description: params.modifier_description ?? '',
      };
      this.state.modifiers.push(modifier);
      this.persist();
      return { response: { subscription_id: sub.subscription_id, modifier_id: modifier.modifier_id } };
    },
    '/2.0/subscription/modifiers/delete': (params) => {
      const modifierId = intParam(params, 'modifier_id');
      if (modifierId === undefined) return fail(116, 'The modifier_id argument is required');
      if (modifierId === null) return invalid('modifier_id');
      const index = this.state.modifiers.findIndex((m) => m.modifier_id === modifierId);
      const found = this.state.modifiers[index];
      if (!found) return fail(123, 'The modifier was not found');
      if (found.billed_payment_id !== undefined) return fail(124, 'Paid modifiers cannot be altered or deleted');
      this.state.modifiers.splice(index, 1);
      this.persist();
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
      if (this.findCoupon(code)) return fail(132, 'The coupon code already exists');
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
      this.state.coupons.push(coupon);
      this.persist();
      return { response: { coupon_codes: [code] } };
    },
    '/2.0/subscription/modifiers': (params) => {
      const subscriptionId = intParam(params, 'subscription_id');
      const planId = intParam(params, 'plan_id');
      if (subscriptionId === null) return invalid('subscription_id');
      if (planId === null) return invalid('plan_id');
      const planOf = new Map(this.state.subscriptions.map((s) => [s.subscription_id, s.plan_id]));
      return {
        response: this.state.modifiers
          .filter((m) => subscriptionId === undefined || m.subscription_id === subscriptionId)
          .filter((m) => planId === undefined || planOf.get(m.subscription_id) === planId)
          .map(copy),
      };
    },
  };

  /** The vendor API method at `path` (below /vendors/api), or undefined for an unknown one. */
  vendorMethod(path: string): ((params: VendorParams) => VendorResult) | undefined {
    return this.vendorRoutes[path];
  }

  /** The checkout API's order lookup (/checkout/api/1.0/order?checkout_id=…), in Paddle's shape. */
  order(checkoutId: string | null): unknown {
    const order = checkoutId ? this.state.orders.find((o) => o.checkout_id === checkoutId) : undefined;
    if (!order) return { error: { code: 101, message: 'Could not find a checkout matching this ID' } };
    const checkoutInfo = { checkout_id: order.checkout_id, image_url: null, title: order.title };
    if (Date.now() < order.processing_until) return { state: 'processing', checkout: checkoutInfo };
    const sub = this.state.subscriptions.find((s) => s.subscription_id === order.subscription_id);
    const payment = this.state.payments.find((p) => p.id === order.payment_id);
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
        receipt_url: this.receiptUrl(payment?.order_id ?? String(order.order_number)),
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
  }
}
