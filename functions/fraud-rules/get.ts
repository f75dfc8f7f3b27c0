// GET /v1/fraud-rules/ - every fraud rule with its action and thresholds: the account's settings over the
// defaults (docs/fraud.md "The rules"). One GetItem.
import { apiHandler, ok } from '../../shared/http/handler';
import { loadFraudSettings } from '../../shared/store/fraud-settings';

export const handler = apiHandler({}, async ({ principal }) => ok(await loadFraudSettings(principal.accountId)));
