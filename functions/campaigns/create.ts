// POST /v1/campaigns/ - create a campaign within the plan's limit
import { apiHandler, created } from '../../shared/http/handler';
import { campaignView } from '../../shared/domain/views';
import { createCampaignBody } from '../../shared/schemas/campaign';
import { createCampaign } from '../../shared/store/campaigns';

export const handler = apiHandler({ body: createCampaignBody }, async ({ principal, body }) =>
  created(campaignView(await createCampaign(principal, body))),
);
