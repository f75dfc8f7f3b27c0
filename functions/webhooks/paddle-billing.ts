// POST /webhooks/paddle-billing/{account_id}/ - Paddle Billing notification intake: verify
// Paddle-Signature over the exact raw body (300 s tolerance), queue it, answer 200. No DynamoDB round trip
// while the account's settings and secret are cached; one SQS send. Nothing is queued unless it verifies.
import { publicHandler, jsonResult } from '../../shared/http/respond';
import { receiveProviderWebhook } from '../../shared/billing/intake';

export const handler = publicHandler(async (event) => {
  const status = await receiveProviderWebhook('paddle-billing', event.pathParameters?.account_id ?? '', event);
  return jsonResult(200, status, event);
});
