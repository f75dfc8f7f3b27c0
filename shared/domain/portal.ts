// The member portal (docs/portal.md), as pure rules: its tokens and
// their lifetimes, the member's share link, what a referred user's identifier looks like to the member
// who referred them, and the campaign's terms in words.
//
// Two tokens, never interchangeable with each other or with API keys, each stored only as its SHA-256:
// - the link token `rpl_…` travels in the portal URL's fragment (`/portal/<account>/#token=rpl_…`), so it
//   reaches no server log and no Referer header; it opens a session once, within PORTAL_LINK_SECONDS;
// - the session token `rps_…` is what the portal sends as `Authorization: Bearer` on `/portal/v1/`; it
//   lives PORTAL_SESSION_SECONDS from the opening, without sliding (the host hands over a new URL through
//   the widget's onTokenExpired when it ends).
// An affiliate's login (docs/portal.md "Affiliate login") uses the same two shapes: an emailed link of 15
// minutes, and a session token in the `refloop_portal` cookie that slides 12 hours from its last use.
import { randomBytes } from 'node:crypto';
import { DetailError } from './errors';
import { type Campaign, statsCurrency } from './models';
import { formatCents } from './money';

export const PORTAL_LINK_SECONDS = 10 * 60;
export const PORTAL_SESSION_SECONDS = 60 * 60;
/** An affiliate's emailed login link opens a cookie session once, within 15 minutes. */
export const LOGIN_LINK_SECONDS = 15 * 60;
/** A cookie session (an affiliate's) lives 12 hours after its last use... */
export const COOKIE_SESSION_SECONDS = 12 * 3600;
/** ...its expiry is written again at most once per 5 minutes of use... */
export const COOKIE_SESSION_SLIDE_SECONDS = 300;
/** ...and however much it is used, it ends 7 days after its login (then a new link). */
export const COOKIE_SESSION_MAX_SECONDS = 7 * 24 * 3600;

/** The affiliate portal's session cookie: HttpOnly, SameSite=Strict, Path=/portal/, Secure except on loopback http. */
export const PORTAL_COOKIE = 'refloop_portal';
const loopbackHttp = (baseUrl: string) => /^http:\/\/(localhost|127\.0\.0\.1|\[::1\])(:\d+)?$/.test(baseUrl);

export function portalCookie(token: string, baseUrl: string): string {
  return `${PORTAL_COOKIE}=${token}; Path=/portal/; HttpOnly; SameSite=Strict${loopbackHttp(baseUrl) ? '' : '; Secure'}`;
}

export function clearedPortalCookie(baseUrl: string): string {
  return `${PORTAL_COOKIE}=; Path=/portal/; HttpOnly; SameSite=Strict; Max-Age=0${loopbackHttp(baseUrl) ? '' : '; Secure'}`;
}

/**
 * The portal cookie's value in a request's cookies: undefined without the cookie, null when it is there
 * but not a session token's shape (refused without a read), else the token.
 */
export function portalCookieToken(cookieHeader: string | undefined, cookies: readonly string[] = []): string | null | undefined {
  const parts = [...(cookieHeader ? cookieHeader.split(';') : []), ...cookies.flatMap((c) => c.split(';'))];
  for (const part of parts) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== PORTAL_COOKIE) continue;
    const value = part.slice(eq + 1).trim();
    if (value === '') continue;
    return isPortalSessionToken(value) ? value : null;
  }
  return undefined;
}

export const LOGIN_LINK_REFUSED = 'This login link has expired or was already used. Ask for a new one on the login page.';
/** 401 for an affiliate's login link that is unknown, used or expired. */
export const loginLinkRefused = () => new DetailError(401, LOGIN_LINK_REFUSED);
export const LOGIN_LINK_SENT =
  'If this address belongs to a member of the programme, a login link is on its way. It works once, for 15 minutes.';
/** Requests one portal session may make per minute (the portal's first paint makes five). */
export const PORTAL_REQUESTS_PER_MINUTE = 120;
/** Portal links and sessions one member may hold at once (a bound on what a revocation walks). */
export const MAX_PORTAL_SESSIONS = 100;

export const LINK_PREFIX = 'rpl_';
export const SESSION_PREFIX = 'rps_';
const BODY = /^[A-Za-z0-9_-]{43}$/;

export const newPortalToken = (prefix: typeof LINK_PREFIX | typeof SESSION_PREFIX): string =>
  `${prefix}${randomBytes(32).toString('base64url')}`;
export const isPortalLinkToken = (t: unknown): t is string =>
  typeof t === 'string' && t.startsWith(LINK_PREFIX) && BODY.test(t.slice(LINK_PREFIX.length));
export const isPortalSessionToken = (t: unknown): t is string =>
  typeof t === 'string' && t.startsWith(SESSION_PREFIX) && BODY.test(t.slice(SESSION_PREFIX.length));

export const PORTAL_SESSION_ID = /^ps_[0-9a-f]{24}$/;
export const newPortalSessionId = () => `ps_${randomBytes(12).toString('hex')}`;

/** The portal page of an account; the link token goes in the fragment. */
export const portalPageUrl = (baseUrl: string, accountId: string): string => `${baseUrl}/portal/${accountId}/`;
export const portalUrl = (baseUrl: string, accountId: string, token: string): string =>
  `${portalPageUrl(baseUrl, accountId)}#token=${token}`;

export const LINK_REFUSED = 'This portal link has expired or was already used. Open the referral page again from the app.';
/** 401 for a link that is unknown, used, revoked or expired. */
export const linkRefused = () => new DetailError(401, LINK_REFUSED, { 'WWW-Authenticate': 'Bearer' });
export const PORTAL_SESSION_ENDED = 'Your portal session has ended. Open the referral page again from the app.';
export const COOKIE_SESSION_ENDED = 'Your session has ended. Log in again to see your portal.';
export const PORTAL_ONLY = 'This is the member portal API: it takes a portal session token (rps_...), not an API key.';

/** `{referral_url}?via=<code>` (the specification's link shape), or null when the account set no URL. */
export function shareLink(referralUrl: string | null, code: string): string | null {
  if (!referralUrl) return null;
  const url = new URL(referralUrl);
  url.searchParams.set('via', code);
  return url.toString();
}

/**
 * What a member sees of a user they referred: enough to recognise them, not enough to learn an address.
 * `jane.doe@example.com` -> `j***@e***.com`; `user_12345` -> `us***45`; short ones -> `u***`.
 */
export function maskIdentifier(identifier: string): string {
  const at = identifier.lastIndexOf('@');
  if (at > 0 && at < identifier.length - 1) {
    const domain = identifier.slice(at + 1);
    const dot = domain.lastIndexOf('.');
    const tld = dot > 0 ? domain.slice(dot) : '';
    return `${[...identifier][0]}***@${[...domain][0]}***${tld.length <= 8 ? tld : ''}`;
  }
  const chars = [...identifier];
  if (chars.length <= 6) return `${chars[0] ?? ''}***`;
  return `${chars.slice(0, 2).join('')}***${chars.slice(-2).join('')}`;
}

export interface TermsInput {
  reward_type: 'credit' | 'commission' | null;
  /** Cents (fixed amounts). */
  amount: number;
  /** Hundredths of a percent (percentage commissions), else null. */
  percent: number | null;
  currency: string | null;
  /** Months a commission recurs for; null: every payment; 1: the first payment only. */
  months: number | null;
  /** Cents the referred user must have paid before the first reward. */
  threshold: number;
  hold_days: number;
}

const money = (cents: number, currency: string | null) => `${formatCents(cents)} ${currency ?? ''}`.trim();
/** Hundredths of a percent in words: 2000 -> `20%`, 1250 -> `12.5%`. */
export const percentText = (hundredths: number): string => `${formatCents(hundredths).replace(/\.?0+$/, '')}%`;

/** The member's reward terms in one to three sentences (the referred user's discount is shown on its own). */
export function termsText(t: TermsInput): string {
  if (t.reward_type === null) return 'This programme does not pay rewards at the moment; your referrals are still counted.';
  const what =
    t.reward_type === 'credit'
      ? `${money(t.amount, t.currency)} of credit on your subscription`
      : t.percent !== null
        ? `${percentText(t.percent)} of what they pay`
        : `${money(t.amount, t.currency)} commission`;
  const when =
    t.reward_type === 'credit' || t.months === 1
      ? 'when someone you refer starts paying'
      : t.months === null
        ? 'for every payment of each customer you refer'
        : `for every payment of each customer you refer, for their first ${t.months} months`;
  const parts = [`Earn ${what} ${when}.`];
  if (t.threshold > 0) parts.push(`Rewards start once they have paid ${money(t.threshold, t.currency)}.`);
  if (t.reward_type === 'commission' && t.hold_days > 0)
    parts.push(`Commissions are approved ${t.hold_days} days after each payment, once refunds are unlikely.`);
  return parts.join(' ');
}

/** What a campaign's member earns, as termsText reads it (the portal's terms and the public join page's). */
export function campaignTermsInput(c: Campaign): TermsInput {
  const type = c.allows_credit ? 'credit' : c.allows_commission ? 'commission' : null;
  const percent = type === 'commission' && c.commission_type === 'percentage' ? c.commission_percent : null;
  const amount = type === 'credit' ? c.credit_amount : type === 'commission' && percent === null ? c.commission_amount : 0;
  const currency = type === null ? null : statsCurrency(c);
  const months = type === 'commission' ? c.commission_months : null;
  return { reward_type: type, amount, percent, currency, months, threshold: c.reward_threshold, hold_days: c.hold_days };
}

/** What the people a member refers get off, in words (`10% off their first payment`), or null. */
export function discountText(c: Campaign): string | null {
  if (c.referred_discount_type === null || c.referred_discount_amount <= 0) return null;
  const amount =
    c.referred_discount_type === 'percentage'
      ? percentText(c.referred_discount_amount)
      : `${formatCents(c.referred_discount_amount)} ${statsCurrency(c)}`;
  return `${amount} off ${c.referred_discount_recurring ? 'every payment' : 'their first payment'}`;
}
