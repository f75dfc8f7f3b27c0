// The dashboard's API client: same origin, the session cookie authenticates every call. A 401 anywhere
// means the session is gone: the browser goes to the login page, which brings it back to where it was.
// The member portal never loads this module (its own client is portal/api.ts).
import createClient, { type Middleware } from 'openapi-fetch';
import type { ApiPaths } from '../api/client';

export const api = createClient<ApiPaths>({ baseUrl: '', credentials: 'same-origin' });

export const LOGIN_PATH = '/app/login';

/** Only a path of the app itself is followed after login (never another origin: `//evil.example`). */
export function safeNext(next: string | null | undefined): string {
  if (!next?.startsWith('/app') || next.startsWith('//') || next.includes('\\')) return '/app/';
  if (next === LOGIN_PATH || next.startsWith(`${LOGIN_PATH}?`) || next.startsWith(`${LOGIN_PATH}/`)) return '/app/';
  return next;
}

export function loginUrl(next: string = location.pathname + location.search): string {
  const target = safeNext(next);
  return target === '/app/' ? LOGIN_PATH : `${LOGIN_PATH}?next=${encodeURIComponent(target)}`;
}

const onLoginPage = () => location.pathname === LOGIN_PATH || location.pathname.startsWith(`${LOGIN_PATH}/`);

const redirectOnUnauthorized: Middleware = {
  onResponse({ response }) {
    if (response.status === 401 && !onLoginPage()) location.assign(loginUrl());
    return undefined;
  },
};
api.use(redirectOnUnauthorized);
