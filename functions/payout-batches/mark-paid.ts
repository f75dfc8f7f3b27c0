// POST /v1/payout-batches/{id}/mark-paid/ {"paid_at"?, "reference"?} - every payout of the batch was paid
// (those marked failed stay failed). Repeating it finishes what a crash left.
import { markBatchPaid } from '../../shared/flows/payouts';
import { apiHandler, ok } from '../../shared/http/handler';
import { markPaidBody } from '../../shared/schemas/money';
import { batchView } from '../../shared/domain/payout-views';

export const handler = apiHandler({ body: markPaidBody, access: 'money' }, async ({ principal, params, body, baseUrl }) =>
  ok(batchView(await markBatchPaid(principal.accountId, params.id ?? '', { paidAt: body.paid_at, reference: body.reference }), baseUrl)),
);
