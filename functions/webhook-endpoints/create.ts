// POST /v1/webhook-endpoints/ - register an endpoint; 201 with its signing secret (shown only here)
import { apiHandler } from '../../shared/http/handler';
import { createWebhookEndpointBody } from '../../shared/schemas/webhook-endpoint';
import { registerEndpoint } from '../../shared/webhooks/endpoints';
import { createdWebhookEndpointView } from '../../shared/webhooks/views';

export const handler = apiHandler({ body: createWebhookEndpointBody }, async ({ principal, body }) => {
  const { endpoint, secret } = await registerEndpoint(principal.accountId, body);
  // An Idempotency-Key replay shows `secret: null`: the secret is never stored outside its own item.
  return { status: 201, body: createdWebhookEndpointView(endpoint, secret), replayBody: createdWebhookEndpointView(endpoint, null) };
});
