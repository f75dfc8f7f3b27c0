// DELETE /auth/sessions/current/ - log out: the session is deleted and the cookie cleared. 204 also when
// there was no session (logging out twice is not an error); a cross-site request is refused.
import { clearedSessionCookie, CROSS_SITE_REFUSED } from '../../shared/domain/team';
import { DetailError } from '../../shared/domain/errors';
import { sessionToken } from '../../shared/http/auth';
import { header } from '../../shared/http/body';
import { baseUrl, jsonResult, publicHandler } from '../../shared/http/respond';
import { endSession, findSession } from '../../shared/store/team';

export const handler = publicHandler(async (event) => {
  const token = sessionToken(event);
  if (token) {
    if (header(event, 'origin') !== new URL(baseUrl(event)).origin) throw new DetailError(403, CROSS_SITE_REFUSED);
    const session = await findSession(token);
    if (session) await endSession(session);
  }
  return { ...jsonResult(204, undefined, event), cookies: [clearedSessionCookie(baseUrl(event))] };
});
