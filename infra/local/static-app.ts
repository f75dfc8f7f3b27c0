// The dashboard's static files under `npm start` (in AWS CloudFront serves them from S3 on the same
// origin): GET/HEAD /app/... from web/dist, any path without a file extension answered with index.html
// (the single-page app routes it), hashed assets cached for a year, index.html never.
import { existsSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';

/** The dashboard's headers, the same as the stack's CloudFront response headers policy. */
export const APP_SECURITY_HEADERS: Record<string, string> = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; frame-ancestors 'none'; base-uri 'self'; form-action 'self'; object-src 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'same-origin',
  'x-frame-options': 'DENY',
};

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export const APP_PREFIX = '/app';

/** True when it answered the request (a path under /app). */
export function serveApp(dir: string, req: IncomingMessage, res: ServerResponse): boolean {
  const url = req.url ?? '/';
  const rawPath = url.split('?', 1)[0] ?? '/';
  // Only /app paths are this file's: anything else (even a path that does not decode) goes to the API.
  if (rawPath !== APP_PREFIX && !rawPath.startsWith(`${APP_PREFIX}/`)) return false;
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ detail: 'Malformed request path: it is not valid percent-encoded UTF-8.' }));
    return true;
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { allow: 'GET, HEAD', 'content-type': 'application/json' });
    res.end(JSON.stringify({ detail: `Method "${req.method}" not allowed.` }));
    return true;
  }
  if (path === APP_PREFIX) {
    res.writeHead(301, { location: `${APP_PREFIX}/` });
    res.end();
    return true;
  }
  const relative = normalize(path.slice(APP_PREFIX.length + 1));
  const index = join(dir, 'index.html');
  if (!existsSync(index)) {
    res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('The dashboard is not built: npm start builds it (npx tsx web/build.ts does it by hand).\n');
    return true;
  }
  let file = join(dir, relative);
  if (relative.startsWith('..') || !file.startsWith(dir + sep) || relative === '.' || relative === '') file = index;
  const ext = extname(file);
  if (!existsSync(file) || !statSync(file).isFile()) {
    if (ext !== '') {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('Not found\n');
      return true;
    }
    file = index;
  }
  const body = readFileSync(file);
  const immutable = file.includes(`${sep}assets${sep}`);
  res.writeHead(200, {
    'content-type': TYPES[extname(file)] ?? 'application/octet-stream',
    'content-length': String(body.length),
    'cache-control': immutable ? 'public, max-age=31536000, immutable' : 'no-cache',
    ...APP_SECURITY_HEADERS,
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}
