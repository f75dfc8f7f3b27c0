// POST /v1/fraud-flags/{id}/release/ {"note"?} - releases the rewards the flag still holds (pending until
// their hold period ends, approved at once when it has passed), then the flag is `released`. Released again
// answers it as it is; a voided or reviewed one 409 (shared/flows/fraud-flags.ts resolveFraudFlag).
import { resolveFraudFlag } from '../../shared/flows/fraud-flags';
import { apiHandler, ok } from '../../shared/http/handler';
import { resolveFraudFlagBody } from '../../shared/schemas/fraud';
import { fraudFlagView } from '../../shared/store/fraud-flags';

export const handler = apiHandler({ body: resolveFraudFlagBody, access: 'money' }, async ({ principal, params, body }) =>
  ok(fraudFlagView(await resolveFraudFlag(principal.accountId, params.id ?? '', 'released', { note: body.note }))),
);
