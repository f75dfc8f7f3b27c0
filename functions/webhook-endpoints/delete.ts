// DELETE /v1/webhook-endpoints/{id}/ - delete an endpoint and its secret; its pending deliveries are cancelled
import { apiHandler, noContent } from '../../shared/http/handler';
import { deleteEndpoint } from '../../shared/store/webhooks';

export const handler = apiHandler({}, async ({ principal, params }) => {
  await deleteEndpoint(principal.accountId, params.id ?? '');
  return noContent();
});
