// POST /webhooks/{provider}/{account_id}/ - every payment provider's webhook intake (the segment is
// a definition's `webhook.path`, shared/billing/registry.ts): verify the provider's signature over
// the exact request, queue it, answer 200. No DynamoDB round trip while the account's verification key is
// cached; one SQS send. Nothing is queued unless the signature verifies; an unknown provider is a 404.
import { publicHandler, jsonResult } from '../../shared/http/respond';
import { receiveProviderWebhook } from '../../shared/billing/intake';

export const handler = publicHandler(async (event) => {
  const status = await receiveProviderWebhook(event.pathParameters?.provider ?? '', event.pathParameters?.account_id ?? '', event);
  return jsonResult(200, status, event);
});
