// GET /v1/fraud-flags/ - the review queue: what the fraud rules flagged or held, newest first; filters rule,
// status and member in any combination (exact count, cursors).
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { listFraudFlagsQuery } from '../../shared/schemas/fraud';
import { fraudFlagView, listFraudFlags } from '../../shared/store/fraud-flags';

export const handler = apiHandler({ query: listFraudFlagsQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listFraudFlags(principal.accountId, pageRequest(query), query);
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(fraudFlagView) }));
});
