// PATCH /v1/webhook-endpoints/{id}/ - change url, events, enabled or description; enabling clears its failure state
import { apiHandler, ok } from '../../shared/http/handler';
import { updateWebhookEndpointBody } from '../../shared/schemas/webhook-endpoint';
import { changeEndpoint } from '../../shared/webhooks/endpoints';
import { webhookEndpointView } from '../../shared/webhooks/views';

export const handler = apiHandler({ body: updateWebhookEndpointBody }, async ({ principal, params, body }) =>
  ok(webhookEndpointView(await changeEndpoint(principal.accountId, params.id ?? '', body))),
);
