// DELETE /portal/v1/sessions/current/ - log out of the affiliate portal: the cookie session is deleted and
// the cookie cleared. 204 also without a session (logging out twice is not an error); with a cookie, a
// cross-site request is refused (403) before anything changes.
import { clearedPortalCookie } from '../../shared/domain/portal';
import { portalCookieOf } from '../../shared/http/portal';
import { baseUrl, jsonResult, publicHandler, requireSameOrigin } from '../../shared/http/respond';
import { endPortalSession, findPortalSession } from '../../shared/store/portal';

export const handler = publicHandler(async (event) => {
  const token = portalCookieOf(event);
  if (token !== undefined) {
    requireSameOrigin(event);
    const session = token === null ? null : await findPortalSession(token);
    if (session?.mode === 'cookie') await endPortalSession(session);
  }
  return { ...jsonResult(204, undefined, event, { 'Cache-Control': 'no-store' }), cookies: [clearedPortalCookie(baseUrl(event))] };
});
