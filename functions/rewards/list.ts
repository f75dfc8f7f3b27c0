// GET /v1/rewards/ - every reward across referrals, newest first; filters status, member, campaign, type (exact count).
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { ledgerRewardView } from '../../shared/domain/views';
import { listRewardsQuery } from '../../shared/schemas/query';
import { listRewards } from '../../shared/store/money-lists';

export const handler = apiHandler({ query: listRewardsQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listRewards(principal.accountId, pageRequest(query), query);
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(ledgerRewardView) }));
});
