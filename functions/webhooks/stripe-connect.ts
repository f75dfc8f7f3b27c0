// POST /webhooks/stripe-connect/{account_id}/ - the Stripe Connect rail's webhook intake (docs/payouts.md
// "Webhooks"), where both Stripe endpoints point: transfer.* signed with the connection's webhook_secret,
// account.updated with its connect_webhook_secret (shared/rails/stripe/webhook.ts). The rail's check over the
// exact request, then one message on payout-rails and 200. Nothing is queued unless it verifies; an account not connected to the rail is a 404.
import { jsonResult, publicHandler } from '../../shared/http/respond';
import { ACCOUNT_RAIL } from '../../shared/domain/rail-kinds';
import { receiveRailWebhook } from '../../shared/rails/intake';

export const handler = publicHandler(async (event) =>
  jsonResult(200, await receiveRailWebhook(ACCOUNT_RAIL, event.pathParameters?.account_id ?? '', event), event),
);
