// An account's Chargebee connection: what `account set-chargebee` and the dashboard's form store
// (docs/providers/chargebee.md "Connecting"). The API key and the webhook's Basic-auth password are
// secrets: stored in their own items, never echoed, logged or returned.
//
// Chargebee calls a site `https://<site>.chargebee.com/api/v2/` (a test site is usually `<name>-test`);
// the API key is the Basic-auth username with an empty password. Chargebee does not sign webhooks: the
// seller sets a username and password under Basic authentication in its webhook settings, and the
// intake compares them (./signature.ts).

/** The username the form suggests when none is given. */
export const DEFAULT_WEBHOOK_USERNAME = 'refloop';
/** A shorter password is refused: it is the only thing that authenticates a webhook. */
export const MIN_WEBHOOK_PASSWORD = 24;

export interface ChargebeeSettings {
  kind: 'chargebee';
  /** The site's name, the host's first label: `acme` or `acme-test`. */
  site: string;
  /** A full-access API key (credits and coupons need one). Secret. */
  apiKey: string;
  /** The webhook's Basic-auth username (not secret) and password (secret; only the intake reads it). */
  webhookUsername: string;
  webhookPassword: string;
  /** `https://<site>.chargebee.com` (default), or a local emulator; calls go to `<apiUrl>/api/v2/…`. */
  apiUrl: string;
}

/** The connection as read for the API (the webhook password is read by the intake only). */
export type ChargebeeConnection = Omit<ChargebeeSettings, 'webhookPassword' | 'webhookUsername'> & {
  webhookUsername?: string;
  webhookPassword?: string;
};

export type SettingsResult =
  | { ok: true; settings: ChargebeeSettings }
  | { ok: false; field: 'site' | 'api_key' | 'webhook_username' | 'webhook_password' | 'api_url'; message: string };

const SITE = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
// Chargebee's keys are letters, digits and `_` (`test_…`/`live_…` on the sites seen); no prefix is
// required, so a key format Chargebee introduces later is not refused.
const API_KEY = /^[A-Za-z0-9_-]{8,200}$/;
const USERNAME = /^[\x21-\x39\x3b-\x7e]{1,64}$/; // printable ASCII without ':' or space
const PASSWORD = /^[\x20-\x7e]+$/;

/** Chargebee's own API base for a site. */
export const siteApiUrl = (site: string): string => `https://${site}.chargebee.com`;

/** Validates the CLI's and the form's input. Local emulators are allowed over http on loopback only. */
export function chargebeeSettings(input: {
  site: string;
  apiKey: string;
  webhookPassword: string;
  webhookUsername?: string | undefined;
  apiUrl?: string | undefined;
}): SettingsResult {
  const site =
    typeof input.site === 'string'
      ? input.site
          .trim()
          .toLowerCase()
          .replace(/\.chargebee\.com$/, '')
      : '';
  if (!SITE.test(site))
    return { ok: false, field: 'site', message: 'must be the site name, the part before .chargebee.com (e.g. acme or acme-test)' };
  if (typeof input.apiKey !== 'string' || !API_KEY.test(input.apiKey))
    return { ok: false, field: 'api_key', message: 'must be a Chargebee API key (Settings > Configure Chargebee > API keys)' };
  const webhookUsername =
    input.webhookUsername === undefined || input.webhookUsername === '' ? DEFAULT_WEBHOOK_USERNAME : input.webhookUsername;
  if (typeof webhookUsername !== 'string' || !USERNAME.test(webhookUsername))
    return { ok: false, field: 'webhook_username', message: 'must be 1 to 64 printable characters without spaces or ":"' };
  if (typeof input.webhookPassword !== 'string' || !PASSWORD.test(input.webhookPassword))
    return { ok: false, field: 'webhook_password', message: 'must be printable characters' };
  if (input.webhookPassword.length < MIN_WEBHOOK_PASSWORD || input.webhookPassword.length > 200)
    return {
      ok: false,
      field: 'webhook_password',
      message: `must be ${MIN_WEBHOOK_PASSWORD} to 200 characters (a random one, e.g. openssl rand -hex 24)`,
    };
  const apiUrl = (input.apiUrl ?? siteApiUrl(site)).replace(/\/+$/, '');
  let url: URL;
  try {
    url = new URL(apiUrl);
  } catch {
    return { ok: false, field: 'api_url', message: 'must be a URL' };
  }
  const loopback = url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]';
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    return { ok: false, field: 'api_url', message: 'must be https (http only for a local emulator)' };
  if (url.pathname !== '/' || url.search || url.hash)
    return { ok: false, field: 'api_url', message: 'must be the API host only, without a path (calls go to /api/v2/…)' };
  return {
    ok: true,
    settings: { kind: 'chargebee', site, apiKey: input.apiKey, webhookUsername, webhookPassword: input.webhookPassword, apiUrl },
  };
}
