// GET /v1/payout-batches/{id}/ - a batch with its payout ids and the link to its file.
import { getBatch } from '../../shared/flows/payouts';
import { apiHandler, ok } from '../../shared/http/handler';
import { batchView } from '../../shared/domain/payout-views';

export const handler = apiHandler({}, async ({ principal, params, baseUrl }) =>
  ok(batchView(await getBatch(principal.accountId, params.id ?? ''), baseUrl)),
);
