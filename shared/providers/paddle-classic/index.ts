// Paddle Classic as the service sees it: its connection, alert intake, adapter (loaded on first use),
// quirks, CLI command and docs (shared/billing/definition.ts). Registered in shared/billing/registry.ts.
import type { ProviderAdapter, ProviderDefinition, WebhookVerdict } from '../../billing/definition';
import { parsePaddlePublicKey } from './public-key';
import { DEFAULT_CHECKOUT_API_URL, DEFAULT_VENDORS_API_URL, type ClassicConnection } from './settings';
import { signedFields, verifyPaddleSignature, type AlertFields } from './signature';

const HTTP_URL = /^https?:\/\/[^/\s]+/;
const FORM = 'application/x-www-form-urlencoded';
const INVALID_SIGNATURE: WebhookVerdict = { ok: false, status: 403, detail: 'Invalid signature.' };

/**
 * An alert: an application/x-www-form-urlencoded body decoded exactly once (`+` is a space, `%XX` a byte),
 * every field kept as the string Paddle sent; `p_signature` (RSA-SHA1 over the PHP-serialized other fields)
 * verified with the account's public key. A repeated field is not something Paddle sends: it fails the
 * check. What is queued is the signed fields (p_signature removed), form-encoded.
 */
function verifyAlert(contentType: string | undefined, body: Buffer, publicKey: string): WebhookVerdict {
  const type = (contentType ?? '').trim();
  if ((type.split(';')[0]?.trim().toLowerCase() ?? '') !== FORM) return { ok: false, status: 415, detail: `Unsupported media type "${type}" in request.` };
  const fields: AlertFields = {};
  for (const [key, value] of new URLSearchParams(body.toString('utf8'))) {
    if (key in fields) return INVALID_SIGNATURE;
    fields[key] = value;
  }
  if (!verifyPaddleSignature(fields, publicKey)) return INVALID_SIGNATURE;
  return { ok: true, headers: {}, rawBody: new URLSearchParams(signedFields(fields)).toString() };
}

export const paddleClassic: ProviderDefinition<ClassicConnection> = {
  kind: 'paddle-classic',
  name: 'Paddle Classic',
  docsUrl: 'https://developer.paddle.com/classic/',
  docsPage: 'docs/providers/paddle-classic.md',

  fields: [
    { name: 'vendor_id', label: 'Vendor id', type: 'integer', required: true },
    { name: 'auth_code', label: 'Auth code', type: 'password', required: true, hint: 'Developer Tools > Authentication.' },
    { name: 'public_key', label: 'Public key', type: 'textarea', required: true, placeholder: '-----BEGIN PUBLIC KEY-----', hint: "Developer Tools > Public Key: verifies Paddle's alerts." },
  ],
  // One API (vendors and checkout): an `api_url` is only an emulator's base URL, serving both.
  apiHosts: [],
  connectionFromBody(body, apiUrl) {
    const key = parsePaddlePublicKey(body.public_key as string);
    if (!key.ok) return { ok: false, field: 'public_key', message: key.message };
    return {
      ok: true,
      value: {
        kind: 'paddle-classic',
        vendorId: body.vendor_id as number,
        authCode: body.auth_code as string,
        publicKey: key.pem,
        vendorsApiUrl: apiUrl ? `${apiUrl}/vendors/api` : DEFAULT_VENDORS_API_URL,
        checkoutApiUrl: apiUrl ? `${apiUrl}/checkout/api` : DEFAULT_CHECKOUT_API_URL,
      },
    };
  },

  storedKind: 'paddle',
  apiSecretAttribute: 'auth_code',
  toStored: (c) => ({ settings: { vendor_id: c.vendorId, public_key: c.publicKey, vendors_api_url: c.vendorsApiUrl, checkout_api_url: c.checkoutApiUrl }, apiSecret: c.authCode, webhookSecret: null }),
  fromStored: (item, authCode) => ({
    kind: 'paddle-classic',
    vendorId: Number(item.vendor_id),
    publicKey: String(item.public_key),
    vendorsApiUrl: String(item.vendors_api_url),
    checkoutApiUrl: String(item.checkout_api_url),
    authCode,
  }),
  view: (item) => ({
    vendor_id: typeof item.vendor_id === 'number' ? item.vendor_id : null,
    api_url: typeof item.vendors_api_url === 'string' ? item.vendors_api_url.replace(/\/vendors\/api$/, '') : null,
  }),

  webhook: {
    path: 'paddle',
    signatureHeader: null,
    // The public key in the settings item: the intake never needs a secret.
    key: 'settings',
    keyFromSettings: (item) => (typeof item.public_key === 'string' ? item.public_key : null),
    // Paddle alerts are a few KB; anything far bigger is not one.
    maxBytes: 64 * 1024,
    verify: (request, publicKey) => verifyAlert(request.headers['content-type'], request.body, publicKey),
  },

  async adapter(): Promise<ProviderAdapter<ClassicConnection>> {
    const { paddleClassicProvider, paddleClassicWebhooks } = await import('./adapter');
    return {
      provider: (connection, options) => paddleClassicProvider(connection, options),
      webhooks: (load, options) => paddleClassicWebhooks(options.accountId, load, { timeoutMs: options.timeoutMs }),
    };
  },
  quirks: { combinesCredits: false, listsDeletedApart: true, describesPlans: true, parsesWebhooksWithoutConnection: true },

  cli: {
    command: 'set-paddle',
    args: '--vendor-id <int> --auth-code <secret> --public-key-file <pem-path> [--vendors-api-url <url>] [--checkout-api-url <url>]',
    summary: "Store the account's Paddle Classic settings (refuses a file that is not an RSA public key).",
    flags: ['vendor-id', 'auth-code', 'public-key-file', 'vendors-api-url', 'checkout-api-url'],
    required: ['vendor-id', 'auth-code', 'public-key-file'],
    check(values) {
      if (!/^\d{1,12}$/.test(values['vendor-id'] ?? '') || Number(values['vendor-id']) <= 0) return `--vendor-id must be a positive integer, got "${values['vendor-id']}"`;
      for (const flag of ['vendors-api-url', 'checkout-api-url']) {
        const url = values[flag];
        if (url !== undefined && !HTTP_URL.test(url)) return `--${flag} must be an http(s) URL, got "${url}"`;
      }
      return null;
    },
    connection(values, readFile) {
      // The key is read and parsed before anything is written: a bad file changes nothing.
      const path = values['public-key-file'] as string;
      let pem: string;
      try {
        pem = readFile(path);
      } catch (err) {
        return { ok: false, message: `cannot read --public-key-file ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}` };
      }
      const parsed = parsePaddlePublicKey(pem);
      if (!parsed.ok) {
        if (/PRIVATE key/.test(parsed.message)) {
          return {
            ok: false,
            message: `--public-key-file ${path} holds a PRIVATE key; give Paddle's public key (Developer Tools -> Public Key, "-----BEGIN PUBLIC KEY-----") and keep private keys out of Refloop`,
          };
        }
        return { ok: false, message: `--public-key-file ${path} is not an RSA public key in PEM form (${parsed.message.replace(/^Not an RSA public key in PEM form \(|\)\.$/g, '')})` };
      }
      return {
        ok: true,
        connection: {
          kind: 'paddle-classic',
          vendorId: Number(values['vendor-id']),
          authCode: values['auth-code'] as string,
          publicKey: parsed.pem,
          vendorsApiUrl: (values['vendors-api-url'] ?? DEFAULT_VENDORS_API_URL).replace(/\/+$/, ''),
          checkoutApiUrl: (values['checkout-api-url'] ?? DEFAULT_CHECKOUT_API_URL).replace(/\/+$/, ''),
        },
      };
    },
    // The auth code is a secret: it is never echoed back.
    output: (c) => ({ provider: 'paddle', vendor_id: c.vendorId }),
  },
  emulator: { folder: 'paddle-classic' },
};
