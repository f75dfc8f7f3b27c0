// Stripe Connect wire shapes at the pinned API version: the connected account, the Account Link, the
// transfer and its reversals, as Stripe sends them (snake_case, `object` on every object, integer amounts in
// Stripe's unit for the currency, lower-case currencies, unix seconds). Shared by the rail's adapter, its
// webhook check and the emulator's Connect side (infra/local/emulators/stripe/connect-ledger.ts), so they
// cannot drift apart; the official `stripe` package checks the emulator in test/integration/rail-stripe.test.ts.
//
// The rail sits behind the payout-rail port and, like every rail, imports no provider (test/unit/import-graph
// .test.ts), so the few things it shares with the Stripe billing provider are repeated here, and the contract
// test checks that they agree with shared/providers/stripe/wire.ts: the API version, form encoding and
// Stripe's amount units.
import { currencyExponent } from '../../domain/currency';

/** The API version every call sends (`Stripe-Version`); the same as the billing provider's. */
export const STRIPE_API_VERSION = '2026-10-28.endive';

export type Metadata = Record<string, string>;

export interface List<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
  url: string;
}

export type CapabilityStatus = 'active' | 'inactive' | 'pending';

export interface ConnectedAccount {
  id: string;
  object: 'account';
  type: 'express' | 'standard' | 'custom';
  country: string;
  email: string | null;
  created: number;
  default_currency: string;
  charges_enabled: boolean;
  payouts_enabled: boolean;
  details_submitted: boolean;
  capabilities: { transfers?: CapabilityStatus; card_payments?: CapabilityStatus };
  requirements: {
    currently_due: string[];
    eventually_due: string[];
    past_due: string[];
    pending_verification: string[];
    current_deadline: number | null;
    disabled_reason: string | null;
  };
  metadata: Metadata;
}

export interface AccountLink {
  object: 'account_link';
  created: number;
  expires_at: number;
  url: string;
}

export interface TransferReversal {
  id: string;
  object: 'transfer_reversal';
  amount: number;
  balance_transaction: string | null;
  created: number;
  currency: string;
  destination_payment_refund: string | null;
  metadata: Metadata;
  source_refund: string | null;
  transfer: string;
}

export interface Transfer {
  id: string;
  object: 'transfer';
  amount: number;
  amount_reversed: number;
  balance_transaction: string | null;
  created: number;
  currency: string;
  description: string | null;
  destination: string;
  destination_payment: string;
  livemode: boolean;
  metadata: Metadata;
  reversals: List<TransferReversal>;
  reversed: boolean;
  source_transaction: string | null;
  source_type: string;
  transfer_group: string | null;
}

export interface ConnectEvent<T = unknown> {
  id: string;
  object: 'event';
  /** The connected account the event comes from (Connect endpoints only). */
  account?: string;
  api_version: string | null;
  created: number;
  data: { object: T; previous_attributes?: Record<string, unknown> };
  livemode: boolean;
  pending_webhooks: number;
  request: { id: string | null; idempotency_key: string | null };
  type: string;
}

export interface ApiErrorBody {
  error: { type: string; code?: string; message?: string; param?: string; decline_code?: string };
}

// --- amounts ------------------------------------------------------------------------------------------

/** Stripe's zero-decimal currencies (as shared/providers/stripe/wire.ts lists them). */
const ZERO_DECIMAL = new Set([
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
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

function stripeExponent(currency: string): number {
  const c = currency.toUpperCase();
  return ZERO_DECIMAL.has(c) ? 0 : THREE_DECIMAL.has(c) ? 3 : 2;
}

function shift(amount: number, by: number): number {
  if (by === 0) return amount;
  if (by > 0) return amount * 10 ** by;
  const d = 10 ** -by;
  return Math.sign(amount) * Math.round(Math.abs(amount) / d);
}

/** The port's minor units (ISO 4217) -> a Stripe API amount (HUF, ISK, ... carry two decimals in Stripe's API). */
export const toStripeAmount = (amount: number, currency: string): number =>
  shift(amount, stripeExponent(currency) - currencyExponent(currency.toUpperCase()));

/** A Stripe API amount -> the port's minor units. */
export const fromStripeAmount = (amount: number, currency: string): number =>
  shift(amount, currencyExponent(currency.toUpperCase()) - stripeExponent(currency));

// --- form encoding ------------------------------------------------------------------------------------

export type FormValue = string | number | boolean | null | undefined | { [key: string]: FormValue };

/** Stripe's form encoding with bracket keys: `metadata[refloop_payout_id]=po_1`, `capabilities[transfers][requested]=true`. */
export function encodeForm(params: Record<string, FormValue>): string {
  const pairs: string[] = [];
  const walk = (key: string, value: FormValue) => {
    if (value === undefined) return;
    if (value !== null && typeof value === 'object') {
      for (const [k, v] of Object.entries(value)) walk(`${key}[${k}]`, v);
      return;
    }
    const name = encodeURIComponent(key).replace(/%5B/g, '[').replace(/%5D/g, ']');
    pairs.push(`${name}=${encodeURIComponent(value === null ? '' : String(value))}`);
  };
  for (const [k, v] of Object.entries(params)) walk(k, v);
  return pairs.join('&');
}
