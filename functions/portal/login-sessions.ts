// POST /portal/v1/login-sessions/ - the login view's "Continue to your portal" button: trades the emailed
// link's token (single use, 15 minutes) for a cookie session. Sets `refloop_portal` (HttpOnly,
// SameSite=Strict, Path=/portal/, Secure except on loopback http); the session slides 12 hours from its
// last use. Rate limited per client IP; 401 for a link that is unknown, used or expired.
import { isPortalLinkToken, loginLinkRefused, portalCookie } from '../../shared/domain/portal';
import { portalName } from '../../shared/flows/portal';
import { ipScope, limitLogin, LOGINS_PER_IP, loginBody } from '../../shared/http/login';
import { baseUrl, jsonResult, publicHandler } from '../../shared/http/respond';
import { portalLoginSessionBody } from '../../shared/schemas/portal';
import { openPortalSession } from '../../shared/store/portal';

export const handler = publicHandler(async (event) => {
  const { token } = loginBody(portalLoginSessionBody, event);
  await limitLogin(ipScope('portal-login', event), LOGINS_PER_IP);
  if (!isPortalLinkToken(token)) throw loginLinkRefused();
  const opened = await openPortalSession(token, 'cookie', loginLinkRefused);
  return {
    ...jsonResult(201, { expires_at: opened.session.expiresAt, portal: portalName(opened.session.accountId, opened.account) }, event, {
      'Cache-Control': 'no-store',
    }),
    cookies: [portalCookie(opened.token, baseUrl(event))],
  };
});
