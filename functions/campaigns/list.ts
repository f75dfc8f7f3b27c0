// GET /v1/campaigns/ - list campaigns, newest first
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { campaignView } from '../../shared/domain/views';
import { listCampaignsQuery } from '../../shared/schemas/query';
import { listCampaigns } from '../../shared/store/campaigns';

export const handler = apiHandler({ query: listCampaignsQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listCampaigns(principal.accountId, pageRequest(query));
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(campaignView) }));
});
