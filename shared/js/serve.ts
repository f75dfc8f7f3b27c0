// Serving the browser script: the text, its gzip and its ETag are computed once per container.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { header } from '../http/body';
import { requestId, type Result } from '../http/respond';
import { REFLOOP_SCRIPT } from './script';

const source = Buffer.from(REFLOOP_SCRIPT, 'utf8');
const gzipped = gzipSync(source, { level: 9 });
const etag = `"${createHash('sha256').update(source).digest('base64url').slice(0, 27)}"`;

export function scriptResponse(event: APIGatewayProxyEventV2): Result {
  const headers: Record<string, string> = {
    'Content-Type': 'text/javascript; charset=utf-8',
    // An hour in browsers and CDNs: a fix reaches every site within the hour, and the ETag makes revalidation cheap.
    'Cache-Control': 'public, max-age=3600',
    ETag: etag,
    Vary: 'Accept-Encoding',
    'X-Request-Id': requestId(event),
  };
  if ((header(event, 'if-none-match') ?? '').split(',').some((t) => t.trim() === etag)) {
    return { statusCode: 304, headers, body: '' };
  }
  if (/\bgzip\b/i.test(header(event, 'accept-encoding') ?? '')) {
    return { statusCode: 200, headers: { ...headers, 'Content-Encoding': 'gzip' }, body: gzipped.toString('base64'), isBase64Encoded: true };
  }
  return { statusCode: 200, headers, body: source.toString('utf8') };
}
