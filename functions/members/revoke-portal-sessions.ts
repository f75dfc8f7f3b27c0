// DELETE /v1/members/{id}/portal-sessions/ - ends every portal link and session of the member at once
// (the next portal request answers 401 and the widget asks the host for a new URL).
import { apiHandler, noContent } from '../../shared/http/handler';
import { revokePortalSessions } from '../../shared/store/portal';

export const handler = apiHandler({}, async ({ principal, params }) => {
  await revokePortalSessions(principal.accountId, params.id ?? '');
  return noContent();
});
