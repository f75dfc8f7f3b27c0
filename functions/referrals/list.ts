// GET /v1/referrals/ - list referrals, newest first, optionally `?member=<member_id>` and
// `?search=<user_identifier>` (exact, through the referred-user claim), and `?sub=` with `member` (the
// referrals made through one of the member's sub-ids).
import { ValidationError } from '../../shared/domain/errors';
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { referralView } from '../../shared/domain/views';
import { listReferralsQuery } from '../../shared/schemas/query';
import { listReferrals, searchReferrals } from '../../shared/store/referrals';

export const handler = apiHandler({ query: listReferralsQuery }, async ({ principal, query, baseUrl, event }) => {
  const term = query.search?.trim();
  if (query.sub !== undefined && query.member === undefined)
    throw ValidationError.field('sub', "A sub-id is one member's: filter by `member` too.");
  const page = term
    ? await searchReferrals(principal.accountId, term, pageRequest(query), query.member, query.sub)
    : await listReferrals(principal.accountId, pageRequest(query), query.member, query.sub);
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(referralView) }));
});
