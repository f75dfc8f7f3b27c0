// GET /portal/v1/links/ - the session's member's named links, newest first, paged with the API's cursors.
import { portalLinks } from '../../shared/flows/links';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { portalHandler } from '../../shared/http/portal';
import { baseUrl } from '../../shared/http/respond';
import { portalListQuery } from '../../shared/schemas/portal';

export const handler = portalHandler({ query: portalListQuery }, async ({ session, query, event }) => ({
  status: 200,
  body: envelope(baseUrl(event), event, await portalLinks(session, pageRequest(query))),
}));
