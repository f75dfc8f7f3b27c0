// An account's Stripe connection: what `account set-stripe` stores (docs/design/providers.md "Connecting an account").
// The key and the webhook signing secret are secrets: stored in their own item like Classic's auth code,
// never echoed, logged or returned.
import { STRIPE_API_VERSION } from './wire';

export const DEFAULT_API_URL = 'https://api.stripe.com';

/** The events to select on the webhook endpoint (README). Kept here, not in ./events.ts: the
 * definition imports this module, and everything it imports is in every function that reaches the registry. */
export const WEBHOOK_EVENTS: readonly string[] = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'charge.refunded',
  'charge.refund.updated',
  'charge.dispute.created',
];

export interface StripeSettings {
  kind: 'stripe';
  /** A secret key `sk_live_…`/`sk_test_…` or, better, a restricted key `rk_live_…`/`rk_test_…`. Secret. */
  secretKey: string;
  /** The webhook endpoint's signing secret, `whsec_…`. Secret; only the webhook intake reads it. */
  webhookSecret: string;
  /** https://api.stripe.com (default, test and live: the key picks the mode), or a local emulator. */
  apiUrl: string;
}

/** The connection as read for the API (the webhook secret is read by the intake only). */
export type StripeConnection = Omit<StripeSettings, 'webhookSecret'> & { webhookSecret?: string };

export type SettingsResult = { ok: true; settings: StripeSettings } | { ok: false; field: 'secret_key' | 'webhook_secret' | 'api_url'; message: string };

// Real keys are letters and digits after the prefix; `_` is allowed too for the local emulator's key
// (sk_test_local_emulator), which npm start prints and the dashboard's provider form accepts.
const KEY = /^(sk|rk)_(test|live)_[A-Za-z0-9_]{8,247}$/;
const WHSEC = /^whsec_[A-Za-z0-9+/=_-]{8,200}$/;

/**
 * What a restricted key needs (Dashboard > Developers > API keys > Create restricted key); everything else
 * None. Refloop reads subscriptions, checkouts, invoices, charges and refunds, and writes only customer
 * balance transactions (credits), coupons and promotion codes.
 */
export const RESTRICTED_KEY_PERMISSIONS: readonly { resource: string; access: 'Read' | 'Write'; why: string }[] = [
  { resource: 'Customers', access: 'Write', why: 'read emails and credit balances; create balance transactions (referrer credits and their reversals)' },
  { resource: 'Subscriptions', access: 'Read', why: 'mirror subscriptions; background sync' },
  { resource: 'Checkout Sessions', access: 'Read', why: 'conversion by checkout_id (cs_…); the checkout of a first invoice' },
  { resource: 'Invoices', access: 'Read', why: 'payments; invoice payments (a charge -> its invoice)' },
  { resource: 'Charges', access: 'Read', why: 'refunds of a charge' },
  { resource: 'Refunds', access: 'Read', why: 'more than 10 refunds on one charge' },
  { resource: 'Products', access: 'Read', why: 'plan names' },
  { resource: 'Coupons', access: 'Write', why: 'one coupon per set of campaign discount terms' },
  { resource: 'Promotion Codes', access: 'Write', why: 'one single-use code per referral' },
];

/** README text: the restricted key, the webhook endpoint's API version and events. */
export function stripeSetupMarkdown(webhookUrl = 'https://<api>/webhooks/stripe/<account_id>/'): string {
  const rows = RESTRICTED_KEY_PERMISSIONS.map((p) => `| ${p.resource} | ${p.access} | ${p.why} |`).join('\n');
  return [
    'A restricted key is enough. Create it with these permissions (everything else None):',
    '',
    '| resource | access | why |',
    '|---|---|---|',
    rows,
    '',
    `Create the webhook endpoint \`${webhookUrl}\` with **API version \`${STRIPE_API_VERSION}\`** (the version Refloop pins for every call; an endpoint on another version sends other shapes) and select these events:`,
    '',
    ...WEBHOOK_EVENTS.map((e) => `- \`${e}\``),
    '',
    'Or through the API, with your own secret key (Refloop\'s restricted key needs no access to webhook endpoints):',
    '',
    '```sh',
    `curl https://api.stripe.com/v1/webhook_endpoints -u "$STRIPE_SECRET_KEY:" -d url='${webhookUrl}' -d api_version=${STRIPE_API_VERSION} ` + WEBHOOK_EVENTS.map((e) => `-d 'enabled_events[]=${e}'`).join(' '),
    '```',
    '',
    'Its answer carries the signing secret (`whsec_…`) for `account set-stripe --webhook-secret`.',
  ].join('\n');
}

/** Validates the CLI's input. Local emulators are allowed over http on loopback only. */
export function stripeSettings(input: { secretKey: string; webhookSecret: string; apiUrl?: string }): SettingsResult {
  if (input.secretKey.startsWith('pk_')) return { ok: false, field: 'secret_key', message: 'is a publishable key; Refloop needs a secret (sk_…) or restricted (rk_…) key' };
  if (!KEY.test(input.secretKey)) return { ok: false, field: 'secret_key', message: 'must be a Stripe secret key sk_live_…/sk_test_… or restricted key rk_live_…/rk_test_…' };
  if (!WHSEC.test(input.webhookSecret)) return { ok: false, field: 'webhook_secret', message: "must be the webhook endpoint's signing secret (whsec_…)" };
  const apiUrl = (input.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return { ok: false, field: 'api_url', message: 'must be a URL' };
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback)) {
    return { ok: false, field: 'api_url', message: 'must be https (http only for a local emulator)' };
  }
  if (url.pathname !== '/' || url.search || url.hash) return { ok: false, field: 'api_url', message: 'must be the API host only, without a path (calls go to /v1/…)' };
  return { ok: true, settings: { kind: 'stripe', secretKey: input.secretKey, webhookSecret: input.webhookSecret, apiUrl } };
}
