// GET /v1/reports/overview/?from=&to=[&campaign=|&member=] - every metric's total, and the same over the period just before.
import { overview } from '../../shared/flows/reports';
import { apiHandler, ok } from '../../shared/http/handler';
import { overviewQuery } from '../../shared/schemas/query';
import { rangeOf } from '../../shared/domain/report-range';

export const handler = apiHandler({ query: overviewQuery }, async ({ principal, query }) =>
  ok(await overview(principal.accountId, { ...query, ...rangeOf(query) })),
);
