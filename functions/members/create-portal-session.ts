// POST /v1/members/{id}/portal-sessions/ - a single-use link to the member portal (docs/portal.md): `url`
// carries the token in its fragment, opens within 10 minutes, once, and starts a 60-minute portal session.
// The token is shown once: an Idempotency-Key replay answers `url: null` (only its digest is stored).
import { portalUrl } from '../../shared/domain/portal';
import { apiHandler, created } from '../../shared/http/handler';
import { createPortalSessionBody } from '../../shared/schemas/portal';
import { createPortalLink } from '../../shared/store/portal';

export const handler = apiHandler({ body: createPortalSessionBody }, async ({ principal, params, body, baseUrl }) => {
  const link = await createPortalLink(principal.accountId, params.id ?? '', body.return_url);
  const answer = { id: link.id, url: portalUrl(baseUrl, principal.accountId, link.token), expires_at: link.expiresAt };
  return { ...created(answer), replayBody: { ...answer, url: null } };
});
