// An affiliate's portal login link (docs/portal.md "Affiliate login"): single use, 15 minutes, only the
// token's SHA-256 stored (a portal link item of `mode: 'cookie'`, shared/store/portal.ts). Opening it at
// `/portal/<account>/login/` trades the token for a cookie session. The email worker calls this when it
// sends a login email or an approval email; nothing here sends mail.
import { config } from '../config';
import { NotFoundError } from '../domain/errors';
import { isAccountId, isEntityId } from '../domain/ids';
import { getItem } from '../store/ops';
import { findAccountBySlug } from '../store/slugs';
import { createPortalLink } from '../store/portal';
import { uniqueKeys, keys } from '../store/table';
import type { RateLimit } from '../domain/rate-limits';
import { emailHash, normalEmail } from '../domain/team';
import { errorFields, log } from '../log';
import { publish } from '../queue/publish';
import { consumeRateLimit } from '../store/rate-limits';

/** The rate-limit pseudo-account of the login endpoints (shared/http/auth.ts AUTH_FAILURE_ACCOUNT). */
const LOGIN_LIMITS_ACCOUNT = 'auth';

/** The login page of an account's portal: its slug when it has one, else its id. */
export function portalLoginPageUrl(baseUrl: string, account: { id: string; slug?: unknown }): string {
  const name = typeof account.slug === 'string' && account.slug.length > 0 ? account.slug : account.id;
  return `${baseUrl}/portal/${encodeURIComponent(name)}/login/`;
}

/**
 * A fresh single-use login link for a member of the account:
 * `<public base URL>/portal/<account slug or id>/login/#token=<token>`. Null when the account or the
 * member no longer exists (nothing is stored then).
 */
export async function affiliateLoginUrl(accountId: string, memberId: string): Promise<string | null> {
  if (!isAccountId(accountId) || !isEntityId(memberId)) return null;
  const account = await getItem(keys.account(accountId), false);
  if (!account) return null;
  try {
    const { token } = await createPortalLink(accountId, memberId, null, 'cookie');
    return `${portalLoginPageUrl(config().publicBaseUrl, { id: accountId, slug: account.slug })}#token=${token}`;
  } catch (err) {
    if (err instanceof NotFoundError) return null;
    throw err;
  }
}

/** The account a portal path or a login request names: its id (one GetItem) or its slug (two); null when none. */
export async function portalAccount(name: string): Promise<{ accountId: string; account: Record<string, unknown> } | null> {
  if (isAccountId(name)) {
    const account = await getItem(keys.account(name), false);
    if (account) return { accountId: name, account };
  }
  // A slug may look like an id (16 hex characters): tried too when no account has that id.
  return findAccountBySlug(name);
}

/** Login links asked for one address: 5 per hour (the worker paces the emails themselves further). */
export const LOGIN_LINKS_PER_EMAIL: RateLimit = { limit: 5, windowSeconds: 3600 };

/**
 * POST /portal/v1/login-links/: queues the login email for a member of the account with this address.
 * Past the per-address or per-email limit, for an unknown account and for an address that is no member,
 * nothing happens; the caller answers the same 202 in every case.
 */
export async function requestLoginLink(accountName: string, email: string, byAddress: { scope: string; rule: RateLimit }): Promise<void> {
  const address = normalEmail(email);
  const [byIp, byEmail] = await Promise.all([
    consumeRateLimit(LOGIN_LIMITS_ACCOUNT, byAddress.scope, byAddress.rule),
    consumeRateLimit(LOGIN_LIMITS_ACCOUNT, `portal-link-email#${emailHash(address).slice(0, 32)}`, LOGIN_LINKS_PER_EMAIL),
  ]);
  if (!byIp.allowed || !byEmail.allowed) {
    log('info', 'portal login link dropped: rate limited', { by: byIp.allowed ? 'email' : 'ip' });
    return;
  }
  const found = await portalAccount(accountName);
  if (!found) return;
  const claim = await getItem(uniqueKeys.memberEmailClaim(found.accountId, address), false);
  if (typeof claim?.member_id !== 'string') return;
  // A failure to queue answers the same 202 (an error here must not tell a member's address from another's).
  try {
    await publish('member-emails', {
      kind: 'affiliate-email',
      template: 'portal-login',
      account_id: found.accountId,
      email: address,
      member_id: claim.member_id,
    });
  } catch (err) {
    log('error', 'portal login email not queued', errorFields(err));
  }
}
