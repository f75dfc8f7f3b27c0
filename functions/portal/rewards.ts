// GET /portal/v1/rewards/ - the member's own rewards, newest first, paged with the API's cursors.
import { portalRewards } from '../../shared/flows/portal';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { portalHandler } from '../../shared/http/portal';
import { baseUrl } from '../../shared/http/respond';
import { portalListQuery } from '../../shared/schemas/portal';

export const handler = portalHandler({ query: portalListQuery }, async ({ session, query, event }) => ({
  status: 200,
  body: envelope(baseUrl(event), event, await portalRewards(session, pageRequest(query))),
}));
