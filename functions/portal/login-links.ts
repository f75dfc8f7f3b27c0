// POST /portal/v1/login-links/ - an affiliate asks for a portal login link. Always 202 with the same body,
// whether or not the account, the address or a member exists, and also past the rate limits (per client
// address and per email: the request is dropped silently), so nothing here tells anyone who is a member.
// For a member, the email worker gets the message and sends the link (shared/email/affiliate-emails.ts:
// affiliateLoginUrl, paced per address).
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { LOGIN_LINK_SENT } from '../../shared/domain/portal';
import type { RateLimit } from '../../shared/domain/rate-limits';
import { emailHash, normalEmail } from '../../shared/domain/team';
import { portalAccount } from '../../shared/flows/affiliate-login';
import { AUTH_FAILURE_ACCOUNT } from '../../shared/http/auth';
import { ipScope, LOGINS_PER_IP, loginBody } from '../../shared/http/login';
import { jsonResult, publicHandler } from '../../shared/http/respond';
import { errorFields, log } from '../../shared/log';
import { publish } from '../../shared/queue/publish';
import { portalLoginLinkBody } from '../../shared/schemas/portal';
import { getItem } from '../../shared/store/ops';
import { consumeRateLimit } from '../../shared/store/rate-limits';
import { keys } from '../../shared/store/table';

export const handler = publicHandler(async (event) => {
  const body = loginBody(portalLoginLinkBody, event);
  await requestLoginLink(body.account, body.email, event);
  return jsonResult(202, { detail: LOGIN_LINK_SENT }, event, { 'Cache-Control': 'no-store' });
});

/** Login links asked for one address: 5 per hour (the worker paces the emails themselves further). */
export const LOGIN_LINKS_PER_EMAIL: RateLimit = { limit: 5, windowSeconds: 3600 };

/**
 * POST /portal/v1/login-links/: queues the login email for a member of the account with this address.
 * Past the per-address or per-email limit, for an unknown account and for an address that is no member,
 * nothing happens; the caller answers the same 202 in every case.
 */
export async function requestLoginLink(accountName: string, email: string, event: APIGatewayProxyEventV2): Promise<void> {
  const address = normalEmail(email);
  const [byIp, byEmail] = await Promise.all([
    consumeRateLimit(AUTH_FAILURE_ACCOUNT, ipScope('portal-link', event), LOGINS_PER_IP),
    consumeRateLimit(AUTH_FAILURE_ACCOUNT, `portal-link-email#${emailHash(address).slice(0, 32)}`, LOGIN_LINKS_PER_EMAIL),
  ]);
  if (!byIp.allowed || !byEmail.allowed) {
    log('info', 'portal login link dropped: rate limited', { by: byIp.allowed ? 'email' : 'ip' });
    return;
  }
  const found = await portalAccount(accountName);
  if (!found) return;
  const claim = await getItem(keys.memberEmailClaim(found.accountId, address), false);
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
