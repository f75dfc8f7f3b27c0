// An account's Paddle Billing connection: what `account set-paddle-billing` stores (docs/design/providers.md
// "Connecting an account"). The API key and the webhook secret are secrets: stored in their own item like
// Classic's auth code, never echoed, logged or returned.
export const DEFAULT_API_URL = 'https://api.paddle.com';
export const SANDBOX_API_URL = 'https://sandbox-api.paddle.com';

export interface PaddleBillingSettings {
  kind: 'paddle-billing';
  /** `pdl_live_apikey_…` / `pdl_sdbx_apikey_…` (older keys have no prefix). Secret. */
  apiKey: string;
  /** The notification destination's secret key, `pdl_ntfset_…`. Secret; only the webhook intake reads it. */
  webhookSecret: string;
  /** https://api.paddle.com (default), https://sandbox-api.paddle.com, or a local emulator. */
  apiUrl: string;
}

/** The connection as read for the API (the webhook secret is read by the intake only). */
export type PaddleBillingConnection = Omit<PaddleBillingSettings, 'webhookSecret'> & { webhookSecret?: string };

export type SettingsResult =
  | { ok: true; settings: PaddleBillingSettings }
  | { ok: false; field: 'api_key' | 'webhook_secret' | 'api_url'; message: string };

const TOKEN = /^[A-Za-z0-9_-]{8,200}$/;

/** Validates the CLI's input. Local emulators are allowed over http on loopback only. */
export function paddleBillingSettings(input: { apiKey: string; webhookSecret: string; apiUrl?: string }): SettingsResult {
  if (!TOKEN.test(input.apiKey)) return { ok: false, field: 'api_key', message: 'must be a Paddle API key (letters, digits, _ and -)' };
  if (!TOKEN.test(input.webhookSecret))
    return { ok: false, field: 'webhook_secret', message: 'must be a notification destination secret (pdl_ntfset_…)' };
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
  // Keys work only in their own environment: catch the mix-up here, not as a 403 on the first credit.
  if (input.apiKey.startsWith('pdl_sdbx_') && apiUrl === DEFAULT_API_URL) {
    return { ok: false, field: 'api_url', message: `a sandbox key needs --api-url ${SANDBOX_API_URL}` };
  }
  if (input.apiKey.startsWith('pdl_live_') && apiUrl === SANDBOX_API_URL) {
    return { ok: false, field: 'api_url', message: `a live key needs --api-url ${DEFAULT_API_URL}` };
  }
  return { ok: true, settings: { kind: 'paddle-billing', apiKey: input.apiKey, webhookSecret: input.webhookSecret, apiUrl } };
}
