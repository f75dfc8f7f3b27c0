// GET /v1/members/ - list members, newest first, optionally `?campaign=<campaign_id>`
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { memberView } from '../../shared/domain/views';
import { listMembersQuery } from '../../shared/schemas/query';
import { listMembers } from '../../shared/store/members';

export const handler = apiHandler({ query: listMembersQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listMembers(principal.accountId, pageRequest(query), query.campaign);
  const results = page.items.map((m) => memberView(m.member, m.campaign, m.subscription));
  return ok(envelope(baseUrl, event, { ...page, results }));
});
