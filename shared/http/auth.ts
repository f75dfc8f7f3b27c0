// API key authentication: `Authorization: Bearer <key>` (or `Token <key>`). A resolved key is cached in
// the container for AUTH_CACHE_TTL_SECONDS (<= 60 s) so most requests spend no round trip on auth.
//
// A flood of unknown keys (issue 11): a well-formed key that is unknown or revoked is remembered as such
// for AUTH_NEGATIVE_CACHE_SECONDS (30 s, bounded LRU), so repeating it costs no read; and failed
// authentications are counted per client IP (AUTH_FAILURES_PER_IP_PER_MINUTE, a window item like the other
// rate limits, keyed by a digest of the IP): past the limit the IP gets 429 with Retry-After, without a
// read, for any key this container has not already resolved. A newly created key is never in the negative
// cache: keys are random, so nobody presents one before it exists.
//
// Two kinds of key, never interchangeable: secret keys (`rfl_live_`) open /v1/; publishable keys
// (`rfl_pub_`, browser-safe) open only the public /js/v1/ endpoints.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { config } from '../config';
import { looksLikeApiKey, looksLikePublishableKey } from '../domain/api-keys';
import { DetailError, InvalidTokenError, NotAuthenticatedError, ThrottledError } from '../domain/errors';
import type { RateLimit } from '../domain/rate-limits';
import { findPrincipalByApiKey, findPrincipalByPublishableKey, type Principal } from '../store/accounts';
import { sessionFromCookies } from '../domain/team';
import { findSession } from '../store/team';
import { consumeRateLimit, knownExhausted } from '../store/rate-limits';
import { header } from './body';
import { clientIp } from './client-ip';
import { appendLogKeys } from '../log';

const cache = new Map<string, { principal: Principal; expires: number }>();
const MAX_CACHED = 1000;
/** Unknown keys by digest -> expiry (ms); Map order is insertion order, refreshed on a hit: an LRU. */
const unknown = new Map<string, number>();
export const MAX_NEGATIVE_CACHED = 10_000;

/** The rate-limit windows of failed authentications live under this pseudo-account (never a real account id). */
export const AUTH_FAILURE_ACCOUNT = 'auth';

/** The key of a well-formed `Bearer <key>` / `Token <key>` header; 401 when missing or malformed. */
function bearerKey(event: APIGatewayProxyEventV2): string {
  const value = header(event, 'authorization')?.trim();
  if (!value) throw new NotAuthenticatedError();
  const [scheme, key, ...rest] = value.split(/\s+/);
  // A header that is there but is not `Bearer <key>` / `Token <key>` is an invalid credential, not a missing one.
  if (!scheme || !/^(bearer|token)$/i.test(scheme) || !key || rest.length > 0) throw new InvalidTokenError();
  return key;
}

function failureLimit(event: APIGatewayProxyEventV2): { scope: string; rule: RateLimit } | null {
  const limit = config().authFailuresPerIpPerMinute;
  if (limit <= 0) return null;
  const ip = clientIp(event);
  // Only a digest of the IP is stored (the window item's key).
  return { scope: `auth-fail#${createHash('sha256').update(ip).digest('base64url').slice(0, 22)}`, rule: { limit, windowSeconds: 60 } };
}

/** Counts one failed authentication of the request's IP: 401, or 429 once the IP is past its limit. */
async function refuse(event: APIGatewayProxyEventV2): Promise<never> {
  const limited = failureLimit(event);
  if (limited) {
    const decision = await consumeRateLimit(AUTH_FAILURE_ACCOUNT, limited.scope, limited.rule);
    if (!decision.allowed) throw new ThrottledError(decision.retryAfterSeconds);
  }
  throw new InvalidTokenError();
}

function rememberUnknown(cacheKey: string, ttlMs: number): void {
  unknown.delete(cacheKey);
  if (unknown.size >= MAX_NEGATIVE_CACHED) {
    const oldest = unknown.keys().next();
    if (!oldest.done) unknown.delete(oldest.value);
  }
  unknown.set(cacheKey, Date.now() + ttlMs);
}

function knownUnknown(cacheKey: string): boolean {
  const expires = unknown.get(cacheKey);
  if (expires === undefined) return false;
  unknown.delete(cacheKey);
  if (expires <= Date.now()) return false;
  unknown.set(cacheKey, expires); // most recently used
  return true;
}

async function resolve(
  event: APIGatewayProxyEventV2,
  kind: 'secret' | 'publishable',
  key: string,
  find: (key: string) => Promise<Principal | null>,
): Promise<Principal> {
  const cfg = config();
  const ttlMs = cfg.authCacheTtlSeconds * 1000;
  // Cache entries are keyed by a digest, so no plaintext key is kept in memory longer than the request.
  const digest = createHash('sha256').update(key).digest('base64url');
  const cacheKey = `${kind}:${digest}`;
  const hit = ttlMs > 0 ? cache.get(cacheKey) : undefined;
  if (hit && hit.expires > Date.now()) return hit.principal;

  // An IP past its failure limit reads nothing more until its window ends (keys resolved above still work).
  const limited = failureLimit(event);
  if (limited) {
    const blocked = knownExhausted(AUTH_FAILURE_ACCOUNT, limited.scope, limited.rule);
    if (!blocked.allowed) throw new ThrottledError(blocked.retryAfterSeconds);
  }
  if (cfg.authNegativeCacheSeconds > 0 && knownUnknown(cacheKey)) return refuse(event);

  const found = await find(key);
  const principal = found ? { ...found, keyId: digest.slice(0, 16) } : null;
  if (!principal) {
    cache.delete(cacheKey);
    if (cfg.authNegativeCacheSeconds > 0) rememberUnknown(cacheKey, cfg.authNegativeCacheSeconds * 1000);
    return refuse(event);
  }
  unknown.delete(cacheKey);
  if (ttlMs > 0) {
    if (cache.size >= MAX_CACHED) cache.clear();
    cache.set(cacheKey, { principal, expires: Date.now() + ttlMs });
  }
  return principal;
}

/** Forgets every cached answer (tests and the bench compare runs with and without the caches). */
export function clearAuthCaches(): void {
  cache.clear();
  unknown.clear();
}

/** The dashboard session cookie's token, if the request carries one (HTTP API v2 puts cookies in `cookies`). */
export function sessionToken(event: APIGatewayProxyEventV2): string | null {
  return sessionFromCookies(header(event, 'cookie'), event.cookies ?? []);
}

export const SESSION_ENDED = 'Your session has ended; log in again.';

/**
 * A dashboard session (docs/dashboard.md): one GetItem, never cached, so a logout or a removal from the team
 * takes effect on the next request. The principal carries the session (its role and member).
 */
export async function authenticateSession(event: APIGatewayProxyEventV2): Promise<Principal> {
  const token = sessionToken(event);
  if (!token) throw new NotAuthenticatedError();
  const session = await findSession(token);
  if (!session) throw new DetailError(401, SESSION_ENDED, { 'WWW-Authenticate': 'Bearer' });
  return named({ accountId: session.accountId, plan: session.plan, keyId: `s${session.hash.slice(0, 15)}`, session });
}

/** Every line the request logs from here on (and its `request answered` line) names the account. */
function named(principal: Principal): Principal {
  appendLogKeys({ account_id: principal.accountId });
  return principal;
}

/**
 * The /v1/ API: a secret API key in `Authorization`, or else the dashboard's session cookie. A request
 * with both is authenticated by its key (a key is what API clients send; the cookie rides along by itself).
 */
export async function authenticate(event: APIGatewayProxyEventV2): Promise<Principal> {
  if (header(event, 'authorization') === undefined && sessionToken(event) !== null) return authenticateSession(event);
  const key = bearerKey(event);
  if (!looksLikeApiKey(key)) throw new InvalidTokenError();
  return named(await resolve(event, 'secret', key, findPrincipalByApiKey));
}

/** A publishable key (the public /js/v1/ endpoints). A secret key is refused with a pointed message. */
export async function authenticatePublishable(event: APIGatewayProxyEventV2): Promise<Principal> {
  const key = bearerKey(event);
  if (looksLikeApiKey(key)) {
    throw new DetailError(401, 'Secret API keys are not accepted here; use the publishable key (rfl_pub_...).', {
      'WWW-Authenticate': 'Bearer',
    });
  }
  if (!looksLikePublishableKey(key)) throw new InvalidTokenError();
  return named(await resolve(event, 'publishable', key, findPrincipalByPublishableKey));
}
