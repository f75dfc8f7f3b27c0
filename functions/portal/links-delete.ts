// DELETE /portal/v1/links/{slug}/ - the session's member deletes one of their named links.
import { deletePortalLink } from '../../shared/flows/links';
import { portalHandler } from '../../shared/http/portal';

export const handler = portalHandler({}, async ({ session, event }) => {
  await deletePortalLink(session, event.pathParameters?.slug ?? '');
  return { status: 204, body: undefined };
});
