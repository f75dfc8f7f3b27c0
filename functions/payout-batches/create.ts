// POST /v1/payout-batches/ {"rail"?: "file"|"paypal"|"stripe"|"wise", "format"? (file only), "currency",
// "payout_ids"?} - take due payouts in one currency (all, up to the format's or the rail's limit, or the
// ones named) into a batch: they become processing. A file batch has a file to upload; a rail batch takes
// only the payouts of members paid through that rail (and ready) and is sent by the PayoutRails worker.
// Honour Idempotency-Key to retry safely; concurrent batches never share a payout.
import { createBatch } from '../../shared/flows/payouts';
import { apiHandler, created } from '../../shared/http/handler';
import { createPayoutBatchBody } from '../../shared/schemas/money';
import { batchView } from '../../shared/domain/payout-views';

export const handler = apiHandler({ body: createPayoutBatchBody, access: 'money' }, async ({ principal, body, baseUrl }) =>
  created(batchView(await createBatch(principal.accountId, body), baseUrl)),
);
