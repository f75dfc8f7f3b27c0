// API key authentication: `Authorization: Bearer <key>` (or `Token <key>`). A resolved key is cached in
// the container for AUTH_CACHE_TTL_SECONDS (<= 60 s) so most requests spend no round trip on auth;
// unknown keys are never cached, so a newly created key works at once.
//
// Two kinds of key, never interchangeable: secret keys (`rfl_live_`) open /v1/; publishable keys
// (`rfl_pub_`, browser-safe) open only the public /js/v1/ endpoints.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { config } from '../config';
import { looksLikeApiKey, looksLikePublishableKey } from '../domain/api-keys';
import { DetailError, InvalidTokenError, NotAuthenticatedError } from '../domain/errors';
import { findPrincipalByApiKey, findPrincipalByPublishableKey, type Principal } from '../store/accounts';
import { header } from './body';

const cache = new Map<string, { principal: Principal; expires: number }>();
const MAX_CACHED = 1000;

/** The key of a well-formed `Bearer <key>` / `Token <key>` header; 401 when missing or malformed. */
function bearerKey(event: APIGatewayProxyEventV2): string {
  const value = header(event, 'authorization')?.trim();
  if (!value) throw new NotAuthenticatedError();
  const [scheme, key, ...rest] = value.split(/\s+/);
  // A header that is there but is not `Bearer <key>` / `Token <key>` is an invalid credential, not a missing one.
  if (!scheme || !/^(bearer|token)$/i.test(scheme) || !key || rest.length > 0) throw new InvalidTokenError();
  return key;
}

async function resolve(kind: 'secret' | 'publishable', key: string, find: (key: string) => Promise<Principal | null>): Promise<Principal> {
  const ttlMs = config().authCacheTtlSeconds * 1000;
  // Cache entries are keyed by a digest, so no plaintext key is kept in memory longer than the request.
  const digest = createHash('sha256').update(key).digest('base64url');
  const cacheKey = `${kind}:${digest}`;
  const hit = ttlMs > 0 ? cache.get(cacheKey) : undefined;
  if (hit && hit.expires > Date.now()) return hit.principal;

  const found = await find(key);
  const principal = found ? { ...found, keyId: digest.slice(0, 16) } : null;
  if (!principal) {
    cache.delete(cacheKey);
    throw new InvalidTokenError();
  }
  if (ttlMs > 0) {
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(cacheKey, { principal, expires: Date.now() + ttlMs });
  }
  return principal;
}

/** A secret API key (the /v1/ API). */
export async function authenticate(event: APIGatewayProxyEventV2): Promise<Principal> {
  const key = bearerKey(event);
  if (!looksLikeApiKey(key)) throw new InvalidTokenError();
  return resolve('secret', key, findPrincipalByApiKey);
}

/** A publishable key (the public /js/v1/ endpoints). A secret key is refused with a pointed message. */
export async function authenticatePublishable(event: APIGatewayProxyEventV2): Promise<Principal> {
  const key = bearerKey(event);
  if (looksLikeApiKey(key)) {
    throw new DetailError(401, 'Secret API keys are not accepted here; use the publishable key (rfl_pub_...).', { 'WWW-Authenticate': 'Bearer' });
  }
  if (!looksLikePublishableKey(key)) throw new InvalidTokenError();
  return resolve('publishable', key, findPrincipalByPublishableKey);
}
