// POST /auth/login-links/ - email a dashboard login link. Always 202 with the same body, whether or not the
// address is in a team (no account enumeration) and whether or not an email goes out: the worker looks the
// address up, paces the emails to it (shared/email/login-links.ts: fewer emails, a longer gap, never a
// lock-out) and sends the mail (see LoginLinkMessage). Only the client IP's limit answers 429.
import { normalEmail } from '../../shared/domain/team';
import { ipScope, limitLogin, LOGINS_PER_IP, loginBody } from '../../shared/http/login';
import { baseUrl, jsonResult, publicHandler } from '../../shared/http/respond';
import { publish } from '../../shared/queue/publish';
import { loginLinkBody } from '../../shared/schemas/team';

export const LINK_SENT = 'If this address belongs to a team, a login link is on its way. It works once, for 15 minutes.';

export const handler = publicHandler(async (event) => {
  const { email } = loginBody(loginLinkBody, event);
  await limitLogin(ipScope('login', event), LOGINS_PER_IP);
  await publish('member-emails', { kind: 'login-link', email: normalEmail(email), base_url: baseUrl(event) });
  return jsonResult(202, { detail: LINK_SENT }, event);
});
