// GET /auth/sessions/current/ - the dashboard's session: account, email, role and when it expires (401 without one).
import { authenticateSession } from '../../shared/http/auth';
import { sessionView } from '../../shared/http/login';
import { jsonResult, publicHandler } from '../../shared/http/respond';
import type { Session } from '../../shared/store/team';

export const handler = publicHandler(async (event) => {
  const principal = await authenticateSession(event);
  return jsonResult(200, sessionView(principal.session as Session), event, { 'Cache-Control': 'no-store' });
});
