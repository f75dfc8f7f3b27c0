// POST /webhooks/stripe/{account_id}/ - Stripe event intake: verify Stripe-Signature (v1, any match, 300 s
// tolerance) over the exact raw body, queue it, answer 200. No DynamoDB round trip while the account's
// connection is cached; one SQS send. Nothing is queued unless it verifies.
import { publicHandler, jsonResult } from '../../shared/http/respond';
import { receiveProviderWebhook } from '../../shared/billing/intake';

export const handler = publicHandler(async (event) => {
  const status = await receiveProviderWebhook('stripe', event.pathParameters?.account_id ?? '', event);
  return jsonResult(200, status, event);
});
