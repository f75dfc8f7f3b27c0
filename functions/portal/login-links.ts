// POST /portal/v1/login-links/ - an affiliate asks for a portal login link. Always 202 with the same body,
// whether or not the account, the address or a member exists, and also past the rate limits (per client
// address and per email: the request is dropped silently), so nothing here tells anyone who is a member.
// For a member, the email worker gets the message and sends the link (shared/flows/affiliate-login.ts
// requestLoginLink; shared/email/affiliate-emails.ts paces the emails per address).
import { LOGIN_LINK_SENT } from '../../shared/domain/portal';
import { requestLoginLink } from '../../shared/flows/affiliate-login';
import { ipScope, LOGINS_PER_IP, loginBody } from '../../shared/http/login';
import { jsonResult, publicHandler } from '../../shared/http/respond';
import { portalLoginLinkBody } from '../../shared/schemas/portal';

export const handler = publicHandler(async (event) => {
  const body = loginBody(portalLoginLinkBody, event);
  await requestLoginLink(body.account, body.email, { scope: ipScope('portal-link', event), rule: LOGINS_PER_IP });
  return jsonResult(202, { detail: LOGIN_LINK_SENT }, event, { 'Cache-Control': 'no-store' });
});
