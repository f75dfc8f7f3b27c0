// The pagination envelope: exact count, absolute next/previous links that keep every other query
// parameter, and the page's results.
import type { APIGatewayProxyEventV2 } from 'aws-lambda';

export interface Envelope<T> {
  count: number;
  next: string | null;
  previous: string | null;
  results: T[];
}

function link(baseUrl: string, event: APIGatewayProxyEventV2, cursor: string | null): string | null {
  if (cursor === null) return null;
  const params = new URLSearchParams(event.rawQueryString ?? '');
  params.set('cursor', cursor);
  return `${baseUrl}${event.rawPath}?${params.toString()}`;
}

export function envelope<T>(
  baseUrl: string,
  event: APIGatewayProxyEventV2,
  page: { count: number; results: T[]; nextCursor: string | null; previousCursor: string | null },
): Envelope<T> {
  return {
    count: page.count,
    next: link(baseUrl, event, page.nextCursor),
    previous: link(baseUrl, event, page.previousCursor),
    results: page.results,
  };
}

/** The page request of a validated list query. */
export function pageRequest(query: { page_size: number | string; cursor?: string | undefined }) {
  return { pageSize: Number(query.page_size), cursor: query.cursor || undefined };
}
