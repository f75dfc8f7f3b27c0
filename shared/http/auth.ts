// API key authentication: `Authorization: Bearer <key>` (or `Token <key>`). A resolved key is cached in
// the container for AUTH_CACHE_TTL_SECONDS (<= 60 s) so most requests spend no round trip on auth;
// unknown keys are never cached, so a newly created key works at once.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { config } from '../config';
import { looksLikeApiKey } from '../domain/api-keys';
import { InvalidTokenError, NotAuthenticatedError } from '../domain/errors';
import { findPrincipalByApiKey, type Principal } from '../store/accounts';
import { header } from './body';

const cache = new Map<string, { principal: Principal; expires: number }>();
const MAX_CACHED = 1000;

export async function authenticate(event: APIGatewayProxyEventV2): Promise<Principal> {
  const value = header(event, 'authorization')?.trim();
  if (!value) throw new NotAuthenticatedError();
  const [scheme, key, ...rest] = value.split(/\s+/);
  // A header that is there but is not `Bearer <key>` / `Token <key>` is an invalid credential, not a missing one.
  if (!scheme || !/^(bearer|token)$/i.test(scheme) || !key || rest.length > 0 || !looksLikeApiKey(key)) {
    throw new InvalidTokenError();
  }

  const ttlMs = config().authCacheTtlSeconds * 1000;
  // Cache entries are keyed by a digest, so no plaintext key is kept in memory longer than the request.
  const cacheKey = createHash('sha256').update(key).digest('base64');
  const hit = ttlMs > 0 ? cache.get(cacheKey) : undefined;
  if (hit && hit.expires > Date.now()) return hit.principal;

  const principal = await findPrincipalByApiKey(key);
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
