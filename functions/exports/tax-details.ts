// GET /v1/exports/tax-details.csv - the members' tax details in full (decrypted), one row per member who
// gave them. Owner and finance dashboard sessions only: an admin or a viewer gets 403, and so does an API
// key (it is no session). Paged like the other exports (at most `page_size` rows, Link rel="next").
import { PermissionDeniedError } from '../../shared/domain/errors';
import { PERMISSION_DENIED } from '../../shared/domain/team';
import { taxExportPage } from '../../shared/flows/tax-details';
import { apiHandler } from '../../shared/http/handler';
import { taxExportQuery } from '../../shared/schemas/tax-details';

export const TAX_EXPORT_PAGE_MAX = 1_000;

export const handler = apiHandler({ query: taxExportQuery, sessionOnly: true }, async ({ principal, query, baseUrl, event }) => {
  const role = principal.session?.role;
  if (role !== 'owner' && role !== 'finance') throw new PermissionDeniedError(PERMISSION_DENIED);
  const page = await taxExportPage(principal.accountId, query.page_size ?? TAX_EXPORT_PAGE_MAX, query.cursor);
  const headers: Record<string, string> = {
    'Content-Disposition': 'attachment; filename="tax-details.csv"',
    'X-Row-Count': String(page.rows),
    'Cache-Control': 'no-store',
  };
  if (page.nextCursor) {
    const next = new URLSearchParams(event.rawQueryString ?? '');
    next.set('cursor', page.nextCursor);
    headers.Link = `<${baseUrl}${event.rawPath}?${next.toString()}>; rel="next"`;
  }
  return { status: 200, raw: { contentType: 'text/csv; charset=utf-8', text: page.csv, headers } };
});
