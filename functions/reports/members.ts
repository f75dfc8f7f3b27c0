// GET /v1/reports/members/?sort=conversions|revenue|commission&from=&to=&limit=[&currency=] - the top members.
import { topMembers } from '../../shared/flows/reports';
import { apiHandler, ok } from '../../shared/http/handler';
import { topMembersQuery } from '../../shared/schemas/query';
import { rangeOf } from '../../shared/domain/report-range';

export const handler = apiHandler({ query: topMembersQuery }, async ({ principal, query }) =>
  ok(await topMembers(principal.accountId, { ...query, ...rangeOf(query) })),
);
