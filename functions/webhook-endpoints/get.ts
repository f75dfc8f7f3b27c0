// GET /v1/webhook-endpoints/{id}/ - retrieve an endpoint (never its secret)
import { apiHandler, ok } from '../../shared/http/handler';
import { getEndpointOrThrow } from '../../shared/store/webhooks';
import { webhookEndpointView } from '../../shared/webhooks/views';

export const handler = apiHandler({}, async ({ principal, params }) =>
  ok(webhookEndpointView(await getEndpointOrThrow(principal.accountId, params.id ?? ''))),
);
