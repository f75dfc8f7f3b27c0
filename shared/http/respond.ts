// Responses and the error-mapping pipeline, without authentication: what every handler needs, and
// all the 404/405 fallback needs (so its bundle carries no DynamoDB client).
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { config } from '../config';
import { currentLogKeys, invocationKeys, log, withLogKeys } from '../log';
import { flushMetrics } from '../metrics';
import { handlerAnnotations, traced } from '../tracing';
import { errorResponse } from './errors';
import { requireDistribution } from './client-ip';
import { DetailError } from '../domain/errors';
import { CROSS_SITE_REFUSED } from '../domain/team';

/** A request header, case-insensitively. */
export function header(event: APIGatewayProxyEventV2, name: string): string | undefined {
  const headers = event.headers ?? {};
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}

export type Result = APIGatewayProxyStructuredResultV2;

export function requestId(event: APIGatewayProxyEventV2): string {
  return event.requestContext?.requestId || randomUUID();
}

/**
 * scheme://host of the public site, for absolute links (login, invitation, portal and unsubscribe links,
 * pagination) and the CSRF origin: from the configuration only (PUBLIC_BASE_URL; locally the configured
 * port), never from the request's Host or X-Forwarded-* headers, which a client can forge. The event is
 * kept in the signature for the callers; it is not read.
 */
export function baseUrl(_event?: APIGatewayProxyEventV2): string {
  return config().publicBaseUrl;
}

/**
 * CSRF's second lock for a dashboard session's unsafe request (SameSite=Strict is the first): the
 * `Origin` header must be this site's own origin; 403 otherwise, and when it is missing.
 */
export function requireSameOrigin(event: APIGatewayProxyEventV2): void {
  const origin = header(event, 'origin');
  if (!origin || origin !== new URL(baseUrl(event)).origin) throw new DetailError(403, CROSS_SITE_REFUSED);
}

export function jsonResult(status: number, body: unknown, event: APIGatewayProxyEventV2, headers: Record<string, string> = {}): Result {
  return {
    statusCode: status,
    headers: {
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      'X-Request-Id': requestId(event),
      ...headers,
    },
    body: body === undefined ? '' : JSON.stringify(body),
  };
}

/** The detail of a request whose path does not percent-decode (e.g. `/v1/%ff`): a 400 before anything else runs. */
export const MALFORMED_PATH = 'Malformed request path: it is not valid percent-encoded UTF-8.';

/** True when `rawPath` percent-decodes as UTF-8 (what every path parameter needs). */
export function isWellFormedPath(rawPath: string): boolean {
  try {
    decodeURIComponent(rawPath);
    return true;
  } catch {
    return false;
  }
}

/** A path that does not decode is the client's error (400), whichever route API Gateway picked for it. */
const wellFormedPath = (): middy.MiddlewareObj<APIGatewayProxyEventV2, Result> => ({
  before: (request) => {
    if (!isWellFormedPath(request.event.rawPath ?? '/')) throw new DetailError(400, MALFORMED_PATH);
  },
});

/** Turns any error thrown in the pipeline into the contract's JSON error response. */
const errorsAsJson = (): middy.MiddlewareObj<APIGatewayProxyEventV2, Result> => ({
  onError: (request) => {
    const { status, headers, body } = errorResponse(request.error, requestId(request.event));
    request.response = jsonResult(status, body, request.event, headers);
  },
});

/** An account id in the path (the provider webhook intakes' `{account_id}`), for the log lines: 16 hex chars. */
const pathAccount = (event: APIGatewayProxyEventV2): string | undefined => {
  const id = event.pathParameters?.account_id;
  return id !== undefined && /^[0-9a-f]{16}$/.test(id) ? id : undefined;
};

/** The `detail` of an error answer, for its log line (validation answers carry fields instead: not logged). */
function errorDetail(result: Result): string | undefined {
  if (typeof result.body !== 'string' || result.body.length > 2_000) return undefined;
  try {
    const detail = (JSON.parse(result.body) as { detail?: unknown }).detail;
    return typeof detail === 'string' ? detail : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Wraps a middy pipeline around `fn` with no authentication (e.g. the 404/405 fallback). Every line
 * logged while it runs carries the request id, the route and the Lambda invocation's keys (and the
 * account id once known: apiHandler appends it after authentication; a webhook intake's path names it).
 *
 * Each request ends with one `request answered` line (status, duration, account): at INFO for an error
 * answer (4xx/5xx: an operator looking for an account's refused calls finds them, with the error's
 * detail), at DEBUG otherwise (LOG_LEVEL=DEBUG shows every request; API Gateway's access log has them all,
 * without the account). Then the invocation's metrics are
 * printed (shared/metrics.ts) and, in a sampled X-Ray trace, its `## handler` subsegment is sent
 * (shared/tracing.ts), whatever the outcome.
 */
export function publicHandler(fn: (event: APIGatewayProxyEventV2) => Promise<Result>) {
  const pipeline = middy<APIGatewayProxyEventV2, Result, Error, Context>({ timeoutEarlyInMillis: 0 })
    .use(errorsAsJson())
    .use(wellFormedPath())
    // In AWS, a request that did not come through the CloudFront distribution is refused (./client-ip.ts).
    .handler(async (event) => {
      requireDistribution(event);
      return fn(event);
    });
  return async (event: APIGatewayProxyEventV2, context: Context): Promise<Result> => {
    const started = Date.now();
    const invocation = invocationKeys(context);
    const account = pathAccount(event);
    const keys = { ...invocation, request_id: requestId(event), route: event.routeKey, ...(account ? { account_id: account } : {}) };
    try {
      return await withLogKeys(keys, () =>
        traced(
          '## handler',
          handlerAnnotations(invocation, { route: event.routeKey }),
          async () => {
            const result = await pipeline(event, context);
            const status = result.statusCode ?? 200;
            const detail = status >= 400 ? errorDetail(result) : undefined;
            log(status >= 400 ? 'info' : 'debug', 'request answered', {
              status,
              duration_ms: Date.now() - started,
              ...(detail ? { detail } : {}),
            });
            return result;
          },
          (result) => {
            const status = result.statusCode ?? 200;
            const accountId = currentLogKeys().account_id;
            return {
              fault: status >= 500,
              error: status >= 400 && status < 500,
              throttle: status === 429,
              annotations: { status, account_id: typeof accountId === 'string' ? accountId : undefined },
            };
          },
        ),
      );
    } finally {
      flushMetrics();
    }
  };
}
