// GET /v1/fraud-flags/{id}/ - one flag with its explanation, evidence and the rewards it held; a malformed,
// unknown or other account's id answers 404.
import { apiHandler, ok } from '../../shared/http/handler';
import { fraudFlagView, getFraudFlagOrThrow } from '../../shared/store/fraud-flags';

export const handler = apiHandler({}, async ({ principal, params }) =>
  ok(fraudFlagView(await getFraudFlagOrThrow(principal.accountId, params.id ?? ''))),
);
