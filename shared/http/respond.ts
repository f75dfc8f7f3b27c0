// Responses and the error-mapping pipeline, without authentication: what every handler needs, and
// all the 404/405 fallback needs (so its bundle carries no DynamoDB client).
import middy from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { randomUUID } from 'node:crypto';
import { config } from '../config';
import { invocationKeys, withLogKeys } from '../log';
import { errorResponse } from './errors';
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

/** scheme://host of the public API, for absolute links: the configured base URL, else the request's. */
export function baseUrl(event: APIGatewayProxyEventV2): string {
  const configured = config().publicBaseUrl;
  if (configured) return configured;
  const proto = header(event, 'x-forwarded-proto')?.split(',')[0]?.trim() || 'https';
  const host = header(event, 'host') || event.requestContext?.domainName || 'localhost';
  return `${proto}://${host}`;
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

/** Turns any error thrown in the pipeline into the contract's JSON error response. */
const errorsAsJson = (): middy.MiddlewareObj<APIGatewayProxyEventV2, Result> => ({
  onError: (request) => {
    const { status, headers, body } = errorResponse(request.error, requestId(request.event));
    request.response = jsonResult(status, body, request.event, headers);
  },
});

/**
 * Wraps a middy pipeline around `fn` with no authentication (e.g. the 404/405 fallback). Every line
 * logged while it runs carries the request id, the route and the Lambda invocation's keys.
 */
export function publicHandler(fn: (event: APIGatewayProxyEventV2) => Promise<Result>) {
  const pipeline = middy<APIGatewayProxyEventV2, Result, Error, Context>({ timeoutEarlyInMillis: 0 })
    .use(errorsAsJson())
    .handler(fn);
  return (event: APIGatewayProxyEventV2, context: Context): Promise<Result> =>
    withLogKeys({ ...invocationKeys(context), request_id: requestId(event), route: event.routeKey }, () => pipeline(event, context));
}

