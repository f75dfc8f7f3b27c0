// GET /v1/team/ - the people who can log in to the dashboard, with their roles (owner only, dashboard session).
import { apiHandler, ok } from '../../shared/http/handler';
import { listTeam } from '../../shared/store/team';
import { noQuery } from '../../shared/schemas/query';

export const handler = apiHandler({ query: noQuery, access: 'owner', sessionOnly: true }, async ({ principal }) => {
  const results = await listTeam(principal.accountId);
  return ok({ count: results.length, next: null, previous: null, results });
});
