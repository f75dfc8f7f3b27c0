// The client's address for the per-IP limits (login links, session openings, failed authentications,
// portal link openings, /js/ clicks), and the lock that keeps the API behind its CloudFront distribution.
//
// In AWS every request reaches the HTTP API through the distribution (infra/cloud/dashboard-site.ts), so
// API Gateway's `sourceIp` is a CloudFront edge's address: keyed on it, one abuser would get every tenant
// behind the same edge limited. The distribution forwards the viewer's address in CloudFront-Viewer-Address
// (its origin request policy) and adds a secret origin header that no viewer knows (X-Refloop-Origin-Verify,
// its value generated in Secrets Manager and handed to the functions as ORIGIN_VERIFY_SECRET). Only a request
// that carries that secret came through CloudFront, so only then is CloudFront-Viewer-Address believed; and
// with the secret configured, a request without it (straight to the execute-api URL, which could forge the
// viewer header) is refused with 403 before any handler runs (requireDistribution, in publicHandler).
// Locally (and in the tests) there is no secret: the gateway's socket address is the client, and a
// CloudFront-Viewer-Address header sent by anyone is ignored. docs/operations.md "The client's address".
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import { DetailError } from '../domain/errors';

/** The header CloudFront adds to every origin request with the distribution's secret. */
export const ORIGIN_VERIFY_HEADER = 'x-refloop-origin-verify';
/** CloudFront's header with the viewer's address and source port (origin request policy). */
export const VIEWER_ADDRESS_HEADER = 'cloudfront-viewer-address';
/** The environment variable holding the secret (set by the stack on every function when the distribution exists). */
export const ORIGIN_VERIFY_ENV = 'ORIGIN_VERIFY_SECRET';

export const DIRECT_ACCESS_REFUSED = 'Use the public URL: this API answers only through its CloudFront distribution.';

function headerValue(event: APIGatewayProxyEventV2, name: string): string | undefined {
  const headers = event.headers ?? {};
  for (const key of Object.keys(headers)) if (key.toLowerCase() === name) return headers[key];
  return undefined;
}

const configuredSecret = (): string | undefined => process.env[ORIGIN_VERIFY_ENV] || undefined;

/** Whether the request carries the distribution's secret (compared in constant time). */
function fromDistribution(event: APIGatewayProxyEventV2, secret: string): boolean {
  const given = Buffer.from(headerValue(event, ORIGIN_VERIFY_HEADER) ?? '', 'utf8');
  const expected = Buffer.from(secret, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/**
 * The address in a CloudFront-Viewer-Address value, without its port: `198.51.100.10:46532`,
 * `[2001:db8::1]:443` and CloudFront's own IPv6 form `2001:db8::1:443` (the port after the last colon).
 * Undefined when the value is not an address and a port.
 */
export function viewerAddress(value: string | undefined): string | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  const bracketed = /^\[([^\]]+)\]:(\d{1,5})$/.exec(v);
  if (bracketed) return isIP(bracketed[1] as string) === 6 ? (bracketed[1] as string).toLowerCase() : undefined;
  const lastColon = v.lastIndexOf(':');
  if (lastColon <= 0 || !/^\d{1,5}$/.test(v.slice(lastColon + 1))) return undefined;
  const address = v.slice(0, lastColon);
  const family = isIP(address);
  // One colon: IPv4 and its port; more: IPv6 and its port.
  if (family === 4 && !address.includes(':')) return address;
  if (family === 6) return address.toLowerCase();
  return undefined;
}

/**
 * The client's address for rate limits: the viewer's (CloudFront-Viewer-Address) when the request provably
 * came through the distribution, else API Gateway's source address; 'unknown' when there is neither.
 */
export function clientIp(event: APIGatewayProxyEventV2): string {
  const secret = configuredSecret();
  if (secret && fromDistribution(event, secret)) {
    const viewer = viewerAddress(headerValue(event, VIEWER_ADDRESS_HEADER));
    if (viewer) return viewer;
  }
  return event.requestContext?.http?.sourceIp || 'unknown';
}

/** 403 for a request that bypassed the distribution (only when the stack configured a secret). */
export function requireDistribution(event: APIGatewayProxyEventV2): void {
  const secret = configuredSecret();
  if (secret && !fromDistribution(event, secret)) throw new DetailError(403, DIRECT_ACCESS_REFUSED);
}
