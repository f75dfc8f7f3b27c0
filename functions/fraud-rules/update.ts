// PATCH /v1/fraud-rules/ - change any rule's action or thresholds (`{"<rule>": {"action"?, ...thresholds}}`);
// the rest stay as they are. Owner and admin sessions, or an API key. One UpdateItem of the given settings
// only (shared/store/fraud-settings.ts), answering every rule after the change. Nothing already flagged or
// held changes.
import { apiHandler, ok } from '../../shared/http/handler';
import { fraudRulesBody } from '../../shared/schemas/fraud';
import { saveFraudSettings } from '../../shared/store/fraud-settings';

export const handler = apiHandler({ body: fraudRulesBody, access: 'write' }, async ({ principal, body }) =>
  ok(await saveFraudSettings(principal.accountId, body)),
);
