// The middy stack, built once: request id and JSON responses, API key auth, body parsing and
// valibot validation. A handler file declares its schemas and makes one domain call:
//
//   export const handler = apiHandler({ body: createReferralBody }, ({ principal, body }) => ...);
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type * as v from 'valibot';
import type { Principal } from '../store/accounts';
import { authenticate } from './auth';
import { type Access, PERMISSION_DENIED, roleMay, SESSION_ONLY } from '../domain/team';
import { PermissionDeniedError } from '../domain/errors';
import { validatedInput } from './body';
import { idempotent, storeForReplay } from './idempotency';
import { limitApiKey, underLimit } from './rate-limits';

export { jsonResult, publicHandler, type Result };
import { baseUrl, jsonResult, publicHandler, requireSameOrigin, type Result } from './respond';

export interface ApiRequest<B, Q> {
  principal: Principal;
  params: Record<string, string>;
  body: B;
  query: Q;
  /** scheme://host of the public API, for absolute links. */
  baseUrl: string;
  event: APIGatewayProxyEventV2;
}

export interface Reply {
  status: number;
  body?: unknown;
  /** What an Idempotency-Key replay shows instead of `body` (a body with a secret shown only once). */
  replayBody?: unknown;
  /** A body that is not JSON (a CSV file): sent as it is with its content type. */
  raw?: { contentType: string; text: string; headers?: Record<string, string> };
}

export const ok = (body: unknown): Reply => ({ status: 200, body });
export const created = (body: unknown): Reply => ({ status: 201, body });
export const noContent = (): Reply => ({ status: 204 });

type Schema = v.GenericSchema;
type Out<S> = S extends Schema ? v.InferOutput<S> : undefined;

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * What a dashboard session may do here (docs/dashboard.md "Roles"). API keys act for the
 * whole account (they are the account's own credential) except on `sessionOnly` routes, which they never
 * open: a leaked key cannot mint keys, invite people or change the provider's secrets. A session's unsafe
 * request must come from this origin (CSRF: SameSite=Strict already keeps the cookie off cross-site
 * requests; the Origin check is the second lock, for same-site sibling origins and old browsers).
 */
export function checkAccess(event: APIGatewayProxyEventV2, principal: Principal, access: Access, sessionOnly: boolean): void {
  const session = principal.session;
  if (!session) {
    if (sessionOnly) throw new PermissionDeniedError(SESSION_ONLY);
    return;
  }
  const method = event.requestContext?.http?.method ?? 'GET';
  if (!SAFE_METHODS.has(method)) requireSameOrigin(event);
  if (!roleMay(session.role, access)) throw new PermissionDeniedError(PERMISSION_DENIED);
}

export interface HandlerOptions<BS, QS> {
  body?: BS;
  query?: QS;
  /** What a session's role needs (default: `read` for GET, `write` otherwise). */
  access?: Access;
  /** Only a dashboard session may call it (the team, API keys, the provider connection). */
  sessionOnly?: boolean;
}

export function apiHandler<BS extends Schema | undefined = undefined, QS extends Schema | undefined = undefined>(
  schemas: HandlerOptions<BS, QS>,
  fn: (req: ApiRequest<Out<BS>, Out<QS>>) => Promise<Reply>,
) {
  return publicHandler(async (event) => {
    // A session-only route authenticates like any other (a key, or else the cookie); checkAccess then
    // refuses a key there.
    // authenticate() also names the account in the request's log keys.
    const principal = await authenticate(event);
    checkAccess(
      event,
      principal,
      schemas.access ?? (event.requestContext?.http?.method === 'GET' ? 'read' : 'write'),
      schemas.sessionOnly ?? false,
    );
    // Writes sent with an Idempotency-Key run under it (./idempotency.ts): validation answers included,
    // and a 429 releases the key so the retry runs.
    // Answers the key gives without running the request (replays, 422, 409) are counted too.
    return idempotent(
      event,
      principal.accountId,
      async () => {
        const { body, query } = validatedInput(schemas, event) as { body: Out<BS>; query: Out<QS> };
        const request = {
          principal,
          params: (event.pathParameters ?? {}) as Record<string, string>,
          body,
          query,
          baseUrl: baseUrl(event),
          event,
        };
        // The key's rate limit (./rate-limits.ts underLimit: beside a read, before a write).
        const reply = await underLimit(
          event.requestContext?.http?.method,
          () => limitApiKey(principal),
          () => fn(request),
        );
        if (reply.raw) {
          const json = jsonResult(reply.status, undefined, event);
          return {
            ...json,
            headers: { ...json.headers, 'Content-Type': reply.raw.contentType, ...reply.raw.headers },
            body: reply.raw.text,
          };
        }
        const result = jsonResult(reply.status, reply.body, event);
        return reply.replayBody === undefined ? result : storeForReplay(result, reply.replayBody);
      },
      () => limitApiKey(principal),
    );
  });
}
