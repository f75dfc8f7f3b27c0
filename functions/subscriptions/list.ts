// GET /v1/subscriptions/ - list subscriptions, newest first, optionally `?status=<status>`
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { subscriptionView } from '../../shared/domain/views';
import { listSubscriptionsQuery } from '../../shared/schemas/query';
import { listSubscriptions } from '../../shared/store/subscriptions';

export const handler = apiHandler({ query: listSubscriptionsQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listSubscriptions(principal.accountId, pageRequest(query), query.status);
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(subscriptionView) }));
});
