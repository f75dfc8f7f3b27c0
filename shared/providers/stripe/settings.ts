// An account's Stripe connection: what `account set-stripe` stores (docs/design/providers.md "Connecting an account").
// The key and the webhook signing secret are secrets: stored in their own item like Classic's auth code,
// never echoed, logged or returned.
export const DEFAULT_API_URL = 'https://api.stripe.com';

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

export type SettingsResult =
  | { ok: true; settings: StripeSettings }
  | { ok: false; field: 'secret_key' | 'webhook_secret' | 'api_url'; message: string };

// Real keys are letters and digits after the prefix; `_` is allowed too for the local emulator's key
// (sk_test_local_emulator), which npm start prints and the dashboard's provider form accepts.
const KEY = /^(sk|rk)_(test|live)_[A-Za-z0-9_]{8,247}$/;
const WHSEC = /^whsec_[A-Za-z0-9+/=_-]{8,200}$/;

/** Validates the CLI's input. Local emulators are allowed over http on loopback only. */
export function stripeSettings(input: { secretKey: string; webhookSecret: string; apiUrl?: string }): SettingsResult {
  if (input.secretKey.startsWith('pk_'))
    return { ok: false, field: 'secret_key', message: 'is a publishable key; Refloop needs a secret (sk_…) or restricted (rk_…) key' };
  if (!KEY.test(input.secretKey))
    return {
      ok: false,
      field: 'secret_key',
      message: 'must be a Stripe secret key sk_live_…/sk_test_… or restricted key rk_live_…/rk_test_…',
    };
  if (!WHSEC.test(input.webhookSecret))
    return { ok: false, field: 'webhook_secret', message: "must be the webhook endpoint's signing secret (whsec_…)" };
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
  if (url.pathname !== '/' || url.search || url.hash)
    return { ok: false, field: 'api_url', message: 'must be the API host only, without a path (calls go to /v1/…)' };
  return { ok: true, settings: { kind: 'stripe', secretKey: input.secretKey, webhookSecret: input.webhookSecret, apiUrl } };
}
