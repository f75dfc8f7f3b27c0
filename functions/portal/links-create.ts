// POST /portal/v1/links/ - the session's member makes a named link (the same rules as POST /v1/members/{id}/links/).
import { createPortalLink } from '../../shared/flows/links';
import { portalHandler } from '../../shared/http/portal';
import { createLinkBody } from '../../shared/schemas/links';

export const handler = portalHandler({ body: createLinkBody }, async ({ session, body }) => ({
  status: 201,
  body: await createPortalLink(session, body),
}));
