// POST /v1/payouts/{id}/resend/ - re-send an unclaimed PayPal payout after its member's payout email was
// corrected (docs/payouts.md "Re-sending an unclaimed payout"): 202 with the payout once the payout-rails
// worker has the message (it cancels the unclaimed item, then sends again); 409 unless the payout is a
// processing PayPal payout whose rail status is UNCLAIMED. One read, one conditional update, one SQS send.
import { payoutDetailView } from '../../shared/domain/payout-views';
import { requestResend } from '../../shared/flows/rail-reconcile';
import { apiHandler } from '../../shared/http/handler';

export const handler = apiHandler({ access: 'money' }, async ({ principal, params }) => ({
  status: 202,
  body: payoutDetailView(await requestResend(principal.accountId, params.id ?? '')),
}));
