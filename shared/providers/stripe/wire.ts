// Stripe wire types at the pinned API version: the fields Refloop reads or the emulator writes, as Stripe
// sends them (snake_case, `object` on every object, integer amounts in Stripe's unit for the currency,
// lower-case currencies, unix seconds). Shared by the events parser, the API client and the emulator, so
// the three cannot drift apart; the official `stripe` package checks the emulator in the tests.
// How Refloop reads them: docs/providers/stripe.md and docs/design/providers.md "Ids and shapes".
//
// Also here: form encoding (Stripe's request bodies and queries, `a[b][c]=v`), and Stripe's amount units
// (its own zero-decimal list) converted to and from the port's minor units.
import { currencyExponent } from '../../domain/currency';

/**
 * The one API version every call sends (`Stripe-Version`) and every webhook endpoint must be created with:
 * what npm `stripe` 23.1.0 pins (cjs/apiVersion.js), the version the dev-dependency checks the emulator
 * against. Basil (2025-03-31) and later shapes: `invoice.parent.subscription_details.subscription`, no
 * `Charge.invoice`, `current_period_*` on subscription items; Clover (2025-09-30) and later:
 * `promotion[type]=coupon&promotion[coupon]=…` on promotion codes.
 */
export const STRIPE_API_VERSION = '2026-10-28.endive';

export type Seconds = number;
export type Metadata = Record<string, string>;

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  /** The list's path, e.g. `/v1/subscriptions`. */
  url: string;
}

export interface Recurring {
  interval: 'day' | 'week' | 'month' | 'year';
  interval_count: number;
  usage_type?: 'licensed' | 'metered';
  meter?: string | null;
  trial_period_days?: number | null;
}

export interface Product {
  id: string;
  object: 'product';
  active: boolean;
  name: string;
  description?: string | null;
  created: Seconds;
  updated?: Seconds;
  livemode: boolean;
  metadata: Metadata;
  type?: 'service' | 'good';
}

export interface Price {
  id: string;
  object: 'price';
  active: boolean;
  billing_scheme: 'per_unit' | 'tiered';
  created: Seconds;
  currency: string;
  livemode: boolean;
  lookup_key: string | null;
  metadata: Metadata;
  nickname: string | null;
  /** A product id, or the product when expanded (`expand[]=items.data.price.product`). */
  product: string | Product;
  recurring: Recurring | null;
  tax_behavior: 'inclusive' | 'exclusive' | 'unspecified' | null;
  type: 'one_time' | 'recurring';
  unit_amount: number | null;
  unit_amount_decimal: string | null;
}

export interface SubscriptionItem {
  id: string;
  object: 'subscription_item';
  created: Seconds;
  /** Basil and later: the billing period lives on the items. */
  current_period_start: Seconds;
  current_period_end: Seconds;
  discounts: string[];
  metadata: Metadata;
  price: Price;
  quantity?: number;
  subscription: string;
  tax_rates: unknown[] | null;
}

export type SubscriptionStatusWire =
  | 'active'
  | 'canceled'
  | 'incomplete'
  | 'incomplete_expired'
  | 'past_due'
  | 'paused'
  | 'trialing'
  | 'unpaid';

export interface Subscription {
  id: string;
  object: 'subscription';
  billing_cycle_anchor: Seconds;
  cancel_at: Seconds | null;
  cancel_at_period_end: boolean;
  canceled_at: Seconds | null;
  collection_method: 'charge_automatically' | 'send_invoice';
  created: Seconds;
  currency: string;
  /** A customer id, or the customer when expanded. */
  customer: string | Customer;
  /** The payment method that pays it (`pm_…`), or the payment method when expanded; null: the customer's default. */
  default_payment_method?: string | PaymentMethod | null;
  description: string | null;
  discounts: string[];
  ended_at: Seconds | null;
  items: List<SubscriptionItem>;
  latest_invoice: string | null;
  livemode: boolean;
  metadata: Metadata;
  start_date: Seconds;
  status: SubscriptionStatusWire;
  trial_end: Seconds | null;
  trial_start: Seconds | null;
}

/** A card payment method. `card.fingerprint`: the same card number has the same fingerprint in one Stripe account. */
export interface PaymentMethod {
  id: string;
  object: 'payment_method';
  created: Seconds;
  customer: string | null;
  livemode: boolean;
  type: 'card';
  card: { brand: string; exp_month: number; exp_year: number; fingerprint: string; last4: string; funding: string; country: string | null };
}

export interface Customer {
  id: string;
  object: 'customer';
  /** In `currency`: negative = credit the customer can spend on invoices. */
  balance: number;
  created: Seconds;
  currency: string | null;
  description: string | null;
  email: string | null;
  /** Per currency (`expand[]=invoice_credit_balance`): what is left to spend, positive = credit. */
  invoice_credit_balance?: Record<string, number>;
  livemode: boolean;
  metadata: Metadata;
  name: string | null;
}

export interface CustomerBalanceTransaction {
  id: string;
  object: 'customer_balance_transaction';
  /** Negative = a credit to the customer; positive = a debit. */
  amount: number;
  checkout_session: string | null;
  created: Seconds;
  credit_note: string | null;
  currency: string;
  customer: string;
  description: string | null;
  ending_balance: number;
  invoice: string | null;
  livemode: boolean;
  metadata: Metadata | null;
  type:
    | 'adjustment'
    | 'applied_to_invoice'
    | 'credit_note'
    | 'initial'
    | 'invoice_overpaid'
    | 'invoice_too_large'
    | 'invoice_too_small'
    | 'unapplied_from_invoice'
    | 'unspent_receiver_credit'
    | 'migration';
}

export interface InvoiceLineItem {
  id: string;
  object: 'line_item';
  amount: number;
  currency: string;
  description: string | null;
  period: { start: Seconds; end: Seconds };
  pricing: { type: 'price_details'; price_details: { price: string; product: string }; unit_amount_decimal: string | null } | null;
  quantity: number | null;
}

export interface Invoice {
  id: string;
  object: 'invoice';
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  attempt_count: number;
  attempted: boolean;
  billing_reason:
    | 'manual'
    | 'subscription'
    | 'subscription_create'
    | 'subscription_cycle'
    | 'subscription_threshold'
    | 'subscription_update'
    | 'upcoming'
    | null;
  collection_method: 'charge_automatically' | 'send_invoice';
  created: Seconds;
  currency: string;
  customer: string;
  customer_email: string | null;
  discounts: string[];
  /** The customer balance after this invoice (negative = credit left). */
  ending_balance: number | null;
  lines: List<InvoiceLineItem>;
  livemode: boolean;
  metadata: Metadata | null;
  /** Basil and later: where the invoice comes from. */
  parent: {
    type: 'subscription_details' | 'quote_details';
    quote_details: null;
    subscription_details: { metadata: Metadata | null; subscription: string } | null;
  } | null;
  period_end: Seconds;
  period_start: Seconds;
  /** The customer balance applied to this invoice = starting_balance - ending_balance. */
  starting_balance: number;
  status: 'draft' | 'open' | 'paid' | 'uncollectible' | 'void' | null;
  status_transitions: {
    finalized_at: Seconds | null;
    marked_uncollectible_at: Seconds | null;
    paid_at: Seconds | null;
    voided_at: Seconds | null;
  };
  subtotal: number;
  subtotal_excluding_tax: number | null;
  total: number;
  total_discount_amounts: { amount: number; discount: string }[] | null;
  total_excluding_tax: number | null;
  total_taxes:
    | {
        amount: number;
        tax_behavior: 'exclusive' | 'inclusive';
        taxability_reason: string;
        taxable_amount: number | null;
        type: 'tax_rate_details';
        tax_rate_details: { tax_rate: string } | null;
      }[]
    | null;
}

export interface InvoicePayment {
  id: string;
  object: 'invoice_payment';
  amount_paid: number | null;
  amount_requested: number;
  created: Seconds;
  currency: string;
  /** An invoice id, or the invoice when expanded (`expand[]=data.invoice`). */
  invoice: string | Invoice;
  is_default: boolean;
  livemode: boolean;
  payment: { type: 'payment_intent' | 'charge' | 'payment_record'; payment_intent?: string; charge?: string };
  status: 'canceled' | 'open' | 'paid';
  status_transitions: { canceled_at: Seconds | null; paid_at: Seconds | null };
}

export interface Refund {
  id: string;
  object: 'refund';
  amount: number;
  balance_transaction: string | null;
  charge: string | null;
  created: Seconds;
  currency: string;
  metadata: Metadata | null;
  payment_intent: string | null;
  reason: 'duplicate' | 'fraudulent' | 'requested_by_customer' | 'expired_uncaptured_charge' | null;
  receipt_number: string | null;
  status: 'pending' | 'requires_action' | 'succeeded' | 'failed' | 'canceled' | null;
}

export interface Charge {
  id: string;
  object: 'charge';
  amount: number;
  amount_captured: number;
  /** Cumulative over every refund of the charge. */
  amount_refunded: number;
  balance_transaction: string | null;
  captured: boolean;
  created: Seconds;
  currency: string;
  customer: string | null;
  description: string | null;
  disputed: boolean;
  livemode: boolean;
  metadata: Metadata;
  paid: boolean;
  payment_intent: string | null;
  payment_method?: string | null;
  payment_method_details?: { type: 'card'; card: Pick<PaymentMethod['card'], 'brand' | 'fingerprint' | 'last4'> } | null;
  refunded: boolean;
  /** Not sent since 2022-11-15 unless expanded (`expand[]=refunds`). */
  refunds?: List<Refund> | null;
  status: 'succeeded' | 'pending' | 'failed';
}

export interface Dispute {
  id: string;
  object: 'dispute';
  amount: number;
  charge: string;
  created: Seconds;
  currency: string;
  is_charge_refundable: boolean;
  livemode: boolean;
  metadata: Metadata;
  payment_intent: string | null;
  reason: string;
  status: 'warning_needs_response' | 'warning_under_review' | 'warning_closed' | 'needs_response' | 'under_review' | 'won' | 'lost';
}

export interface CheckoutSession {
  id: string;
  object: 'checkout.session';
  amount_subtotal: number | null;
  amount_total: number | null;
  client_reference_id: string | null;
  created: Seconds;
  currency: string | null;
  customer: string | null;
  customer_details: { email: string | null; name: string | null } | null;
  customer_email: string | null;
  discounts: { coupon: string | null; promotion_code: string | null }[] | null;
  expires_at: Seconds;
  invoice: string | null;
  livemode: boolean;
  metadata: Metadata | null;
  mode: 'payment' | 'setup' | 'subscription';
  payment_status: 'paid' | 'unpaid' | 'no_payment_required';
  status: 'open' | 'complete' | 'expired' | null;
  subscription: string | null;
  total_details: { amount_discount: number; amount_shipping: number; amount_tax: number } | null;
  url: string | null;
}

export interface Coupon {
  id: string;
  object: 'coupon';
  amount_off: number | null;
  created: Seconds;
  currency: string | null;
  duration: 'forever' | 'once' | 'repeating';
  duration_in_months: number | null;
  livemode: boolean;
  max_redemptions: number | null;
  metadata: Metadata | null;
  name: string | null;
  percent_off: number | null;
  redeem_by: Seconds | null;
  times_redeemed: number;
  valid: boolean;
}

export interface PromotionCode {
  id: string;
  object: 'promotion_code';
  active: boolean;
  code: string;
  created: Seconds;
  customer: string | null;
  expires_at: Seconds | null;
  livemode: boolean;
  max_redemptions: number | null;
  metadata: Metadata | null;
  /** Clover and later: what the code applies. */
  promotion: { type: 'coupon'; coupon: string | null };
  restrictions: { first_time_transaction: boolean; minimum_amount: number | null; minimum_amount_currency: string | null };
  times_redeemed: number;
}

/** A webhook event (the body Stripe POSTs, and GET /v1/events/{id}). */
export interface StripeEvent<T = unknown> {
  id: string;
  object: 'event';
  api_version: string | null;
  created: Seconds;
  data: { object: T; previous_attributes?: Record<string, unknown> };
  livemode: boolean;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

export interface ApiErrorBody {
  error: {
    type: 'api_error' | 'card_error' | 'idempotency_error' | 'invalid_request_error';
    code?: string;
    message: string;
    param?: string;
    doc_url?: string;
    request_log_url?: string;
  };
}

// --- amounts ------------------------------------------------------------------------------------------

/** Stripe's zero-decimal currencies (docs.stripe.com/currencies#zero-decimal): amounts are whole units. */
export const ZERO_DECIMAL_CURRENCIES: ReadonlySet<string> = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);
/** Three-decimal currencies (the last digit must be 0 in payment calls). */
export const THREE_DECIMAL_CURRENCIES: ReadonlySet<string> = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

/**
 * The port's minor unit is the one the rest of Refloop converts with (shared/domain/currency.ts
 * currencyExponent, one list for every provider). Where it differs from Stripe's, the amount is converted:
 * ISK, HUF (and IDR, COP, ...) are zero-decimal there but two-decimal in Stripe's API ("an ISK amount of
 * 100 represents 1 króna"; a HUF amount of 123400 is 1,234 forints). JPY, KRW, MGA, ... are zero-decimal
 * in both, KWD three in both, USD two: unchanged.
 */

/** Decimals in Stripe's API amounts for the currency (any case). */
export function stripeExponent(currency: string): number {
  const c = currency.toUpperCase();
  if (ZERO_DECIMAL_CURRENCIES.has(c)) return 0;
  if (THREE_DECIMAL_CURRENCIES.has(c)) return 3;
  return 2;
}

/** Decimals of the port's minor unit (ISO 4217) for the currency. */
export function portExponent(currency: string): number {
  return currencyExponent(currency.toUpperCase());
}

/** A Stripe API amount -> the port's minor units (rounded half away from zero when Stripe has more decimals). */
export function fromStripeAmount(amount: number, currency: string): number {
  const shift = portExponent(currency) - stripeExponent(currency);
  if (shift === 0) return amount;
  if (shift > 0) return amount * 10 ** shift;
  const d = 10 ** -shift;
  return Math.sign(amount) * Math.round(Math.abs(amount) / d);
}

/** The port's minor units -> a Stripe API amount. */
export function toStripeAmount(amount: number, currency: string): number {
  const shift = stripeExponent(currency) - portExponent(currency);
  if (shift === 0) return amount;
  if (shift > 0) return amount * 10 ** shift;
  const d = 10 ** -shift;
  return Math.sign(amount) * Math.round(Math.abs(amount) / d);
}

// --- form encoding ------------------------------------------------------------------------------------

export type FormValue = string | number | boolean | null | undefined | FormValue[] | { [key: string]: FormValue };

/**
 * Stripe's `application/x-www-form-urlencoded` with bracket keys, as the official SDK writes it:
 * `metadata[refloop_reward_id]=r1`, `expand[0]=customer`, `promotion[coupon]=c`. `undefined` is left out;
 * `null` and `''` send an empty value (Stripe's "unset").
 */
export function encodeForm(params: Record<string, FormValue>): string {
  const pairs: string[] = [];
  const walk = (key: string, value: FormValue) => {
    if (value === undefined) return;
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        walk(`${key}[${i}]`, v);
      });
    } else if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(`${key}[${k}]`, v);
    } else {
      pairs.push(
        `${encodeURIComponent(key).replace(/%5B/g, '[').replace(/%5D/g, ']')}=${encodeURIComponent(value === null ? '' : String(value))}`,
      );
    }
  };
  for (const [k, v] of Object.entries(params)) walk(k, v);
  return pairs.join('&');
}

export type Decoded = string | Decoded[] | { [key: string]: Decoded };

/**
 * Decodes a form body or query string into nested objects: `a[b][c]=v` -> {a:{b:{c:'v'}}}; `a[]=x` and
 * `a[0]=x` -> arrays (a numeric index keeps its place). Values stay strings. Throws on a key whose
 * shape contradicts an earlier one (`a=1&a[b]=2`).
 */
export function decodeForm(body: string): Record<string, Decoded> {
  const root: Record<string, Decoded> = {};
  for (const [rawKey, value] of new URLSearchParams(body)) {
    const m = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(rawKey);
    if (!m) throw new Error(`malformed parameter name ${rawKey}`);
    const path = [m[1] as string, ...[...(m[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((x) => x[1] as string)];
    let node: Record<string, Decoded> | Decoded[] = root;
    for (let i = 0; i < path.length; i++) {
      const seg = path[i] as string;
      const last = i === path.length - 1;
      const nextIsIndex = !last && /^\d*$/.test(path[i + 1] as string);
      if (Array.isArray(node)) {
        if (!/^\d*$/.test(seg)) throw new Error(`parameter ${rawKey} mixes a list and an object`);
        const idx: number = seg === '' ? node.length : Number(seg);
        if (idx > 1000) throw new Error(`parameter ${rawKey}: index too large`);
        if (last) {
          node[idx] = value;
        } else {
          const existing: Decoded | undefined = node[idx];
          const child: Decoded = existing ?? (nextIsIndex ? [] : {});
          if (typeof child === 'string') throw new Error(`parameter ${rawKey} contradicts an earlier one`);
          node[idx] = child;
          node = child;
        }
      } else {
        if (last) {
          if (seg in node && typeof node[seg] !== 'string') throw new Error(`parameter ${rawKey} contradicts an earlier one`);
          node[seg] = value;
        } else {
          const existing: Decoded | undefined = node[seg];
          const child: Decoded = existing ?? (nextIsIndex ? [] : {});
          if (typeof child === 'string') throw new Error(`parameter ${rawKey} contradicts an earlier one`);
          node[seg] = child;
          node = child;
        }
      }
    }
  }
  return root;
}
