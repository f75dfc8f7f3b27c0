// Idempotency-Key on POST, PATCH and DELETE of API-key routes. The first response for an (account, key)
// is stored for 24 hours and replayed byte for byte (status, body, with `Idempotent-Replayed: true`) for
// any retry of the same request; the same key on another request answers 422; a retry while the first
// still runs answers 409. Requests without the header are not touched (no extra round trip).
//
// A request is the same when its fingerprint is: method, route, path parameters and the SHA-256 of the
// exact body bytes. Responses worth retrying (5xx, 409, 429) are not stored: the key is released so a
// retry runs again. The crash window (effect committed, response not stored) is covered by the effect
// marker written in the effect's own transaction: see docs/api.md "Idempotency-Key".
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHash, randomUUID } from 'node:crypto';
import { ApiError, DetailError } from '../domain/errors';
import { IDEMPOTENT_METHODS, MAX_KEY_LENGTH } from '../domain/idempotency';
import { claimKey, completeKey, IdempotencyLockLostError, releaseKey, runWithIdempotency, type StoredResponse } from '../store/idempotency';
import { edgeKeys } from '../store/table';
import { header } from './body';
import { jsonResult, requestId, type Result } from './respond';
import { log } from '../log';

export const MISMATCH = 'Idempotency-Key reused with a different request.';
export const IN_PROGRESS = 'A request with this Idempotency-Key is in progress.';
export const EFFECT_LOST =
  'A request with this Idempotency-Key was applied, but its response was lost; read the resource to see the result.';

const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

/**
 * The body to store for replays when it must differ from the one sent: a response that carries a secret
 * shown once (a webhook endpoint's signing secret) is stored without it, since the stored record is
 * readable by every writing function and must not become a second copy of the secret.
 */
const replayBodies = new WeakMap<Result, string>();

export function storeForReplay(result: Result, body: unknown): Result {
  replayBodies.set(result, JSON.stringify(body));
  return result;
}

/** Only final answers are stored: a 5xx, 409 or 429 means "try again", so the key is released instead. */
const storable = (status: number) => status < 500 && status !== 409 && status !== 429;

export function fingerprint(event: APIGatewayProxyEventV2): string {
  const raw = event.body ?? '';
  const body = event.isBase64Encoded ? Buffer.from(raw, 'base64') : Buffer.from(raw, 'utf8');
  const params = Object.entries(event.pathParameters ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return sha256(JSON.stringify([event.requestContext?.http?.method ?? '', event.routeKey ?? event.rawPath, params, sha256(body)]));
}

function stored(result: Result): StoredResponse {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(result.headers ?? {})) {
    if (name.toLowerCase() !== 'x-request-id') headers[name] = String(value);
  }
  return {
    status: result.statusCode ?? 200,
    headers,
    body: replayBodies.get(result) ?? (typeof result.body === 'string' ? result.body : ''),
  };
}

function replay(response: StoredResponse, event: APIGatewayProxyEventV2): Result {
  return {
    statusCode: response.status,
    headers: { ...response.headers, 'X-Request-Id': requestId(event), 'Idempotent-Replayed': 'true' },
    body: response.body,
  };
}

/**
 * Runs `run` (the rest of the request) under the request's Idempotency-Key, if it sent one. `count` is the
 * key's rate limit: `run` counts itself, and an answer given here without running it (a replay, 422, 409)
 * is counted by `count` first, so retrying with a key cannot multiply requests past the limit; over the
 * limit it is a 429 (the stored answer stays for the retry after Retry-After).
 */
export async function idempotent(
  event: APIGatewayProxyEventV2,
  accountId: string,
  run: () => Promise<Result>,
  count: () => Promise<void> = async () => undefined,
): Promise<Result> {
  const method = (event.requestContext?.http?.method ?? '').toUpperCase();
  const value = header(event, 'idempotency-key');
  if (!IDEMPOTENT_METHODS.has(method) || value === undefined) return run();
  if (value.length === 0 || value.length > MAX_KEY_LENGTH) {
    throw new DetailError(400, `Idempotency-Key must be 1 to ${MAX_KEY_LENGTH} characters.`);
  }

  const key = edgeKeys.idempotency(accountId, sha256(value));
  const claim = await claimKey(key, fingerprint(event), randomUUID(), { method, path: event.rawPath ?? '' });
  if (claim.kind !== 'claimed') await count();
  switch (claim.kind) {
    case 'mismatch':
      throw new DetailError(422, MISMATCH);
    case 'in_progress':
      throw new DetailError(409, IN_PROGRESS);
    case 'completed':
      return replay(claim.response, event);
    case 'effect_lost': {
      // Running the request again could apply it twice; its effect is known to be there, its answer is not.
      const result = jsonResult(409, { detail: EFFECT_LOST }, event);
      await completeKey(key, claim.owner, stored(result));
      return result;
    }
    case 'claimed':
      break;
  }

  let result: Result;
  try {
    result = await runWithIdempotency(key, claim.owner, run);
  } catch (err) {
    if (err instanceof IdempotencyLockLostError) throw new DetailError(409, IN_PROGRESS);
    if (!(err instanceof ApiError) || !storable(err.status)) {
      await releaseKey(key, claim.owner).catch(() => undefined);
      throw err;
    }
    result = jsonResult(err.status, err.body(), event, err.headers());
  }
  if (!storable(result.statusCode ?? 200)) {
    await releaseKey(key, claim.owner).catch(() => undefined);
    return result;
  }
  try {
    await completeKey(key, claim.owner, stored(result));
  } catch (err) {
    // The effect is done and the client gets its answer; a retry finds the effect marker (README).
    const e = err instanceof Error ? err : new Error(String(err));
    log('error', 'idempotent response not stored', { request_id: requestId(event), error: e.name, reason: e.message });
  }
  return result;
}
