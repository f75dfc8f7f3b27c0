// What every client of the API shares, whatever its audience: the generated types, how an error body
// becomes a Problem the forms show, unwrap, idempotency keys and cursors. No client instance lives here:
// the dashboard's (dashboard/api.ts: the session cookie, a 401 goes to its login page) and the portal's
// (portal/api.ts: a bearer token, a 401 ends the portal session) each make their own.
import type { components, paths } from './schema';

export type ApiPaths = paths;
export type Schemas = components['schemas'];

/** What went wrong, in the shape the forms show: messages per field, and one for the whole request. */
export interface Problem {
  status: number;
  fields: Record<string, string[]>;
  message: string | null;
}

function messages(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(messages);
  if (value !== null && typeof value === 'object') {
    // Nested errors (e.g. `{"campaign": {"id": ["..."]}}`) are shown on their top-level field.
    return Object.values(value).flatMap(messages);
  }
  return [];
}

const GENERIC: Record<number, string> = {
  0: 'The server could not be reached. Check your connection and try again.',
  403: 'You do not have permission to perform this action.',
  404: 'Not found.',
  429: 'Too many requests; wait a moment and try again.',
  500: 'Something went wrong on our side. Try again in a moment.',
  503: 'The service is busy or a dependency is down; nothing was changed. Try again shortly.',
};

/**
 * An error body as field errors plus one message: `{"detail": "..."}`, or `{"field": ["msg"]}` with
 * `non_field_errors` for the whole body (Django REST Framework's style, docs/design/api-contract.md).
 */
export function problemOf(body: unknown, status: number): Problem {
  const fields: Record<string, string[]> = {};
  const top: string[] = [];
  if (body !== null && typeof body === 'object' && !Array.isArray(body)) {
    for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
      if (key === 'detail') top.push(...messages(value));
      else if (key === 'request_id') continue;
      else if (key === 'non_field_errors') top.push(...messages(value));
      else {
        const list = messages(value);
        if (list.length > 0) fields[key] = list;
      }
    }
    const requestId = (body as { request_id?: unknown }).request_id;
    if (typeof requestId === 'string' && top.length > 0) top.push(`(request ${requestId})`);
  } else if (typeof body === 'string' && body.trim() !== '') {
    top.push(body.trim());
  }
  let message = top.length > 0 ? top.join(' ') : null;
  if (message === null && Object.keys(fields).length === 0) {
    message = GENERIC[status] ?? (status >= 500 ? (GENERIC[500] as string) : `The request failed (HTTP ${status}).`);
  }
  return { status, fields, message };
}

export class ApiError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message ?? Object.values(problem.fields).flat().join(' '));
    this.name = 'ApiError';
  }
}

/** Any thrown value (network failure, ApiError) as a Problem. */
export function toProblem(err: unknown): Problem {
  if (err instanceof ApiError) return err.problem;
  return { status: 0, fields: {}, message: GENERIC[0] as string };
}

/** One call's result: its data, or an ApiError carrying the parsed error body. */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch {
    throw new ApiError(toProblem(null));
  }
  const { data, error, response } = result;
  if (!response.ok) throw new ApiError(problemOf(error, response.status));
  return data as T;
}

/** A fresh key per user action, so a retried money call (network blip) is not applied twice. */
export function idempotencyKey(): string {
  if (typeof crypto !== 'undefined' && typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  return `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}${Math.random().toString(36).slice(2)}`;
}

export interface Page<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

/** The `cursor` of a `next`/`previous` URL; null when the link is the first page (no cursor) or absent. */
export function cursorOf(link: string | null): string | null {
  if (!link) return null;
  try {
    return new URL(link, location.origin).searchParams.get('cursor');
  } catch {
    return null;
  }
}
