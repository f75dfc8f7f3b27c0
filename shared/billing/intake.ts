// Webhook intake of the JSON providers (Paddle Billing, Stripe; docs/design/providers.md "Webhook intake"): verify the
// signature over the exact raw body, once, then queue the body and answer 200. Parsing happens in the
// subscription-sync worker (so a parser fix can be redriven from the DLQ, and an event type we ignore is
// still acknowledged here). Nothing is queued unless the signature verifies.
//
// - Unknown account, or an account not connected to this provider kind: 404 (the same answer for both).
// - Missing or wrong signature, or a signature timestamp more than 300 s from now: 403 "Invalid signature.".
// - A body over MAX_WEBHOOK_BYTES: 413 (no provider sends one; the queue could not carry it).
// While the account's settings and webhook secret are cached, an event costs no DynamoDB round trip: one
// SQS send.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DetailError, NotFoundError, PermissionDeniedError } from '../domain/errors';
import { isAccountId } from '../domain/ids';
import { header } from '../http/respond';
import { publish } from '../queue/publish';
import { getWebhookSettings } from '../store/provider';
import type { ProviderKind } from './port';
import { WEBHOOK_VERIFIERS } from './verifiers';

/**
 * SQS carries at most 256 KiB per message, and the body travels JSON-escaped inside one. Paddle Billing
 * and Stripe events are a few KB (a transaction with many line items stays well under 64 KB).
 */
export const MAX_WEBHOOK_BYTES = 128 * 1024;

export async function receiveProviderWebhook(kind: Exclude<ProviderKind, 'paddle-classic'>, accountId: string, event: APIGatewayProxyEventV2): Promise<{ received: true }> {
  if (!isAccountId(accountId)) throw new NotFoundError();
  const settings = await getWebhookSettings(accountId);
  if (!settings || settings.kind !== kind) throw new NotFoundError();
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.length > MAX_WEBHOOK_BYTES) throw new DetailError(413, 'Request body is too large.');
  const { verifier, header: signatureHeader } = WEBHOOK_VERIFIERS[kind];
  const signature = header(event, signatureHeader);
  const headers: Record<string, string> = signature === undefined ? {} : { [signatureHeader]: signature };
  const rawBody = bytes.toString('utf8');
  const verification = verifier.verify({ headers, rawBody }, settings.webhookSecret, Date.now());
  if (!verification.ok) throw new PermissionDeniedError('Invalid signature.');
  await publish('provider-events', { kind: 'provider-webhook', provider: kind, account_id: accountId, headers, raw_body: rawBody, received_at: Date.now() });
  return { received: true };
}
