// GET /v1/referrals/ - list referrals, newest first, optionally `?member=<member_id>`
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { referralView } from '../../shared/domain/views';
import { listReferralsQuery } from '../../shared/schemas/query';
import { listReferrals } from '../../shared/store/referrals';

export const handler = apiHandler({ query: listReferralsQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listReferrals(principal.accountId, pageRequest(query), query.member);
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(referralView) }));
});
