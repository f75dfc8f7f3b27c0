// Chargebee's webhook check. Chargebee does not sign webhooks: the seller sets a username and password
// under Basic authentication in the webhook settings, and every POST carries
// `Authorization: Basic base64(<username>:<password>)`. The intake compares that pair with the account's,
// in constant time (both sides are hashed to 32 bytes first, so neither the length nor the first
// difference shows in the time taken). No header is a missing signature, anything else a bad one;
// nothing is timed, so `stale_timestamp` never applies.
//
// Credentials alone are not trusted with money: the worker applies only the event it fetches again from
// Chargebee by id (./adapter.ts parseWebhook), and events are de-duplicated by id
// (docs/providers/chargebee.md "Webhook security").
import { createHash, timingSafeEqual } from 'node:crypto';
import { MAX_WEBHOOK_BYTES, type WebhookSpec } from '../../billing/definition';
import type { RawWebhook, WebhookVerification, WebhookVerifier } from '../../billing/port';

export const AUTH_HEADER = 'authorization';
const MAX_HEADER_LENGTH = 1024;

/** The stored webhook secret: the pair as Chargebee sends it, `<username>:<password>`. */
export const webhookSecretOf = (username: string, password: string): string => `${username}:${password}`;

/** The header Chargebee sends for a username and password (the emulator and the tests use it). */
export const basicAuthHeader = (secret: string): string => `Basic ${Buffer.from(secret, 'utf8').toString('base64')}`;

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

/** Verifies the request's Basic credentials against `secret` (`<username>:<password>`). Never throws. */
export function verifyChargebeeAuth(raw: RawWebhook, secret: string): WebhookVerification {
  const header = raw.headers[AUTH_HEADER];
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing_signature' };
  if (secret.length === 0 || header.length > MAX_HEADER_LENGTH) return { ok: false, reason: 'bad_signature' };
  const match = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match?.[1]) return { ok: false, reason: 'bad_signature' };
  const sent = Buffer.from(match[1], 'base64').toString('utf8');
  if (!timingSafeEqual(digest(sent), digest(secret))) return { ok: false, reason: 'bad_signature' };
  return { ok: true, eventId: eventIdOf(raw.rawBody) };
}

function eventIdOf(rawBody: string): string | null {
  try {
    const body = JSON.parse(rawBody) as { id?: unknown; object?: unknown } | null;
    return body && body.object === 'event' && typeof body.id === 'string' ? body.id : null;
  } catch {
    return null;
  }
}

export const chargebeeVerifier: WebhookVerifier = {
  kind: 'chargebee',
  verify: (raw, secret) => verifyChargebeeAuth(raw, secret),
};

/**
 * The intake's check (the definition's `webhook`): the pair compared in constant time; only the verdict
 * matters, and the Authorization header itself is never queued (it is the secret). The worker applies
 * only the event it re-fetches by id (./adapter.ts).
 */
export const webhook: WebhookSpec = {
  path: 'chargebee',
  signatureHeader: AUTH_HEADER,
  key: 'webhook-secret',
  maxBytes: MAX_WEBHOOK_BYTES,
  verify(request, secret) {
    const rawBody = request.body.toString('utf8');
    const verdict = verifyChargebeeAuth({ headers: request.headers, rawBody }, secret);
    if (!verdict.ok) return { ok: false, status: 403, detail: 'Invalid signature.' };
    return { ok: true, headers: {}, rawBody };
  },
};
