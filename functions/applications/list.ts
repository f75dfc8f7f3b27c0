// GET /v1/applications/ - applications to the account's affiliate programmes, newest first; filters status and
// campaign (exact count, cursors).
import { applicationView } from '../../shared/domain/applications';
import { apiHandler, ok } from '../../shared/http/handler';
import { envelope, pageRequest } from '../../shared/http/pagination';
import { listApplicationsQuery } from '../../shared/schemas/applications';
import { listApplications } from '../../shared/store/applications';

export const handler = apiHandler({ query: listApplicationsQuery }, async ({ principal, query, baseUrl, event }) => {
  const page = await listApplications(principal.accountId, pageRequest(query), query);
  return ok(envelope(baseUrl, event, { ...page, results: page.items.map(applicationView) }));
});
