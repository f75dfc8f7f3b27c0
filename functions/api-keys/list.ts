// GET /v1/api-keys/ - the account's secret API keys: name, prefix, created and revoked times, never the key.
import { apiHandler, ok } from '../../shared/http/handler';
import { listApiKeyRecords } from '../../shared/store/team';
import { noQuery } from '../../shared/schemas/query';

export const handler = apiHandler({ query: noQuery, access: 'owner', sessionOnly: true }, async ({ principal }) => {
  const results = await listApiKeyRecords(principal.accountId);
  return ok({ count: results.length, next: null, previous: null, results });
});
