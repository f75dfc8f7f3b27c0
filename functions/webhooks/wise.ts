// POST /webhooks/wise/{account_id}/ - Wise webhook intake (docs/payouts.md "Webhooks"): the
// rail's check over the exact request with the account's connection, then one message on payout-rails and
// 200. Nothing is queued unless it verifies; an account not connected to the rail is a 404.
import { jsonResult, publicHandler } from '../../shared/http/respond';
import { receiveRailWebhook } from '../../shared/rails/intake';

export const handler = publicHandler(async (event) =>
  jsonResult(200, await receiveRailWebhook('wise', event.pathParameters?.account_id ?? '', event), event),
);
