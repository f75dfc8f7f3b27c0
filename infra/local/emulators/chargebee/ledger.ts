// Chargebee emulator: the state and the rules, no HTTP (./server.ts is the wire). The objects are the
// official `chargebee` package's types (dev dependency), so what the emulator builds cannot drift from
// what that package declares; each carries `object` as Chargebee's answers do.
//
// Rules it keeps (docs/providers/chargebee.md has the emulator's decisions):
// - Time: every step happens "now" (the injectable clock, ms). `resource_version` is unix ms, strictly
//   increasing across every change of any resource, so two changes in one millisecond still order.
// - A renewal is the term end arriving: the term moves forward by one billing period from the old end;
//   the invoice is dated now. Invoices are paid (or fail) in the same step.
// - Invoices: sub_total = unit price x quantity; then the coupon (document_level_coupon) and then the
//   customer's promotional credits in the invoice's currency (entity_type promotional_credits), both
//   BEFORE tax; tax = round(taxable x the checkout's tax rate); total = taxable + tax. Consumed credits
//   leave the balance without a promotional credit record or an event.
// - Promotional credits: a balance per customer and currency; a deduction without an amount takes all of
//   it, one above it is refused (400 param_wrong_value), never clamped; amounts are integers >= 1.
// - Refunds: a refundable credit note (`cn_…`, reason_code, reference_invoice_id, total) and a refund
//   transaction; events credit_note_created then payment_refunded (or refund_initiated when pending). A
//   dispute is assumed to be the same with reason_code `chargeback` (Chargebee has no dispute event).
// - A coupon code is redeemed by the one checkout that uses it.
import { randomBytes } from 'node:crypto';
import type {
  Card,
  Coupon,
  CouponCode,
  CreditNote,
  Customer,
  Invoice,
  ItemPrice,
  PromotionalCredit,
  Subscription,
  Transaction,
} from 'chargebee';

export type CbCustomer = Customer & { object: 'customer'; balances: Customer.Balance[] };
export type CbSubscription = Subscription & { object: 'subscription'; subscription_items: Subscription.SubscriptionItem[] };
export type CbInvoice = Invoice & { object: 'invoice'; total: number; amount_paid: number; discounts: Invoice.Discount[] };
export type CbTransaction = Transaction & { object: 'transaction'; amount: number };
export type CbCreditNote = CreditNote & { object: 'credit_note'; total: number };
export type CbPromotionalCredit = PromotionalCredit & { object: 'promotional_credit' };
export type CbCoupon = Coupon & { object: 'coupon' };
export type CbCouponCode = CouponCode & { object: 'coupon_code' };
export type CbItemPrice = ItemPrice & {
  object: 'item_price';
  price: number;
  period: number;
  period_unit: 'day' | 'week' | 'month' | 'year';
};
export type CbCard = Card & { object: 'card' };

export interface CbHostedPage {
  id: string;
  type: 'checkout_new';
  url: string;
  state: 'created' | 'requested' | 'succeeded' | 'cancelled' | 'acknowledged';
  embed: boolean;
  created_at: number;
  expires_at: number;
  updated_at: number;
  resource_version: number;
  object: 'hosted_page';
  content?: { subscription: CbSubscription; customer: CbCustomer; invoice?: CbInvoice; card?: CbCard };
}

export type EventType =
  | 'customer_created'
  | 'customer_changed'
  | 'subscription_created'
  | 'subscription_activated'
  | 'subscription_changed'
  | 'subscription_renewed'
  | 'subscription_cancelled'
  | 'subscription_reactivated'
  | 'subscription_paused'
  | 'subscription_resumed'
  | 'subscription_deleted'
  | 'payment_succeeded'
  | 'payment_failed'
  | 'payment_refunded'
  | 'refund_initiated'
  | 'credit_note_created'
  | 'promotional_credits_added'
  | 'promotional_credits_deducted';

export interface EventContent {
  customer?: CbCustomer;
  subscription?: CbSubscription;
  card?: CbCard;
  invoice?: CbInvoice;
  transaction?: CbTransaction;
  credit_note?: CbCreditNote;
  promotional_credit?: CbPromotionalCredit;
}

type Sub = { subscription: CbSubscription; customer: CbCustomer; card?: CbCard };
type Pay = { transaction: CbTransaction; invoice: CbInvoice; customer: CbCustomer; subscription: CbSubscription; card?: CbCard };
/** What each event type's `content` holds (the official package's WebhookEvent content, keys it may omit left out). */
export interface EventContents {
  customer_created: { customer: CbCustomer; card?: CbCard };
  customer_changed: { customer: CbCustomer; card?: CbCard };
  subscription_created: Sub & { invoice?: CbInvoice };
  subscription_activated: Sub & { invoice: CbInvoice };
  subscription_changed: Sub;
  subscription_renewed: Sub & { invoice: CbInvoice };
  subscription_cancelled: Sub;
  subscription_reactivated: Sub;
  subscription_paused: Sub;
  subscription_resumed: Sub;
  subscription_deleted: Sub;
  payment_succeeded: Pay;
  payment_failed: Pay;
  payment_refunded: Pay & { credit_note: CbCreditNote };
  refund_initiated: Pay & { credit_note: CbCreditNote };
  credit_note_created: { credit_note: CbCreditNote };
  promotional_credits_added: { customer: CbCustomer; promotional_credit: CbPromotionalCredit };
  promotional_credits_deducted: { customer: CbCustomer; promotional_credit: CbPromotionalCredit };
}

export type EventSource = 'admin_console' | 'api' | 'scheduled_job' | 'hosted_page' | 'system';

/** The event envelope: what GET /events/{id} answers under `event` and what a webhook POSTs. */
export interface CbEvent {
  id: string;
  occurred_at: number;
  source: EventSource;
  user?: string;
  object: 'event';
  api_version: 'v2';
  event_type: EventType;
  webhook_status: 'not_configured' | 'scheduled' | 'succeeded' | 're_scheduled' | 'failed';
  content: EventContent;
}

/** An API refusal in Chargebee's shape: `{message, type, api_error_code, param?}` with the HTTP status. */
export class ChargebeeError extends Error {
  override readonly name = 'ChargebeeError';
  constructor(
    readonly status: 400 | 401 | 404 | 409 | 429 | 500 | 503,
    readonly apiErrorCode: string,
    message: string,
    readonly param: string | null = null,
    readonly type: 'invalid_request' | 'payment' | 'operation_failed' | null = 'invalid_request',
  ) {
    super(message);
  }
}

/** Decoded form or query parameters: bracket keys become nested objects (`a[b][0]=x` -> {a: {b: {0: 'x'}}}). */
export type Params = { [key: string]: string | Params };

export interface LedgerOptions {
  /** The clock, unix ms; default Date.now. */
  now?: () => number;
  /** Where hosted pages live (their `url`); default none. */
  baseUrl?: () => string;
}

export interface CheckoutInput {
  email: string;
  customerId?: string;
  referralId?: string;
  referralOn?: 'customer-cf' | 'customer-meta' | 'subscription-cf';
  couponCode?: string;
  itemPriceId?: string;
  /** A fraction, e.g. 0.2 for 20 %; default 0. Kept for the subscription's renewals. */
  taxRate?: number;
  trialDays?: number;
}

export interface Changed {
  events: CbEvent[];
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** A Chargebee-looking id: 16 letters and digits (`AzZTZgVlCqZ2k1Aa`), after an optional prefix. */
export const newId = (prefix = '', length = 16): string => {
  const bytes = randomBytes(length);
  let out = prefix;
  for (const b of bytes) out += ALNUM[b % ALNUM.length];
  return out;
};

const PERIOD_SECONDS: Record<string, number> = { day: 86_400, week: 7 * 86_400, month: 30 * 86_400, year: 365 * 86_400 };

/** The default catalogue: one plan item `pro` with three prices. */
const CATALOGUE: { id: string; name: string; price: number; currency: string; period_unit: 'month' | 'year' }[] = [
  { id: 'pro-USD-monthly', name: 'Pro USD Monthly', price: 1000, currency: 'USD', period_unit: 'month' },
  { id: 'pro-USD-yearly', name: 'Pro USD Yearly', price: 10000, currency: 'USD', period_unit: 'year' },
  { id: 'pro-EUR-monthly', name: 'Pro EUR Monthly', price: 900, currency: 'EUR', period_unit: 'month' },
];

// --- parameter readers (the API's validation) ---------------------------------------------------------

export const str = (p: Params, name: string, o: { required?: boolean; max?: number } = {}): string | undefined => {
  const v = p[name];
  if (v === undefined || v === '') {
    if (o.required) throw new ChargebeeError(400, 'param_wrong_value', `${name} : cannot be blank`, name);
    return undefined;
  }
  if (typeof v !== 'string') throw new ChargebeeError(400, 'param_wrong_value', `${name} : invalid value`, name);
  if (o.max !== undefined && v.length > o.max)
    throw new ChargebeeError(400, 'param_wrong_value', `${name} : cannot be more than ${o.max} characters`, name);
  return v;
};

export const int = (p: Params, name: string, o: { required?: boolean; min?: number; max?: number } = {}): number | undefined => {
  const v = str(p, name, o);
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^-?\d+$/.test(v) || !Number.isSafeInteger(n) || (o.min !== undefined && n < o.min) || (o.max !== undefined && n > o.max))
    throw new ChargebeeError(
      400,
      'param_wrong_value',
      `${name} : invalid integer${o.min !== undefined ? `, must be at least ${o.min}` : ''}${o.max !== undefined ? ` and at most ${o.max}` : ''}`,
      name,
    );
  return n;
};

export const oneOf = <T extends string>(p: Params, name: string, allowed: readonly T[], fallback?: T): T | undefined => {
  const v = str(p, name);
  if (v === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(v))
    throw new ChargebeeError(400, 'param_wrong_value', `${name} : invalid value, must be one of ${allowed.join(', ')}`, name);
  return v as T;
};

/** A sub-resource (`customer[email]`): its fields, or {} when absent. */
export const sub = (p: Params, name: string): Params => {
  const v = p[name];
  if (v === undefined) return {};
  if (typeof v === 'string') throw new ChargebeeError(400, 'param_wrong_value', `${name} : invalid value`, name);
  return v;
};

/** An indexed field of a sub-resource array (`subscription_items[item_price_id][0]`) or a primitive array (`coupon_ids[0]`). */
export const indexed = (v: string | Params | undefined, name: string): string[] => {
  if (v === undefined) return [];
  if (typeof v === 'string') throw new ChargebeeError(400, 'param_wrong_value', `${name} : must be indexed (${name}[0])`, name);
  const out: string[] = [];
  for (const [k, x] of Object.entries(v)) {
    if (!/^\d+$/.test(k) || Number(k) > 100 || typeof x !== 'string')
      throw new ChargebeeError(400, 'param_wrong_value', `${name}[${k}] : invalid index`, `${name}[${k}]`);
    out[Number(k)] = x;
  }
  return out.filter((x) => x !== undefined);
};

/** The JSON-encoded `meta_data` field: an object, or undefined. */
export const metaData = (p: Params): Record<string, unknown> | undefined => {
  const raw = str(p, 'meta_data', { max: 65_000 });
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ChargebeeError(400, 'param_wrong_value', 'meta_data : invalid JSON', 'meta_data');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw new ChargebeeError(400, 'param_wrong_value', 'meta_data : must be a JSON object', 'meta_data');
  return parsed as Record<string, unknown>;
};

/** The custom fields of a write: top-level `cf_*` strings. */
export const customFields = (p: Params): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(p)) {
    if (!k.startsWith('cf_')) continue;
    if (!/^cf_[a-z0-9_]{1,50}$/.test(k) || typeof v !== 'string')
      throw new ChargebeeError(400, 'param_wrong_value', `${k} : invalid custom field`, k);
    out[k] = v;
  }
  return out;
};

/** Refuses any parameter outside `allowed` (custom fields pass when `cf` is true): a typo is an error, not a no-op. */
export const only = (p: Params, allowed: readonly string[], cf = false): void => {
  for (const k of Object.keys(p))
    if (!allowed.includes(k) && !(cf && k.startsWith('cf_')))
      throw new ChargebeeError(400, 'param_wrong_value', `${k} : unknown parameter`, k);
};

export class Ledger {
  readonly customers = new Map<string, CbCustomer>();
  readonly itemPrices = new Map<string, CbItemPrice>();
  readonly hostedPages = new Map<string, CbHostedPage>();
  readonly subscriptions = new Map<string, CbSubscription>();
  readonly invoices = new Map<string, CbInvoice>();
  readonly transactions = new Map<string, CbTransaction>();
  readonly creditNotes = new Map<string, CbCreditNote>();
  readonly promotionalCredits = new Map<string, CbPromotionalCredit>();
  readonly coupons = new Map<string, CbCoupon>();
  readonly couponCodes = new Map<string, CbCouponCode>();
  readonly cards = new Map<string, CbCard>();
  /** Every event, oldest first. */
  readonly events: CbEvent[] = [];
  /** What a hosted page was opened with (not on the wire). */
  private readonly pageInput = new Map<
    string,
    { customerId: string | null; customer: Params; itemPriceId: string; quantity: number; couponIds: string[] }
  >();
  /** The tax rate each subscription was checked out with (not on the wire). */
  private readonly taxRates = new Map<string, number>();
  private readonly couponSets = new Map<string, string>();
  private readonly now: () => number;
  private readonly baseUrl: () => string;
  private lastVersion = 0;
  /** Set by the server: whether a webhook would be sent (the envelope's webhook_status). */
  webhookConfigured = () => false;

  constructor(options: LedgerOptions = {}) {
    this.now = options.now ?? Date.now;
    this.baseUrl = options.baseUrl ?? (() => 'http://127.0.0.1');
    const at = this.secs();
    for (const c of CATALOGUE) {
      this.itemPrices.set(c.id, {
        id: c.id,
        name: c.name,
        external_name: c.name,
        item_id: 'pro',
        item_type: 'plan',
        status: 'active',
        pricing_model: 'flat_fee',
        price: c.price,
        currency_code: c.currency,
        period: 1,
        period_unit: c.period_unit,
        free_quantity: 0,
        created_at: at,
        updated_at: at,
        resource_version: this.version(),
        deleted: false,
        object: 'item_price',
      });
    }
  }

  /** The second each subscription was last invoiced (bill). */
  private readonly lastBilledAt = new Map<string, number>();

  secs(): number {
    return Math.floor(this.now() / 1000);
  }

  /** Unix ms, strictly increasing: every change gets its own. */
  version(): number {
    this.lastVersion = Math.max(this.now(), this.lastVersion + 1);
    return this.lastVersion;
  }

  private touch(o: { resource_version?: number; updated_at?: number }): void {
    o.resource_version = this.version();
    o.updated_at = this.secs();
  }

  event<K extends EventType>(event_type: K, source: EventSource, content: EventContents[K]): CbEvent {
    const e: CbEvent = {
      id: newId('ev_'),
      occurred_at: this.secs(),
      source,
      ...(source === 'api' ? { user: 'refloop-api-key' } : {}),
      object: 'event',
      api_version: 'v2',
      event_type,
      webhook_status: this.webhookConfigured() ? 'scheduled' : 'not_configured',
      content: structuredClone(content),
    };
    this.events.push(e);
    return e;
  }

  // --- reads ----------------------------------------------------------------------------------------

  private get<T>(map: Map<string, T>, what: string, id: string, param = 'id'): T {
    const v = map.get(id);
    if (!v) throw new ChargebeeError(404, 'resource_not_found', `${what} not found for id ${id}`, param);
    return v;
  }
  customer = (id: string, param?: string) => this.get(this.customers, 'Customer', id, param);
  subscription = (id: string, param?: string) => this.get(this.subscriptions, 'Subscription', id, param);
  invoice = (id: string, param?: string) => this.get(this.invoices, 'Invoice', id, param);
  transaction = (id: string) => this.get(this.transactions, 'Transaction', id);
  creditNote = (id: string) => this.get(this.creditNotes, 'Credit note', id);
  itemPrice = (id: string, param?: string) => this.get(this.itemPrices, 'Item price', id, param);
  hostedPage = (id: string) => this.get(this.hostedPages, 'Hosted page', id);
  promotionalCredit = (id: string) => this.get(this.promotionalCredits, 'Promotional credit', id);
  coupon = (id: string, param?: string) => this.get(this.coupons, 'Coupon', id, param);
  couponCode = (code: string, param?: string) => this.get(this.couponCodes, 'Coupon code', code, param);
  eventById = (id: string): CbEvent => {
    const e = this.events.find((x) => x.id === id);
    if (!e) throw new ChargebeeError(404, 'resource_not_found', `Event not found for id ${id}`, 'id');
    return e;
  };
  cardOf = (customerId: string): CbCard | undefined => this.cards.get(customerId);

  /** The customer's promotional credits in a currency (0 when none). */
  balanceOf(customerId: string, currency: string): number {
    const c = this.customer(customerId);
    return c.balances.find((b) => b.currency_code === currency.toUpperCase())?.promotional_credits ?? 0;
  }

  private setBalance(c: CbCustomer, currency: string, amount: number): void {
    let b = c.balances.find((x) => x.currency_code === currency);
    if (!b) {
      b = {
        promotional_credits: 0,
        excess_payments: 0,
        refundable_credits: 0,
        unbilled_charges: 0,
        currency_code: currency,
        balance_currency_code: currency,
      };
      c.balances.push(b);
    }
    b.promotional_credits = amount;
    if (c.preferred_currency_code === currency) c.promotional_credits = amount;
    this.touch(c);
  }

  // --- customers ------------------------------------------------------------------------------------

  private newCustomer(id: string, fields: { email?: string; first_name?: string; last_name?: string; currency?: string }): CbCustomer {
    if (this.customers.has(id)) throw new ChargebeeError(400, 'duplicate_entry', `The value ${id} is already present.`, 'id');
    const at = this.secs();
    const c: CbCustomer = {
      id,
      ...(fields.email ? { email: fields.email } : {}),
      ...(fields.first_name ? { first_name: fields.first_name } : {}),
      ...(fields.last_name ? { last_name: fields.last_name } : {}),
      auto_collection: 'on',
      net_term_days: 0,
      allow_direct_debit: false,
      created_at: at,
      updated_at: at,
      resource_version: this.version(),
      taxability: 'taxable',
      pii_cleared: 'active',
      channel: 'web',
      deleted: false,
      preferred_currency_code: fields.currency ?? 'USD',
      promotional_credits: 0,
      unbilled_charges: 0,
      refundable_credits: 0,
      excess_payments: 0,
      balances: [],
      object: 'customer',
    };
    this.customers.set(id, c);
    return c;
  }

  private applyFields(target: Record<string, unknown>, cf: Record<string, string>, meta: Record<string, unknown> | undefined): void {
    Object.assign(target, cf);
    if (meta !== undefined) target.meta_data = meta;
  }

  /** POST /customers. */
  createCustomer(p: Params): Changed & { customer: CbCustomer } {
    only(p, ['id', 'email', 'first_name', 'last_name', 'company', 'phone', 'preferred_currency_code', 'meta_data'], true);
    const id = str(p, 'id', { max: 50 }) ?? newId();
    const email = str(p, 'email', { max: 70 });
    if (email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(email))
      throw new ChargebeeError(400, 'param_wrong_value', 'email : invalid email', 'email');
    const currency = str(p, 'preferred_currency_code', { max: 3 });
    const cf = customFields(p);
    const meta = metaData(p);
    const c = this.newCustomer(id, {
      email,
      first_name: str(p, 'first_name', { max: 150 }),
      last_name: str(p, 'last_name', { max: 150 }),
      currency: currency?.toUpperCase(),
    });
    this.applyFields(c, cf, meta);
    return { customer: c, events: [this.event('customer_created', 'api', { customer: c })] };
  }

  /** POST /customers/{id}. */
  updateCustomer(id: string, p: Params): Changed & { customer: CbCustomer } {
    only(p, ['email', 'first_name', 'last_name', 'company', 'phone', 'meta_data'], true);
    const c = this.customer(id);
    const email = str(p, 'email', { max: 70 });
    if (email !== undefined && !/^[^@\s]+@[^@\s]+$/.test(email))
      throw new ChargebeeError(400, 'param_wrong_value', 'email : invalid email', 'email');
    const cf = customFields(p);
    const meta = metaData(p);
    if (email !== undefined) c.email = email;
    for (const f of ['first_name', 'last_name', 'company', 'phone']) {
      const v = str(p, f, { max: 150 });
      if (v !== undefined) c[f] = v;
    }
    this.applyFields(c, cf, meta);
    this.touch(c);
    return { customer: c, events: [this.event('customer_changed', 'api', this.withCard({ customer: c }))] };
  }

  private withCard<T extends { customer: CbCustomer }>(content: T): T & { card?: CbCard } {
    const card = this.cards.get(content.customer.id);
    return card ? { ...content, card } : content;
  }

  private ensureCard(c: CbCustomer): CbCard {
    let card = this.cards.get(c.id);
    if (!card) {
      const at = this.secs();
      card = {
        payment_source_id: newId('pm_'),
        status: 'valid',
        gateway: 'chargebee',
        gateway_account_id: 'gw_emulator',
        iin: '411111',
        last4: '1111',
        card_type: 'visa',
        funding_type: 'credit',
        expiry_month: 12,
        expiry_year: 2035,
        masked_number: '************1111',
        created_at: at,
        customer_id: c.id,
        object: 'card',
      };
      this.cards.set(c.id, card);
      c.primary_payment_source_id = card.payment_source_id;
      c.card_status = 'valid';
      c.payment_method = {
        type: 'card',
        reference_id: card.payment_source_id,
        gateway: 'chargebee',
        status: 'valid',
        object: 'payment_method',
      } as Customer.PaymentMethod;
    }
    return card;
  }

  // --- hosted pages and checkout ---------------------------------------------------------------------

  /** POST /hosted_pages/checkout_new_for_items: a page in state `created`. */
  openCheckout(p: Params): { hosted_page: CbHostedPage } {
    only(p, ['customer', 'subscription', 'subscription_items', 'coupon_ids', 'redirect_url', 'cancel_url', 'pass_thru_content', 'embed']);
    const customer = sub(p, 'customer');
    only(customer, ['id', 'email', 'first_name', 'last_name', 'company', 'phone']);
    const customerId = str(customer, 'id', { max: 50 }) ?? null;
    const items = sub(p, 'subscription_items');
    only(items, ['item_price_id', 'quantity', 'unit_price']);
    const priceIds = indexed(items.item_price_id, 'subscription_items[item_price_id]');
    if (priceIds.length === 0)
      throw new ChargebeeError(
        400,
        'param_wrong_value',
        'subscription_items[item_price_id][0] : cannot be blank',
        'subscription_items[item_price_id][0]',
      );
    if (priceIds.length > 1)
      throw new ChargebeeError(400, 'param_wrong_value', 'the emulator takes one plan item price', 'subscription_items[item_price_id][1]');
    const itemPriceId = priceIds[0] as string;
    const price = this.itemPrice(itemPriceId, 'subscription_items[item_price_id][0]');
    const quantities = indexed(items.quantity, 'subscription_items[quantity]');
    const quantity = quantities[0] === undefined ? 1 : Number(quantities[0]);
    if (!Number.isInteger(quantity) || quantity < 1 || quantity > 10_000)
      throw new ChargebeeError(
        400,
        'param_wrong_value',
        'subscription_items[quantity][0] : invalid integer',
        'subscription_items[quantity][0]',
      );
    const couponIds = indexed(p.coupon_ids, 'coupon_ids');
    couponIds.forEach((c, i) => {
      this.couponFor(c, price.currency_code, `coupon_ids[${i}]`);
    });
    const at = this.secs();
    const id = newId('', 32);
    const page: CbHostedPage = {
      id,
      type: 'checkout_new',
      url: `${this.baseUrl()}/pages/v3/${id}/checkout`,
      state: 'created',
      embed: str(p, 'embed') === 'true',
      created_at: at,
      expires_at: at + 3 * 3600,
      updated_at: at,
      resource_version: this.version(),
      object: 'hosted_page',
    };
    this.hostedPages.set(id, page);
    this.pageInput.set(id, { customerId, customer, itemPriceId, quantity, couponIds });
    return { hosted_page: page };
  }

  /** A coupon id or code usable on a new subscription in `currency`: the coupon and the code (if a code). */
  private couponFor(idOrCode: string, currency: string, param: string): { coupon: CbCoupon; code: CbCouponCode | null } {
    const code = this.couponCodes.get(idOrCode) ?? null;
    const coupon = code ? this.coupon(code.coupon_id, param) : this.coupons.get(idOrCode);
    if (!coupon) throw new ChargebeeError(404, 'resource_not_found', `Coupon not found for ${idOrCode}`, param);
    if (code && code.status !== 'not_redeemed')
      throw new ChargebeeError(400, 'param_wrong_value', `The coupon code ${idOrCode} has been ${code.status} already`, param);
    if (coupon.status !== 'active')
      throw new ChargebeeError(400, 'param_wrong_value', `The coupon ${coupon.id} is ${coupon.status}`, param);
    if (coupon.max_redemptions !== undefined && (coupon.redemptions ?? 0) >= coupon.max_redemptions)
      throw new ChargebeeError(400, 'param_wrong_value', `The coupon ${coupon.id} has reached its maximum redemptions`, param);
    if (coupon.discount_type === 'fixed_amount' && coupon.currency_code !== currency)
      throw new ChargebeeError(
        400,
        'param_wrong_value',
        `The coupon ${coupon.id} is in ${coupon.currency_code}, the plan in ${currency}`,
        param,
      );
    return { coupon, code };
  }

  /**
   * The customer completes a hosted page: the customer (new or given), the subscription, its first invoice
   * and payment; the page `succeeded`. Events: customer_created (new customer), subscription_created,
   * payment_succeeded (a paid invoice with a payment).
   */
  completeCheckout(
    pageId: string,
    o: { email?: string; taxRate?: number; trialDays?: number; subscriptionFields?: Record<string, string> } = {},
  ): Changed & {
    hostedPage: CbHostedPage;
    customer: CbCustomer;
    subscription: CbSubscription;
    invoice: CbInvoice | null;
    transaction: CbTransaction | null;
  } {
    const page = this.hostedPage(pageId);
    const input = this.pageInput.get(pageId);
    if (!input || page.state !== 'created')
      throw new ChargebeeError(400, 'invalid_state_for_request', `The hosted page ${pageId} is ${page.state}`, 'id');
    const taxRate = o.taxRate ?? 0;
    if (!(taxRate >= 0 && taxRate < 1)) throw new ChargebeeError(400, 'param_wrong_value', 'taxRate must be from 0 to below 1', 'tax_rate');
    const trialDays = o.trialDays ?? 0;
    if (!Number.isInteger(trialDays) || trialDays < 0 || trialDays > 365)
      throw new ChargebeeError(400, 'param_wrong_value', 'trialDays must be an integer from 0 to 365', 'trial_days');
    const price = this.itemPrice(input.itemPriceId);
    const coupons = input.couponIds.map((c, i) => this.couponFor(c, price.currency_code, `coupon_ids[${i}]`));
    const events: CbEvent[] = [];
    // The customer: the given one, else a new one (customer_created).
    let customer = input.customerId ? this.customers.get(input.customerId) : undefined;
    if (!customer) {
      const email = str(input.customer, 'email') ?? o.email;
      if (!email) throw new ChargebeeError(400, 'param_wrong_value', 'customer[email] : cannot be blank', 'customer[email]');
      customer = this.newCustomer(input.customerId ?? newId(), {
        email,
        first_name: str(input.customer, 'first_name'),
        last_name: str(input.customer, 'last_name'),
        currency: price.currency_code,
      });
      this.ensureCard(customer);
      events.push(this.event('customer_created', 'hosted_page', this.withCard({ customer })));
    } else {
      if (!customer.email && o.email) customer.email = o.email;
      this.ensureCard(customer);
      this.touch(customer);
    }
    const card = this.ensureCard(customer);
    const at = this.secs();
    const periodSecs = PERIOD_SECONDS[price.period_unit] as number;
    const trialEnd = trialDays > 0 ? at + trialDays * 86_400 : null;
    const termEnd = trialEnd ?? at + periodSecs * price.period;
    const amount = price.price * input.quantity;
    const s: CbSubscription = {
      id: newId(),
      customer_id: customer.id,
      currency_code: price.currency_code,
      status: trialEnd ? 'in_trial' : 'active',
      billing_period: price.period,
      billing_period_unit: price.period_unit,
      // In trial, the term is the trial.
      current_term_start: at,
      current_term_end: termEnd,
      ...(trialEnd ? { trial_start: at, trial_end: trialEnd } : { activated_at: at }),
      next_billing_at: termEnd,
      created_at: at,
      started_at: at,
      updated_at: at,
      resource_version: this.version(),
      has_scheduled_advance_invoices: false,
      has_scheduled_changes: false,
      channel: 'web',
      auto_collection: 'on',
      payment_source_id: card.payment_source_id,
      due_invoices_count: 0,
      mrr: 0,
      deleted: false,
      decommissioned: false,
      subscription_items: [
        {
          item_price_id: price.id,
          item_type: 'plan',
          quantity: input.quantity,
          unit_price: price.price,
          amount,
          free_quantity: 0,
          billing_period: price.period,
          billing_period_unit: price.period_unit,
          object: 'subscription_item',
        } as Subscription.SubscriptionItem,
      ],
      object: 'subscription',
    };
    if (coupons.length > 0)
      s.coupons = coupons.map(
        ({ coupon, code }) =>
          ({
            coupon_id: coupon.id,
            ...(code ? { coupon_code: code.code } : {}),
            applied_count: 0,
            object: 'coupon',
          }) as Subscription.Coupon,
      );
    Object.assign(s, o.subscriptionFields ?? {});
    s.mrr = this.mrrOf(s);
    this.subscriptions.set(s.id, s);
    this.taxRates.set(s.id, taxRate);
    for (const { coupon, code } of coupons) {
      coupon.redemptions = (coupon.redemptions ?? 0) + 1;
      this.touch(coupon);
      if (code) code.status = 'redeemed';
    }
    let invoice: CbInvoice | null = null;
    let transaction: CbTransaction | null = null;
    if (!trialEnd) {
      const billed = this.bill(s, customer, { first: true, fail: false });
      invoice = billed.invoice;
      transaction = billed.transaction;
    }
    page.state = 'succeeded';
    this.touch(page);
    page.content = {
      subscription: structuredClone(s),
      customer: structuredClone(customer),
      card: structuredClone(card),
      ...(invoice ? { invoice: structuredClone(invoice) } : {}),
    };
    events.push(this.event('subscription_created', 'hosted_page', { subscription: s, customer, card, ...(invoice ? { invoice } : {}) }));
    if (transaction && invoice)
      events.push(this.event('payment_succeeded', 'hosted_page', { transaction, invoice, customer, subscription: s, card }));
    return { events, hostedPage: page, customer, subscription: s, invoice, transaction };
  }

  private mrrOf(s: CbSubscription): number {
    const item = s.subscription_items[0];
    if (!item || s.status === 'cancelled' || s.status === 'paused') return 0;
    const amount = item.amount ?? 0;
    const per = (s.billing_period ?? 1) * (s.billing_period_unit === 'year' ? 12 : s.billing_period_unit === 'month' ? 1 : 1);
    return Math.round(amount / per);
  }

  /**
   * One invoice for the subscription's current term: coupons, then promotional credits (both before tax),
   * then tax; paid by a successful payment, or left payment_due by a failed one. Mutates the subscription's
   * coupons' applied_count and the customer's balance.
   */
  private bill(
    s: CbSubscription,
    c: CbCustomer,
    o: { first: boolean; fail: boolean },
  ): { invoice: CbInvoice; transaction: CbTransaction | null; creditsUsed: number } {
    // A subscription's invoices are dated in distinct seconds, oldest first: a real renewal comes a term
    // later, and the order of payments is their paid_at (a test renewing at once must not tie them).
    const at = Math.max(this.secs(), (this.lastBilledAt.get(s.id) ?? 0) + 1);
    this.lastBilledAt.set(s.id, at);
    const item = s.subscription_items[0] as Subscription.SubscriptionItem;
    const subTotal = item.amount ?? 0;
    const discounts: Invoice.Discount[] = [];
    let taxable = subTotal;
    for (const sc of s.coupons ?? []) {
      const coupon = this.coupons.get(sc.coupon_id);
      if (!coupon) continue;
      const applies =
        coupon.duration_type === 'forever' ||
        (coupon.duration_type === 'one_time' && sc.applied_count === 0) ||
        (coupon.duration_type === 'limited_period' && sc.applied_count < (coupon.period ?? 1));
      if (!applies || taxable === 0) continue;
      const off =
        coupon.discount_type === 'percentage'
          ? Math.round((taxable * (coupon.discount_percentage ?? 0)) / 100)
          : Math.min(taxable, coupon.discount_amount ?? 0);
      sc.applied_count += 1;
      if (off <= 0) continue;
      taxable -= off;
      discounts.push({
        amount: off,
        description: coupon.name,
        entity_type: 'document_level_coupon',
        discount_type: coupon.discount_type === 'percentage' ? 'percentage' : 'fixed_amount',
        entity_id: coupon.id,
        ...(sc.coupon_code ? { coupon_set_code: sc.coupon_code } : {}),
        object: 'discount',
      } as Invoice.Discount);
    }
    const balance = this.balanceOf(c.id, s.currency_code);
    const creditsUsed = Math.min(balance, taxable);
    if (creditsUsed > 0) {
      taxable -= creditsUsed;
      discounts.push({
        amount: creditsUsed,
        description: 'Promotional Credits',
        entity_type: 'promotional_credits',
        object: 'discount',
      } as Invoice.Discount);
      this.setBalance(c, s.currency_code, balance - creditsUsed);
    }
    const tax = Math.round(taxable * (this.taxRates.get(s.id) ?? 0));
    const total = taxable + tax;
    const paid = !o.fail || total === 0;
    const invoice: CbInvoice = {
      id: newId('inv_'),
      customer_id: c.id,
      subscription_id: s.id,
      recurring: true,
      status: paid ? 'paid' : 'payment_due',
      price_type: 'tax_exclusive',
      date: at,
      due_date: at,
      net_term_days: 0,
      currency_code: s.currency_code,
      sub_total: subTotal,
      tax,
      total,
      amount_paid: paid ? total : 0,
      amount_adjusted: 0,
      write_off_amount: 0,
      credits_applied: 0,
      amount_due: paid ? 0 : total,
      ...(paid ? { paid_at: at } : { dunning_status: 'in_progress' }),
      first_invoice: o.first,
      term_finalized: true,
      is_gifted: false,
      has_advance_charges: false,
      round_off_amount: 0,
      exchange_rate: 1,
      base_currency_code: s.currency_code,
      generated_at: at,
      channel: 'web',
      updated_at: at,
      resource_version: this.version(),
      deleted: false,
      line_items: [
        {
          id: newId('li_'),
          date_from: s.current_term_start ?? at,
          date_to: s.current_term_end ?? at,
          unit_amount: item.unit_price ?? 0,
          quantity: item.quantity ?? 1,
          amount: subTotal,
          pricing_model: 'flat_fee',
          is_taxed: tax > 0,
          tax_amount: tax,
          discount_amount: subTotal - taxable,
          item_level_discount_amount: 0,
          description: this.itemPrices.get(item.item_price_id)?.name ?? item.item_price_id,
          entity_type: 'plan_item_price',
          entity_id: item.item_price_id,
          subscription_id: s.id,
          customer_id: c.id,
          object: 'line_item',
        },
      ] as unknown as Invoice.LineItem[],
      discounts,
      linked_payments: [],
      issued_credit_notes: [],
      applied_credits: [],
      object: 'invoice',
    };
    this.invoices.set(invoice.id, invoice);
    let transaction: CbTransaction | null = null;
    if (total > 0) {
      transaction = {
        id: newId('txn_'),
        customer_id: c.id,
        subscription_id: s.id,
        payment_source_id: s.payment_source_id,
        payment_method: 'card',
        gateway: 'chargebee',
        gateway_account_id: 'gw_emulator',
        type: 'payment',
        date: at,
        currency_code: s.currency_code,
        amount: total,
        id_at_gateway: newId('ch_'),
        status: paid ? 'success' : 'failure',
        ...(paid ? {} : { error_code: 'card_declined', error_text: 'The card was declined (emulator)' }),
        amount_unused: 0,
        masked_card_number: '************1111',
        base_currency_code: s.currency_code,
        updated_at: at,
        resource_version: this.version(),
        deleted: false,
        linked_invoices: [
          {
            invoice_id: invoice.id,
            applied_amount: paid ? total : 0,
            applied_at: at,
            invoice_date: at,
            invoice_total: total,
            invoice_status: paid ? 'paid' : 'payment_due',
          },
        ],
        linked_credit_notes: [],
        linked_refunds: [],
        object: 'transaction',
      } as CbTransaction;
      this.transactions.set(transaction.id, transaction);
      invoice.linked_payments = [
        {
          txn_id: transaction.id,
          applied_amount: paid ? total : 0,
          applied_at: at,
          txn_status: paid ? 'success' : 'failure',
          txn_date: at,
          txn_amount: total,
        },
      ];
    }
    if (!paid) {
      s.due_invoices_count = (s.due_invoices_count ?? 0) + 1;
      s.due_since = s.due_since ?? at;
      s.total_dues = (s.total_dues ?? 0) + total;
    }
    this.touch(s);
    return { invoice, transaction, creditsUsed };
  }

  // --- simulations ----------------------------------------------------------------------------------

  /**
   * The term end arrives: the term moves forward one period; an in-trial subscription becomes active
   * (subscription_activated) and is billed. Only active and in-trial subscriptions renew (a non_renewing
   * one is cancelled at its term end: `cancel`). Events: subscription_renewed (or _activated), then
   * payment_succeeded, or payment_failed when `fail`.
   */
  renew(
    subscriptionId: string,
    o: { fail?: boolean } = {},
  ): Changed & { subscription: CbSubscription; invoice: CbInvoice; transaction: CbTransaction | null; creditsUsed: number } {
    const s = this.subscription(subscriptionId, 'subscription_id');
    if (s.status !== 'active' && s.status !== 'in_trial')
      throw new ChargebeeError(
        400,
        'invalid_state_for_request',
        `Subscription ${s.id} is ${s.status}; it does not renew`,
        'subscription_id',
      );
    const c = this.customer(s.customer_id);
    const price = this.itemPrice((s.subscription_items[0] as Subscription.SubscriptionItem).item_price_id);
    const periodSecs = (PERIOD_SECONDS[price.period_unit] as number) * price.period;
    const trial = s.status === 'in_trial';
    const start = trial ? (s.trial_end ?? this.secs()) : (s.current_term_end ?? this.secs());
    s.current_term_start = start;
    s.current_term_end = start + periodSecs;
    s.next_billing_at = s.current_term_end;
    if (trial) {
      s.status = 'active';
      s.activated_at = this.secs();
      s.mrr = this.mrrOf(s);
    }
    const { invoice, transaction, creditsUsed } = this.bill(s, c, { first: trial, fail: o.fail === true });
    const card = this.cards.get(c.id) as CbCard;
    const events = [
      this.event(trial ? 'subscription_activated' : 'subscription_renewed', 'scheduled_job', {
        subscription: s,
        customer: c,
        card,
        invoice,
      }),
    ];
    if (transaction)
      events.push(
        this.event(transaction.status === 'success' ? 'payment_succeeded' : 'payment_failed', 'scheduled_job', {
          transaction,
          invoice,
          customer: c,
          subscription: s,
          card,
        }),
      );
    return { events, subscription: s, invoice, transaction, creditsUsed };
  }

  private cancelNow(s: CbSubscription, c: CbCustomer, source: EventSource): Changed & { subscription: CbSubscription } {
    s.status = 'cancelled';
    s.cancelled_at = this.secs();
    s.current_term_end = this.secs();
    delete s.next_billing_at;
    s.mrr = 0;
    this.touch(s);
    return { events: [this.event('subscription_cancelled', source, this.withCard({ subscription: s, customer: c }))], subscription: s };
  }

  /** Cancels now (subscription_cancelled). */
  cancel(subscriptionId: string, source: EventSource = 'admin_console'): Changed & { subscription: CbSubscription } {
    const s = this.subscription(subscriptionId, 'subscription_id');
    if (s.status === 'cancelled' || s.status === 'transferred')
      throw new ChargebeeError(400, 'invalid_state_for_request', `Subscription ${s.id} is already ${s.status}`, 'subscription_id');
    return this.cancelNow(s, this.customer(s.customer_id), source);
  }

  /** Cancels at the term end: status non_renewing, no next billing (subscription_changed). */
  cancelAtTermEnd(subscriptionId: string): Changed & { subscription: CbSubscription } {
    const s = this.subscription(subscriptionId, 'subscription_id');
    if (s.status !== 'active')
      throw new ChargebeeError(400, 'invalid_state_for_request', `Subscription ${s.id} is ${s.status}`, 'subscription_id');
    s.status = 'non_renewing';
    delete s.next_billing_at;
    this.touch(s);
    const c = this.customer(s.customer_id);
    return {
      events: [this.event('subscription_changed', 'admin_console', this.withCard({ subscription: s, customer: c }))],
      subscription: s,
    };
  }

  /** paused (subscription_paused), resumed (subscription_resumed), reactivated after a cancel (subscription_reactivated). */
  setState(subscriptionId: string, to: 'pause' | 'resume' | 'reactivate'): Changed & { subscription: CbSubscription } {
    const s = this.subscription(subscriptionId, 'subscription_id');
    const from = { pause: ['active', 'non_renewing'], resume: ['paused'], reactivate: ['cancelled', 'non_renewing'] }[to];
    if (!from.includes(s.status))
      throw new ChargebeeError(400, 'invalid_state_for_request', `Subscription ${s.id} is ${s.status}; it cannot ${to}`, 'subscription_id');
    const at = this.secs();
    if (to === 'pause') {
      s.status = 'paused';
      s.pause_date = at;
      delete s.next_billing_at;
    } else {
      s.status = 'active';
      if (to === 'resume') {
        s.resume_date = at;
        delete s.pause_date;
      } else delete s.cancelled_at;
      const price = this.itemPrice((s.subscription_items[0] as Subscription.SubscriptionItem).item_price_id);
      if (to === 'reactivate' && (s.current_term_end ?? 0) <= at) {
        s.current_term_start = at;
        s.current_term_end = at + (PERIOD_SECONDS[price.period_unit] as number) * price.period;
      }
      s.next_billing_at = s.current_term_end ?? at;
    }
    s.mrr = this.mrrOf(s);
    this.touch(s);
    const type = to === 'pause' ? 'subscription_paused' : to === 'resume' ? 'subscription_resumed' : 'subscription_reactivated';
    return {
      events: [this.event(type, 'admin_console', this.withCard({ subscription: s, customer: this.customer(s.customer_id) }))],
      subscription: s,
    };
  }

  /** POST /subscriptions/{id}/update_for_items: custom fields, meta_data, the plan's item price (subscription_changed). */
  updateSubscription(subscriptionId: string, p: Params): Changed & { subscription: CbSubscription; customer: CbCustomer } {
    only(p, ['meta_data', 'subscription_items', 'replace_items_list', 'invoice_immediately', 'prorate'], true);
    const s = this.subscription(subscriptionId);
    if (s.status === 'cancelled') throw new ChargebeeError(400, 'invalid_state_for_request', `Subscription ${s.id} is cancelled`, 'id');
    const cf = customFields(p);
    const meta = metaData(p);
    const items = sub(p, 'subscription_items');
    only(items, ['item_price_id', 'quantity', 'unit_price']);
    const priceId = indexed(items.item_price_id, 'subscription_items[item_price_id]')[0];
    if (priceId !== undefined) {
      const price = this.itemPrice(priceId, 'subscription_items[item_price_id][0]');
      if (price.currency_code !== s.currency_code)
        throw new ChargebeeError(400, 'param_wrong_value', 'the item price is in another currency', 'subscription_items[item_price_id][0]');
      const quantity = Number(indexed(items.quantity, 'subscription_items[quantity]')[0] ?? s.subscription_items[0]?.quantity ?? 1);
      if (!Number.isInteger(quantity) || quantity < 1)
        throw new ChargebeeError(
          400,
          'param_wrong_value',
          'subscription_items[quantity][0] : invalid integer',
          'subscription_items[quantity][0]',
        );
      s.subscription_items = [
        {
          ...(s.subscription_items[0] as Subscription.SubscriptionItem),
          item_price_id: price.id,
          quantity,
          unit_price: price.price,
          amount: price.price * quantity,
          billing_period: price.period,
          billing_period_unit: price.period_unit,
        },
      ];
      s.billing_period = price.period;
      s.billing_period_unit = price.period_unit;
      s.mrr = this.mrrOf(s);
    }
    this.applyFields(s, cf, meta);
    this.touch(s);
    const c = this.customer(s.customer_id);
    return {
      events: [this.event('subscription_changed', 'api', this.withCard({ subscription: s, customer: c }))],
      subscription: s,
      customer: c,
    };
  }

  /** POST /subscriptions/{id}/delete: `deleted: true` (subscription_deleted). */
  deleteSubscription(subscriptionId: string): Changed & { subscription: CbSubscription; customer: CbCustomer } {
    const s = this.subscription(subscriptionId);
    if (s.deleted) throw new ChargebeeError(404, 'resource_not_found', `Subscription not found for id ${s.id}`, 'id');
    s.deleted = true;
    this.touch(s);
    const c = this.customer(s.customer_id);
    return {
      events: [this.event('subscription_deleted', 'api', this.withCard({ subscription: s, customer: c }))],
      subscription: s,
      customer: c,
    };
  }

  /** What is left to refund of an invoice's successful payment. */
  refundable(invoice: CbInvoice): { payment: CbTransaction; left: number } {
    const payment = [...this.transactions.values()].find(
      (t) => t.type === 'payment' && t.status === 'success' && t.linked_invoices?.some((l) => l.invoice_id === invoice.id),
    );
    if (!payment || invoice.status !== 'paid')
      throw new ChargebeeError(400, 'invalid_state_for_request', `Invoice ${invoice.id} has no successful payment to refund`, 'invoice_id');
    const refunded = (payment.linked_refunds ?? []).reduce((n, r) => n + r.txn_amount, 0);
    return { payment, left: payment.amount - refunded };
  }

  /**
   * A refund of a paid invoice: a refundable credit note and a refund transaction. Events:
   * credit_note_created, then payment_refunded (refund_initiated, transaction in_progress, note refund_due,
   * when `pending`). `reasonCode` chargeback is the emulator's dispute.
   */
  refund(
    invoiceId: string,
    o: { amount?: number; reasonCode?: CreditNote['reason_code']; pending?: boolean; source?: EventSource } = {},
  ): Changed & { creditNote: CbCreditNote; transaction: CbTransaction; invoice: CbInvoice } {
    const invoice = this.invoice(invoiceId, 'invoice_id');
    const { payment, left } = this.refundable(invoice);
    const amount = o.amount ?? left;
    if (!Number.isInteger(amount) || amount < 1 || amount > left)
      throw new ChargebeeError(
        400,
        'param_wrong_value',
        `refund_amount : must be from 1 to ${left}, what is left to refund`,
        'refund_amount',
      );
    const at = this.secs();
    const s = this.subscription(invoice.subscription_id as string);
    const c = this.customer(invoice.customer_id);
    const reason = o.reasonCode ?? 'product_unsatisfactory';
    // The note's tax is the invoice's in proportion to the amount.
    const tax = invoice.total === 0 ? 0 : Math.round((invoice.tax * amount) / invoice.total);
    const status = o.pending ? 'in_progress' : 'success';
    const refund: CbTransaction = {
      id: newId('txn_'),
      customer_id: c.id,
      subscription_id: s.id,
      payment_source_id: payment.payment_source_id,
      payment_method: 'card',
      gateway: 'chargebee',
      gateway_account_id: 'gw_emulator',
      type: 'refund',
      date: at,
      currency_code: invoice.currency_code,
      amount,
      id_at_gateway: newId('re_'),
      status,
      reference_transaction_id: payment.id,
      refunded_txn_id: payment.id,
      masked_card_number: '************1111',
      updated_at: at,
      resource_version: this.version(),
      deleted: false,
      linked_invoices: [],
      linked_refunds: [],
      linked_credit_notes: [],
      object: 'transaction',
    } as CbTransaction;
    const note: CbCreditNote = {
      id: newId('cn_'),
      customer_id: c.id,
      subscription_id: s.id,
      reference_invoice_id: invoice.id,
      type: 'refundable',
      reason_code: reason,
      create_reason_code: reason === 'chargeback' ? 'Chargeback' : 'Refund',
      status: o.pending ? 'refund_due' : 'refunded',
      date: at,
      price_type: 'tax_exclusive',
      currency_code: invoice.currency_code,
      sub_total: amount - tax,
      total: amount,
      amount_allocated: 0,
      amount_refunded: o.pending ? 0 : amount,
      amount_available: 0,
      ...(o.pending ? {} : { refunded_at: at }),
      round_off_amount: 0,
      fractional_correction: 0,
      generated_at: at,
      channel: 'web',
      updated_at: at,
      resource_version: this.version(),
      deleted: false,
      line_items: [],
      discounts: [],
      taxes: [],
      allocations: [],
      linked_refunds: [{ txn_id: refund.id, applied_amount: amount, applied_at: at, txn_status: status, txn_date: at, txn_amount: amount }],
      object: 'credit_note',
    } as CbCreditNote;
    refund.linked_credit_notes = [
      {
        cn_id: note.id,
        applied_amount: amount,
        applied_at: at,
        cn_reason_code: reason,
        cn_date: at,
        cn_total: amount,
        cn_status: note.status,
        cn_reference_invoice_id: invoice.id,
      },
    ] as Transaction.LinkedCreditNote[];
    payment.linked_refunds = [
      ...(payment.linked_refunds ?? []),
      { txn_id: refund.id, txn_status: status, txn_date: at, txn_amount: amount },
    ];
    this.touch(payment);
    invoice.issued_credit_notes = [
      ...(invoice.issued_credit_notes ?? []),
      { cn_id: note.id, cn_reason_code: reason, cn_date: at, cn_total: amount, cn_status: note.status } as Invoice.IssuedCreditNote,
    ];
    this.touch(invoice);
    this.transactions.set(refund.id, refund);
    this.creditNotes.set(note.id, note);
    this.touch(s);
    const source = o.source ?? 'admin_console';
    const card = this.cards.get(c.id);
    const events = [
      this.event('credit_note_created', source, { credit_note: note }),
      this.event(o.pending ? 'refund_initiated' : 'payment_refunded', source, {
        transaction: refund,
        invoice,
        credit_note: note,
        customer: c,
        subscription: s,
        ...(card ? { card } : {}),
      }),
    ];
    return { events, creditNote: note, transaction: refund, invoice };
  }

  /** A pending refund's money goes back: the refund transaction succeeds, the note is refunded (payment_refunded). */
  settleRefund(creditNoteId: string): Changed & { creditNote: CbCreditNote; transaction: CbTransaction; invoice: CbInvoice } {
    const note = this.creditNote(creditNoteId);
    const link = note.linked_refunds?.[0];
    const refund = link ? this.transactions.get(link.txn_id) : undefined;
    if (note.status !== 'refund_due' || !refund || refund.status !== 'in_progress')
      throw new ChargebeeError(400, 'invalid_state_for_request', `Credit note ${note.id} is ${note.status}, not a pending refund`, 'id');
    const at = this.secs();
    refund.status = 'success';
    this.touch(refund);
    note.status = 'refunded';
    note.amount_refunded = note.total;
    note.refunded_at = at;
    if (link) link.txn_status = 'success';
    this.touch(note);
    const invoice = this.invoice(note.reference_invoice_id as string);
    for (const cn of invoice.issued_credit_notes ?? []) if (cn.cn_id === note.id) cn.cn_status = 'refunded';
    this.touch(invoice);
    const payment = refund.refunded_txn_id ? this.transactions.get(refund.refunded_txn_id) : undefined;
    for (const r of payment?.linked_refunds ?? []) if (r.txn_id === refund.id) r.txn_status = 'success';
    const s = this.subscription(invoice.subscription_id as string);
    const c = this.customer(invoice.customer_id);
    this.touch(s);
    const card = this.cards.get(c.id);
    const events = [
      this.event('payment_refunded', 'system', {
        transaction: refund,
        invoice,
        credit_note: note,
        customer: c,
        subscription: s,
        ...(card ? { card } : {}),
      }),
    ];
    return { events, creditNote: note, transaction: refund, invoice };
  }

  // --- promotional credits --------------------------------------------------------------------------

  /** POST /promotional_credits/add and /deduct. */
  promotional(kind: 'add' | 'deduct', p: Params): Changed & { customer: CbCustomer; promotional_credit: CbPromotionalCredit } {
    only(p, ['customer_id', 'amount', 'amount_in_decimal', 'currency_code', 'description', 'credit_type', 'reference']);
    if (p.amount_in_decimal !== undefined)
      throw new ChargebeeError(
        400,
        'param_wrong_value',
        'amount_in_decimal : the emulator takes amount (minor units)',
        'amount_in_decimal',
      );
    const c = this.customer(str(p, 'customer_id', { required: true }) as string, 'customer_id');
    const currency = (str(p, 'currency_code', { max: 3 }) ?? c.preferred_currency_code ?? 'USD').toUpperCase();
    if (!/^[A-Z]{3}$/.test(currency))
      throw new ChargebeeError(400, 'param_wrong_value', 'currency_code : invalid currency', 'currency_code');
    const description = str(p, 'description', { required: true, max: 250 }) as string;
    const creditType = oneOf(
      p,
      'credit_type',
      ['loyalty_credits', 'referral_rewards', 'general'] as const,
      'general',
    ) as PromotionalCredit['credit_type'];
    const reference = str(p, 'reference', { max: 500 });
    const balance = this.balanceOf(c.id, currency);
    let amount = int(p, 'amount', { required: kind === 'add', min: 1, max: 1_000_000_000 });
    if (kind === 'deduct') {
      if (amount === undefined) {
        if (balance === 0)
          throw new ChargebeeError(400, 'param_wrong_value', `The customer has no promotional credits in ${currency} to deduct`, 'amount');
        amount = balance;
      }
      if (amount > balance)
        throw new ChargebeeError(
          400,
          'param_wrong_value',
          `amount : ${amount} is more than the customer's promotional credits balance of ${balance} ${currency}`,
          'amount',
        );
    }
    const closing = kind === 'add' ? balance + (amount as number) : balance - (amount as number);
    this.setBalance(c, currency, closing);
    const pc: CbPromotionalCredit = {
      id: newId('pc_'),
      customer_id: c.id,
      type: kind === 'add' ? 'increment' : 'decrement',
      amount: amount as number,
      amount_in_decimal: ((amount as number) / 100).toFixed(2),
      currency_code: currency,
      description,
      credit_type: creditType,
      ...(reference !== undefined ? { reference } : {}),
      closing_balance: closing,
      done_by: 'refloop-api-key',
      created_at: this.secs(),
      object: 'promotional_credit',
    };
    this.promotionalCredits.set(pc.id, pc);
    const type = kind === 'add' ? 'promotional_credits_added' : 'promotional_credits_deducted';
    return { customer: c, promotional_credit: pc, events: [this.event(type, 'api', { customer: c, promotional_credit: pc })] };
  }

  // --- coupons --------------------------------------------------------------------------------------

  /** POST /coupons/create_for_items. */
  createCoupon(p: Params): { coupon: CbCoupon } {
    only(
      p,
      [
        'id',
        'name',
        'invoice_name',
        'discount_type',
        'discount_percentage',
        'discount_amount',
        'currency_code',
        'apply_on',
        'duration_type',
        'period',
        'period_unit',
        'max_redemptions',
        'valid_till',
        'meta_data',
        'item_constraints',
        'coupon_constraints',
        'status',
      ],
      true,
    );
    const id = str(p, 'id', { required: true, max: 100 }) as string;
    if (!/^[A-Za-z0-9_.-]+$/.test(id)) throw new ChargebeeError(400, 'param_wrong_value', 'id : invalid characters', 'id');
    const name = str(p, 'name', { required: true, max: 50 }) as string;
    const discountType = oneOf(p, 'discount_type', ['fixed_amount', 'percentage'] as const) ?? null;
    if (!discountType) throw new ChargebeeError(400, 'param_wrong_value', 'discount_type : cannot be blank', 'discount_type');
    const applyOn = oneOf(p, 'apply_on', ['invoice_amount', 'each_specified_item'] as const) ?? null;
    if (!applyOn) throw new ChargebeeError(400, 'param_wrong_value', 'apply_on : cannot be blank', 'apply_on');
    const durationType = oneOf(
      p,
      'duration_type',
      ['one_time', 'forever', 'limited_period'] as const,
      'forever',
    ) as Coupon['duration_type'];
    const coupon: CbCoupon = {
      id,
      name,
      ...(str(p, 'invoice_name') ? { invoice_name: str(p, 'invoice_name') } : {}),
      discount_type: discountType,
      duration_type: durationType,
      status: 'active',
      apply_discount_on: 'not_applicable',
      apply_on: applyOn,
      created_at: this.secs(),
      updated_at: this.secs(),
      resource_version: this.version(),
      redemptions: 0,
      deleted: false,
      object: 'coupon',
    };
    if (discountType === 'percentage') {
      const raw = str(p, 'discount_percentage', { required: true }) as string;
      const pct = Number(raw);
      if (!/^\d+(\.\d{1,4})?$/.test(raw) || pct <= 0 || pct > 100)
        throw new ChargebeeError(400, 'param_wrong_value', 'discount_percentage : must be above 0 and at most 100', 'discount_percentage');
      coupon.discount_percentage = pct;
    } else {
      coupon.discount_amount = int(p, 'discount_amount', { required: true, min: 1 }) as number;
      const currency = (str(p, 'currency_code', { required: true, max: 3 }) as string).toUpperCase();
      if (!/^[A-Z]{3}$/.test(currency))
        throw new ChargebeeError(400, 'param_wrong_value', 'currency_code : invalid currency', 'currency_code');
      coupon.currency_code = currency;
    }
    if (durationType === 'limited_period') {
      coupon.period = int(p, 'period', { required: true, min: 1 }) as number;
      coupon.period_unit = oneOf(p, 'period_unit', ['day', 'week', 'month', 'year'] as const, 'month') as Coupon['period_unit'];
    }
    const max = int(p, 'max_redemptions', { min: 1 });
    if (max !== undefined) coupon.max_redemptions = max;
    const meta = metaData(p);
    this.applyFields(coupon, customFields(p), meta);
    if (this.coupons.has(id)) throw new ChargebeeError(400, 'duplicate_entry', `The value ${id} is already present.`, 'id');
    this.coupons.set(id, coupon);
    return { coupon };
  }

  /** POST /coupon_codes {coupon_id, coupon_set_name, code}: the set is made when the name is new. */
  createCouponCode(p: Params): { coupon_code: CbCouponCode } {
    only(p, ['coupon_id', 'coupon_set_name', 'code']);
    const couponId = str(p, 'coupon_id', { required: true }) as string;
    const setName = str(p, 'coupon_set_name', { required: true, max: 50 }) as string;
    const code = str(p, 'code', { required: true, max: 50 }) as string;
    if (!/^[A-Za-z0-9_-]+$/.test(code)) throw new ChargebeeError(400, 'param_wrong_value', 'code : invalid characters', 'code');
    const coupon = this.coupon(couponId, 'coupon_id');
    if (this.couponCodes.has(code)) throw new ChargebeeError(400, 'duplicate_entry', `The value ${code} is already present.`, 'code');
    const setKey = `${coupon.id}\n${setName}`;
    let setId = this.couponSets.get(setKey);
    if (!setId) {
      setId = newId('cs_');
      this.couponSets.set(setKey, setId);
    }
    const cc: CbCouponCode = {
      code,
      status: 'not_redeemed',
      coupon_id: coupon.id,
      coupon_set_id: setId,
      coupon_set_name: setName,
      object: 'coupon_code',
    };
    this.couponCodes.set(code, cc);
    return { coupon_code: cc };
  }

  /** POST /coupon_codes/{code}/archive. */
  archiveCouponCode(code: string): { coupon_code: CbCouponCode } {
    const cc = this.couponCode(code, 'code');
    if (cc.status === 'archived')
      throw new ChargebeeError(400, 'invalid_state_for_request', `The coupon code ${code} is archived already`, 'code');
    cc.status = 'archived';
    return { coupon_code: cc };
  }
}
