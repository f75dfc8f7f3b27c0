// GET /v1/members/{id}/links/ - the member's named links, newest first (exact count, cursors).
import { listMemberLinks } from '../../shared/flows/links';
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { pageOnlyQuery } from '../../shared/schemas/query';

export const handler = apiHandler({ query: pageOnlyQuery }, async ({ principal, params, query, baseUrl, event }) =>
  ok(envelope(baseUrl, event, await listMemberLinks(principal.accountId, params.id ?? '', pageRequest(query)))),
);
