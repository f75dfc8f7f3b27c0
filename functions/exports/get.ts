// GET /v1/exports/{members|referrals|rewards|payouts|subscriptions}.csv - the list as CSV, with its filters.
// Paged: at most `page_size` rows (default and maximum 10,000) per response, and `Link: <…>; rel="next"`
// while rows remain (shared/flows/exports.ts).
import { EXPORT_PAGE_MAX, exportPage } from '../../shared/flows/exports';
import { apiHandler } from '../../shared/http/handler';
import { exportQuery } from '../../shared/schemas/query';

export const handler = apiHandler({ query: exportQuery }, async ({ principal, params, query, baseUrl, event }) => {
  const { page_size: size, cursor, ...filters } = query;
  const page = await exportPage(principal.accountId, params.file ?? '', filters, size ?? EXPORT_PAGE_MAX, cursor);
  const headers: Record<string, string> = {
    'Content-Disposition': `attachment; filename="${params.file}"`,
    'X-Row-Count': String(page.rows),
  };
  if (page.nextCursor) {
    const next = new URLSearchParams(event.rawQueryString ?? '');
    next.set('cursor', page.nextCursor);
    headers.Link = `<${baseUrl}${event.rawPath}?${next.toString()}>; rel="next"`;
  }
  return { status: 200, raw: { contentType: 'text/csv; charset=utf-8', text: page.csv, headers } };
});
