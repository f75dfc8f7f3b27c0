// The member portal's API (/portal/v1/): a portal session token as `Authorization: Bearer rps_…` (embedded)
// or in the `refloop_portal` cookie (an affiliate's login), never an API key or the dashboard's cookie, and never the other way round (a portal token opens nothing under
// /v1/: it is not an API key's shape). Each request costs the session's GetItem (never cached: a
// revocation stops the next request) and is counted against the session's rate limit.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type * as v from 'valibot';
import { looksLikeApiKey, looksLikePublishableKey } from '../domain/api-keys';
import { DetailError, InvalidTokenError, NotAuthenticatedError, ThrottledError } from '../domain/errors';
import {
  COOKIE_SESSION_ENDED,
  isPortalSessionToken,
  PORTAL_ONLY,
  PORTAL_REQUESTS_PER_MINUTE,
  PORTAL_SESSION_ENDED,
  portalCookieToken,
} from '../domain/portal';
import { appendLogKeys } from '../log';
import { findPortalSession, type PortalSession } from '../store/portal';
import { consumeRateLimit } from '../store/rate-limits';
import { header, validatedInput } from './body';
import { underLimit } from './rate-limits';
import { jsonResult, publicHandler, requireSameOrigin, type Result } from './respond';

/**
 * The session of the request: its bearer token (the embedded portal) or, without an Authorization header,
 * its `refloop_portal` cookie (an affiliate's portal); 401 (with a message the portal shows) otherwise. A
 * session opens only through its own transport (a cookie session's token as a bearer is refused), and an
 * unsafe request on a cookie session must come from this site's own origin (CSRF's second lock after
 * SameSite=Strict).
 */
export async function authenticatePortal(event: APIGatewayProxyEventV2): Promise<PortalSession> {
  const value = header(event, 'authorization')?.trim();
  if (!value) return cookieSession(event);
  const [scheme, token, ...rest] = value.split(/\s+/);
  if (!scheme || !/^bearer$/i.test(scheme) || !token || rest.length > 0) throw new InvalidTokenError();
  if (looksLikeApiKey(token) || looksLikePublishableKey(token)) throw new DetailError(401, PORTAL_ONLY, { 'WWW-Authenticate': 'Bearer' });
  if (!isPortalSessionToken(token)) throw new InvalidTokenError();
  const session = await findPortalSession(token);
  if (session?.mode !== 'bearer') throw new DetailError(401, PORTAL_SESSION_ENDED, { 'WWW-Authenticate': 'Bearer' });
  return session;
}

/** The `refloop_portal` cookie's token: undefined without one, null when malformed. */
export const portalCookieOf = (event: APIGatewayProxyEventV2) => portalCookieToken(header(event, 'cookie'), event.cookies ?? []);

async function cookieSession(event: APIGatewayProxyEventV2): Promise<PortalSession> {
  const token = portalCookieOf(event);
  if (token === undefined) throw new NotAuthenticatedError();
  const session = token === null ? null : await findPortalSession(token);
  if (session?.mode !== 'cookie') throw new DetailError(401, COOKIE_SESSION_ENDED);
  if (!SAFE_METHODS.has(event.requestContext?.http?.method ?? 'GET')) requireSameOrigin(event);
  return session;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

async function limitPortal(session: PortalSession): Promise<void> {
  const decision = await consumeRateLimit(session.accountId, `portal#${session.id}`, {
    limit: PORTAL_REQUESTS_PER_MINUTE,
    windowSeconds: 60,
  });
  if (!decision.allowed) throw new ThrottledError(decision.retryAfterSeconds);
}

export interface PortalRequest<B, Q> {
  session: PortalSession;
  body: B;
  query: Q;
  event: APIGatewayProxyEventV2;
}

type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

/**
 * A /portal/v1/ handler: authenticate the portal session, validate, count the request, answer JSON
 * (never cached: it is one member's data). The session's rate limit runs beside a read, before a write.
 */
export function portalHandler<BS extends Schema | undefined = undefined, QS extends Schema | undefined = undefined>(
  schemas: { body?: BS; query?: QS },
  fn: (req: PortalRequest<Out<BS>, Out<QS>>) => Promise<{ status: number; body: unknown }>,
) {
  return publicHandler(async (event): Promise<Result> => {
    const session = await authenticatePortal(event);
    appendLogKeys({ account_id: session.accountId, portal_session: session.id });
    const { body, query } = validatedInput(schemas, event) as { body: Out<BS>; query: Out<QS> };
    const request = { session, body, query, event };
    const reply = await underLimit(
      event.requestContext?.http?.method,
      () => limitPortal(session),
      () => fn(request),
    );
    return jsonResult(reply.status, reply.body, event, { 'Cache-Control': 'no-store' });
  });
}
