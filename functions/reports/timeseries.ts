// GET /v1/reports/timeseries/?metric=&interval=day|week|month&from=&to=[&campaign=|&member=] - every bucket of the range, zeros included.
import { timeseries } from '../../shared/flows/reports';
import { apiHandler, ok } from '../../shared/http/handler';
import { timeseriesQuery } from '../../shared/schemas/query';
import { rangeOf } from '../../shared/domain/report-range';

export const handler = apiHandler({ query: timeseriesQuery }, async ({ principal, query }) =>
  ok(await timeseries(principal.accountId, { ...query, ...rangeOf(query) })),
);
