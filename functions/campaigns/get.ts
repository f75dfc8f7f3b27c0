// GET /v1/campaigns/{id}/ - retrieve a campaign
import { apiHandler, ok } from '../../shared/http/handler';
import { campaignView } from '../../shared/domain/views';
import { getCampaignOrThrow } from '../../shared/store/campaigns';

export const handler = apiHandler({}, async ({ principal, params }) =>
  ok(campaignView(await getCampaignOrThrow(principal.accountId, params.id ?? ''))),
);
