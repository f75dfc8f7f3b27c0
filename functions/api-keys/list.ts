// GET /v1/api-keys/ - the account's secret API keys: name, prefix, created and revoked times, never the key.
import { apiHandler, ok } from '../../shared/http/handler';
import { listApiKeyRecords } from '../../shared/store/team';

export const handler = apiHandler({ access: 'owner', sessionOnly: true }, async ({ principal }) => {
  const results = await listApiKeyRecords(principal.accountId);
  return ok({ count: results.length, next: null, previous: null, results });
});
