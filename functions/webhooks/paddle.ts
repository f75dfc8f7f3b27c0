// POST /webhooks/paddle/{account_id}/ - Paddle Classic alert intake: verify p_signature over the exact
// decoded form fields, queue the alert, answer 200. No DynamoDB round trip while the account's public
// key is cached; one SQS send. Nothing is queued unless the signature verifies.
import { publicHandler, jsonResult } from '../../shared/http/respond';
import { receivePaddleAlert } from '../../shared/providers/paddle-classic/intake';

export const handler = publicHandler(async (event) => {
  const status = await receivePaddleAlert(event.pathParameters?.account_id ?? '', event);
  return jsonResult(200, status, event);
});
