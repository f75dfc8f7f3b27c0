// GET /v1/payouts/{id}/ - one payout with the ids of its rewards.
import { NotFoundError } from '../../shared/domain/errors';
import { payoutDetailView } from '../../shared/domain/payout-views';
import { apiHandler, ok } from '../../shared/http/handler';
import { getPayout } from '../../shared/store/payouts';

export const handler = apiHandler({}, async ({ principal, params }) => {
  const payout = await getPayout(principal.accountId, params.id ?? '');
  if (!payout) throw new NotFoundError();
  return ok(payoutDetailView(payout));
});
