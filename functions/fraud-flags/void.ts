// POST /v1/fraud-flags/{id}/void/ {"note"?} - voids (reason `fraud`) the rewards the flag still holds, then
// the flag is `voided`. Voided again answers it as it is; a released or reviewed one 409
// (shared/flows/fraud-flags.ts resolveFraudFlag).
import { resolveFraudFlag } from '../../shared/flows/fraud-flags';
import { apiHandler, ok } from '../../shared/http/handler';
import { resolveFraudFlagBody } from '../../shared/schemas/fraud';
import { fraudFlagView } from '../../shared/store/fraud-flags';

export const handler = apiHandler({ body: resolveFraudFlagBody, access: 'money' }, async ({ principal, params, body }) =>
  ok(fraudFlagView(await resolveFraudFlag(principal.accountId, params.id ?? '', 'voided', { note: body.note }))),
);
