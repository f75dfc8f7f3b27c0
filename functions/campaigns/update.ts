// PATCH /v1/campaigns/{id}/ - update any of a campaign's fields
import { apiHandler, ok } from '../../shared/http/handler';
import { campaignView } from '../../shared/domain/views';
import { updateCampaignBody } from '../../shared/schemas/campaign';
import { updateCampaign } from '../../shared/store/campaigns';

export const handler = apiHandler({ body: updateCampaignBody }, async ({ principal, params, body }) =>
  ok(campaignView(await updateCampaign(principal.accountId, params.id ?? '', body))),
);
