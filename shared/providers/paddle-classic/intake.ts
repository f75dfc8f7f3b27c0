// Webhook intake for Paddle Classic alerts (docs/design/api-contract.md "Provider webhooks").
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DetailError, NotFoundError, PermissionDeniedError } from '../../domain/errors';
import { isAccountId } from '../../domain/ids';
import { header } from '../../http/body';
import { publish } from '../../queue/publish';
import { getProviderSettings } from '../../store/provider';
import { signedFields, verifyPaddleSignature, type AlertFields } from './signature';

/** Paddle alerts are a few KB; anything far bigger is not one. */
const MAX_ALERT_BYTES = 64 * 1024;

/**
 * Decodes an application/x-www-form-urlencoded body exactly once (`+` is a space, `%XX` a byte), keeping
 * every field as the string Paddle sent: no trimming, no coercion, nothing dropped.
 */
export function parseForm(event: APIGatewayProxyEventV2): AlertFields {
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.length > MAX_ALERT_BYTES) throw new DetailError(413, 'Request body is too large.');
  const contentType = (header(event, 'content-type') ?? '').trim();
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/x-www-form-urlencoded') {
    throw new DetailError(415, `Unsupported media type "${contentType}" in request.`);
  }
  const fields: AlertFields = {};
  for (const [key, value] of new URLSearchParams(bytes.toString('utf8'))) {
    // A repeated field is not something Paddle sends; keeping the first makes the signature check fail.
    if (!(key in fields)) fields[key] = value;
    else return { p_signature: '' };
  }
  return fields;
}

export async function receivePaddleAlert(accountId: string, event: APIGatewayProxyEventV2): Promise<{ received: true }> {
  if (!isAccountId(accountId)) throw new NotFoundError();
  const settings = await getProviderSettings(accountId);
  if (!settings) throw new NotFoundError();
  const fields = parseForm(event);
  if (!verifyPaddleSignature(fields, settings.publicKey)) throw new PermissionDeniedError('Invalid signature.');
  await publish('provider-events', { kind: 'paddle-alert', account_id: accountId, fields: signedFields(fields), received_at: Date.now() });
  return { received: true };
}
