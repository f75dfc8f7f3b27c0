// POST /v1/payout-batches/{id}/reconcile/ - read a rail batch back from its rail now (docs/payouts.md
// "Reconciliation"): 202 {batch_id, queued: true} once the payout-rails worker has the message; 409 for a file
// batch or one no longer processing. One read of the batch, one SQS send.
import { requestReconcile } from '../../shared/flows/rail-reconcile';
import { apiHandler } from '../../shared/http/handler';

export const handler = apiHandler({ access: 'money' }, async ({ principal, params }) => ({
  status: 202,
  body: await requestReconcile(principal.accountId, params.id ?? ''),
}));
