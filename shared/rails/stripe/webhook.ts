// The Stripe Connect rail's webhook check. Two Stripe endpoints point at the rail's one intake
// (`/webhooks/stripe-connect/{account_id}/`), each with its own signing secret:
// - the platform endpoint (`webhook_secret`): `transfer.created`, `transfer.reversed` (transfers live on
//   the platform's account);
// - the Connect endpoint (`connect_webhook_secret`, "events on connected accounts"): `account.updated`,
//   which names the connected account in the event's top-level `account`.
//
// `Stripe-Signature: t=<unix seconds>,v1=<hex>[,v1=…]`: v1 is the hex HMAC-SHA256 of `<t>.<raw body>` under
// the endpoint's `whsec_…` secret (the whole string is the key); any matching v1 is enough (Stripe sends one
// per active secret while a secret is rolled); t at most 300 s from now. The same scheme as the billing
// provider's check (shared/providers/stripe/signature.ts), repeated here because a rail imports no provider.
// An event signed with one endpoint's secret is read only for that endpoint's events; any other verified
// event is acknowledged and ignored. A live connection (`sk_live_…`/`rk_live_…`) ignores test-mode events
// (live Connect endpoints also receive connected accounts' test events). The delivery id is the event id.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingWebhook } from '../../billing/definition';
import type { RailWebhookVerdict } from '../definition';
import type { RailConnection, RailItemOutcome } from '../port';
import { readinessOf, transferOutcome } from './outcomes';
import type { ConnectEvent, ConnectedAccount, Transfer } from './wire';

export const SIGNATURE_HEADER = 'stripe-signature';
export const TOLERANCE_SECONDS = 300;
/** Stripe's events are a few KB; SQS carries at most 256 KiB, JSON-escaped. */
export const MAX_WEBHOOK_BYTES = 128 * 1024;

/** The hex v1 of `<t>.<raw body>` under `secret`. */
export function computeV1(secret: string, t: string | number, rawBody: string): string {
  return createHmac('sha256', secret).update(`${t}.${rawBody}`, 'utf8').digest('hex');
}

/** The header Stripe sends for this body at `tSeconds` (the emulator signs with the same scheme). */
export function signatureHeader(secret: string, rawBody: string, tSeconds: number): string {
  return `t=${tSeconds},v1=${computeV1(secret, tSeconds, rawBody)}`;
}

/** `t` and the well-formed v1 values of a header; null when malformed. */
function parseHeader(header: string): { t: string; v1: string[] } | null {
  if (header.length === 0 || header.length > 2048) return null;
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
    } else if (key === 'v1' && /^[0-9a-fA-F]{64}$/.test(value)) v1.push(value.toLowerCase());
  }
  return t === null || v1.length === 0 || v1.length > 8 ? null : { t, v1 };
}

/** Whether one of the header's v1 values is the body's under `secret` (constant time, no early exit). */
function signedWith(parsed: { t: string; v1: string[] }, secret: string | undefined, rawBody: string): boolean {
  if (!secret) return false;
  const expected = Buffer.from(computeV1(secret, parsed.t, rawBody), 'hex');
  let matched = false;
  for (const candidate of parsed.v1) if (timingSafeEqual(expected, Buffer.from(candidate, 'hex'))) matched = true;
  return matched;
}

const isLiveKey = (key: string | undefined) => /^(sk|rk)_live_/.test(key ?? '');

export async function verifyStripeRailWebhook(
  request: IncomingWebhook,
  connection: RailConnection,
  nowMs: number,
): Promise<RailWebhookVerdict> {
  if (request.body.length > MAX_WEBHOOK_BYTES) return { ok: false, status: 413, detail: 'The body is too large.' };
  const header = request.headers[SIGNATURE_HEADER];
  if (header === undefined || header.trim() === '') return { ok: false, status: 403, detail: 'Missing Stripe-Signature.' };
  const parsed = parseHeader(header);
  if (!parsed) return { ok: false, status: 403, detail: 'Invalid signature.' };
  const rawBody = request.body.toString('utf8');
  const platform = signedWith(parsed, connection.credentials.webhook_secret, rawBody);
  const connect = signedWith(parsed, connection.credentials.connect_webhook_secret, rawBody);
  if (!platform && !connect) return { ok: false, status: 403, detail: 'Invalid signature.' };
  if (Math.abs(nowMs / 1000 - Number(parsed.t)) > TOLERANCE_SECONDS)
    return { ok: false, status: 403, detail: 'Stale signature timestamp.' };

  let event: ConnectEvent;
  try {
    event = JSON.parse(rawBody) as ConnectEvent;
  } catch {
    return { ok: false, status: 400, detail: 'The body is not JSON.' };
  }
  if (event?.object !== 'event' || typeof event.id !== 'string' || typeof event.type !== 'string')
    return { ok: false, status: 400, detail: 'The body is not a Stripe event.' };

  const outcomes: RailItemOutcome[] = [];
  const accountUpdates: { destination: string; ready: boolean }[] = [];
  const ignored = isLiveKey(connection.credentials.secret_key) && event.livemode === false;
  const object = event.data?.object as Record<string, unknown> | undefined;
  if (!ignored && object && typeof object === 'object') {
    if (platform && (event.type === 'transfer.reversed' || event.type === 'transfer.created' || event.type === 'transfer.updated')) {
      const transfer = object as unknown as Transfer;
      const payoutId = transfer.metadata?.refloop_payout_id;
      if (object.object === 'transfer' && typeof payoutId === 'string') outcomes.push(transferOutcome(transfer, payoutId));
    } else if (connect && event.type === 'account.updated' && typeof event.account === 'string' && object.object === 'account') {
      accountUpdates.push({ destination: event.account, ready: readinessOf(object as unknown as ConnectedAccount).ready });
    }
  }
  return { ok: true, deliveryId: event.id, outcomes, accountUpdates };
}
