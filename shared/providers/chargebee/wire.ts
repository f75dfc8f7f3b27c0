// Chargebee API v2 wire types (Product Catalog 2.0): the fields Refloop reads or the emulator writes, as
// Chargebee sends them (snake_case, `object` on every object, unix seconds, `resource_version` in unix ms,
// integer amounts, upper-case currency codes). Open types (`[key: string]: unknown`): custom fields
// (`cf_…`) are top-level keys of a customer or a subscription. Shared by the events parser, the API client
// and the emulator, so they cannot drift apart; the official `chargebee` package checks the emulator in
// the tests. How Refloop reads them: docs/providers/chargebee.md.
//
// Also here: Chargebee's form encoding (sub-resource arrays indexed by field, then position:
// `subscription_items[item_price_id][0]=…`; `meta_data` one JSON-encoded field) and its amount units.
import { currencyExponent } from '../../domain/currency';

export type Seconds = number;

/** The custom field and the `meta_data` key that name a referral on a customer or a subscription. */
export const REFERRAL_FIELD = 'cf_refloop_referral_id';
export const REFERRAL_META_KEY = 'refloop_referral_id';

export interface ApiErrorBody {
  message: string;
  type?: 'payment' | 'invalid_request' | 'operation_failed' | string;
  api_error_code: string;
  param?: string;
  error_cause_id?: string;
}

/** A list answer: rows keyed by resource, and the next page's opaque offset when there is one. */
export interface List<Row> {
  list: Row[];
  next_offset?: string;
}

export interface EventEnvelope {
  id: string;
  occurred_at: Seconds;
  source: string;
  user?: string;
  object: 'event';
  api_version: string;
  event_type: string;
  webhook_status: string;
  content: EventContent;
}

export interface EventContent {
  subscription?: Subscription;
  customer?: Customer;
  invoice?: Invoice;
  transaction?: Transaction;
  credit_note?: CreditNote;
  promotional_credit?: PromotionalCredit;
  [key: string]: unknown;
}

export interface SubscriptionItem {
  item_price_id: string;
  item_type: 'plan' | 'addon' | 'charge';
  quantity?: number;
  unit_price?: number;
  amount?: number;
  billing_period?: number;
  billing_period_unit?: 'day' | 'week' | 'month' | 'year';
  object?: 'subscription_item';
}

export interface SubscriptionCoupon {
  coupon_id: string;
  coupon_code?: string;
  apply_till?: Seconds;
  applied_count?: number;
  object?: 'coupon';
}

export type SubscriptionStatusWire = 'future' | 'in_trial' | 'active' | 'non_renewing' | 'paused' | 'cancelled' | 'transferred';

export interface Subscription {
  [key: string]: unknown;
  id: string;
  customer_id: string;
  status: SubscriptionStatusWire;
  currency_code: string;
  current_term_start?: Seconds;
  current_term_end?: Seconds;
  next_billing_at?: Seconds;
  created_at?: Seconds;
  started_at?: Seconds;
  activated_at?: Seconds;
  trial_start?: Seconds;
  trial_end?: Seconds;
  cancelled_at?: Seconds;
  updated_at?: Seconds;
  /** Unix ms, bumped on every change: orders two snapshots of one subscription. */
  resource_version?: number;
  due_invoices_count?: number;
  due_since?: Seconds;
  total_dues?: number;
  mrr?: number;
  deleted: boolean;
  active_id?: string;
  subscription_items?: SubscriptionItem[];
  coupons?: SubscriptionCoupon[];
  meta_data?: Record<string, unknown>;
  /** Product Catalog 1.0 only. */
  plan_id?: string;
  plan_quantity?: number;
  plan_unit_price?: number;
  billing_period?: number;
  billing_period_unit?: 'day' | 'week' | 'month' | 'year';
  object: 'subscription';
}

export interface CustomerBalance {
  promotional_credits: number;
  excess_payments?: number;
  refundable_credits?: number;
  unbilled_charges?: number;
  currency_code: string;
  balance_currency_code?: string;
  object?: 'customer_balance';
}

export interface Customer {
  [key: string]: unknown;
  id: string;
  email?: string;
  first_name?: string;
  last_name?: string;
  created_at?: Seconds;
  resource_version?: number;
  deleted: boolean;
  preferred_currency_code?: string;
  /** In the preferred currency only; `balances[]` holds every currency. */
  promotional_credits: number;
  balances?: CustomerBalance[];
  meta_data?: Record<string, unknown>;
  object: 'customer';
}

export interface InvoiceDiscount {
  amount: number;
  entity_type:
    | 'item_level_coupon'
    | 'document_level_coupon'
    | 'promotional_credits'
    | 'prorated_credits'
    | 'item_level_discount'
    | 'document_level_discount';
  entity_id?: string;
  coupon_set_code?: string;
  description?: string;
}

export interface Invoice {
  [key: string]: unknown;
  id: string;
  customer_id: string;
  subscription_id?: string;
  recurring: boolean;
  status: 'paid' | 'posted' | 'payment_due' | 'not_paid' | 'voided' | 'pending';
  price_type: 'tax_exclusive' | 'tax_inclusive';
  date?: Seconds;
  currency_code: string;
  sub_total: number;
  tax: number;
  total?: number;
  amount_paid?: number;
  amount_due?: number;
  amount_adjusted?: number;
  credits_applied?: number;
  paid_at?: Seconds;
  first_invoice?: boolean;
  resource_version?: number;
  discounts?: InvoiceDiscount[];
  deleted: boolean;
  object: 'invoice';
}

export interface Transaction {
  id: string;
  customer_id?: string;
  subscription_id?: string;
  type: 'authorization' | 'payment' | 'refund' | 'payment_reversal';
  status?: 'in_progress' | 'success' | 'voided' | 'failure' | 'timeout' | 'needs_attention' | 'late_failure';
  date?: Seconds;
  amount?: number;
  currency_code: string;
  payment_method?: string;
  gateway?: string;
  reference_transaction_id?: string;
  refunded_txn_id?: string;
  resource_version?: number;
  linked_invoices?: { invoice_id: string; applied_amount: number; applied_at?: Seconds; invoice_total?: number; invoice_status?: string }[];
  linked_credit_notes?: {
    cn_id: string;
    applied_amount: number;
    cn_reason_code?: string;
    cn_total?: number;
    cn_status?: string;
    cn_reference_invoice_id?: string;
  }[];
  deleted: boolean;
  object: 'transaction';
}

export type CreditNoteReason =
  | 'write_off'
  | 'subscription_change'
  | 'subscription_cancellation'
  | 'subscription_pause'
  | 'chargeback'
  | 'product_unsatisfactory'
  | 'service_unsatisfactory'
  | 'order_change'
  | 'order_cancellation'
  | 'waiver'
  | 'other'
  | 'fraudulent';

export interface CreditNote {
  [key: string]: unknown;
  id: string;
  customer_id: string;
  subscription_id?: string;
  reference_invoice_id?: string;
  type: 'adjustment' | 'refundable' | 'store';
  reason_code?: CreditNoteReason;
  status: 'adjusted' | 'refunded' | 'refund_due' | 'voided';
  date?: Seconds;
  price_type?: 'tax_exclusive' | 'tax_inclusive';
  currency_code: string;
  total?: number;
  sub_total: number;
  amount_refunded?: number;
  amount_available?: number;
  refunded_at?: Seconds;
  generated_at?: Seconds;
  resource_version?: number;
  deleted: boolean;
  object: 'credit_note';
}

export interface PromotionalCredit {
  id: string;
  customer_id: string;
  type: 'increment' | 'decrement';
  amount: number;
  currency_code: string;
  description: string;
  credit_type: 'loyalty_credits' | 'referral_rewards' | 'general';
  reference?: string;
  closing_balance: number;
  done_by?: string;
  created_at: Seconds;
  object: 'promotional_credit';
}

export interface HostedPage {
  id: string;
  type: string;
  url?: string;
  state: 'created' | 'requested' | 'succeeded' | 'cancelled' | 'acknowledged';
  created_at?: Seconds;
  expires_at?: Seconds;
  updated_at?: Seconds;
  resource_version?: number;
  content?: { subscription?: Subscription; customer?: Customer; invoice?: Invoice };
  object: 'hosted_page';
}

export interface ItemPrice {
  [key: string]: unknown;
  id: string;
  name: string;
  external_name?: string;
  item_id?: string;
  item_type?: 'plan' | 'addon' | 'charge';
  status?: 'active' | 'archived' | 'deleted';
  pricing_model?: string;
  price?: number;
  currency_code: string;
  period?: number;
  period_unit?: 'day' | 'week' | 'month' | 'year';
  object: 'item_price';
}

export interface Coupon {
  [key: string]: unknown;
  id: string;
  name: string;
  discount_type: 'fixed_amount' | 'percentage' | 'offer_quantity';
  discount_percentage?: number;
  discount_amount?: number;
  currency_code?: string;
  duration_type: 'one_time' | 'forever' | 'limited_period';
  apply_on: 'invoice_amount' | 'each_specified_item';
  status?: 'active' | 'expired' | 'archived' | 'deleted';
  object: 'coupon';
}

export interface CouponCode {
  code: string;
  status: 'not_redeemed' | 'redeemed' | 'archived';
  coupon_id: string;
  coupon_set_id?: string;
  coupon_set_name?: string;
  object?: 'coupon_code';
}

// --- amounts ------------------------------------------------------------------------------------------

/**
 * Chargebee writes amounts as integers "in cents": the currency's minor unit for two-decimal currencies,
 * the major unit for zero-decimal ones (JPY, KRW, …), which is also the ISO 4217 minor unit. So a Chargebee
 * amount IS the port's minor units for every currency with up to two decimals. Three-decimal currencies
 * (KWD, BHD, …) are refused: Chargebee documents "up to two decimal places" and how it writes them is not
 * verified.
 */
export function isSupportedCurrency(currency: string): boolean {
  return /^[A-Za-z]{3}$/.test(currency) && currencyExponent(currency.toUpperCase()) <= 2;
}

export class UnsupportedCurrencyError extends Error {
  override readonly name = 'UnsupportedCurrencyError';
  constructor(readonly currency: string) {
    super(`Chargebee amounts in ${currency} (a three-decimal currency) are not supported: their unit is not verified`);
  }
}

/** Throws UnsupportedCurrencyError for a three-decimal currency; the amount unchanged otherwise. */
export function toChargebeeAmount(amount: number, currency: string): number {
  if (!isSupportedCurrency(currency)) throw new UnsupportedCurrencyError(currency);
  return amount;
}

// --- form encoding ------------------------------------------------------------------------------------

export type FormValue = string | number | boolean | null | undefined | FormValue[] | { [key: string]: FormValue };

const key = (k: string) => encodeURIComponent(k).replace(/%5B/g, '[').replace(/%5D/g, ']');
const val = (v: string | number | boolean | null) => encodeURIComponent(v === null ? '' : String(v));

/**
 * Chargebee's `application/x-www-form-urlencoded` as its SDK writes it: an object is `a[f]=v`
 * (`customer[id]=c`, filters `status[is]=active`, `sort_by[asc]=updated_at`); a list of values is
 * `a[0]=x&a[1]=y`; a list of objects is indexed by field, then position
 * (`subscription_items[item_price_id][0]=p&subscription_items[quantity][0]=1`); a top-level `meta_data`
 * object is one JSON-encoded field. `undefined` is left out; `null` sends an empty value.
 */
export function encodeForm(params: Record<string, FormValue>): string {
  const pairs: string[] = [];
  const walk = (name: string, value: FormValue) => {
    if (value === undefined) return;
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
          for (const [f, fv] of Object.entries(v)) walk(`${name}[${f}][${i}]`, fv);
        } else walk(`${name}[${i}]`, v);
      });
    } else if (value !== null && typeof value === 'object') {
      for (const [f, fv] of Object.entries(value)) walk(`${name}[${f}]`, fv);
    } else pairs.push(`${key(name)}=${val(value)}`);
  };
  for (const [k, v] of Object.entries(params)) {
    if (k === 'meta_data' && v !== null && typeof v === 'object') pairs.push(`meta_data=${encodeURIComponent(JSON.stringify(v))}`);
    else walk(k, v);
  }
  return pairs.join('&');
}

export type Decoded = string | Decoded[] | { [key: string]: Decoded };

/**
 * Decodes a form body or query string: `a[b]=v` -> {a:{b:'v'}}; `a[0]=x` -> {a:['x']};
 * `a[f][0]=x&a[g][0]=y` -> {a:{f:['x'], g:['y']}} (rowsOf turns that into [{f:'x', g:'y'}]). Values stay
 * strings (`meta_data` too: JSON.parse it). Throws on a name whose shape contradicts an earlier one.
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
      const nextIsIndex = !last && /^\d+$/.test(path[i + 1] as string);
      const slot: string | number = Array.isArray(node) ? Number(seg) : seg;
      if (Array.isArray(node) && (!/^\d+$/.test(seg) || Number(seg) > 1000))
        throw new Error(`parameter ${rawKey}: a list index must be a number up to 1000`);
      const container = node as Record<string | number, Decoded>;
      if (last) {
        if (container[slot] !== undefined && typeof container[slot] !== 'string')
          throw new Error(`parameter ${rawKey} contradicts an earlier one`);
        container[slot] = value;
      } else {
        const existing: Decoded | undefined = container[slot];
        const child: Decoded = existing ?? (nextIsIndex ? [] : {});
        if (typeof child === 'string' || Array.isArray(child) !== nextIsIndex)
          throw new Error(`parameter ${rawKey} contradicts an earlier one`);
        container[slot] = child;
        node = child;
      }
    }
  }
  return root;
}

/** `{item_price_id: ['a','b'], quantity: ['1']}` (a decoded list of objects) -> [{item_price_id:'a', quantity:'1'}, {item_price_id:'b'}]. */
export function rowsOf(decoded: Decoded | undefined): Record<string, string>[] {
  if (decoded === undefined || typeof decoded === 'string' || Array.isArray(decoded)) return [];
  const rows: Record<string, string>[] = [];
  for (const [field, values] of Object.entries(decoded)) {
    if (!Array.isArray(values)) continue;
    values.forEach((v, i) => {
      if (typeof v !== 'string') return;
      rows[i] ??= {};
      (rows[i] as Record<string, string>)[field] = v;
    });
  }
  return rows.filter((r) => r !== undefined);
}
