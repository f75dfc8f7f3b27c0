// GET /v1/payouts/ - payouts newest first; filters status, member, currency (exact count).
import { payoutView } from '../../shared/domain/payout-views';
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { listPayoutsQuery } from '../../shared/schemas/query';
import { listPayouts } from '../../shared/store/money-lists';

export const handler = apiHandler({ query: listPayoutsQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listPayouts(principal.accountId, pageRequest(query), query);
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(payoutView) }));
});
