// POST /auth/sessions/ - trade a login link's token for a session: sets the `refloop_session` cookie
// (HttpOnly, SameSite=Strict, Secure except on loopback http) and answers who is logged in to which account.
import { looksLikeToken, sessionCookie } from '../../shared/domain/team';
import { DetailError } from '../../shared/domain/errors';
import { ipScope, limitLogin, LOGINS_PER_IP, loginBody, sessionView } from '../../shared/http/login';
import { baseUrl, jsonResult, publicHandler } from '../../shared/http/respond';
import { sessionBody } from '../../shared/schemas/team';
import { LINK_REFUSED, openSession } from '../../shared/store/team';

export const handler = publicHandler(async (event) => {
  const { token } = loginBody(sessionBody, event);
  await limitLogin(ipScope('session', event), LOGINS_PER_IP);
  if (!looksLikeToken(token)) throw new DetailError(401, LINK_REFUSED);
  const opened = await openSession(token);
  return {
    ...jsonResult(201, sessionView(opened.session), event, { 'Cache-Control': 'no-store' }),
    cookies: [sessionCookie(opened.token, baseUrl(event))],
  };
});
