// Refloop webhook signatures, for receivers. Dependency-free (node:crypto only): copy this file into
// your backend, or import it. Every delivery carries
//
//   Refloop-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" keyed with the endpoint's secret>
//
// Verify over the EXACT raw body bytes (before any JSON parsing), and reject old timestamps so a captured
// delivery cannot be replayed later:
//
//   import { verifyWebhook } from './verify';
//   const result = verifyWebhook(rawBody, req.headers['refloop-signature'], process.env.REFLOOP_WEBHOOK_SECRET);
//   if (!result.ok) return res.status(400).send(result.reason);
//   const event = JSON.parse(rawBody); // {id, type, created_at, data}; dedupe on event.id
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'Refloop-Signature';
/** Deliveries whose timestamp is further than this from the receiver's clock are rejected. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

/** The hex HMAC-SHA256 of `<timestamp>.<body>` keyed with the whole secret string (`whsec_...`). */
export function computeSignature(body: string | Buffer, timestamp: number, secret: string): string {
  const payload = Buffer.concat([Buffer.from(`${timestamp}.`, 'utf8'), typeof body === 'string' ? Buffer.from(body, 'utf8') : body]);
  return createHmac('sha256', secret).update(payload).digest('hex');
}

/** The header value for a body signed now (what the sender does). */
export function signatureHeader(body: string | Buffer, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return `t=${timestamp},v1=${computeSignature(body, timestamp, secret)}`;
}

export type VerifyResult = { ok: true; timestamp: number } | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' };

/**
 * Checks a delivery: the header parses, its timestamp is within `toleranceSeconds` of `now`, and one
 * of its v1 signatures (there may be several) matches, compared in constant time.
 */
export function verifyWebhook(
  body: string | Buffer,
  header: string | string[] | undefined | null,
  secret: string,
  options: { toleranceSeconds?: number; now?: number } = {},
): VerifyResult {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return { ok: false, reason: 'missing' };
  let timestamp: number | undefined;
  const signatures: string[] = [];
  for (const part of value.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (name === 't' && /^\d{1,12}$/.test(v)) timestamp = Number(v);
    else if (name === 'v1' && /^[0-9a-f]{64}$/.test(v)) signatures.push(v);
  }
  if (timestamp === undefined || signatures.length === 0) return { ok: false, reason: 'malformed' };
  const now = options.now ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - timestamp) > (options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS)) return { ok: false, reason: 'stale' };
  const expected = Buffer.from(computeSignature(body, timestamp, secret), 'hex');
  const match = signatures.some((s) => timingSafeEqual(Buffer.from(s, 'hex'), expected));
  return match ? { ok: true, timestamp } : { ok: false, reason: 'mismatch' };
}
