// Request bodies: JSON objects only, with the contract's 413 / 415 / 400 answers.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DetailError, ValidationError } from '../domain/errors';
import { pythonType } from '../schemas/fields';

export const MAX_BODY_BYTES = 64 * 1024;

import { header } from './respond';

/** The decoded JSON object of the request; `{}` when there is no body at all. */
export function parseJsonBody(event: APIGatewayProxyEventV2): Record<string, unknown> {
  const raw = event.body ?? '';
  const bytes = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  if (bytes.length === 0) return {};
  if (bytes.length > MAX_BODY_BYTES) throw new DetailError(413, 'Request body is too large.');
  const contentType = (header(event, 'content-type') ?? '').trim();
  const mediaType = contentType.split(';')[0]?.trim().toLowerCase() ?? '';
  if (mediaType !== 'application/json' && !/^application\/[a-z0-9.+-]*\+json$/.test(mediaType)) {
    throw new DetailError(415, `Unsupported media type "${contentType}" in request.`);
  }
  const text = bytes.toString('utf8');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new DetailError(400, `JSON parse error - ${(err as Error).message}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ValidationError({
      non_field_errors: [`Invalid data. Expected a dictionary, but got ${pythonType(value, text.trim())}.`],
    });
  }
  return value as Record<string, unknown>;
}

export { header };
