// The dashboard's people (docs/dashboard.md "Roles"): roles, what each may do, and the
// single-use login tokens and session tokens, which are stored only as SHA-256 digests like API keys.
import { createHash, randomBytes } from 'node:crypto';

export const ROLES = ['owner', 'admin', 'finance', 'viewer'] as const;
export type Role = (typeof ROLES)[number];
export const isRole = (value: unknown): value is Role => (ROLES as readonly unknown[]).includes(value);

/**
 * What a request needs, declared by each handler (shared/http/handler.ts):
 * - `read`: any role (every GET);
 * - `write`: owner and admin (every other /v1/ write, the default for unsafe methods);
 * - `money`: owner, admin and finance (approve and void rewards, payouts and payout batches);
 * - `owner`: the team and the API keys.
 */
export type Access = 'read' | 'write' | 'money' | 'owner';

const ALLOWED: Record<Access, readonly Role[]> = {
  read: ROLES,
  write: ['owner', 'admin'],
  money: ['owner', 'admin', 'finance'],
  owner: ['owner'],
};

export const roleMay = (role: Role, access: Access): boolean => ALLOWED[access].includes(role);

export const PERMISSION_DENIED = 'You do not have permission to perform this action.';
export const CROSS_SITE_REFUSED = 'Cross-site request refused: the Origin header does not match this site.';
export const SESSION_ONLY = 'API keys cannot manage the team, API keys, the provider connection or the payout rails; use the dashboard.';

export const SESSION_COOKIE = 'refloop_session';
/** A session lives 12 hours after its last use (sliding). */
export const SESSION_SECONDS = 12 * 3600;
/**
 * However much it is used, a session ends 7 days after its login (then a new link): a stolen cookie does
 * not live forever, and the member's session refs (which a removal or a role change goes through) expire
 * by TTL only after every session they name.
 */
export const SESSION_MAX_SECONDS = 7 * 24 * 3600;
/** The sliding expiry is written at most once per this many seconds of use (not on every request). */
export const SESSION_SLIDE_SECONDS = 300;
/** A login link opens a session within 15 minutes, once. */
export const LOGIN_LINK_SECONDS = 15 * 60;
/** Members of one account's team (a bound on the list, which has no counter). */
export const MAX_TEAM = 100;

export const newToken = (): string => randomBytes(32).toString('base64url');
export const tokenHash = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');
/** A token of newToken's shape; anything else is refused before a read. */
export const looksLikeToken = (token: unknown): token is string => typeof token === 'string' && /^[A-Za-z0-9_-]{43}$/.test(token);

export const normalEmail = (email: string): string => email.trim().toLowerCase();
export const emailHash = (email: string): string => createHash('sha256').update(normalEmail(email), 'utf8').digest('hex');

/** The dashboard URL a login link opens: the token in the fragment, so it reaches no server log or Referer. */
export const loginUrl = (baseUrl: string, token: string): string => `${baseUrl}/app/login#token=${token}`;

/** `Set-Cookie` for a new session: HttpOnly, SameSite=Strict, Secure except on loopback http. */
export function sessionCookie(token: string, baseUrl: string): string {
  const secure = !/^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(baseUrl);
  return `${SESSION_COOKIE}=${token}; Path=/; HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function clearedSessionCookie(baseUrl: string): string {
  const secure = !/^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(baseUrl);
  return `${SESSION_COOKIE}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? '; Secure' : ''}`;
}

/** The session token of a Cookie header, or null. */
export function sessionFromCookies(cookieHeader: string | undefined, cookies: readonly string[] = []): string | null {
  const parts = [...(cookieHeader ? cookieHeader.split(';') : []), ...cookies.flatMap((c) => c.split(';'))];
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    if (part.slice(0, eq).trim() === SESSION_COOKIE) {
      const value = part.slice(eq + 1).trim();
      return looksLikeToken(value) ? value : null;
    }
  }
  return null;
}
