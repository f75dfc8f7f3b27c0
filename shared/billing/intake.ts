// The webhook intake of every provider, POST /webhooks/{provider}/{account_id}/ (docs/providers/): verify
// the provider's signature over the exact request, once, then queue what its parser reads and answer 200.
// Parsing happens in the subscription-sync worker (so a parser fix can be redriven from the DLQ, and an
// event type we ignore is still acknowledged here). Nothing is queued unless the signature verifies.
//
// - Unknown provider segment, unknown account, or an account not connected to this provider: 404 (the
//   same answer for all three).
// - A body over the provider's limit: 413 (no provider sends one; the queue could not carry it).
// - What the provider's check refuses: its 4xx (a missing, wrong or stale signature: 403 "Invalid
//   signature."; Paddle Classic's alert that is not a form: 415).
// While the account's verification key is cached, an event costs no DynamoDB round trip: one SQS send.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DetailError, NotFoundError, PermissionDeniedError } from '../domain/errors';
import { isAccountId } from '../domain/ids';
import { publish } from '../queue/publish';
import { getWebhookKey } from '../store/provider';
import { definitionOfWebhookPath, type ProviderKind } from './registry';

export { MAX_WEBHOOK_BYTES } from './definition';

export async function receiveProviderWebhook(
  segment: string,
  accountId: string,
  event: APIGatewayProxyEventV2,
): Promise<{ received: true }> {
  const definition = definitionOfWebhookPath(segment);
  if (!definition || !isAccountId(accountId)) throw new NotFoundError();
  const key = await getWebhookKey(accountId, definition);
  if (key === null) throw new NotFoundError();
  const raw = event.body ?? '';
  const body = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (body.length > definition.webhook.maxBytes) throw new DetailError(413, 'Request body is too large.');
  const headers: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(event.headers ?? {})) headers[name.toLowerCase()] = value;
  const verdict = definition.webhook.verify({ headers, body }, key, Date.now());
  if (!verdict.ok)
    throw verdict.status === 403 ? new PermissionDeniedError(verdict.detail) : new DetailError(verdict.status, verdict.detail);
  const kind = definition.kind as ProviderKind;
  await publish('provider-events', {
    kind: 'provider-webhook',
    provider: kind,
    account_id: accountId,
    headers: verdict.headers,
    raw_body: verdict.rawBody,
    received_at: Date.now(),
  });
  return { received: true };
}
