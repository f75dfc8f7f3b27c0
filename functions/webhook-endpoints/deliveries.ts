// GET /v1/webhook-endpoints/{id}/deliveries/ - the endpoint's deliveries and their attempts, newest event first
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { pageOnlyQuery } from '../../shared/schemas/query';
import { getEndpointOrThrow, listDeliveries } from '../../shared/store/webhooks';
import { webhookDeliveryView } from '../../shared/webhooks/views';

export const handler = apiHandler({ query: pageOnlyQuery }, async ({ principal, params, query, baseUrl, event }) => {
  const endpoint = await getEndpointOrThrow(principal.accountId, params.id ?? '');
  const page = await listDeliveries(principal.accountId, endpoint, pageRequest(query));
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(webhookDeliveryView) }));
});
