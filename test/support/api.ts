// In-process HTTP client for integration tests: requests go through the local gateway's dispatch, no sockets.
import './local-guard';
import { dispatch } from '../../infra/local/gateway';

export interface ApiOptions {
  /** Sent as `Authorization: Bearer <key>`; null or absent sends no Authorization header. */
  key?: string | null;
  /** Serialised as JSON with `content-type: application/json`. */
  body?: unknown;
  /** Sent as is, without a content type unless `headers` gives one. */
  rawBody?: string | Buffer;
  headers?: Record<string, string>;
  /** The caller's IP as API Gateway reports it (requestContext.http.sourceIp); default 127.0.0.1. */
  sourceIp?: string;
}

export interface ApiResponse {
  status: number;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON; null for an empty body or one that is not JSON (see `text`). `any` so tests can index freely. */
  body: any;
  text: string;
  /** The `Set-Cookie` values (API Gateway's `cookies`: the session cookie of POST /auth/sessions/, say). */
  cookies: string[];
}

export async function api(method: string, path: string, options: ApiOptions = {}): Promise<ApiResponse> {
  const q = path.indexOf('?');
  const headers: Record<string, string> = {
    host: 'api.test',
    'x-forwarded-proto': 'https',
    'user-agent': 'refloop-tests',
  };
  let body: Buffer | undefined;
  if (options.body !== undefined) {
    body = Buffer.from(JSON.stringify(options.body), 'utf8');
    headers['content-type'] = 'application/json';
  } else if (options.rawBody !== undefined) {
    body = Buffer.isBuffer(options.rawBody) ? options.rawBody : Buffer.from(options.rawBody, 'utf8');
  }
  if (body !== undefined) headers['content-length'] = String(body.length);
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  for (const [name, value] of Object.entries(options.headers ?? {})) headers[name.toLowerCase()] = value;

  const res = await dispatch({
    method,
    rawPath: q === -1 ? path : path.slice(0, q),
    rawQueryString: q === -1 ? '' : path.slice(q + 1),
    headers,
    body,
    ...(options.sourceIp ? { sourceIp: options.sourceIp } : {}),
  });
  const text = res.isBase64Encoded ? Buffer.from(res.body, 'base64').toString('utf8') : res.body;
  let parsed: unknown = null;
  if (text !== '') {
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = null;
    }
  }
  return { status: res.statusCode, headers: res.headers, body: parsed, text, cookies: res.cookies };
}
