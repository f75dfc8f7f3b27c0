// PayPal Payouts: an item's status in Refloop's words (shared by the adapter and the webhook check), and the
// offline check of a PayPal webhook (docs/payouts/paypal.md "Webhook").
//
// PayPal signs `<transmission id>|<transmission time>|<webhook id>|<CRC32 of the raw body>` (the CRC32, IEEE,
// of the exact bytes, written as an unsigned decimal integer) with SHA256withRSA; the signature (base64) and
// the certificate's URL come in the paypal-* headers. The certificate is fetched from that URL only when it is
// on PayPal's own API hosts (https) or on the origin of the connection's api_url (a sandbox or the local
// emulator), and kept in memory for a day. When that host cannot be reached (or answers 429 or 5xx) the
// delivery is answered 503, not 403: nothing about it is forged, and PayPal retries it.
import { X509Certificate, createVerify } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { MAX_WEBHOOK_BYTES, type IncomingWebhook } from '../../billing/definition';
import type { RailWebhookVerdict } from '../definition';
import type { RailConnection, RailItemOutcome } from '../port';

/** PayPal's API hosts a certificate URL may name (https only). */
export const PAYPAL_CERT_HOSTS: readonly string[] = [
  'api.paypal.com',
  'api-m.paypal.com',
  'api.sandbox.paypal.com',
  'api-m.sandbox.paypal.com',
];

/** A re-send of a batch is `pb_…-r<n>`: the Refloop id is the part before. */
export function refloopId(senderId: string): string {
  return senderId.replace(/-r\d+$/, '');
}

/** PayPal's error object on an item (`errors`). */
export interface PaypalItemErrors {
  name?: string;
  message?: string;
}

const FAILED_REASON: Record<string, string> = {
  FAILED: 'PayPal could not deliver the payment.',
  BLOCKED: 'PayPal blocked the payment (a compliance or risk check on the sender or the recipient).',
  DENIED: 'PayPal denied the payment.',
  RETURNED: 'The payment came back to the sender: it was not claimed within 30 days, or it was canceled.',
  REFUNDED: 'The recipient refunded the payment.',
  REVERSED: 'PayPal reversed the payment.',
};

const UNCLAIMED_REASON =
  'Not claimed yet: the address has no PayPal account, or an unconfirmed one. PayPal returns the money after 30 days; ' +
  'correct the email, then cancel and re-send.';

/** One PayPal item `transaction_status` (with its `errors`) as a RailItemOutcome. */
export function itemOutcome(
  payoutId: string,
  railItemId: string | null,
  status: string,
  errors?: PaypalItemErrors | null,
): RailItemOutcome {
  const railStatus = status.toUpperCase();
  const detail = typeof errors?.message === 'string' && errors.message !== '' ? errors.message : null;
  const base = { payoutId: refloopId(payoutId), railStatus, railItemId };
  if (railStatus === 'SUCCESS') return { ...base, state: 'paid', reason: null };
  if (railStatus === 'UNCLAIMED')
    return { ...base, state: 'unclaimed', reason: detail ? `${UNCLAIMED_REASON} (PayPal: ${detail})` : UNCLAIMED_REASON };
  const failed = FAILED_REASON[railStatus];
  if (failed) return { ...base, state: 'failed', reason: detail ?? failed };
  // PENDING, ONHOLD, and any status PayPal adds later: not final.
  return { ...base, state: 'processing', reason: null };
}

/** The item status a `PAYMENT.PAYOUTS-ITEM.<suffix>` event reports when its resource carries none. */
const EVENT_STATUS: Record<string, string> = {
  SUCCEEDED: 'SUCCESS',
  FAILED: 'FAILED',
  UNCLAIMED: 'UNCLAIMED',
  HELD: 'ONHOLD',
  BLOCKED: 'BLOCKED',
  DENIED: 'DENIED',
  RETURNED: 'RETURNED',
  REFUNDED: 'REFUNDED',
  REVERSED: 'REVERSED',
  // A canceled unclaimed item: the money returns to the sender.
  CANCELED: 'RETURNED',
};

const ITEM_EVENT = 'PAYMENT.PAYOUTS-ITEM.';

/** The outcomes a parsed webhook event reports (none for batch events and other types). */
export function eventOutcomes(event: unknown): RailItemOutcome[] {
  if (!event || typeof event !== 'object') return [];
  const { event_type: type, resource } = event as { event_type?: unknown; resource?: unknown };
  if (typeof type !== 'string' || !type.startsWith(ITEM_EVENT) || !resource || typeof resource !== 'object') return [];
  const r = resource as {
    payout_item_id?: unknown;
    transaction_status?: unknown;
    payout_item?: { sender_item_id?: unknown };
    errors?: PaypalItemErrors | null;
  };
  const payoutId = r.payout_item?.sender_item_id;
  if (typeof payoutId !== 'string' || payoutId === '') return [];
  const status = typeof r.transaction_status === 'string' ? r.transaction_status : EVENT_STATUS[type.slice(ITEM_EVENT.length)];
  if (!status) return [];
  return [itemOutcome(payoutId, typeof r.payout_item_id === 'string' ? r.payout_item_id : null, status, r.errors)];
}

/** Whether a certificate URL may be fetched for this connection. */
export function certUrlAllowed(certUrl: string, apiUrl: string): boolean {
  let url: URL;
  try {
    url = new URL(certUrl);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  if (url.protocol === 'https:' && url.port === '' && PAYPAL_CERT_HOSTS.includes(url.hostname)) return true;
  try {
    return url.origin === new URL(apiUrl).origin;
  } catch {
    return false;
  }
}

const CERT_TTL_MS = 24 * 3600 * 1000;
const certs = new Map<string, { cert: X509Certificate; fetchedAtMs: number }>();

/**
 * The certificate at `certUrl` (cached); `unreachable` when PayPal's host could not be asked or answered 429
 * or 5xx (a passing fault: the delivery is answered 503 and PayPal sends it again); null when the URL
 * answers another error or something that is not a certificate (refused: 403).
 */
async function certificate(certUrl: string, nowMs: number): Promise<X509Certificate | 'unreachable' | null> {
  const cached = certs.get(certUrl);
  if (cached && nowMs - cached.fetchedAtMs < CERT_TTL_MS) return cached.cert;
  // One more try after a connection that failed (a kept-alive socket the server closed just as it was reused),
  // not after a timeout: the webhook's answer would wait twice as long.
  for (let attempt = 1; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(certUrl, { signal: AbortSignal.timeout(5000), redirect: 'error' });
    } catch (err) {
      const timedOut = (err as { name?: string } | null)?.name === 'TimeoutError';
      if (attempt >= 2 || timedOut || !(err instanceof TypeError)) return 'unreachable';
      continue;
    }
    if (res.status === 429 || res.status >= 500) return 'unreachable';
    if (!res.ok) return null;
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(await res.text());
    } catch {
      return null;
    }
    if (certs.size > 100) certs.clear();
    certs.set(certUrl, { cert, fetchedAtMs: nowMs });
    return cert;
  }
}

/** The string PayPal signs for a delivery. */
export function signedString(transmissionId: string, transmissionTime: string, webhookId: string, rawBody: Buffer | string): string {
  return `${transmissionId}|${transmissionTime}|${webhookId}|${crc32(rawBody) >>> 0}`;
}

const refuse = (detail: string): RailWebhookVerdict => ({ ok: false, status: 403, detail });

/**
 * Verifies a PayPal webhook offline with the connection's `webhook_id`, and maps what it reports. Never
 * throws: a forged, unsigned or unverifiable request is a 403 and changes nothing.
 */
export async function verifyPaypalWebhook(
  request: IncomingWebhook,
  connection: RailConnection,
  nowMs: number,
): Promise<RailWebhookVerdict> {
  if (request.body.length > MAX_WEBHOOK_BYTES) return { ok: false, status: 413, detail: 'The body is too large for a PayPal webhook.' };
  const h = request.headers;
  const id = h['paypal-transmission-id'];
  const time = h['paypal-transmission-time'];
  const sig = h['paypal-transmission-sig'];
  const certUrl = h['paypal-cert-url'];
  const algo = h['paypal-auth-algo'];
  if (!id || !time || !sig || !certUrl || !algo) return refuse('The PayPal signature headers are missing.');
  if (algo !== 'SHA256withRSA') return refuse(`Unsupported PayPal signature algorithm ${algo}.`);
  const webhookId = connection.credentials.webhook_id;
  if (!webhookId) return refuse('The PayPal connection has no webhook_id.');
  // An RSA signature is as long as its key: 256 bytes for PayPal's 2048-bit certificates. One that is not
  // base64, or shorter than a 1024-bit key's, cannot verify: it is refused before any certificate is fetched,
  // so it never makes the intake call out (nor answer 503 while PayPal's host is out of reach).
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(sig) || Buffer.from(sig, 'base64').length < 128)
    return refuse('The PayPal signature is not a SHA256withRSA signature.');
  if (!certUrlAllowed(certUrl, connection.apiUrl)) return refuse('The certificate URL is not on a PayPal host.');
  const cert = await certificate(certUrl, nowMs);
  if (cert === 'unreachable')
    return { ok: false, status: 503, detail: 'The PayPal certificate could not be fetched just now; PayPal delivers the event again.' };
  if (!cert) return refuse('The PayPal certificate could not be read.');
  const now = new Date(nowMs);
  if (new Date(cert.validFrom) > now || new Date(cert.validTo) < now) return refuse('The PayPal certificate is not valid now.');
  let valid = false;
  try {
    valid = createVerify('SHA256')
      .update(signedString(id, time, webhookId, request.body), 'utf8')
      .verify(cert.publicKey, sig, 'base64');
  } catch {
    valid = false;
  }
  if (!valid) return refuse('The PayPal signature does not match.');
  let event: { id?: unknown };
  try {
    event = JSON.parse(request.body.toString('utf8'));
  } catch {
    return { ok: false, status: 400, detail: 'The body is not JSON.' };
  }
  if (!event || typeof event !== 'object' || typeof event.id !== 'string')
    return { ok: false, status: 400, detail: 'The event has no id.' };
  return { ok: true, deliveryId: event.id, outcomes: eventOutcomes(event), accountUpdates: [] };
}
