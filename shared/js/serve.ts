// Serving the browser scripts (/js/refloop.js, /js/refloop-embed.js): the text, its gzip and its ETag are
// computed once per container.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { header } from '../http/body';
import { requestId, type Result } from '../http/respond';

/** A handler body answering GET for one script, with 304s and gzip. */
export function scriptResponder(text: string): (event: APIGatewayProxyEventV2) => Result {
  const source = Buffer.from(text, 'utf8');
  const gzipped = gzipSync(source, { level: 9 });
  const etag = `"${createHash('sha256').update(source).digest('base64url').slice(0, 27)}"`;
  return (event) => {
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
      return {
        statusCode: 200,
        headers: { ...headers, 'Content-Encoding': 'gzip' },
        body: gzipped.toString('base64'),
        isBase64Encoded: true,
      };
    }
    return { statusCode: 200, headers, body: source.toString('utf8') };
  };
}
