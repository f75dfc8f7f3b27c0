// Stripe webhook signature (`Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…][,v0=<hex>]`): v1 is
// the hex HMAC-SHA256 of `<t>.<raw body>` under the endpoint's signing secret (`whsec_…`, used as is, the
// whole string is the key, as the official SDKs do).
// See docs/design/providers.md "Signatures" (fixture S1: test/unit/stripe-signature.test.ts).
//
// Decisions (docs/design/providers.md "Webhook intake"):
// - Only `v1` is checked (`v0` and any other scheme are ignored, as the official SDKs do). Any `v1` that
//   matches is enough: Stripe sends one per active secret while a secret is being rolled. Each comparison
//   is constant-time and there is no early exit.
// - The timestamp may be at most 300 s from the injected clock, in either direction (the SDK checks only
//   the past; a timestamp far in the future is as suspect as an old one).
// - A malformed header (no t, two t, a non-numeric t, no well-formed v1, parts without `=`, absurd
//   length) is a bad signature; no header at all is a missing one. Never throws.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { headerSignedWebhook, MAX_WEBHOOK_BYTES } from '../../billing/definition';
import type { RawWebhook, WebhookVerification, WebhookVerifier } from '../../billing/port';

export const SIGNATURE_HEADER = 'stripe-signature';
/** The official SDKs' DEFAULT_TOLERANCE. */
export const TOLERANCE_SECONDS = 300;
/** A real header is ~150 characters (t, one v1, one v0); a rolled secret adds one v1. */
const MAX_HEADER_LENGTH = 2048;
const MAX_V1 = 8;

export interface ParsedStripeSignature {
  /** The t digits exactly as sent (they are what was signed). */
  t: string;
  v1: string[];
}

/** Parses `t=…,v1=…[,v1=…][,v0=…]`; null when it is malformed. */
export function parseSignatureHeader(header: string): ParsedStripeSignature | null {
  if (header.length === 0 || header.length > MAX_HEADER_LENGTH) return null;
  let t: string | null = null;
  const v1: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 't') {
      if (t !== null || !/^\d{1,12}$/.test(value)) return null;
      t = value;
    } else if (key === 'v1') {
      // A malformed v1 can never match; skip it rather than let it hide a good one.
      if (/^[0-9a-fA-F]{64}$/.test(value)) v1.push(value.toLowerCase());
    }
  }
  if (t === null || v1.length === 0 || v1.length > MAX_V1) return null;
  return { t, v1 };
}

/** The hex v1 Stripe would send for this body at this timestamp. */
export function computeV1(secret: string, t: string | number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${t}.${rawBody}`, 'utf8').digest('hex');
}

/** The header Stripe would send (the emulator and tests sign with it). */
export function signatureHeader(secret: string, rawBody: string, tSeconds: number): string {
  return `t=${tSeconds},v1=${computeV1(secret, tSeconds, rawBody)}`;
}

/** Verifies `raw` under `secret` at `nowMs`. The event id is read only to label logs (null if absent). */
export function verifyStripeSignature(raw: RawWebhook, secret: string, nowMs: number): WebhookVerification {
  const header = raw.headers[SIGNATURE_HEADER];
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing_signature' };
  if (secret.length === 0) return { ok: false, reason: 'bad_signature' };
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: 'bad_signature' };
  const expected = Buffer.from(computeV1(secret, parsed.t, raw.rawBody), 'hex');
  let matched = false;
  // No early exit: the time taken does not depend on which (if any) v1 matched.
  for (const candidate of parsed.v1) {
    if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
  }
  if (!matched) return { ok: false, reason: 'bad_signature' };
  // Checked after the HMAC, so `stale_timestamp` is only ever said of an authentic (replayed or late) body.
  if (Math.abs(nowMs / 1000 - Number(parsed.t)) > TOLERANCE_SECONDS) return { ok: false, reason: 'stale_timestamp' };
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

export const stripeVerifier: WebhookVerifier = {
  kind: 'stripe',
  verify: verifyStripeSignature,
};

/** The intake's check (the definition's `webhook`, read on first use): the header and the body are queued. */
export const webhook = headerSignedWebhook({
  path: 'stripe',
  header: SIGNATURE_HEADER,
  maxBytes: MAX_WEBHOOK_BYTES,
  verify: (raw, secret, nowMs) => verifyStripeSignature(raw, secret, nowMs),
});
