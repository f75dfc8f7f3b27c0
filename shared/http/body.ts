// Request bodies: JSON objects only, with the contract's 413 / 415 / 400 answers.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { DetailError, ValidationError } from '../domain/errors';
import type * as v from 'valibot';
import { pythonType, validate } from '../schemas/fields';

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
  // Bytes that are not UTF-8 are refused as DRF's JSONParser refuses them (Python's UnicodeDecodeError),
  // never decoded with replacement characters (which made different bodies store the same text).
  const invalid = utf8Error(bytes);
  if (invalid) throw new DetailError(400, `JSON parse error - 'utf-8' codec can't decode ${invalid}`);
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

/**
 * Where `bytes` stop being UTF-8, in the words of Python's decoder ("byte 0xff in position 3: invalid start
 * byte"), or null when they are UTF-8. Overlong forms, surrogates (ED A0..BF) and code points past U+10FFFF
 * are invalid, as in Python.
 */
export function utf8Error(bytes: Uint8Array): string | null {
  const at = (start: number, end: number, reason: string) =>
    end - start === 1
      ? `byte 0x${(bytes[start] ?? 0).toString(16).padStart(2, '0')} in position ${start}: ${reason}`
      : `bytes in position ${start}-${end - 1}: ${reason}`;
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i] ?? 0;
    if (b < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (b >= 0xc2 && b <= 0xdf) need = 1;
    else if (b >= 0xe0 && b <= 0xef) {
      need = 2;
      if (b === 0xe0) lo = 0xa0;
      if (b === 0xed) hi = 0x9f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      need = 3;
      if (b === 0xf0) lo = 0x90;
      if (b === 0xf4) hi = 0x8f;
    } else return at(i, i + 1, 'invalid start byte');
    for (let k = 1; k <= need; k++) {
      if (i + k >= bytes.length) return at(i, bytes.length, 'unexpected end of data');
      const c = bytes[i + k] ?? 0;
      if (c < (k === 1 ? lo : 0x80) || c > (k === 1 ? hi : 0xbf)) return at(i, i + k, 'invalid continuation byte');
    }
    i += need + 1;
  }
  return null;
}

export { header };

/**
 * The request's validated body and query string: the body first (415/413/400 on its form), then its
 * fields and the query; a schema not given leaves its part undefined. Validation happens once, here at the
 * boundary; inside the domain the types are trusted.
 */
export function validatedInput(
  schemas: { body?: v.GenericSchema | undefined; query?: v.GenericSchema | undefined },
  event: APIGatewayProxyEventV2,
): { body: unknown; query: unknown } {
  const body = schemas.body ? validate(schemas.body, parseJsonBody(event)) : undefined;
  // A nameless parameter (`?=`, `?&`) is no parameter: lists refuse unknown names (schemas/query.ts), not these.
  const params = Object.fromEntries(Object.entries(event.queryStringParameters ?? {}).filter(([name]) => name !== ''));
  const query = schemas.query ? validate(schemas.query, params) : undefined;
  return { body, query };
}
