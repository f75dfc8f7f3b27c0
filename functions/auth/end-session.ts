// DELETE /auth/sessions/current/ - log out: the session is deleted and the cookie cleared. 204 also when
// there was no session (logging out twice is not an error); a cross-site request is refused.
import { clearedSessionCookie } from '../../shared/domain/team';
import { sessionToken } from '../../shared/http/auth';
import { baseUrl, jsonResult, publicHandler, requireSameOrigin } from '../../shared/http/respond';
import { endSession, findSession } from '../../shared/store/team';

export const handler = publicHandler(async (event) => {
  const token = sessionToken(event);
  if (token) {
    requireSameOrigin(event);
    const session = await findSession(token);
    if (session) await endSession(session);
  }
  return { ...jsonResult(204, undefined, event), cookies: [clearedSessionCookie(baseUrl(event))] };
});
