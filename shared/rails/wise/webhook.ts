// Wise's webhooks and transfer states, in Refloop's words (docs/payouts/wise.md "Webhooks" and "States").
//
// A delivery is signed with Wise's RSA key: `X-Signature-SHA256` is the base64 SHA256withRSA (PKCS#1 v1.5)
// signature of the raw body, checked with the public key the operator pasted into the connection
// (`webhook_public_key`, PEM; Wise publishes one for production and one for its sandbox; the emulator shows
// its own). `X-Delivery-Id` (a UUID) is what the intake dedupes on. Events:
// - `transfers#state-change`: data{resource{type:"transfer", id, profile_id, account_id}, current_state,
//   previous_state, occurred_at}. Wise does not keep the order: the intake orders by occurred_at.
// - `transfers#payout-failure`: data{transfer_id, profile_id, failure_reason_code, failure_description,
//   occurred_at}: the money did not reach the recipient.
// Neither carries the customerTransactionId, so an outcome names the transfer (`railItemId`, the Wise
// transfer id the send recorded) and leaves `payoutId` empty: the intake finds the payout by its transfer id.
// A test notification (`X-Test-Notification: true`) and any other event type verify and report nothing.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { MAX_WEBHOOK_BYTES, type IncomingWebhook } from '../../billing/definition';
import type { RailWebhookVerdict } from '../definition';
import type { RailItemOutcome, RailItemState } from '../port';

/** Every Wise transfer status and what it means for a payout. */
const STATES: Record<string, { state: RailItemState; reason: string | null }> = {
  incoming_payment_waiting: { state: 'processing', reason: null },
  waiting_recipient_input_to_proceed: { state: 'processing', reason: null },
  processing: { state: 'processing', reason: null },
  funds_converted: { state: 'processing', reason: null },
  outgoing_payment_sent: { state: 'paid', reason: null },
  bounced_back: {
    state: 'failed',
    reason: "Wise could not deliver the money: the recipient's bank sent it back (bounced back); Wise refunds it to your balance",
  },
  funds_refunded: { state: 'failed', reason: 'Wise refunded the transfer to your balance: the recipient did not receive it' },
  cancelled: { state: 'failed', reason: 'The Wise transfer was cancelled before it was funded' },
  charged_back: { state: 'failed', reason: 'The payment that funded the Wise transfer was charged back' },
};

/** A Wise transfer's status as a payout outcome (an unknown status stays `processing`, shown as it is). */
export function transferOutcome(payoutId: string, transferId: string | number, status: string): RailItemOutcome {
  const known = STATES[status] ?? { state: 'processing' as const, reason: null };
  return { payoutId, state: known.state, railStatus: status, railItemId: String(transferId), reason: known.reason };
}

/** The PEM the connection holds; a bare base64 body (as Wise's docs sometimes print it) gets its armour. */
export function publicKeyOf(pem: string): KeyObject | null {
  const text = pem.trim();
  const armoured = text.includes('-----BEGIN')
    ? text
    : `-----BEGIN PUBLIC KEY-----\n${text.replace(/\s+/g, '').replace(/(.{64})/g, '$1\n')}\n-----END PUBLIC KEY-----\n`;
  try {
    return createPublicKey({ key: armoured, format: 'pem' });
  } catch {
    return null;
  }
}

/** Whether `signature` (base64) is Wise's SHA256withRSA signature of `body` under `publicKeyPem`. */
export function verifyWiseSignature(body: Buffer, signature: string, publicKeyPem: string): boolean {
  const key = publicKeyOf(publicKeyPem);
  if (!key || !/^[A-Za-z0-9+/]+={0,2}$/.test(signature.trim())) return false;
  try {
    return verify('sha256', body, key, Buffer.from(signature.trim(), 'base64'));
  } catch {
    return false;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const idOf = (v: unknown): string | null =>
  (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v !== '') ? String(v) : null;

/** The outcomes a verified body reports (none for other events), or why it cannot be read. */
export function outcomesOf(payload: unknown): { ok: true; outcomes: RailItemOutcome[] } | { ok: false; detail: string } {
  if (!isObject(payload) || !isObject(payload.data) || typeof payload.event_type !== 'string')
    return { ok: false, detail: 'The body is not a Wise event (data and event_type).' };
  const data = payload.data;
  if (payload.event_type === 'transfers#state-change') {
    const id = isObject(data.resource) ? idOf(data.resource.id) : null;
    if (!id || typeof data.current_state !== 'string')
      return { ok: false, detail: 'A transfers#state-change event without data.resource.id and data.current_state.' };
    return { ok: true, outcomes: [transferOutcome('', id, data.current_state)] };
  }
  if (payload.event_type === 'transfers#payout-failure') {
    const id = idOf(data.transfer_id) ?? (isObject(data.resource) ? idOf(data.resource.id) : null);
    if (!id) return { ok: false, detail: 'A transfers#payout-failure event without data.transfer_id.' };
    const code = typeof data.failure_reason_code === 'string' ? data.failure_reason_code : null;
    const words = typeof data.failure_description === 'string' && data.failure_description !== '' ? data.failure_description : null;
    const reason = `Wise could not pay out the transfer${words ? `: ${words}` : ''}${code ? ` (${code})` : ''}`;
    return { ok: true, outcomes: [{ payoutId: '', state: 'failed', railStatus: 'payout_failure', railItemId: id, reason }] };
  }
  return { ok: true, outcomes: [] };
}

/** The connection's check of one delivery (PayoutRailDefinition.verifyWebhook). Never throws. */
export function verifyWiseWebhook(request: IncomingWebhook, publicKeyPem: string | undefined): RailWebhookVerdict {
  if (request.body.length > MAX_WEBHOOK_BYTES) return { ok: false, status: 413, detail: 'The body is too large for a Wise event.' };
  const signature = request.headers['x-signature-sha256'];
  if (!signature) return { ok: false, status: 403, detail: 'No X-Signature-SHA256 header: not signed by Wise.' };
  if (!publicKeyPem || !publicKeyOf(publicKeyPem))
    return {
      ok: false,
      status: 403,
      detail: "The Wise connection has no usable webhook public key: paste Wise's PEM key into the connection.",
    };
  if (!verifyWiseSignature(request.body, signature, publicKeyPem))
    return {
      ok: false,
      status: 403,
      detail: "The X-Signature-SHA256 signature does not match the body under the connection's Wise public key.",
    };
  const deliveryId = request.headers['x-delivery-id'];
  if (!deliveryId) return { ok: false, status: 400, detail: 'No X-Delivery-Id header.' };
  let payload: unknown;
  try {
    payload = JSON.parse(request.body.toString('utf8'));
  } catch {
    return { ok: false, status: 400, detail: 'The body is not JSON.' };
  }
  if (request.headers['x-test-notification'] === 'true') return { ok: true, deliveryId, outcomes: [], accountUpdates: [] };
  const read = outcomesOf(payload);
  if (!read.ok) return { ok: false, status: 400, detail: read.detail };
  return { ok: true, deliveryId, outcomes: read.outcomes, accountUpdates: [] };
}
