// Issue 23 item 4: /docs/ (about 490 KB) and /v1/openapi.json (about 370 KB) are compressed by their handlers
// when the client accepts it (brotli, else gzip), locally through the gateway's socket as in AWS; /docs/ has
// a Content-Security-Policy that allows only its own inline style, and nosniff.
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { dispatch, startGateway, type Gateway } from '../../infra/local/gateway';
import { api } from '../support/api';

/** A raw GET over the socket: the bytes as sent, no decoding by the client. */
function rawGet(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((ok, fail) => {
    const req = request(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => ok({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', fail);
    });
    req.on('error', fail);
    req.end();
  });
}

const decode = (encoding: string | undefined, body: Buffer) =>
  (encoding === 'br' ? brotliDecompressSync(body) : encoding === 'gzip' ? gunzipSync(body) : body).toString('utf8');

describe.each([
  ['/docs/', 'text/html; charset=utf-8', 300_000],
  ['/v1/openapi.json', 'application/json', 200_000],
])('%s', (path, contentType, bigger) => {
  let gateway: Gateway;
  beforeAll(async () => {
    gateway = await startGateway({ port: 0, webDir: '/nonexistent' });
  });
  afterAll(async () => {
    await gateway.close();
  });

  it('over the local gateway: brotli when accepted, else gzip, else plain; Vary: Accept-Encoding; the same document each way', async () => {
    const plain = await rawGet(`${gateway.url}${path}`, {});
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers['content-type']).toBe(contentType);
    expect(plain.headers.vary).toBe('Accept-Encoding');
    expect(plain.body.length).toBeGreaterThan(bigger);
    const text = plain.body.toString('utf8');

    for (const [accept, encoding] of [
      ['gzip, deflate, br, zstd', 'br'],
      ['br;q=0, gzip', 'gzip'],
      ['GZIP', 'gzip'],
      ['*', 'br'],
      ['identity', undefined],
      ['gzip;q=0, br;q=0', undefined],
    ] as const) {
      const res = await rawGet(`${gateway.url}${path}`, { 'accept-encoding': accept });
      expect({ accept, status: res.status, encoding: res.headers['content-encoding'], vary: res.headers.vary }).toEqual({
        accept,
        status: 200,
        encoding,
        vary: 'Accept-Encoding',
      });
      if (encoding) expect(res.body.length).toBeLessThan(plain.body.length / 8);
      expect(decode(encoding, res.body)).toBe(text);
      expect(res.headers['content-length']).toBe(String(res.body.length));
    }
  });

  it('in the API Gateway shape: a base64 body with Content-Encoding, far under the 6 MB payload limit', async () => {
    const res = await dispatch({
      method: 'GET',
      rawPath: path,
      rawQueryString: '',
      headers: { host: 'api.test', 'accept-encoding': 'gzip' },
    });
    expect(res.statusCode).toBe(200);
    expect(res.isBase64Encoded).toBe(true);
    expect(res.headers['content-encoding'] ?? res.headers['Content-Encoding']).toBe('gzip');
    expect(res.body.length).toBeLessThan(100_000);
    expect(gunzipSync(Buffer.from(res.body, 'base64')).length).toBeGreaterThan(bigger);
  });
});

it('/docs/ has a CSP allowing only its own inline style (by hash), nosniff, and no framing', async () => {
  const res = await api('GET', '/docs/');
  expect(res.status).toBe(200);
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  const csp = res.headers['content-security-policy'] as string;
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).not.toContain('unsafe-inline');
  const styles = [...res.text.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((m) => m[1] as string);
  expect(styles.length).toBeGreaterThan(0);
  for (const style of styles) expect(csp).toContain(`'sha256-${createHash('sha256').update(style, 'utf8').digest('base64')}'`);
  // Nothing else to allow: no script, no external resource.
  expect(res.text).not.toMatch(/<script|<link|<img|<iframe| style=/i);
  expect((await api('GET', '/v1/openapi.json')).headers['x-content-type-options']).toBe('nosniff');
});
