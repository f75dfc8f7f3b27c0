// Paddle Billing wire types (API version 1): the fields Refloop reads or the emulator writes, as Paddle
// sends them (snake_case, amounts as strings of minor units, RFC 3339 instants with microseconds).
// Shared by the events parser, the API client and the emulator, so the three cannot drift apart.
// How Refloop reads them: docs/providers/paddle-billing.md and docs/design/providers.md "Ids and shapes".

export type Instant = string;
/** Integer minor units as a decimal string, e.g. "65215". */
export type AmountString = string;

export interface Money {
  amount: AmountString;
  currency_code: string;
}

export interface BillingCycle {
  interval: 'day' | 'week' | 'month' | 'year';
  frequency: number;
}

export interface Price {
  id: string;
  product_id: string;
  name?: string | null;
  description: string;
  unit_price: Money;
  billing_cycle: BillingCycle | null;
  trial_period: BillingCycle | null;
  tax_mode?: string;
  status?: 'active' | 'archived';
  type?: 'standard' | 'custom';
  quantity?: { minimum: number; maximum: number };
  unit_price_overrides?: { country_codes: string[]; unit_price: Money }[];
  custom_data?: Record<string, unknown> | null;
  created_at?: Instant;
  updated_at?: Instant;
}

export interface Product {
  id: string;
  name: string;
  status?: 'active' | 'archived';
}

export interface SubscriptionItem {
  status: 'active' | 'inactive' | 'trialing';
  quantity: number;
  recurring: boolean;
  created_at: Instant;
  updated_at: Instant;
  previously_billed_at: Instant | null;
  next_billed_at: Instant | null;
  price: Price;
  product?: Product;
}

export type SubscriptionStatusWire = 'active' | 'canceled' | 'past_due' | 'paused' | 'trialing';

export interface SubscriptionDiscount {
  id: string;
  starts_at: Instant | null;
  ends_at: Instant | null;
}

export interface Subscription {
  id: string;
  status: SubscriptionStatusWire;
  customer_id: string;
  address_id?: string;
  business_id?: string | null;
  currency_code: string;
  created_at: Instant;
  updated_at: Instant;
  started_at: Instant | null;
  first_billed_at: Instant | null;
  next_billed_at: Instant | null;
  paused_at: Instant | null;
  canceled_at: Instant | null;
  collection_mode: 'automatic' | 'manual';
  billing_cycle: BillingCycle;
  current_billing_period: { starts_at: Instant; ends_at: Instant } | null;
  scheduled_change: { action: string; effective_at: Instant; resume_at: Instant | null } | null;
  discount: SubscriptionDiscount | null;
  items: SubscriptionItem[];
  custom_data: Record<string, unknown> | null;
  /** Only in `subscription.created`: the checkout's transaction. */
  transaction_id?: string;
}

export type TransactionStatus = 'draft' | 'ready' | 'billed' | 'paid' | 'completed' | 'canceled' | 'past_due';
export type TransactionOrigin =
  | 'api'
  | 'subscription_charge'
  | 'subscription_payment_method_change'
  | 'subscription_recurring'
  | 'subscription_update'
  | 'web';

export interface TransactionTotals {
  subtotal: AmountString;
  discount: AmountString;
  tax: AmountString;
  total: AmountString;
  credit: AmountString;
  credit_to_balance?: AmountString;
  balance: AmountString;
  grand_total: AmountString;
  fee: AmountString | null;
  earnings: AmountString | null;
  currency_code: string;
}

export interface LineTotals {
  subtotal: AmountString;
  discount: AmountString;
  tax: AmountString;
  total: AmountString;
}

export interface Customer {
  id: string;
  name: string | null;
  email: string;
  status: 'active' | 'archived';
  marketing_consent?: boolean;
  locale?: string;
  custom_data: Record<string, unknown> | null;
  created_at: Instant;
  updated_at: Instant;
}

export interface Transaction {
  id: string;
  status: TransactionStatus;
  origin: TransactionOrigin;
  customer_id: string | null;
  address_id?: string | null;
  business_id?: string | null;
  subscription_id: string | null;
  invoice_id?: string | null;
  invoice_number?: string | null;
  discount_id: string | null;
  currency_code: string;
  collection_mode: 'automatic' | 'manual';
  billing_period: { starts_at: Instant; ends_at: Instant } | null;
  custom_data: Record<string, unknown> | null;
  items: { price: Price; quantity: number }[];
  details: {
    totals: TransactionTotals;
    tax_rates_used?: { tax_rate: string; totals: LineTotals }[];
    line_items?: {
      id: string;
      price_id: string;
      quantity: number;
      tax_rate: string;
      unit_totals: LineTotals;
      totals: LineTotals;
      product?: Product;
      proration: null;
    }[];
  };
  payments: {
    payment_attempt_id?: string;
    stored_payment_method_id?: string;
    amount: AmountString;
    status: 'captured' | 'error' | 'authorized' | 'canceled' | 'pending';
    created_at: Instant;
    captured_at: Instant | null;
    error_code: string | null;
    method_details?: {
      type: 'card';
      card: { type: string; last4: string; expiry_month: number; expiry_year: number; cardholder_name: string };
    } | null;
  }[];
  revised_at?: Instant | null;
  checkout: { url: string | null } | null;
  billed_at: Instant | null;
  created_at: Instant;
  updated_at: Instant;
  /** With `?include=customer` / `?include=discount`. */
  customer?: Customer;
  discount?: Discount | null;
}

export type AdjustmentAction =
  | 'credit'
  | 'credit_reverse'
  | 'refund'
  | 'chargeback'
  | 'chargeback_reverse'
  | 'chargeback_warning'
  | 'chargeback_warning_reverse';
export type AdjustmentStatus = 'pending_approval' | 'approved' | 'rejected' | 'reversed';

export interface Adjustment {
  id: string;
  action: AdjustmentAction;
  type: 'full' | 'partial';
  transaction_id: string;
  subscription_id: string | null;
  customer_id: string;
  reason: string;
  credit_applied_to_balance: boolean | null;
  currency_code: string;
  status: AdjustmentStatus;
  items: {
    id: string;
    item_id: string;
    type: 'full' | 'partial' | 'tax' | 'proration';
    amount: AmountString | null;
    proration?: null;
    totals?: { subtotal: AmountString; tax: AmountString; total: AmountString };
  }[];
  totals: {
    subtotal: AmountString;
    tax: AmountString;
    total: AmountString;
    fee: AmountString;
    earnings: AmountString;
    currency_code: string;
    retained_fee?: AmountString;
  };
  created_at: Instant;
  updated_at: Instant | null;
}

export type DiscountStatus = 'active' | 'archived' | 'expired' | 'used';

export interface Discount {
  id: string;
  status: DiscountStatus;
  description: string;
  enabled_for_checkout: boolean;
  code: string | null;
  type: 'flat' | 'flat_per_seat' | 'percentage';
  mode?: 'standard' | 'custom';
  /** Minor units (flat) or a percentage like "10" / "12.5". */
  amount: string;
  currency_code: string | null;
  recur: boolean;
  maximum_recurring_intervals: number | null;
  usage_limit: number | null;
  restrict_to: string[] | null;
  expires_at: Instant | null;
  custom_data: Record<string, unknown> | null;
  times_used: number;
  created_at: Instant;
  updated_at: Instant;
}

export interface CreateDiscountBody {
  description: string;
  type: 'flat' | 'percentage';
  amount: string;
  currency_code?: string;
  code?: string;
  enabled_for_checkout: boolean;
  recur: boolean;
  maximum_recurring_intervals?: number | null;
  usage_limit?: number | null;
  custom_data?: Record<string, unknown> | null;
}

/** `{data, meta}` of every successful answer; lists carry `meta.pagination`. */
export interface Envelope<T> {
  data: T;
  meta: { request_id: string; pagination?: Pagination };
}

export interface Pagination {
  per_page: number;
  /** The URL of the next page (absolute), carrying `after=<last id>`. */
  next: string;
  has_more: boolean;
  estimated_total: number;
}

export interface ApiErrorBody {
  error: {
    type: 'request_error' | 'api_error';
    code: string;
    detail: string;
    documentation_url?: string;
    errors?: { field: string; message: string }[];
  };
  meta: { request_id: string };
}

/** A webhook notification as delivered to a notification destination. */
export interface Notification<T = unknown> {
  event_id: string;
  event_type: string;
  occurred_at: Instant;
  notification_id: string;
  data: T;
}
