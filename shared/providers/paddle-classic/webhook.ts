// Paddle Classic's alert check (its definition's `webhook.verify`, ./index.ts), read by the webhook intake
// only. Loaded on first use; in a bundle, a file of its own (infra/cloud/bundling.ts).
import type { WebhookSpec, WebhookVerdict } from '../../billing/definition';
import { signedFields, verifyPaddleSignature, type AlertFields } from './signature';

const FORM = 'application/x-www-form-urlencoded';
const INVALID_SIGNATURE: WebhookVerdict = { ok: false, status: 403, detail: 'Invalid signature.' };

/**
 * An alert: an application/x-www-form-urlencoded body decoded exactly once (`+` is a space, `%XX` a byte),
 * every field kept as the string Paddle sent; `p_signature` (RSA-SHA1 over the PHP-serialized other fields)
 * verified with the account's public key. A repeated field is not something Paddle sends: it fails the
 * check. What is queued is the signed fields (p_signature removed), form-encoded.
 */
export function verifyAlert(contentType: string | undefined, body: Buffer, publicKey: string): WebhookVerdict {
  const type = (contentType ?? '').trim();
  if ((type.split(';')[0]?.trim().toLowerCase() ?? '') !== FORM)
    return { ok: false, status: 415, detail: `Unsupported media type "${type}" in request.` };
  const fields: AlertFields = {};
  for (const [key, value] of new URLSearchParams(body.toString('utf8'))) {
    if (key in fields) return INVALID_SIGNATURE;
    fields[key] = value;
  }
  if (!verifyPaddleSignature(fields, publicKey)) return INVALID_SIGNATURE;
  return { ok: true, headers: {}, rawBody: new URLSearchParams(signedFields(fields)).toString() };
}

/** The intake's check (the definition's `webhook`). */
export const webhook: WebhookSpec = {
  path: 'paddle',
  signatureHeader: null,
  // The public key in the settings item: the intake never needs a secret.
  key: 'settings',
  keyFromSettings: (item) => (typeof item.public_key === 'string' ? item.public_key : null),
  // Paddle alerts are a few KB; anything far bigger is not one.
  maxBytes: 64 * 1024,
  verify: (request, publicKey) => verifyAlert(request.headers['content-type'], request.body, publicKey),
};
