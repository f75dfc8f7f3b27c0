// POST /v1/fraud-rules/preview/ - what one rule, with the action and thresholds to try (missing ones: the
// account's), would have flagged and held over the last 90 days of recorded facts, with up to 10 examples.
// Writes nothing of its own (its function may write: the key's rate window, an Idempotency-Key); owner and admin sessions, or an API key, as for PATCH.
// Thresholds outside the rule's limits are a 400 keyed `thresholds` (shared/flows/fraud-preview.ts).
import { apiHandler, ok } from '../../shared/http/handler';
import { previewRule } from '../../shared/flows/fraud-preview';
import { fraudPreviewBody } from '../../shared/schemas/fraud';
import { nowSeconds } from '../../shared/store/ops';

export const handler = apiHandler({ body: fraudPreviewBody, access: 'write' }, async ({ principal, body }) =>
  ok(await previewRule(principal.accountId, body, nowSeconds())),
);
