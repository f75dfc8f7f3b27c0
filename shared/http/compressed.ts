// Large public documents (/docs/, /v1/openapi.json: about 490 KB and 370 KB) compressed by the handler, so
// they are small in every setting: locally (the gateway passes the bytes through, as API Gateway does),
// straight from API Gateway (which never compresses an HTTP API's answers), and through CloudFront, whose
// cache policy for these paths forwards the normalized Accept-Encoding (infra/cloud/dashboard-site.ts).
// Each variant is computed once per text and container (about 40 ms for brotli at quality 6, 30 ms for gzip),
// then served as a base64 body: some 35 KB instead of half a megabyte, far under the 6 MB payload limit.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { header, requestId, type Result } from './respond';

export type Encoding = 'br' | 'gzip' | 'identity';

/**
 * The encoding to answer with: brotli, else gzip, when the client accepts it (a `q=0` refuses it; `*` accepts
 * anything not named), else none. Case-insensitive, as HTTP tokens are.
 */
export function chooseEncoding(acceptEncoding: string | undefined): Encoding {
  const q = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [token, ...params] = part.trim().toLowerCase().split(';');
    if (!token) continue;
    const weight = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const value = weight === undefined ? 1 : Number(weight.slice(2));
    q.set(token, Number.isFinite(value) ? value : 0);
  }
  const accepts = (name: string) => (q.get(name) ?? q.get('*') ?? 0) > 0;
  if (accepts('br')) return 'br';
  if (accepts('gzip')) return 'gzip';
  return 'identity';
}

/** Bodies smaller than this are sent as they are: compressing them saves less than it costs. */
export const MIN_COMPRESSED_BYTES = 1024;

/**
 * A responder for one text (computed once): 200 with the text in the encoding the request accepts,
 * `Content-Encoding` when it is compressed, and `Vary: Accept-Encoding` always (a cache must not hand a
 * compressed copy to a client that did not ask for one).
 */
export function compressedText(text: string, headers: Record<string, string>): (event: APIGatewayProxyEventV2) => Result {
  const identity = Buffer.from(text, 'utf8');
  const variants = new Map<Exclude<Encoding, 'identity'>, string>();
  const encoded = (encoding: Exclude<Encoding, 'identity'>): string => {
    let body = variants.get(encoding);
    if (body === undefined) {
      const bytes =
        encoding === 'br'
          ? brotliCompressSync(identity, {
              params: {
                [constants.BROTLI_PARAM_QUALITY]: 6,
                [constants.BROTLI_PARAM_SIZE_HINT]: identity.length,
                [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
              },
            })
          : gzipSync(identity, { level: 6 });
      body = bytes.toString('base64');
      variants.set(encoding, body);
    }
    return body;
  };
  return (event) => {
    const base = { ...headers, Vary: 'Accept-Encoding', 'X-Request-Id': requestId(event) };
    const encoding = identity.length < MIN_COMPRESSED_BYTES ? 'identity' : chooseEncoding(header(event, 'accept-encoding'));
    if (encoding === 'identity') return { statusCode: 200, headers: base, body: text };
    return { statusCode: 200, headers: { ...base, 'Content-Encoding': encoding }, body: encoded(encoding), isBase64Encoded: true };
  };
}
