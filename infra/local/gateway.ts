// Local API Gateway (HTTP API, payload v2.0): routes a request by functions/routes.ts and calls the Lambda handler.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { fallbackRoute, findRoute } from '../../functions/routes';
import { resetConfig } from '../../shared/config';
import { errorFields, log } from '../../shared/log';
import { serveApp } from './static-app';

export interface GatewayRequest {
  method: string;
  rawPath: string;
  rawQueryString: string;
  headers: Record<string, string>;
  body?: Buffer;
  sourceIp?: string;
}

export interface GatewayResponse {
  statusCode: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Base64 when `isBase64Encoded`, otherwise the text as the handler returned it. */
  body: string;
  isBase64Encoded: boolean;
  /** Each becomes one `Set-Cookie` header. */
  cookies: string[];
}

type LambdaHandler = (event: APIGatewayProxyEventV2, context: Context) => Promise<unknown> | unknown;

const REPO_ROOT = join(__dirname, '..', '..');
// API Gateway's own integration timeout; Lambda handlers see the same budget through the context.
const TIMEOUT_MS = 29_000;
const MAX_BODY_BYTES = 10 * 1024 * 1024;
const INTERNAL_ERROR = JSON.stringify({ detail: 'Internal server error.' });

const modules = new Map<string, LambdaHandler>();

/** Loads a handler on first use; a module that fails to load is retried on the next request. */
function loadHandler(entry: string): LambdaHandler {
  let handler = modules.get(entry);
  if (!handler) {
    // `require` (not import()) so the same code runs under tsx and under ts-jest's module registry.
    const mod = require(join(REPO_ROOT, entry)) as { handler?: unknown };
    if (typeof mod.handler !== 'function') throw new Error(`${entry} does not export a handler function`);
    handler = mod.handler as LambdaHandler;
    modules.set(entry, handler);
  }
  return handler;
}

function lowerCaseHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const key = name.toLowerCase();
    out[key] = out[key] === undefined ? value : `${out[key]},${value}`;
  }
  return out;
}

function queryParameters(rawQueryString: string): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    out[name] = out[name] === undefined ? value : `${out[name]},${value}`;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/**
 * The body as API Gateway hands it over: the bytes unchanged. `ignoreBOM` keeps a leading UTF-8 byte-order
 * mark in the text (TextDecoder drops it by default, which made a body AWS refuses pass locally).
 */
export function encodeBody(body: Buffer | undefined): { body?: string; isBase64Encoded: boolean } {
  if (!body || body.length === 0) return { isBase64Encoded: false };
  try {
    return { body: new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(body), isBase64Encoded: false };
  } catch {
    return { body: body.toString('base64'), isBase64Encoded: true };
  }
}

/** `12/Mar/2020:19:03:58 +0000`, the format of requestContext.time. */
function apiGatewayTime(date: Date): string {
  const [, day, month, year, time] = date.toUTCString().split(' ');
  return `${day}/${month}/${year}:${time} +0000`;
}

function buildEvent(
  req: GatewayRequest,
  routeKey: string,
  pathParameters: Record<string, string>,
  requestId: string,
  now: Date,
): APIGatewayProxyEventV2 {
  const headers = lowerCaseHeaders(req.headers);
  // Payload v2 moves cookies out of the headers into their own array.
  const cookies = headers.cookie?.split(/;\s*|,/).filter((c) => c.length > 0);
  delete headers.cookie;
  const domainName = headers.host ?? 'localhost';
  const query = queryParameters(req.rawQueryString);
  return {
    version: '2.0',
    routeKey,
    rawPath: req.rawPath,
    rawQueryString: req.rawQueryString,
    ...(cookies && cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(query ? { queryStringParameters: query } : {}),
    ...(Object.keys(pathParameters).length > 0 ? { pathParameters } : {}),
    ...encodeBody(req.body),
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName,
      domainPrefix: domainName.split('.')[0] ?? domainName,
      http: {
        method: req.method.toUpperCase(),
        path: req.rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: req.sourceIp ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId,
      routeKey,
      stage: '$default',
      time: apiGatewayTime(now),
      timeEpoch: now.getTime(),
    },
  };
}

function buildContext(functionName: string, requestId: string, startedAt: number): Context {
  const unsupported = () => {
    throw new Error('Use the handler result, not context.done/fail/succeed');
  };
  return {
    callbackWaitsForEmptyEventLoop: true,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: requestId,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'local',
    getRemainingTimeInMillis: () => Math.max(0, TIMEOUT_MS - (Date.now() - startedAt)),
    done: unsupported,
    fail: unsupported,
    succeed: unsupported,
  };
}

/** API Gateway's reading of a handler result (payload v2.0): anything without a statusCode is a 200 JSON body. */
function normaliseResult(result: unknown, requestId: string): GatewayResponse {
  const base = { 'apigw-requestid': requestId };
  if (typeof result === 'object' && result !== null && typeof (result as { statusCode?: unknown }).statusCode === 'number') {
    const r = result as APIGatewayProxyStructuredResultV2;
    const headers: Record<string, string> = { ...base };
    for (const [name, value] of Object.entries(r.headers ?? {})) headers[name.toLowerCase()] = String(value);
    return {
      statusCode: r.statusCode as number,
      headers,
      body: r.body ?? '',
      isBase64Encoded: r.isBase64Encoded === true,
      cookies: r.cookies ?? [],
    };
  }
  const body = typeof result === 'string' ? result : (JSON.stringify(result) ?? '');
  return { statusCode: 200, headers: { ...base, 'content-type': 'application/json' }, body, isBase64Encoded: false, cookies: [] };
}

/** Routes one request to its handler (or the `$default` fallback) exactly as API Gateway would invoke it. */
export async function dispatch(req: GatewayRequest): Promise<GatewayResponse> {
  const requestId = randomUUID();
  const now = new Date();
  const match = findRoute(req.method, req.rawPath);
  const [name, entry, routeKey, params] =
    match && 'route' in match
      ? [match.route.name, match.route.entry, `${match.route.method} ${match.route.path}`, match.pathParameters]
      : [fallbackRoute.name, fallbackRoute.entry, '$default', {}];
  try {
    const handler = loadHandler(entry);
    const event = buildEvent(req, routeKey, params, requestId, now);
    return normaliseResult(await handler(event, buildContext(name, requestId, now.getTime())), requestId);
  } catch (err) {
    log('error', `gateway: ${name} (${entry}) failed for ${req.method} ${req.rawPath}`, {
      request_id: requestId,
      ...errorFields(err, true),
    });
    return {
      statusCode: 500,
      headers: { 'apigw-requestid': requestId, 'content-type': 'application/json' },
      body: INTERNAL_ERROR,
      isBase64Encoded: false,
      cookies: [],
    };
  }
}

class BodyTooLargeError extends Error {}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((ok, fail) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        fail(new BodyTooLargeError());
        req.pause();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => ok(Buffer.concat(chunks)));
    req.on('error', fail);
  });
}

function send(res: ServerResponse, out: GatewayResponse): void {
  const body = Buffer.from(out.body, out.isBase64Encoded ? 'base64' : 'utf8');
  res.writeHead(out.statusCode, {
    ...out.headers,
    ...(out.cookies.length > 0 ? { 'set-cookie': out.cookies } : {}),
    'content-length': String(body.length),
  });
  res.end(body);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const started = performance.now();
  const url = req.url ?? '/';
  const q = url.indexOf('?');
  const headers: Record<string, string> = {};
  for (const [name, values] of Object.entries(req.headersDistinct)) {
    if (values) headers[name] = values.join(',');
  }
  // API Gateway sets these; handlers build absolute pagination links from the scheme.
  const sourceIp = req.socket.remoteAddress?.replace(/^::ffff:/, '') ?? '127.0.0.1';
  headers['x-forwarded-for'] = headers['x-forwarded-for'] ? `${headers['x-forwarded-for']}, ${sourceIp}` : sourceIp;
  headers['x-forwarded-port'] = String(req.socket.localPort ?? '');
  headers['x-forwarded-proto'] = 'http';
  let body: Buffer;
  try {
    body = await readBody(req);
  } catch (err) {
    const tooLarge = err instanceof BodyTooLargeError;
    send(res, {
      statusCode: tooLarge ? 413 : 400,
      headers: { 'content-type': 'application/json', connection: 'close' },
      body: JSON.stringify({ message: tooLarge ? 'Request Entity Too Large' : 'Bad Request' }),
      isBase64Encoded: false,
      cookies: [],
    });
    logRequest(req.method ?? 'GET', url, tooLarge ? 413 : 400, started);
    return;
  }
  const out = await dispatch({
    method: req.method ?? 'GET',
    rawPath: q === -1 ? url : url.slice(0, q),
    rawQueryString: q === -1 ? '' : url.slice(q + 1),
    headers,
    body,
    sourceIp,
  });
  send(res, out);
  logRequest(req.method ?? 'GET', url, out.statusCode, started, out.headers['x-request-id'] ?? out.headers['apigw-requestid']);
}

/** One line per request served (API Gateway's access log stands in for it in AWS). */
function logRequest(method: string, url: string, status: number, started: number, requestId?: string): void {
  const path = url.split('?', 1)[0] ?? url;
  const ms = Math.round(performance.now() - started);
  log(status >= 500 ? 'error' : 'info', `${method} ${path} ${status} ${ms} ms`, { request_id: requestId });
}

export interface Gateway {
  url: string;
  close(): Promise<void>;
}

/** The built dashboard (web/dist), served under /app/ when it exists. */
export const WEB_DIST = join(REPO_ROOT, 'web', 'dist');

/**
 * `publicBaseUrl`: the site's origin as the handlers see it (PUBLIC_BASE_URL), by default this gateway's
 * own URL, the configured port. Like the stack in AWS, the gateway hands it to the handlers: links and the
 * CSRF check are built from it, never from a request's Host header (docs/dashboard.md). It is restored on close.
 */
export function startGateway({
  port,
  host = '127.0.0.1',
  webDir = WEB_DIST,
  publicBaseUrl,
}: {
  port: number;
  host?: string;
  webDir?: string;
  publicBaseUrl?: string;
}): Promise<Gateway> {
  // Nothing a request does may take the process down (DynamoDB Local, the queues and the pollers live in
  // it): a throw, synchronous or not, is logged and answered 500 in the contract's JSON shape.
  const failed = (res: ServerResponse, err: unknown) => {
    log('error', 'gateway: failed to answer', errorFields(err, true));
    if (res.headersSent) {
      res.destroy();
      return;
    }
    res.writeHead(500, { 'content-type': 'application/json' });
    res.end(INTERNAL_ERROR);
  };
  const server = createServer((req, res) => {
    try {
      if (serveApp(webDir, req, res)) return;
      handle(req, res).catch((err: unknown) => failed(res, err));
    } catch (err) {
      failed(res, err);
    }
  });
  // A client that sends garbage before any request line: answered 400 by Node, never a crash.
  server.on('clientError', (_err, socket) => {
    if (socket.writable)
      socket.end('HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n{"detail":"Bad request."}');
    else socket.destroy();
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => {
      server.off('error', fail);
      const address = server.address();
      const actualPort = typeof address === 'object' && address ? address.port : port;
      const shownHost = host.includes(':') ? `[${host}]` : host;
      const url = `http://${shownHost}:${actualPort}`;
      const previousBase = process.env.PUBLIC_BASE_URL;
      process.env.PUBLIC_BASE_URL = publicBaseUrl || url;
      resetConfig();
      ok({
        url,
        close: () =>
          new Promise<void>((done, failClose) => {
            if (previousBase === undefined) delete process.env.PUBLIC_BASE_URL;
            else process.env.PUBLIC_BASE_URL = previousBase;
            resetConfig();
            server.close((err) => (err ? failClose(err) : done()));
            // Keep-alive sockets (fetch keeps them) would otherwise hold close() open.
            server.closeAllConnections();
          }),
      });
    });
  });
}
