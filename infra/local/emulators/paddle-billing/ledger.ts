// The Paddle Billing emulator's ledger: customers, prices, subscriptions, transactions, adjustments and
// discounts in memory, in the wire shapes of ../wire.ts, and the simulations that change them. Each
// simulation returns the notifications Paddle would send, in order; the server signs and delivers them.
// No I/O here; the clock is injected.
//
// Simplifications (deliberate):
// - Time: every step happens "now". A renewal is the next billing date arriving: it bills now and the
//   new billing period starts now. A discount set `effective_from: next_billing_period` starts at that
//   renewal (its starts_at becomes the renewal's billed_at), so "not yet billed" = starts_at in the future.
// - One tax rate for everything (default 0); fee 5 % + 50; no currency conversion; no proration.
// - A discount with `maximum_recurring_intervals` leaves the subscription at the first renewal after its
//   last interval. `times_used` counts checkouts and first applications to a subscription (Paddle's rule).
import { randomBytes } from 'node:crypto';
import type {
  Adjustment,
  BillingCycle,
  CreateDiscountBody,
  Customer,
  Discount,
  Notification,
  Price,
  Product,
  Subscription,
  SubscriptionItem,
  Transaction,
  TransactionTotals,
} from '../../../../shared/providers/paddle-billing/wire';

/** A bad simulation or API call: `status` and Paddle's error `code`. */
export class LedgerError extends Error {
  override readonly name = 'LedgerError';
  constructor(
    readonly status: 400 | 404 | 409,
    readonly code: string,
    detail: string,
  ) {
    super(detail);
  }
}

export interface CatalogPrice {
  price: Price;
  product: Product;
}

export interface LedgerOptions {
  now?: () => number;
  /** Tax rate in percent applied to every transaction; default 0. */
  taxRatePercent?: number;
}

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Time-ordered ids like Paddle's: prefix + 26 characters (10 of time, 16 random), so `after` cursors sort. */
function idFactory() {
  let last = 0;
  let counter = 0;
  return (prefix: string, nowMs: number): string => {
    counter = nowMs === last ? counter + 1 : 0;
    last = nowMs;
    let time = '';
    let t = nowMs * 1024 + (counter % 1024);
    for (let i = 0; i < 10; i++) {
      time = ALPHABET[t % 32] + time;
      t = Math.floor(t / 32);
    }
    const bytes = randomBytes(16);
    let rand = '';
    for (const b of bytes) rand += ALPHABET[b & 31];
    return `${prefix}_${time}${rand}`;
  };
}

function addInterval(ms: number, cycle: BillingCycle, times = 1): number {
  const d = new Date(ms);
  const n = cycle.frequency * times;
  if (cycle.interval === 'day') d.setUTCDate(d.getUTCDate() + n);
  else if (cycle.interval === 'week') d.setUTCDate(d.getUTCDate() + 7 * n);
  else if (cycle.interval === 'month') d.setUTCMonth(d.getUTCMonth() + n);
  else d.setUTCFullYear(d.getUTCFullYear() + n);
  return d.getTime();
}

const copy = <T>(v: T): T => structuredClone(v);

export class Ledger {
  readonly customers = new Map<string, Customer>();
  readonly catalog = new Map<string, CatalogPrice>();
  readonly subscriptions = new Map<string, Subscription>();
  readonly transactions = new Map<string, Transaction>();
  readonly adjustments = new Map<string, Adjustment>();
  readonly discounts = new Map<string, Discount>();
  /** Renewals billed with the subscription's current discount. */
  private readonly discountIntervals = new Map<string, number>();
  private readonly newId = idFactory();
  private lastMicros = 0;
  private readonly now: () => number;
  private readonly taxRate: number;

  constructor(options: LedgerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.taxRate = (options.taxRatePercent ?? 0) / 100;
    this.addPrice({ name: 'Pro', description: 'Pro monthly', amount: 1000, currency: 'USD', cycle: { interval: 'month', frequency: 1 } });
    this.addPrice({ name: 'Pro', description: 'Pro yearly', amount: 10000, currency: 'USD', cycle: { interval: 'year', frequency: 1 } });
    this.addPrice({
      name: 'Pro',
      description: 'Pro monthly (EUR)',
      amount: 900,
      currency: 'EUR',
      cycle: { interval: 'month', frequency: 1 },
    });
  }

  private id(prefix: string): string {
    return this.newId(prefix, this.now());
  }

  /** RFC 3339 with microseconds, strictly increasing across calls (Paddle's occurred_at has microseconds). */
  instant(): string {
    const micros = Math.max(this.now() * 1000, this.lastMicros + 1);
    this.lastMicros = micros;
    const ms = Math.floor(micros / 1000);
    return new Date(ms).toISOString().replace('Z', `${String(micros % 1000).padStart(3, '0')}Z`);
  }

  private notification(event_type: string, data: unknown): Notification {
    return { event_id: this.id('evt'), event_type, occurred_at: this.instant(), notification_id: this.id('ntf'), data: copy(data) };
  }

  addPrice(p: { name: string; description: string; amount: number; currency: string; cycle: BillingCycle }): CatalogPrice {
    const productId = [...this.catalog.values()].find((c) => c.product.name === p.name)?.product.id ?? this.id('pro');
    const entry: CatalogPrice = {
      product: { id: productId, name: p.name, status: 'active' },
      price: {
        id: this.id('pri'),
        product_id: productId,
        name: p.description,
        description: p.description,
        unit_price: { amount: String(p.amount), currency_code: p.currency },
        billing_cycle: p.cycle,
        trial_period: null,
        tax_mode: 'account_setting',
        status: 'active',
        type: 'standard',
        quantity: { minimum: 1, maximum: 100 },
        unit_price_overrides: [],
        custom_data: null,
        created_at: this.instant(),
        updated_at: this.instant(),
      },
    };
    this.catalog.set(entry.price.id, entry);
    return entry;
  }

  /** The first catalogue price in `currency` (default USD, monthly). */
  defaultPrice(currency = 'USD'): CatalogPrice {
    const found = [...this.catalog.values()].find((c) => c.price.unit_price.currency_code === currency);
    if (!found) throw new LedgerError(400, 'invalid_field', `no price in ${currency}`);
    return found;
  }

  // --- lookups ----------------------------------------------------------------------------------------

  subscription(id: string): Subscription {
    const s = this.subscriptions.get(id);
    if (!s) throw new LedgerError(404, 'not_found', `Subscription ${id} not found.`);
    return s;
  }

  transaction(id: string): Transaction {
    const t = this.transactions.get(id);
    if (!t) throw new LedgerError(404, 'not_found', `Transaction ${id} not found.`);
    return t;
  }

  discount(id: string): Discount {
    const d = this.discounts.get(id);
    if (!d) throw new LedgerError(404, 'not_found', `Discount ${id} not found.`);
    return d;
  }

  discountByCode(code: string): Discount | undefined {
    return [...this.discounts.values()].find((d) => d.code !== null && d.code.toUpperCase() === code.toUpperCase());
  }

  private customerFor(email: string): { customer: Customer; created: boolean } {
    const existing = [...this.customers.values()].find((c) => c.email === email);
    if (existing) return { customer: existing, created: false };
    const at = this.instant();
    const customer: Customer = {
      id: this.id('ctm'),
      name: null,
      email,
      status: 'active',
      marketing_consent: false,
      locale: 'en',
      custom_data: null,
      created_at: at,
      updated_at: at,
    };
    this.customers.set(customer.id, customer);
    return { customer, created: true };
  }

  // --- money --------------------------------------------------------------------------------------------

  private totals(subtotal: number, currency: string, discount: Discount | null): TransactionTotals {
    let off = 0;
    if (discount)
      off =
        discount.type === 'percentage'
          ? Math.round((subtotal * Number(discount.amount)) / 100)
          : Math.min(subtotal, Number(discount.amount));
    const taxable = subtotal - off;
    const tax = Math.round(taxable * this.taxRate);
    const total = taxable + tax;
    const fee = total > 0 ? Math.round(total * 0.05) + 50 : 0;
    const s = String;
    return {
      subtotal: s(subtotal),
      discount: s(off),
      tax: s(tax),
      total: s(total),
      credit: '0',
      credit_to_balance: '0',
      balance: '0',
      grand_total: s(total),
      fee: s(fee),
      earnings: s(total - tax - fee),
      currency_code: currency,
    };
  }

  private newTransaction(
    sub: Pick<Subscription, 'id' | 'customer_id' | 'currency_code' | 'items' | 'custom_data'>,
    p: {
      origin: Transaction['origin'];
      status: Transaction['status'];
      discount: Discount | null;
      period: { starts_at: string; ends_at: string } | null;
    },
  ): Transaction {
    const at = this.instant();
    const subtotal = sub.items.reduce((a, i) => a + Number(i.price.unit_price.amount) * i.quantity, 0);
    const totals = this.totals(subtotal, sub.currency_code, p.discount);
    const paid = p.status === 'completed';
    const taxRate = String(this.taxRate);
    const lineTotals = { subtotal: totals.subtotal, discount: totals.discount, tax: totals.tax, total: totals.total };
    const txn: Transaction = {
      id: this.id('txn'),
      status: p.status,
      origin: p.origin,
      customer_id: sub.customer_id,
      address_id: null,
      business_id: null,
      subscription_id: sub.id,
      invoice_id: paid ? this.id('inv') : null,
      invoice_number: null,
      discount_id: p.discount?.id ?? null,
      currency_code: sub.currency_code,
      collection_mode: 'automatic',
      billing_period: p.period,
      custom_data: sub.custom_data === null ? null : copy(sub.custom_data),
      items: sub.items.map((i) => ({ price: copy(i.price), quantity: i.quantity })),
      details: {
        totals,
        tax_rates_used: [{ tax_rate: taxRate, totals: lineTotals }],
        // Discount and tax are shown on the first line only (the emulator has one item per subscription).
        line_items: sub.items.map((i, n) => {
          const unit = Number(i.price.unit_price.amount);
          const line =
            n === 0 ? lineTotals : { subtotal: String(unit * i.quantity), discount: '0', tax: '0', total: String(unit * i.quantity) };
          return {
            id: this.id('txnitm'),
            price_id: i.price.id,
            quantity: i.quantity,
            tax_rate: taxRate,
            unit_totals: { subtotal: String(unit), discount: '0', tax: '0', total: String(unit) },
            totals: line,
            ...(i.product ? { product: copy(i.product) } : {}),
            proration: null,
          };
        }),
      },
      payments: [
        {
          payment_attempt_id: this.id('pat').slice(4),
          stored_payment_method_id: this.id('spm').slice(4),
          amount: totals.grand_total,
          status: paid ? 'captured' : 'error',
          created_at: at,
          captured_at: paid ? at : null,
          error_code: paid ? null : 'declined',
          method_details: {
            type: 'card',
            card: {
              type: 'visa',
              last4: paid ? '4242' : '0002',
              expiry_month: 12,
              expiry_year: 2030,
              cardholder_name: 'Emulated Customer',
            },
          },
        },
      ],
      checkout: null,
      billed_at: paid ? at : null,
      revised_at: null,
      created_at: at,
      updated_at: at,
    };
    if (p.origin === 'web') txn.checkout = { url: `https://checkout.example/pay?_ptxn=${txn.id}` };
    this.transactions.set(txn.id, txn);
    return txn;
  }

  // --- simulations --------------------------------------------------------------------------------------

  /**
   * A Paddle.js checkout: customer (found by email or created), the checkout transaction (completed, with
   * `customData` and the discount code's discount), the subscription (custom_data copied, as Paddle does).
   * Sends subscription.created (with transaction_id) then transaction.completed.
   */
  checkout(p: {
    email: string;
    priceId?: string;
    quantity?: number;
    currency?: string;
    customData?: Record<string, unknown> | null;
    discountCode?: string;
  }): {
    subscription: Subscription;
    transaction: Transaction;
    notifications: Notification[];
  } {
    if (!/^[^@\s]+@[^@\s]+$/.test(p.email)) throw new LedgerError(400, 'invalid_field', 'email must be an email address');
    const entry = p.priceId ? this.catalog.get(p.priceId) : this.defaultPrice(p.currency ?? 'USD');
    if (!entry) throw new LedgerError(404, 'not_found', `Price ${p.priceId} not found.`);
    const cycle = entry.price.billing_cycle as BillingCycle;
    const quantity = p.quantity ?? 1;
    if (!Number.isInteger(quantity) || quantity < 1) throw new LedgerError(400, 'invalid_field', 'quantity must be a positive integer');
    if (p.customData !== undefined && p.customData !== null && (typeof p.customData !== 'object' || Array.isArray(p.customData))) {
      throw new LedgerError(400, 'invalid_field', 'customData must be a JSON object');
    }
    let discount: Discount | null = null;
    if (p.discountCode) {
      const d = this.discountByCode(p.discountCode);
      if (!d?.enabled_for_checkout || d.status !== 'active')
        throw new LedgerError(400, 'transaction_discount_not_found', 'Cannot find provided discount code/id');
      if (d.type === 'flat' && d.currency_code !== entry.price.unit_price.currency_code)
        throw new LedgerError(400, 'transaction_discount_not_found', 'discount currency does not match');
      discount = d;
    }
    const { customer } = this.customerFor(p.email);
    const nowMs = this.now();
    const start = this.instant();
    const end = new Date(addInterval(nowMs, cycle)).toISOString();
    const item: SubscriptionItem = {
      status: 'active',
      quantity,
      recurring: true,
      created_at: start,
      updated_at: start,
      previously_billed_at: start,
      next_billed_at: end,
      price: copy(entry.price),
      product: copy(entry.product),
    };
    const sub: Subscription = {
      id: this.id('sub'),
      status: 'active',
      customer_id: customer.id,
      address_id: this.id('add'),
      business_id: null,
      currency_code: entry.price.unit_price.currency_code,
      created_at: start,
      updated_at: start,
      started_at: start,
      first_billed_at: start,
      next_billed_at: end,
      paused_at: null,
      canceled_at: null,
      collection_mode: 'automatic',
      billing_cycle: copy(cycle),
      current_billing_period: { starts_at: start, ends_at: end },
      scheduled_change: null,
      discount: null,
      items: [item],
      custom_data: p.customData ? copy(p.customData) : null,
    };
    const txn = this.newTransaction(sub, { origin: 'web', status: 'completed', discount, period: { starts_at: start, ends_at: end } });
    if (discount) {
      this.use(discount);
      // A recurring checkout discount stays on the subscription for its renewals.
      if (discount.recur) {
        sub.discount = { id: discount.id, starts_at: start, ends_at: this.discountEnd(nowMs, cycle, discount) };
        this.discountIntervals.set(sub.id, 1);
      }
    }
    this.subscriptions.set(sub.id, sub);
    return {
      subscription: sub,
      transaction: txn,
      notifications: [
        this.notification('subscription.created', { ...sub, transaction_id: txn.id }),
        this.notification('transaction.completed', txn),
      ],
    };
  }

  private discountEnd(startMs: number, cycle: BillingCycle, d: Discount): string | null {
    return d.maximum_recurring_intervals ? new Date(addInterval(startMs, cycle, d.maximum_recurring_intervals)).toISOString() : null;
  }

  private use(d: Discount): void {
    d.times_used += 1;
    if (d.usage_limit !== null && d.times_used >= d.usage_limit) d.status = 'used';
    d.updated_at = this.instant();
  }

  /** The next billing date arrives: a completed renewal (with the subscription's discount, if any). */
  renew(subscriptionId: string): { transaction: Transaction; notifications: Notification[] } {
    const sub = this.subscription(subscriptionId);
    if (sub.status === 'canceled') throw new LedgerError(409, 'subscription_locked_canceled', `Subscription ${sub.id} is canceled.`);
    const nowMs = this.now();
    // A discount whose last interval was billed leaves at this renewal.
    const maxIntervals = sub.discount ? (this.discounts.get(sub.discount.id)?.maximum_recurring_intervals ?? null) : null;
    if (sub.discount && maxIntervals !== null && (this.discountIntervals.get(sub.id) ?? 0) >= maxIntervals) {
      sub.discount = null;
      this.discountIntervals.delete(sub.id);
    }
    const discount = sub.discount ? (this.discounts.get(sub.discount.id) ?? null) : null;
    const start = this.instant();
    const end = new Date(addInterval(nowMs, sub.billing_cycle)).toISOString();
    if (sub.discount && discount) {
      const used = this.discountIntervals.get(sub.id) ?? 0;
      if (used === 0) sub.discount = { id: discount.id, starts_at: start, ends_at: this.discountEnd(nowMs, sub.billing_cycle, discount) };
      this.discountIntervals.set(sub.id, used + 1);
    }
    const txn = this.newTransaction(sub, {
      origin: 'subscription_recurring',
      status: 'completed',
      discount,
      period: { starts_at: start, ends_at: end },
    });
    sub.status = 'active';
    sub.current_billing_period = { starts_at: start, ends_at: end };
    sub.next_billed_at = end;
    for (const item of sub.items) {
      item.previously_billed_at = start;
      item.next_billed_at = end;
    }
    sub.updated_at = start;
    return {
      transaction: txn,
      notifications: [this.notification('transaction.completed', txn), this.notification('subscription.updated', sub)],
    };
  }

  /** A renewal whose payment is declined: transaction.payment_failed, the subscription past_due. Never a payment. */
  failPayment(subscriptionId: string): { transaction: Transaction; notifications: Notification[] } {
    const sub = this.subscription(subscriptionId);
    if (sub.status === 'canceled') throw new LedgerError(409, 'subscription_locked_canceled', `Subscription ${sub.id} is canceled.`);
    const period = sub.current_billing_period;
    const txn = this.newTransaction(sub, { origin: 'subscription_recurring', status: 'past_due', discount: null, period });
    const failed = this.notification('transaction.payment_failed', txn);
    sub.status = 'past_due';
    sub.updated_at = this.instant();
    return { transaction: txn, notifications: [failed, this.notification('subscription.past_due', sub)] };
  }

  cancel(subscriptionId: string): { subscription: Subscription; notifications: Notification[] } {
    const sub = this.subscription(subscriptionId);
    if (sub.status === 'canceled')
      throw new LedgerError(409, 'subscription_locked_canceled', `Subscription ${sub.id} is already canceled.`);
    const at = this.instant();
    Object.assign(sub, {
      status: 'canceled',
      canceled_at: at,
      next_billed_at: null,
      current_billing_period: null,
      scheduled_change: null,
      updated_at: at,
    });
    for (const item of sub.items) item.next_billed_at = null;
    return { subscription: sub, notifications: [this.notification('subscription.canceled', sub)] };
  }

  /** A refund adjustment, created `pending_approval` (as most live refunds are): adjustment.created. */
  refund(transactionId: string, p: { amount?: number } = {}): { adjustment: Adjustment; notifications: Notification[] } {
    return this.adjust(transactionId, 'refund', 'pending_approval', p.amount);
  }

  /** Paddle approves a pending refund: adjustment.updated. */
  approve(adjustmentId: string): { adjustment: Adjustment; notifications: Notification[] } {
    const adj = this.adjustments.get(adjustmentId);
    if (!adj) throw new LedgerError(404, 'not_found', `Adjustment ${adjustmentId} not found.`);
    if (adj.status !== 'pending_approval') throw new LedgerError(409, 'adjustment_not_pending', `Adjustment ${adj.id} is ${adj.status}.`);
    adj.status = 'approved';
    adj.updated_at = this.instant();
    return { adjustment: adj, notifications: [this.notification('adjustment.updated', adj)] };
  }

  /** A chargeback: Paddle creates it approved, for the whole transaction. */
  chargeback(transactionId: string): { adjustment: Adjustment; notifications: Notification[] } {
    return this.adjust(transactionId, 'chargeback', 'approved');
  }

  private adjust(transactionId: string, action: 'refund' | 'chargeback', status: Adjustment['status'], amount?: number) {
    const txn = this.transaction(transactionId);
    if (txn.status !== 'completed')
      throw new LedgerError(400, 'adjustment_transaction_invalid_status_for_refund', `Transaction ${txn.id} is ${txn.status}.`);
    const totals = txn.details.totals;
    const grand = Number(totals.grand_total);
    const already = [...this.adjustments.values()]
      .filter((a) => a.transaction_id === txn.id && a.status !== 'rejected' && (a.action === 'refund' || a.action === 'chargeback'))
      .reduce((s, a) => s + Number(a.totals.total), 0);
    const total = amount ?? grand - already;
    if (!Number.isInteger(total) || total <= 0 || total > grand - already) {
      throw new LedgerError(400, 'adjustment_amount_above_remaining_allowed', `at most ${grand - already} can still be refunded`);
    }
    const tax = grand === 0 ? 0 : Math.round((Number(totals.tax) * total) / grand);
    const fee = grand === 0 ? 0 : Math.round((Number(totals.fee ?? 0) * total) / grand);
    const at = this.instant();
    const adj: Adjustment = {
      id: this.id('adj'),
      action,
      type: total === grand ? 'full' : 'partial',
      transaction_id: txn.id,
      subscription_id: txn.subscription_id,
      customer_id: txn.customer_id ?? '',
      reason: action === 'refund' ? 'requested_by_customer' : 'chargeback',
      credit_applied_to_balance: null,
      currency_code: txn.currency_code,
      status,
      items: [
        {
          id: this.id('adjitm'),
          item_id: txn.details.line_items?.[0]?.id ?? this.id('txnitm'),
          type: total === grand ? 'full' : 'partial',
          amount: String(total),
          proration: null,
          totals: { subtotal: String(total - tax), tax: String(tax), total: String(total) },
        },
      ],
      totals: {
        subtotal: String(total - tax),
        tax: String(tax),
        total: String(total),
        fee: String(fee),
        earnings: String(total - tax - fee),
        currency_code: txn.currency_code,
        retained_fee: '0',
      },
      created_at: at,
      updated_at: at,
    };
    this.adjustments.set(adj.id, adj);
    return { adjustment: adj, notifications: [this.notification('adjustment.created', adj)] };
  }

  // --- API writes ---------------------------------------------------------------------------------------

  createDiscount(body: Partial<CreateDiscountBody> & Record<string, unknown>): Discount {
    const bad = (detail: string) => new LedgerError(400, 'invalid_field', detail);
    if (typeof body.description !== 'string' || body.description.length < 1 || body.description.length > 500)
      throw bad('description is required (1-500 characters)');
    if (body.type !== 'flat' && body.type !== 'percentage') throw bad('type must be flat or percentage');
    if (typeof body.amount !== 'string' || !/^\d+(\.\d{1,2})?$/.test(body.amount)) throw bad('amount must be a string');
    if (body.type === 'flat' && (!/^\d+$/.test(body.amount) || typeof body.currency_code !== 'string'))
      throw bad('a flat discount needs an integer amount and currency_code');
    if (body.type === 'percentage' && (Number(body.amount) < 0.01 || Number(body.amount) > 100))
      throw bad('percentage amount must be 0.01 to 100');
    if (typeof body.enabled_for_checkout !== 'boolean' || typeof body.recur !== 'boolean')
      throw bad('enabled_for_checkout and recur are required');
    if (
      body.maximum_recurring_intervals != null &&
      (!body.recur ||
        !Number.isInteger(body.maximum_recurring_intervals) ||
        body.maximum_recurring_intervals < 1 ||
        body.maximum_recurring_intervals > 999)
    ) {
      throw bad('maximum_recurring_intervals needs recur and is 1 to 999');
    }
    let code = body.code ?? null;
    if (code !== null && (typeof code !== 'string' || !/^[A-Za-z0-9]{1,32}$/.test(code))) throw bad('code must be 1-32 letters and digits');
    if (code !== null) {
      const clash = this.discountByCode(code);
      if (clash) throw new LedgerError(409, 'discount_code_conflict', `Discount code conflicts with Discount ID ${clash.id}`);
    } else if (body.enabled_for_checkout) {
      code = randomBytes(5).toString('hex').toUpperCase();
    }
    const at = this.instant();
    const d: Discount = {
      id: this.id('dsc'),
      status: 'active',
      description: body.description,
      enabled_for_checkout: body.enabled_for_checkout,
      code,
      type: body.type,
      mode: 'standard',
      amount: body.amount,
      currency_code: body.type === 'flat' ? (body.currency_code as string) : null,
      recur: body.recur,
      maximum_recurring_intervals: body.maximum_recurring_intervals ?? null,
      usage_limit: body.usage_limit ?? null,
      restrict_to: null,
      expires_at: null,
      custom_data: body.custom_data ?? null,
      times_used: 0,
      created_at: at,
      updated_at: at,
    };
    this.discounts.set(d.id, d);
    return d;
  }

  /** PATCH /subscriptions/{id} with a `discount` (Refloop's only update). */
  updateSubscription(id: string, body: Record<string, unknown>): { subscription: Subscription; notifications: Notification[] } {
    const sub = this.subscription(id);
    if (!('discount' in body)) throw new LedgerError(400, 'invalid_field', 'the emulator updates only discount');
    if (sub.status === 'canceled') throw new LedgerError(400, 'subscription_locked_canceled', `Subscription ${sub.id} is canceled.`);
    const requested = body.discount as { id?: unknown; effective_from?: unknown } | null;
    if (requested === null) {
      sub.discount = null;
      this.discountIntervals.delete(sub.id);
    } else {
      if (typeof requested !== 'object' || typeof requested.id !== 'string')
        throw new LedgerError(400, 'invalid_field', 'discount.id is required');
      if (requested.effective_from !== 'next_billing_period') {
        // Paddle also accepts `immediately` (except for trials); the emulator models what Refloop sends.
        throw new LedgerError(400, 'invalid_field', 'discount.effective_from must be next_billing_period');
      }
      const d = this.discounts.get(requested.id);
      if (!d || d.status === 'archived')
        throw new LedgerError(400, 'subscription_discount_not_found', `Discount ${requested.id} not found.`);
      if (!d.recur)
        throw new LedgerError(400, 'subscription_one_off_discount_not_valid', 'A one-off discount cannot be applied to a subscription.');
      if (d.type === 'flat' && d.currency_code !== sub.currency_code)
        throw new LedgerError(400, 'subscription_invalid_discount_currency', 'Discount currency does not match.');
      if (sub.discount?.id !== d.id) {
        const start = sub.next_billed_at;
        sub.discount = { id: d.id, starts_at: start, ends_at: start ? this.discountEnd(Date.parse(start), sub.billing_cycle, d) : null };
        this.discountIntervals.set(sub.id, 0);
        this.use(d);
      }
    }
    sub.updated_at = this.instant();
    return { subscription: sub, notifications: [this.notification('subscription.updated', sub)] };
  }
}
