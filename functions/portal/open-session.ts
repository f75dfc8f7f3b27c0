// POST /portal/v1/sessions/ - trade the portal link's token (from the URL fragment) for a 60-minute portal
// session token. No credential: rate limited per client IP like the dashboard's login; 401 for a link that
// is unknown, used or expired.
import { isPortalLinkToken, linkRefused } from '../../shared/domain/portal';
import { ipScope, limitLogin, LOGINS_PER_IP, loginBody } from '../../shared/http/login';
import { jsonResult, publicHandler } from '../../shared/http/respond';
import { openPortalSessionBody } from '../../shared/schemas/portal';
import { openPortalSession } from '../../shared/store/portal';

/** Portal openings per IP per 15 minutes: ten times the dashboard's logins (an office behind one NAT). */
const PORTAL_OPENINGS_PER_IP = { limit: LOGINS_PER_IP.limit * 10, windowSeconds: LOGINS_PER_IP.windowSeconds };

export const handler = publicHandler(async (event) => {
  const { token } = loginBody(openPortalSessionBody, event);
  await limitLogin(ipScope('portal', event), PORTAL_OPENINGS_PER_IP);
  if (!isPortalLinkToken(token)) throw linkRefused();
  const opened = await openPortalSession(token);
  return jsonResult(201, { token: opened.token, expires_at: opened.session.expiresAt }, event, { 'Cache-Control': 'no-store' });
});
