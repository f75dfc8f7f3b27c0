// Paddle Billing webhook signature (`Paddle-Signature: ts=<unix seconds>;h1=<hex>`): h1 is the hex
// HMAC-SHA256 of `<ts>:<raw body>` under the notification destination's secret (`pdl_ntfset_…`).
// See docs/design/providers.md "Signatures" (fixtures P1, P2: test/unit/paddle-billing-signature.test.ts).
//
// Decisions (docs/design/providers.md "Webhook intake"):
// - Any `h1` that matches is enough (several can appear, e.g. during a secret rotation); each comparison
//   is constant-time. Other keys (`h2=…`) are ignored, as the official SDK does.
// - The timestamp may be at most 300 s from the injected clock, in either direction. The official Node
//   SDK's 5 s window is not used: a webhook queued for a few seconds behind a cold start must not fail.
// - A malformed header (no ts, two ts, a non-numeric ts, no well-formed h1, parts without `=`, absurd
//   length) is a bad signature; no header at all is a missing one. Never throws.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { headerSignedWebhook, MAX_WEBHOOK_BYTES } from '../../billing/definition';
import type { RawWebhook, WebhookVerification, WebhookVerifier } from '../../billing/port';

export const SIGNATURE_HEADER = 'paddle-signature';
export const TOLERANCE_SECONDS = 300;
/** A real header is ~80 characters (one h1); a few h1 during a rotation stay far below this. */
const MAX_HEADER_LENGTH = 1024;
const MAX_H1 = 8;

export interface ParsedSignature {
  /** The ts digits exactly as sent (they are what was signed). */
  ts: string;
  h1: string[];
}

/** Parses `ts=…;h1=…[;h1=…][;other=…]`; null when it is malformed. */
export function parseSignatureHeader(header: string): ParsedSignature | null {
  if (header.length === 0 || header.length > MAX_HEADER_LENGTH) return null;
  let ts: string | null = null;
  const h1: string[] = [];
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) return null;
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    if (key === 'ts') {
      if (ts !== null || !/^\d{1,12}$/.test(value)) return null;
      ts = value;
    } else if (key === 'h1') {
      // A malformed h1 can never match; skip it rather than let it hide a good one.
      if (/^[0-9a-fA-F]{64}$/.test(value)) h1.push(value.toLowerCase());
    }
  }
  if (ts === null || h1.length === 0 || h1.length > MAX_H1) return null;
  return { ts, h1 };
}

/** The hex h1 Paddle would send for this body at this timestamp. */
export function computeH1(secret: string, ts: string | number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${ts}:${rawBody}`, 'utf8').digest('hex');
}

/** The header Paddle would send (the emulator and tests sign with it). */
export function signatureHeader(secret: string, rawBody: string, tsSeconds: number): string {
  return `ts=${tsSeconds};h1=${computeH1(secret, tsSeconds, rawBody)}`;
}

/** Verifies `raw` under `secret` at `nowMs`. The event id is read only to label logs (null if absent). */
export function verifyPaddleBillingSignature(raw: RawWebhook, secret: string, nowMs: number): WebhookVerification {
  const header = raw.headers[SIGNATURE_HEADER];
  if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing_signature' };
  if (secret.length === 0) return { ok: false, reason: 'bad_signature' };
  const parsed = parseSignatureHeader(header);
  if (!parsed) return { ok: false, reason: 'bad_signature' };
  const expected = Buffer.from(computeH1(secret, parsed.ts, raw.rawBody), 'hex');
  let matched = false;
  // No early exit: the time taken does not depend on which (if any) h1 matched.
  for (const candidate of parsed.h1) {
    if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
  }
  if (!matched) return { ok: false, reason: 'bad_signature' };
  // Checked after the HMAC, so `stale_timestamp` is only ever said of an authentic (replayed or late) body.
  if (Math.abs(nowMs / 1000 - Number(parsed.ts)) > TOLERANCE_SECONDS) return { ok: false, reason: 'stale_timestamp' };
  return { ok: true, eventId: eventIdOf(raw.rawBody) };
}

function eventIdOf(rawBody: string): string | null {
  try {
    const body = JSON.parse(rawBody) as { event_id?: unknown } | null;
    return body && typeof body.event_id === 'string' ? body.event_id : null;
  } catch {
    return null;
  }
}

export const paddleBillingVerifier: WebhookVerifier = {
  kind: 'paddle-billing',
  verify: verifyPaddleBillingSignature,
};

/** The intake's check (the definition's `webhook`, read on first use): the header and the body are queued. */
export const webhook = headerSignedWebhook({
  path: 'paddle-billing',
  header: SIGNATURE_HEADER,
  maxBytes: MAX_WEBHOOK_BYTES,
  verify: (raw, secret, nowMs) => verifyPaddleBillingSignature(raw, secret, nowMs),
});
