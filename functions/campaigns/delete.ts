// DELETE /v1/campaigns/{id}/ - delete a campaign; its members end up without one
import { apiHandler, noContent } from '../../shared/http/handler';
import { deleteCampaign } from '../../shared/store/campaigns';

export const handler = apiHandler({}, async ({ principal, params }) => {
  await deleteCampaign(principal.accountId, params.id ?? '');
  return noContent();
});
