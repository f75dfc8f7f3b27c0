// Paddle Classic's connection form and CLI command (its definition's `form` and `cli`, ./index.ts): the
// parts that parse and check settings and public keys, read only by the dashboard's provider route, the API
// reference and the operator CLI. Loaded on first use; in a bundle, a file of its own (infra/cloud/bundling.ts).
import type { CliConnectSpec, ConnectionForm, StoredConnection } from '../../billing/definition';
import { parsePaddlePublicKey } from './public-key';
import { DEFAULT_CHECKOUT_API_URL, DEFAULT_VENDORS_API_URL, type ClassicConnection } from './settings';

const HTTP_URL = /^https?:\/\/[^/\s]+/;

export const form: ConnectionForm<ClassicConnection> = {
  fields: [
    { name: 'vendor_id', label: 'Vendor id', type: 'integer', required: true },
    { name: 'auth_code', label: 'Auth code', type: 'password', required: true, hint: 'Developer Tools > Authentication.' },
    {
      name: 'public_key',
      label: 'Public key',
      type: 'textarea',
      required: true,
      placeholder: '-----BEGIN PUBLIC KEY-----',
      hint: "Developer Tools > Public Key: verifies Paddle's alerts.",
    },
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
};

export const cli: CliConnectSpec<ClassicConnection> = {
  command: 'set-paddle',
  args: '--vendor-id <int> --auth-code <secret> --public-key-file <pem-path> [--vendors-api-url <url>] [--checkout-api-url <url>]',
  summary: "Store the account's Paddle Classic settings (refuses a file that is not an RSA public key).",
  flags: ['vendor-id', 'auth-code', 'public-key-file', 'vendors-api-url', 'checkout-api-url'],
  required: ['vendor-id', 'auth-code', 'public-key-file'],
  check(values) {
    if (!/^\d{1,12}$/.test(values['vendor-id'] ?? '') || Number(values['vendor-id']) <= 0)
      return `--vendor-id must be a positive integer, got "${values['vendor-id']}"`;
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
      return {
        ok: false,
        message: `--public-key-file ${path} is not an RSA public key in PEM form (${parsed.message.replace(/^Not an RSA public key in PEM form \(|\)\.$/g, '')})`,
      };
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
};

/** How the store keeps a connection (the definition's `toStored`): the public key is public, no webhook secret. */
export const toStored = (c: ClassicConnection): StoredConnection => ({
  settings: { vendor_id: c.vendorId, public_key: c.publicKey, vendors_api_url: c.vendorsApiUrl, checkout_api_url: c.checkoutApiUrl },
  apiSecret: c.authCode,
  webhookSecret: null,
});
