// GET /v1/members/ - list members, newest first, optionally `?campaign=<campaign_id>` and
// `?search=<email, identifier or code>` (exact matches through the claim items, never a Scan).
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { memberView } from '../../shared/domain/views';
import { listMembersQuery } from '../../shared/schemas/query';
import { listMembers, searchMembers } from '../../shared/store/members';

export const handler = apiHandler({ query: listMembersQuery }, async ({ principal, query, baseUrl, event }) => {
  const term = query.search?.trim();
  const page = term
    ? await searchMembers(principal.accountId, term, pageRequest(query), query.campaign)
    : await listMembers(principal.accountId, pageRequest(query), query.campaign);
  const results = page.items.map((m) => memberView(m.member, m.campaign, m.subscription));
  return ok(envelope(baseUrl, event, { ...page, results }));
});
