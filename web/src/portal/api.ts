// The portal's API client and its session. The link's single-use token (`rpl_…`, from the URL fragment) is
// traded for a session token (`rps_…`, 60 minutes) at POST /portal/v1/sessions/; every other call carries
// that token as `Authorization: Bearer`. The token lives in this module and in sessionStorage under the
// account's key (a reload of a standalone tab keeps working until the session ends); never in the URL.
//
// This is its own openapi-fetch client: the dashboard's (dashboard/api.ts) sends a 401 to the operators' login
// page; here a 401 means the portal session is over, and the page says so (onSessionEnded).
import createClient from 'openapi-fetch';
import { ApiError, problemOf, toProblem, unwrap, type Problem } from '../api/client';
import type { components, paths } from '../api/schema';

type Schemas = components['schemas'];
export type Me = Schemas['PortalMe'];
export type Stats = Schemas['PortalStats'];
export type Referral = Schemas['PortalReferral'];
export type Reward = Schemas['PortalReward'];
export type Payout = Schemas['PortalPayout'];
export interface ListPage<T> {
  count: number;
  next: string | null;
  results: T[];
}
export type { Problem };
export { toProblem };

// Same origin; the dashboard's cookie is of no use here and is not sent.
const client = createClient<paths>({ baseUrl: '', credentials: 'omit' });
// An affiliate's session is the `refloop_portal` cookie (HttpOnly, Path=/portal/): sent with same-origin calls.
const cookieClient = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });

/** True once this page runs on the affiliate's cookie session (no bearer token): calls send the cookie. */
let cookieSession = false;
/** The cookie session answered once (its end is then announced like a bearer session's). */
let cookieConfirmed = false;
export const onCookieSession = () => cookieSession;

interface Stored {
  token: string;
  expires_at: number;
  /** The fragment's other parameters (host origin, theme), so a reload keeps them. */
  params: string;
}

let current: Stored | null = null;
const ended = new Set<(viaCookie: boolean) => void>();

/** The account's id from the page's path (`/portal/<account_id>/`): sessions are kept per account. */
function storageKey(): string {
  const match = /^\/portal\/([^/]+)\//.exec(location.pathname);
  return `refloop-portal:${match?.[1] ?? location.pathname}`;
}

// sessionStorage may be unavailable (a third-party frame with storage blocked): memory alone then.
function store(value: Stored | null): void {
  try {
    if (value) sessionStorage.setItem(storageKey(), JSON.stringify(value));
    else sessionStorage.removeItem(storageKey());
  } catch {
    // not stored
  }
}

const now = () => Math.floor(Date.now() / 1000);

/** The session this tab already opened (a reload), if it has not ended; its fragment parameters with it. */
export function restoreSession(): { params: string } | null {
  try {
    const raw = sessionStorage.getItem(storageKey());
    if (!raw) return null;
    const value = JSON.parse(raw) as Partial<Stored>;
    if (
      typeof value.token !== 'string' ||
      !value.token.startsWith('rps_') ||
      typeof value.expires_at !== 'number' ||
      value.expires_at <= now()
    ) {
      store(null);
      return null;
    }
    current = { token: value.token, expires_at: value.expires_at, params: typeof value.params === 'string' ? value.params : '' };
    return { params: current.params };
  } catch {
    return null;
  }
}

export function hasSession(): boolean {
  return cookieSession || (current !== null && current.expires_at > now());
}

/** Forgets the session (memory and storage): nothing of the member can be fetched any more. */
export function clearSession(): void {
  current = null;
  cookieSession = false;
  cookieConfirmed = false;
  store(null);
}

/** Uses the affiliate's cookie session, if the browser holds one (GET /portal/v1/me/ answers 401 otherwise). */
export async function openCookieSession(): Promise<Me> {
  current = null;
  cookieSession = true;
  cookieConfirmed = false;
  try {
    const me = await getMe();
    cookieConfirmed = true;
    return me;
  } catch (err) {
    cookieSession = false;
    throw err;
  }
}

/** Called when a request finds the session over (401): the page shows its expired state. */
export function onSessionEnded(listener: (viaCookie: boolean) => void): () => void {
  ended.add(listener);
  return () => ended.delete(listener);
}

/** Trades the link's token for a session; an ApiError (401: used, expired or unknown link) otherwise. */
export async function openSession(linkToken: string, params: string): Promise<void> {
  clearSession();
  const opened = await unwrap(client.POST('/portal/v1/sessions/', { body: { token: linkToken } }));
  current = { token: opened.token, expires_at: opened.expires_at, params };
  store(current);
}

/** What a call without a session fails with: the same as the API's 401. */
export const unauthenticated = () => new ApiError({ status: 401, fields: {}, message: 'The portal session has ended.' });

/**
 * One authenticated call. A 401 ends the session, but only when it answered the token that is still
 * current (a request of an older session, answered after a fresh one opened, changes nothing).
 */
async function call<T>(
  run: (
    headers: { Authorization: string } | Record<string, never>,
    api: typeof client,
  ) => Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  const session = current;
  const viaCookie = session === null && cookieSession;
  if (!session && !viaCookie) throw unauthenticated();
  try {
    return await unwrap(session ? run({ Authorization: `Bearer ${session.token}` }, client) : run({}, cookieClient));
  } catch (err) {
    if (err instanceof ApiError && err.problem.status === 401 && current === session && (session !== null || cookieConfirmed)) {
      clearSession();
      for (const listener of ended) listener(viaCookie);
    }
    throw err;
  }
}

/**
 * A call of an endpoint by path, with the session's credential (the bearer token or the cookie), for the
 * affiliate's endpoints: JSON in and out, an ApiError (the API's field errors) otherwise.
 */
async function request<T>(method: string, path: string, body?: unknown): Promise<T> {
  return call(async (headers) => {
    const response = await fetch(path, {
      method,
      credentials: cookieSession && !current ? 'same-origin' : 'omit',
      headers: { ...headers, ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), Accept: 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let parsed: unknown = null;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      parsed = text;
    }
    return response.ok ? { data: parsed as T, response } : { error: parsed, response };
  });
}

export const getMe = () => call((headers, api) => api.GET('/portal/v1/me/', { headers }));

/**
 * Whether the member has commission to be paid: their campaign pays commission, or they earned some
 * before (another campaign), or they already gave a payout email. A credit-only member (the campaign gives
 * credit on their own subscription, nothing is ever paid out) is asked for no payout email and has no payouts.
 */
export const collectsCommission = (me: Me): boolean =>
  me.campaign?.reward_type === 'commission' || me.member.payout_email !== null || Number(me.stats.commission_earned) > 0;

export type PayoutMethod = NonNullable<Me['member']['payout_method']>;

export const updateMe = (body: { payout_email?: string | null; payout_method?: PayoutMethod | null; email_opt_out: boolean }) =>
  call((headers, api) => api.PATCH('/portal/v1/me/', { headers, body }));

/** "Set up payouts" for Stripe: the member's onboarding link (Stripe becomes their payout method). */
export const stripeAccountLink = () => request<{ url: string; expires_at: number }>('POST', '/portal/v1/me/stripe-account-link/');

export const getStats = (sub?: string | null) =>
  request<Stats>('GET', `/portal/v1/stats/?interval=month${sub ? `&sub=${encodeURIComponent(sub)}` : ''}`);

/**
 * A list's `next` link as the query of the same call. The link is absolute; only its cursor and page
 * size are taken, and the call goes to this origin's path: the bearer token is never sent anywhere else.
 */
export function pageQuery(next: string | null | undefined): { cursor?: string; page_size?: number } {
  if (!next) return {};
  try {
    const params = new URL(next, location.origin).searchParams;
    const cursor = params.get('cursor');
    const size = Number(params.get('page_size'));
    return { ...(cursor ? { cursor } : {}), ...(Number.isInteger(size) && size > 0 ? { page_size: size } : {}) };
  } catch {
    return {};
  }
}

export const listReferrals = (next?: string | null): Promise<ListPage<Referral>> =>
  call((headers, api) => api.GET('/portal/v1/referrals/', { headers, params: { query: pageQuery(next) } }));

export const listRewards = (next?: string | null): Promise<ListPage<Reward>> =>
  call((headers, api) => api.GET('/portal/v1/rewards/', { headers, params: { query: pageQuery(next) } }));

export const listPayouts = (next?: string | null): Promise<ListPage<Payout>> =>
  call((headers, api) => api.GET('/portal/v1/payouts/', { headers, params: { query: pageQuery(next) } }));

/** A short, stable code for an error the host is told about (`{type: 'error', code}`). */
export function errorCode(problem: Problem): string {
  if (problem.status === 0) return 'network_error';
  if (problem.status === 429) return 'rate_limited';
  if (problem.status >= 500) return 'server_error';
  return `http_${problem.status}`;
}

// ---- the affiliate's login, links and tax details -----------------------------------------------------

/** Where the email's link is sent: always "accepted", whoever the address is. */
export async function requestLoginLink(account: string, email: string): Promise<string> {
  const response = await fetch('/portal/v1/login-links/', {
    method: 'POST',
    credentials: 'omit',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ account, email }),
  }).catch(() => null);
  if (!response) throw new ApiError(toProblem(null));
  const body = (await response.json().catch(() => null)) as { detail?: string } | null;
  if (!response.ok) throw new ApiError(problemOf(body, response.status));
  return body?.detail ?? 'Check your email.';
}

/** Trades the emailed link's token for the cookie session; answers the portal's name in the path. */
export async function openLoginSession(token: string): Promise<string> {
  const response = await fetch('/portal/v1/login-sessions/', {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({ token }),
  }).catch(() => null);
  if (!response) throw new ApiError(toProblem(null));
  const body = (await response.json().catch(() => null)) as { portal?: string } | null;
  if (!response.ok) throw new ApiError(problemOf(body, response.status));
  return body?.portal ?? '';
}

/** Logs out of the cookie session (204 also when it had ended). */
export async function logOut(): Promise<void> {
  await fetch('/portal/v1/sessions/current/', { method: 'DELETE', credentials: 'same-origin' }).catch(() => null);
  clearSession();
}

export interface MemberLink {
  slug: string;
  destination_path: string | null;
  url: string | null;
  created_at: number;
}

export const listLinks = (next?: string | null) => {
  const q = new URLSearchParams(pageQuery(next) as Record<string, string>).toString();
  return request<ListPage<MemberLink>>('GET', `/portal/v1/links/${q ? `?${q}` : ''}`);
};
export const createLink = (body: { slug?: string; destination_path?: string }) => request<MemberLink>('POST', '/portal/v1/links/', body);
export const deleteLink = (slug: string) => request<null>('DELETE', `/portal/v1/links/${encodeURIComponent(slug)}/`);

export interface TaxDetails {
  required: boolean;
  provided: boolean;
  form: 'w9' | 'w8ben' | null;
  legal_name: string | null;
  country: string | null;
  address: string | null;
  tin: string | null;
  updated_at: number | null;
}
export const getTaxDetails = () => request<TaxDetails>('GET', '/portal/v1/tax-details/');
export const putTaxDetails = (body: unknown) => request<TaxDetails>('PUT', '/portal/v1/tax-details/', body);
