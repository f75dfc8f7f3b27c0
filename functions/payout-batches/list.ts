// GET /v1/payout-batches/ - payout batches newest first; filter status (exact count from counters).
import { batchView } from '../../shared/domain/payout-views';
import { toBatch, type PayoutBatch } from '../../shared/flows/payouts';
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { listPayoutBatchesQuery } from '../../shared/schemas/query';
import { listPayoutBatches } from '../../shared/store/money-lists';

export const handler = apiHandler({ query: listPayoutBatchesQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listPayoutBatches(principal.accountId, pageRequest(query), query);
  const results = page.items
    .map((i) => toBatch(i))
    .filter((b): b is PayoutBatch => b !== null)
    .map((b) => batchView(b, baseUrl));
  return ok(envelope(baseUrl, event, { ...page, results }));
});
