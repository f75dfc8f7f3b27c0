// The pipeline of the public /js/v1/ endpoints, which browsers call from any site with the account's
// publishable key: CORS on every answer (errors included, so the script can read a 429), publishable-key
// auth, then the body's validation, then the per-key and per-IP rate limits, then one domain call.
//
//   export const handler = jsHandler({ body: clickBody }, ({ principal, body, clientIp }) => ...);
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import type * as v from 'valibot';
import type { Principal } from '../store/accounts';
import { validate } from '../schemas/fields';
import { authenticatePublishable } from './auth';
import { parseJsonBody } from './body';
import { limitPublic } from './rate-limits';
import { clientIp as clientIpOf } from './client-ip';
import { jsonResult, publicHandler, type Result } from './respond';

/** CORS for any origin: the endpoints hold no cookies or ambient credentials, only the key in a header. */
export const CORS_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Allow-Methods': 'POST, OPTIONS',
  'Access-Control-Allow-Headers': 'Authorization, Content-Type',
  'Access-Control-Expose-Headers': 'Retry-After, X-Request-Id',
  // Browsers cap this (Chromium: 2 h); one preflight per page session at most.
  'Access-Control-Max-Age': '7200',
});

export function withCors(result: Result): Result {
  return { ...result, headers: { ...(result.headers ?? {}), ...CORS_HEADERS } };
}

/** A publicHandler whose every answer, success or error, carries the CORS headers. */
export function corsHandler(fn: (event: APIGatewayProxyEventV2) => Promise<Result>) {
  const inner = publicHandler(fn);
  return async (event: APIGatewayProxyEventV2, context: Context): Promise<Result> => withCors(await inner(event, context));
}

export interface JsRequest<B> {
  principal: Principal;
  body: B;
  /** The caller's IP as API Gateway saw it. */
  clientIp: string;
  event: APIGatewayProxyEventV2;
}

type Schema = v.GenericSchema;

export function jsHandler<BS extends Schema>(
  schemas: { body: BS },
  fn: (req: JsRequest<v.InferOutput<BS>>) => Promise<{ status: number; body: unknown }>,
) {
  return corsHandler(async (event) => {
    const principal = await authenticatePublishable(event);
    // The body is checked before the limits are counted: a malformed request costs no round trip and
    // does not use up the visitor's budget.
    const body = validate(schemas.body, parseJsonBody(event)) as v.InferOutput<BS>;
    const clientIp = clientIpOf(event);
    await limitPublic(principal.accountId, clientIp);
    const reply = await fn({ principal, body, clientIp, event });
    return jsonResult(reply.status, reply.body, event);
  });
}
