// The Stripe emulator's ledger: products, prices, customers (with per-currency credit balances and their
// balance transactions), subscriptions, invoices, payment intents, charges, refunds, disputes, invoice
// payments, Checkout Sessions, coupons and promotion codes in memory, in the wire shapes of ../wire.ts
// (Stripe units: cents, yen for zero-decimal currencies), and the simulations that change them. Each
// simulation returns the events Stripe would send, in order; the server signs and delivers them. No I/O
// here; the clock is injected.
//
// Simplifications (deliberate):
// - Time: every step happens "now". A renewal is the period end arriving: it invoices now and the new
//   period starts now. Invoices are finalized and paid (or fail) in the same step.
// - One exclusive tax rate for everything (default 0). No proration, no currency conversion.
// - The customer balance (credit) in the invoice's currency is applied when an invoice is finalized, also
//   when its payment then fails, as Stripe does: that is when a credit is consumed. An applied amount is
//   an `applied_to_invoice` balance transaction.
// - A coupon `forever` stays on the subscription (every renewal); `once` applies to the first invoice.
// - Refunds succeed at once; a charge's refunds list is not in its events (as since 2022-11-15).
// - Cards: a checkout pays with a card number (`card`, default: one of the customer's own, so two customers
//   never share a card unless a test says so). Its payment method (`pm_…`) is the subscription's
//   `default_payment_method` and pays its charges; `card.fingerprint` depends only on the number, as
//   Stripe's does within one account. A customer is found by the checkout's email, else created.
import { createHash, randomBytes } from 'node:crypto';
import {
  STRIPE_API_VERSION,
  type Charge,
  type CheckoutSession,
  type Coupon,
  type Customer,
  type CustomerBalanceTransaction,
  type Dispute,
  type Invoice,
  type InvoicePayment,
  type List,
  type Metadata,
  type PaymentMethod,
  type Price,
  type Product,
  type PromotionCode,
  type Recurring,
  type Refund,
  type StripeEvent,
  type Subscription,
  type SubscriptionItem,
} from '../../../../shared/providers/stripe/wire';

/** A bad simulation or API call: HTTP status, Stripe's error type and code, and the param at fault. */
export class LedgerError extends Error {
  override readonly name = 'LedgerError';
  constructor(
    readonly status: 400 | 402 | 404 | 409,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    readonly type: 'invalid_request_error' | 'card_error' | 'idempotency_error' = 'invalid_request_error',
  ) {
    super(message);
  }
}

export interface LedgerOptions {
  now?: () => number;
  /** Exclusive tax in percent on every invoice; default 0. */
  taxRatePercent?: number;
}

const ALNUM = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const copy = <T>(v: T): T => structuredClone(v);
/** -n without a negative zero (JSON would still say 0, but the ledger compares). */
const neg = (n: number): number => (n === 0 ? 0 : -n);
const missing = (what: string, id: string, param = 'id') => new LedgerError(404, 'resource_missing', `No such ${what}: '${id}'`, param);

function addInterval(seconds: number, r: Recurring, times = 1): number {
  const d = new Date(seconds * 1000);
  const n = r.interval_count * times;
  if (r.interval === 'day') d.setUTCDate(d.getUTCDate() + n);
  else if (r.interval === 'week') d.setUTCDate(d.getUTCDate() + 7 * n);
  else if (r.interval === 'month') d.setUTCMonth(d.getUTCMonth() + n);
  else d.setUTCFullYear(d.getUTCFullYear() + n);
  return Math.floor(d.getTime() / 1000);
}

export function list<T>(data: T[], hasMore: boolean, url: string): List<T> {
  return { object: 'list', data, has_more: hasMore, url };
}

export class Ledger {
  readonly products = new Map<string, Product>();
  readonly prices = new Map<string, Price>();
  readonly customers = new Map<string, Customer>();
  readonly balanceTransactions = new Map<string, CustomerBalanceTransaction[]>();
  readonly subscriptions = new Map<string, Subscription>();
  readonly invoices = new Map<string, Invoice>();
  readonly charges = new Map<string, Charge>();
  readonly refunds = new Map<string, Refund>();
  readonly disputes = new Map<string, Dispute>();
  readonly invoicePayments = new Map<string, InvoicePayment>();
  readonly sessions = new Map<string, CheckoutSession>();
  readonly coupons = new Map<string, Coupon>();
  readonly promotionCodes = new Map<string, PromotionCode>();
  readonly paymentMethods = new Map<string, PaymentMethod>();
  /** The coupon on a subscription that applies to every renewal (`forever`). */
  private readonly subscriptionCoupons = new Map<string, string>();
  private readonly now: () => number;
  private readonly taxRate: number;

  constructor(options: LedgerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.taxRate = (options.taxRatePercent ?? 0) / 100;
    const pro = this.addProduct('Pro');
    this.addPrice(pro.id, 1000, 'usd', { interval: 'month', interval_count: 1 }, 'Pro monthly');
    this.addPrice(pro.id, 10000, 'usd', { interval: 'year', interval_count: 1 }, 'Pro yearly');
    this.addPrice(pro.id, 900, 'eur', { interval: 'month', interval_count: 1 }, 'Pro monthly (EUR)');
    this.addPrice(pro.id, 1200, 'jpy', { interval: 'month', interval_count: 1 }, 'Pro monthly (JPY)');
  }

  seconds(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Stripe-like ids: prefix + 24 letters and digits. */
  id(prefix: string): string {
    let s = '';
    for (const b of randomBytes(24)) s += ALNUM[b % 62];
    return `${prefix}_${s}`;
  }

  private event<T>(type: string, object: T, previous?: Record<string, unknown>): StripeEvent<T> {
    return {
      id: this.id('evt'),
      object: 'event',
      api_version: STRIPE_API_VERSION,
      created: this.seconds(),
      data: { object: copy(object), ...(previous ? { previous_attributes: previous } : {}) },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type,
    };
  }

  addProduct(name: string): Product {
    const at = this.seconds();
    const p: Product = {
      id: this.id('prod'),
      object: 'product',
      active: true,
      name,
      description: null,
      created: at,
      updated: at,
      livemode: false,
      metadata: {},
      type: 'service',
    };
    this.products.set(p.id, p);
    return p;
  }

  addPrice(
    productId: string,
    unitAmount: number,
    currency: string,
    recurring: Omit<Recurring, 'usage_type'>,
    nickname: string | null = null,
  ): Price {
    const p: Price = {
      id: this.id('price'),
      object: 'price',
      active: true,
      billing_scheme: 'per_unit',
      created: this.seconds(),
      currency,
      livemode: false,
      lookup_key: null,
      metadata: {},
      nickname,
      product: productId,
      recurring: { ...recurring, usage_type: 'licensed', meter: null, trial_period_days: null },
      tax_behavior: 'exclusive',
      type: 'recurring',
      unit_amount: unitAmount,
      unit_amount_decimal: String(unitAmount),
    };
    this.prices.set(p.id, p);
    return p;
  }

  /** The first price in `currency` (default usd, monthly). */
  defaultPrice(currency = 'usd'): Price {
    const found = [...this.prices.values()].find((p) => p.currency === currency.toLowerCase());
    if (!found) throw new LedgerError(400, 'parameter_invalid', `no price in ${currency}`, 'currency');
    return found;
  }

  // --- lookups ----------------------------------------------------------------------------------------

  subscription(id: string): Subscription {
    const s = this.subscriptions.get(id);
    if (!s) throw missing('subscription', id);
    return s;
  }

  customer(id: string): Customer {
    const c = this.customers.get(id);
    if (!c) throw missing('customer', id);
    return c;
  }

  invoice(id: string): Invoice {
    const i = this.invoices.get(id);
    if (!i) throw missing('invoice', id);
    return i;
  }

  charge(id: string): Charge {
    const c = this.charges.get(id);
    if (!c) throw missing('charge', id);
    return c;
  }

  /** The charge that paid an invoice (through its invoice payment). */
  chargeOfInvoice(invoiceId: string): Charge {
    const payment = [...this.invoicePayments.values()].find((p) => p.invoice === invoiceId && p.status === 'paid');
    const charge = payment ? [...this.charges.values()].find((c) => c.payment_intent === payment.payment.payment_intent) : undefined;
    if (!charge) throw new LedgerError(400, 'invoice_no_charge', `invoice ${invoiceId} was not paid by a charge`, 'invoice');
    return charge;
  }

  promotionCodeByCode(code: string, activeOnly = true): PromotionCode | undefined {
    return [...this.promotionCodes.values()].find((p) => p.code.toUpperCase() === code.toUpperCase() && (!activeOnly || p.active));
  }

  /** The customer's credit left in `currency` (positive = credit), as invoice_credit_balance says. */
  creditLeft(customerId: string, currency: string): number {
    return this.customer(customerId).invoice_credit_balance?.[currency.toLowerCase()] ?? 0;
  }

  /** A card's fingerprint: the same number, the same fingerprint (16 letters and digits). */
  static cardFingerprint(number: string): string {
    let s = '';
    for (const b of createHash('sha256').update(`emulated card ${number}`).digest().subarray(0, 16)) s += ALNUM[b % 62];
    return s;
  }

  /** The customer's payment method for this card number (created once per customer and number). */
  private paymentMethodFor(customer: Customer, card: string | undefined): PaymentMethod {
    const number = card ?? `default card of ${customer.id}`;
    if (card !== undefined && !/^\d{12,19}$/.test(card))
      throw new LedgerError(402, 'invalid_number', 'Your card number is incorrect.', 'card[number]', 'card_error');
    const fingerprint = Ledger.cardFingerprint(number);
    const existing = [...this.paymentMethods.values()].find((m) => m.customer === customer.id && m.card.fingerprint === fingerprint);
    if (existing) return existing;
    const pm: PaymentMethod = {
      id: this.id('pm'),
      object: 'payment_method',
      created: this.seconds(),
      customer: customer.id,
      livemode: false,
      type: 'card',
      card: {
        brand: 'visa',
        exp_month: 12,
        exp_year: 2034,
        fingerprint,
        last4: card ? card.slice(-4) : '4242',
        funding: 'credit',
        country: 'US',
      },
    };
    this.paymentMethods.set(pm.id, pm);
    return pm;
  }

  paymentMethod(id: string): PaymentMethod {
    const pm = this.paymentMethods.get(id);
    if (!pm) throw missing('payment_method', id);
    return pm;
  }

  private customerFor(email: string): Customer {
    const existing = [...this.customers.values()].find((c) => c.email === email);
    if (existing) return existing;
    const c: Customer = {
      id: this.id('cus'),
      object: 'customer',
      balance: 0,
      created: this.seconds(),
      currency: null,
      description: null,
      email,
      invoice_credit_balance: {},
      livemode: false,
      metadata: {},
      name: null,
    };
    this.customers.set(c.id, c);
    this.balanceTransactions.set(c.id, []);
    return c;
  }

  // --- money ------------------------------------------------------------------------------------------

  /** Adds a balance transaction (customer sign: negative = credit) and moves the customer's balances. */
  private balanceTransaction(
    customer: Customer,
    p: {
      amount: number;
      currency: string;
      type: CustomerBalanceTransaction['type'];
      description?: string | null;
      metadata?: Metadata | null;
      invoice?: string | null;
    },
  ): CustomerBalanceTransaction {
    const currency = p.currency.toLowerCase();
    customer.currency ??= currency;
    const credits = (customer.invoice_credit_balance ??= {});
    const ending = neg(credits[currency] ?? 0) + p.amount;
    credits[currency] = neg(ending);
    if (customer.currency === currency) customer.balance = ending;
    const t: CustomerBalanceTransaction = {
      id: this.id('cbtxn'),
      object: 'customer_balance_transaction',
      amount: p.amount,
      checkout_session: null,
      created: this.seconds(),
      credit_note: null,
      currency,
      customer: customer.id,
      description: p.description ?? null,
      ending_balance: ending,
      invoice: p.invoice ?? null,
      livemode: false,
      metadata: p.metadata ?? {},
      type: p.type,
    };
    (this.balanceTransactions.get(customer.id) as CustomerBalanceTransaction[]).unshift(t);
    return t;
  }

  private discountOff(subtotal: number, coupon: Coupon | null): number {
    if (!coupon) return 0;
    if (coupon.percent_off !== null) return Math.round((subtotal * coupon.percent_off) / 100);
    return Math.min(subtotal, coupon.amount_off ?? 0);
  }

  /**
   * Finalizes an invoice for the subscription's current items (the customer balance in its currency is
   * applied here) and tries to pay it: paid (a payment intent, a charge, an invoice payment) or open.
   */
  private invoiceFor(
    sub: Subscription,
    reason: NonNullable<Invoice['billing_reason']>,
    coupon: Coupon | null,
    pay: boolean,
  ): { invoice: Invoice; charge: Charge | null } {
    const at = Math.max(this.seconds(), ...sub.items.data.map((i) => i.current_period_start));
    const customer = this.customer(sub.customer as string);
    const subtotal = sub.items.data.reduce((a, i) => a + (i.price.unit_amount ?? 0) * (i.quantity ?? 1), 0);
    const off = this.discountOff(subtotal, coupon);
    const tax = Math.round((subtotal - off) * this.taxRate);
    const total = subtotal - off + tax;
    const credit = Math.max(0, this.creditLeft(customer.id, sub.currency));
    const applied = Math.min(credit, total);
    const id = this.id('in');
    const first = sub.items.data[0] as SubscriptionItem;
    const invoice: Invoice = {
      id,
      object: 'invoice',
      amount_due: total - applied,
      amount_paid: 0,
      amount_remaining: total - applied,
      attempt_count: 0,
      attempted: false,
      billing_reason: reason,
      collection_method: 'charge_automatically',
      created: at,
      currency: sub.currency,
      customer: customer.id,
      customer_email: customer.email,
      discounts: coupon ? [this.id('di')] : [],
      ending_balance: neg(credit - applied),
      lines: list(
        sub.items.data.map((i) => ({
          id: this.id('il'),
          object: 'line_item' as const,
          amount: (i.price.unit_amount ?? 0) * (i.quantity ?? 1),
          currency: sub.currency,
          description: `${i.quantity ?? 1} × ${this.products.get(i.price.product as string)?.name ?? 'item'}`,
          period: { start: i.current_period_start, end: i.current_period_end },
          pricing: {
            type: 'price_details' as const,
            price_details: { price: i.price.id, product: i.price.product as string },
            unit_amount_decimal: i.price.unit_amount_decimal,
          },
          quantity: i.quantity ?? 1,
        })),
        false,
        `/v1/invoices/${id}/lines`,
      ),
      livemode: false,
      metadata: {},
      parent: {
        type: 'subscription_details',
        quote_details: null,
        subscription_details: { metadata: copy(sub.metadata), subscription: sub.id },
      },
      period_end: first.current_period_end,
      period_start: first.current_period_start,
      starting_balance: neg(credit),
      status: 'open',
      status_transitions: { finalized_at: at, marked_uncollectible_at: null, paid_at: null, voided_at: null },
      subtotal,
      subtotal_excluding_tax: subtotal,
      total,
      total_discount_amounts: coupon ? [{ amount: off, discount: 'di_' }] : [],
      total_excluding_tax: subtotal - off,
      total_taxes:
        tax > 0
          ? [
              {
                amount: tax,
                tax_behavior: 'exclusive',
                taxability_reason: 'standard_rated',
                taxable_amount: subtotal - off,
                type: 'tax_rate_details',
                tax_rate_details: { tax_rate: 'txr_emulated' },
              },
            ]
          : [],
    };
    if (invoice.total_discount_amounts?.[0]) invoice.total_discount_amounts[0].discount = invoice.discounts[0] as string;
    this.invoices.set(id, invoice);
    if (applied > 0)
      this.balanceTransaction(customer, { amount: applied, currency: sub.currency, type: 'applied_to_invoice', invoice: id });

    let charge: Charge | null = null;
    if (invoice.amount_due === 0) {
      this.markPaid(invoice, 0);
    } else {
      invoice.attempted = true;
      invoice.attempt_count = 1;
      const pi = this.id('pi');
      charge = {
        id: this.id('ch'),
        object: 'charge',
        amount: invoice.amount_due,
        amount_captured: pay ? invoice.amount_due : 0,
        amount_refunded: 0,
        balance_transaction: pay ? this.id('txn') : null,
        captured: pay,
        created: at,
        currency: sub.currency,
        customer: customer.id,
        description: reason === 'subscription_create' ? 'Subscription creation' : 'Subscription update',
        disputed: false,
        livemode: false,
        metadata: {},
        paid: pay,
        payment_intent: pi,
        payment_method: typeof sub.default_payment_method === 'string' ? sub.default_payment_method : null,
        payment_method_details:
          typeof sub.default_payment_method === 'string'
            ? (() => {
                const card = this.paymentMethod(sub.default_payment_method).card;
                return { type: 'card' as const, card: { brand: card.brand, fingerprint: card.fingerprint, last4: card.last4 } };
              })()
            : null,
        refunded: false,
        status: pay ? 'succeeded' : 'failed',
      };
      this.charges.set(charge.id, charge);
      const payment: InvoicePayment = {
        id: this.id('inpay'),
        object: 'invoice_payment',
        amount_paid: pay ? invoice.amount_due : null,
        amount_requested: invoice.amount_due,
        created: at,
        currency: sub.currency,
        invoice: id,
        is_default: true,
        livemode: false,
        payment: { type: 'payment_intent', payment_intent: pi },
        status: pay ? 'paid' : 'open',
        status_transitions: { canceled_at: null, paid_at: pay ? at : null },
      };
      this.invoicePayments.set(payment.id, payment);
      if (pay) this.markPaid(invoice, invoice.amount_due);
    }
    return { invoice, charge };
  }

  private markPaid(invoice: Invoice, amount: number): void {
    invoice.amount_paid = amount;
    invoice.amount_remaining = 0;
    invoice.status = 'paid';
    invoice.status_transitions.paid_at = Math.max(this.seconds(), invoice.status_transitions.finalized_at ?? 0);
  }

  private redeem(promo: PromotionCode | null, coupon: Coupon | null): void {
    if (coupon) coupon.times_redeemed += 1;
    if (coupon && coupon.max_redemptions !== null && coupon.times_redeemed >= coupon.max_redemptions) coupon.valid = false;
    if (promo) {
      promo.times_redeemed += 1;
      if (promo.max_redemptions !== null && promo.times_redeemed >= promo.max_redemptions) promo.active = false;
    }
  }

  // --- simulations --------------------------------------------------------------------------------------

  /**
   * A Checkout Session in subscription mode, completed: the customer (found by email or created), the
   * subscription (with `subscription_data.metadata`), its first invoice paid (with the promotion code's
   * coupon), and the session (client_reference_id, metadata, discounts). Sends
   * customer.subscription.created, invoice.paid, checkout.session.completed.
   */
  checkout(p: {
    email: string;
    priceId?: string;
    currency?: string;
    quantity?: number;
    clientReferenceId?: string | null;
    metadata?: Metadata;
    subscriptionMetadata?: Metadata;
    promotionCode?: string;
    /** The card number paid with (12 to 19 digits); default: the customer's own card. */
    card?: string;
  }): { session: CheckoutSession; subscription: Subscription; invoice: Invoice; charge: Charge | null; events: StripeEvent[] } {
    if (!/^[^@\s]+@[^@\s]+$/.test(p.email)) throw new LedgerError(400, 'email_invalid', 'Invalid email address', 'customer_email');
    const price = p.priceId ? this.prices.get(p.priceId) : this.defaultPrice(p.currency ?? 'usd');
    if (!price) throw missing('price', p.priceId as string, 'line_items[0][price]');
    const quantity = p.quantity ?? 1;
    if (!Number.isInteger(quantity) || quantity < 1)
      throw new LedgerError(400, 'parameter_invalid_integer', 'quantity must be a positive integer', 'line_items[0][quantity]');
    if (p.clientReferenceId != null && (p.clientReferenceId.length > 200 || p.clientReferenceId === '')) {
      throw new LedgerError(400, 'parameter_invalid_string', 'client_reference_id must be 1 to 200 characters', 'client_reference_id');
    }
    const customer = this.customerFor(p.email);
    const paymentMethod = this.paymentMethodFor(customer, p.card);
    let promo: PromotionCode | null = null;
    let coupon: Coupon | null = null;
    if (p.promotionCode) {
      promo = this.promotionCodeByCode(p.promotionCode) ?? null;
      if (!promo)
        throw new LedgerError(
          400,
          'promotion_code_invalid',
          `This promotion code is invalid: ${p.promotionCode}`,
          'discounts[0][promotion_code]',
        );
      coupon = this.coupons.get(promo.promotion.coupon as string) ?? null;
      if (!coupon?.valid) throw new LedgerError(400, 'coupon_expired', 'The coupon is no longer valid', 'discounts[0][promotion_code]');
      if (coupon.amount_off !== null && coupon.currency !== price.currency)
        throw new LedgerError(
          400,
          'promotion_code_invalid',
          'The promotion code does not apply to this currency',
          'discounts[0][promotion_code]',
        );
      const paidBefore = [...this.invoices.values()].some((i) => i.customer === customer.id && i.status === 'paid' && i.amount_paid > 0);
      if (promo.restrictions.first_time_transaction && paidBefore) {
        throw new LedgerError(
          400,
          'promotion_code_invalid',
          'This promotion code cannot be redeemed because the associated customer has prior transactions.',
          'discounts[0][promotion_code]',
        );
      }
    }
    const at = this.seconds();
    const recurring = price.recurring as Recurring;
    const end = addInterval(at, recurring);
    const subId = this.id('sub');
    const item: SubscriptionItem = {
      id: this.id('si'),
      object: 'subscription_item',
      created: at,
      current_period_start: at,
      current_period_end: end,
      discounts: [],
      metadata: {},
      price: copy(price),
      quantity,
      subscription: subId,
      tax_rates: [],
    };
    const sub: Subscription = {
      id: subId,
      object: 'subscription',
      billing_cycle_anchor: at,
      cancel_at: null,
      cancel_at_period_end: false,
      canceled_at: null,
      collection_method: 'charge_automatically',
      created: at,
      currency: price.currency,
      customer: customer.id,
      default_payment_method: paymentMethod.id,
      description: null,
      discounts: [],
      ended_at: null,
      items: list([item], false, `/v1/subscription_items?subscription=${subId}`),
      latest_invoice: null,
      livemode: false,
      metadata: copy(p.subscriptionMetadata ?? {}),
      start_date: at,
      status: 'active',
      trial_end: null,
      trial_start: null,
    };
    this.subscriptions.set(sub.id, sub);
    const { invoice, charge } = this.invoiceFor(sub, 'subscription_create', coupon, true);
    sub.latest_invoice = invoice.id;
    if (coupon && coupon.duration === 'forever') {
      sub.discounts = [invoice.discounts[0] as string];
      this.subscriptionCoupons.set(sub.id, coupon.id);
    }
    this.redeem(promo, coupon);
    const session: CheckoutSession = {
      id: `cs_test_${this.id('x').slice(2)}`,
      object: 'checkout.session',
      amount_subtotal: invoice.subtotal,
      amount_total: invoice.total,
      client_reference_id: p.clientReferenceId ?? null,
      created: at,
      currency: price.currency,
      customer: customer.id,
      customer_details: { email: p.email, name: null },
      customer_email: null,
      discounts: promo ? [{ coupon: null, promotion_code: promo.id }] : [],
      expires_at: at + 86400,
      invoice: invoice.id,
      livemode: false,
      metadata: copy(p.metadata ?? {}),
      mode: 'subscription',
      payment_status: 'paid',
      status: 'complete',
      subscription: sub.id,
      total_details: {
        amount_discount: invoice.subtotal - (invoice.total_excluding_tax ?? invoice.subtotal),
        amount_shipping: 0,
        amount_tax: invoice.total - (invoice.total_excluding_tax ?? invoice.total),
      },
      url: null,
    };
    this.sessions.set(session.id, session);
    return {
      session,
      subscription: sub,
      invoice,
      charge,
      events: [
        this.event('customer.subscription.created', sub),
        this.event('invoice.paid', invoice),
        this.event('checkout.session.completed', session),
      ],
    };
  }

  /** A Checkout Session still open (the customer has not paid yet): for resolveCheckout. */
  openCheckout(email: string): CheckoutSession {
    const at = this.seconds();
    const s: CheckoutSession = {
      id: `cs_test_${this.id('x').slice(2)}`,
      object: 'checkout.session',
      amount_subtotal: null,
      amount_total: null,
      client_reference_id: null,
      created: at,
      currency: 'usd',
      customer: null,
      customer_details: null,
      customer_email: email,
      discounts: [],
      expires_at: at + 86400,
      invoice: null,
      livemode: false,
      metadata: {},
      mode: 'subscription',
      payment_status: 'unpaid',
      status: 'open',
      subscription: null,
      total_details: null,
      url: 'https://checkout.stripe.com/c/pay/emulated',
    };
    this.sessions.set(s.id, s);
    return s;
  }

  private nextPeriod(sub: Subscription): void {
    // The emulator's periods end when told; a new one still starts at least a second after the last, as
    // real renewals (a period apart) always do, so two invoices of one subscription never share a second.
    const at = Math.max(this.seconds(), ...sub.items.data.map((i) => i.current_period_start + 1));
    for (const item of sub.items.data) {
      item.current_period_start = at;
      item.current_period_end = addInterval(at, item.price.recurring as Recurring);
    }
  }

  /** The period ends: an invoice (credit and a `forever` coupon applied) paid. invoice.paid, customer.subscription.updated. */
  renew(subscriptionId: string): { invoice: Invoice; charge: Charge | null; events: StripeEvent[] } {
    const sub = this.subscription(subscriptionId);
    if (sub.status === 'canceled')
      throw new LedgerError(400, 'subscription_canceled', `Subscription ${sub.id} is canceled.`, 'subscription');
    const previous = { items: copy(sub.items), status: sub.status };
    this.nextPeriod(sub);
    const coupon = this.coupons.get(this.subscriptionCoupons.get(sub.id) ?? '') ?? null;
    const { invoice, charge } = this.invoiceFor(sub, 'subscription_cycle', coupon, true);
    sub.status = 'active';
    sub.latest_invoice = invoice.id;
    return { invoice, charge, events: [this.event('invoice.paid', invoice), this.event('customer.subscription.updated', sub, previous)] };
  }

  /** The period ends and the card is declined: the invoice stays open (credit still applied), past_due. */
  failPayment(subscriptionId: string): { invoice: Invoice; events: StripeEvent[] } {
    const sub = this.subscription(subscriptionId);
    if (sub.status === 'canceled')
      throw new LedgerError(400, 'subscription_canceled', `Subscription ${sub.id} is canceled.`, 'subscription');
    const previous = { items: copy(sub.items), status: sub.status };
    this.nextPeriod(sub);
    const coupon = this.coupons.get(this.subscriptionCoupons.get(sub.id) ?? '') ?? null;
    const { invoice } = this.invoiceFor(sub, 'subscription_cycle', coupon, false /* declined */);
    sub.latest_invoice = invoice.id;
    const events: StripeEvent[] = [];
    if (invoice.status === 'paid') {
      // Fully covered by credit: nothing to decline.
      events.push(this.event('invoice.paid', invoice));
    } else {
      sub.status = 'past_due';
      events.push(this.event('invoice.payment_failed', invoice));
    }
    events.push(this.event('customer.subscription.updated', sub, previous));
    return { invoice, events };
  }

  /** The customer pays with another card from now on: customer.subscription.updated. */
  updatePaymentMethod(subscriptionId: string, card: string): { subscription: Subscription; events: StripeEvent[] } {
    const sub = this.subscription(subscriptionId);
    const previous = { default_payment_method: sub.default_payment_method ?? null };
    sub.default_payment_method = this.paymentMethodFor(this.customer(sub.customer as string), card).id;
    return { subscription: sub, events: [this.event('customer.subscription.updated', sub, previous)] };
  }

  cancel(subscriptionId: string): { subscription: Subscription; events: StripeEvent[] } {
    const sub = this.subscription(subscriptionId);
    if (sub.status === 'canceled')
      throw new LedgerError(400, 'subscription_canceled', `Subscription ${sub.id} is already canceled.`, 'subscription');
    const at = this.seconds();
    Object.assign(sub, { status: 'canceled', canceled_at: at, ended_at: at });
    return { subscription: sub, events: [this.event('customer.subscription.deleted', sub)] };
  }

  /** A refund of a charge (default: what is left); charge.refunded with the cumulative amount_refunded. */
  refund(chargeId: string, p: { amount?: number } = {}): { refund: Refund; charge: Charge; events: StripeEvent[] } {
    const charge = this.charge(chargeId);
    const left = charge.amount_captured - charge.amount_refunded;
    const amount = p.amount ?? left;
    if (!Number.isInteger(amount) || amount <= 0 || amount > left) {
      throw new LedgerError(
        400,
        'amount_too_large',
        `Refund amount (${amount}) is greater than unrefunded amount on charge (${left})`,
        'amount',
      );
    }
    const refund: Refund = {
      id: this.id('re'),
      object: 'refund',
      amount,
      balance_transaction: this.id('txn'),
      charge: charge.id,
      created: this.seconds(),
      currency: charge.currency,
      metadata: {},
      payment_intent: charge.payment_intent,
      reason: 'requested_by_customer',
      receipt_number: null,
      status: 'succeeded',
    };
    this.refunds.set(refund.id, refund);
    charge.amount_refunded += amount;
    charge.refunded = charge.amount_refunded === charge.amount_captured;
    return { refund, charge, events: [this.event('charge.refunded', charge)] };
  }

  /** A card dispute for the whole charge: charge.dispute.created. */
  dispute(chargeId: string): { dispute: Dispute; events: StripeEvent[] } {
    const charge = this.charge(chargeId);
    if (charge.disputed) throw new LedgerError(400, 'charge_already_disputed', `Charge ${charge.id} is already disputed.`, 'charge');
    charge.disputed = true;
    const dispute: Dispute = {
      id: this.id('dp'),
      object: 'dispute',
      amount: charge.amount,
      charge: charge.id,
      created: this.seconds(),
      currency: charge.currency,
      is_charge_refundable: false,
      livemode: false,
      metadata: {},
      payment_intent: charge.payment_intent,
      reason: 'fraudulent',
      status: 'needs_response',
    };
    this.disputes.set(dispute.id, dispute);
    return { dispute, events: [this.event('charge.dispute.created', dispute)] };
  }

  // --- API writes ---------------------------------------------------------------------------------------

  createBalanceTransaction(customerId: string, body: Record<string, unknown>): CustomerBalanceTransaction {
    const customer = this.customer(customerId);
    const amount = intParam(body, 'amount', true) as number;
    if (amount === 0) throw new LedgerError(400, 'parameter_invalid_integer', 'amount must not be zero', 'amount');
    const currency = currencyParam(body, 'currency');
    const description = optString(body, 'description', 350);
    return this.balanceTransaction(customer, { amount, currency, type: 'adjustment', description, metadata: metadataParam(body) });
  }

  createCoupon(body: Record<string, unknown>): Coupon {
    const id = optString(body, 'id', 200) ?? this.id('x').slice(2, 10);
    if (!/^[A-Za-z0-9_-]+$/.test(id)) throw new LedgerError(400, 'parameter_invalid_string', 'Invalid coupon id', 'id');
    if (this.coupons.has(id)) throw new LedgerError(400, 'resource_already_exists', 'Coupon already exists.', 'id');
    const duration = body.duration ?? 'once';
    if (duration !== 'once' && duration !== 'forever' && duration !== 'repeating')
      throw new LedgerError(400, 'parameter_invalid_string', 'Invalid duration', 'duration');
    const percent = body.percent_off === undefined ? null : Number(body.percent_off);
    const amountOff = intParam(body, 'amount_off', false);
    if ((percent === null) === (amountOff === null))
      throw new LedgerError(400, 'parameter_missing', 'Exactly one of percent_off or amount_off is required', 'percent_off');
    if (percent !== null && !(percent > 0 && percent <= 100))
      throw new LedgerError(400, 'parameter_invalid_float', 'percent_off must be in (0, 100]', 'percent_off');
    if (amountOff !== null && amountOff <= 0)
      throw new LedgerError(400, 'parameter_invalid_integer', 'amount_off must be positive', 'amount_off');
    const currency = amountOff !== null ? currencyParam(body, 'currency') : null;
    const c: Coupon = {
      id,
      object: 'coupon',
      amount_off: amountOff,
      created: this.seconds(),
      currency,
      duration: duration as Coupon['duration'],
      duration_in_months: duration === 'repeating' ? (intParam(body, 'duration_in_months', true) as number) : null,
      livemode: false,
      max_redemptions: intParam(body, 'max_redemptions', false),
      metadata: metadataParam(body),
      name: optString(body, 'name', 40),
      percent_off: percent,
      redeem_by: null,
      times_redeemed: 0,
      valid: true,
    };
    this.coupons.set(c.id, c);
    return c;
  }

  /** Clover and later: `promotion[type]=coupon&promotion[coupon]=…` (a top-level `coupon` is refused). */
  createPromotionCode(body: Record<string, unknown>): PromotionCode {
    if ('coupon' in body) throw new LedgerError(400, 'parameter_unknown', 'Received unknown parameter: coupon', 'coupon');
    const promotion = body.promotion as Record<string, unknown> | undefined;
    if (typeof promotion !== 'object' || promotion === null || promotion.type !== 'coupon' || typeof promotion.coupon !== 'string') {
      throw new LedgerError(400, 'parameter_missing', 'Missing required param: promotion[coupon].', 'promotion');
    }
    const coupon = this.coupons.get(promotion.coupon);
    if (!coupon) throw missing('coupon', promotion.coupon, 'promotion[coupon]');
    const code = optString(body, 'code', 500) ?? this.id('x').slice(2, 10).toUpperCase();
    if (!/^[A-Za-z0-9-]+$/.test(code))
      throw new LedgerError(400, 'parameter_invalid_string', 'code may contain only letters, digits and dashes', 'code');
    if (this.promotionCodeByCode(code))
      throw new LedgerError(400, 'resource_already_exists', `An active promotion code with \`code: ${code}\` already exists.`, 'code');
    const restrictions = (body.restrictions ?? {}) as Record<string, unknown>;
    const p: PromotionCode = {
      id: this.id('promo'),
      object: 'promotion_code',
      active: body.active === undefined ? true : body.active === 'true',
      code,
      created: this.seconds(),
      customer: null,
      expires_at: intParam(body, 'expires_at', false),
      livemode: false,
      max_redemptions: intParam(body, 'max_redemptions', false),
      metadata: metadataParam(body),
      promotion: { type: 'coupon', coupon: coupon.id },
      restrictions: {
        first_time_transaction: restrictions.first_time_transaction === 'true',
        minimum_amount: null,
        minimum_amount_currency: null,
      },
      times_redeemed: 0,
    };
    this.promotionCodes.set(p.id, p);
    return p;
  }
}

// --- form parameter readers (the body is decoded, values are strings) ---------------------------------

function intParam(body: Record<string, unknown>, key: string, required: boolean): number | null {
  const v = body[key];
  if (v === undefined || v === '') {
    if (required) throw new LedgerError(400, 'parameter_missing', `Missing required param: ${key}.`, key);
    return null;
  }
  if (typeof v !== 'string' || !/^-?\d{1,15}$/.test(v))
    throw new LedgerError(400, 'parameter_invalid_integer', `Invalid integer: ${String(v)}`, key);
  return Number(v);
}

function currencyParam(body: Record<string, unknown>, key: string): string {
  const v = body[key];
  if (typeof v !== 'string' || !/^[a-zA-Z]{3}$/.test(v))
    throw new LedgerError(400, v === undefined ? 'parameter_missing' : 'parameter_invalid_string', `Invalid currency: ${String(v)}`, key);
  return v.toLowerCase();
}

function optString(body: Record<string, unknown>, key: string, max: number): string | null {
  const v = body[key];
  if (v === undefined || v === '') return null;
  if (typeof v !== 'string' || v.length > max)
    throw new LedgerError(400, 'parameter_invalid_string', `${key} must be a string of at most ${max} characters`, key);
  return v;
}

function metadataParam(body: Record<string, unknown>): Metadata {
  const v = body.metadata;
  if (v === undefined || v === '') return {};
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw new LedgerError(400, 'parameter_invalid_string', 'metadata must be a hash', 'metadata');
  const out: Metadata = {};
  const entries = Object.entries(v as Record<string, unknown>);
  if (entries.length > 50) throw new LedgerError(400, 'parameter_invalid_string', 'metadata has at most 50 keys', 'metadata');
  for (const [k, value] of entries) {
    if (k.length > 40 || typeof value !== 'string' || value.length > 500)
      throw new LedgerError(400, 'parameter_invalid_string', `metadata[${k}] is invalid`, `metadata[${k}]`);
    if (value !== '') out[k] = value;
  }
  return out;
}
