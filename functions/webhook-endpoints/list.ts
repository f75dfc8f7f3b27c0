// GET /v1/webhook-endpoints/ - list the account's webhook endpoints, newest first
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { pageOnlyQuery } from '../../shared/schemas/query';
import { listEndpoints } from '../../shared/store/webhooks';
import { webhookEndpointView } from '../../shared/webhooks/views';

export const handler = apiHandler({ query: pageOnlyQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listEndpoints(principal.accountId, pageRequest(query));
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(webhookEndpointView) }));
});
