// POST /v1/fraud-flags/{id}/review/ {"note"?} - an open flag that holds nothing is `reviewed`; one still
// holding rewards answers 409 (release or void it). Reviewed again answers it as it is; a released or voided
// one 409 (shared/flows/fraud-flags.ts resolveFraudFlag).
import { resolveFraudFlag } from '../../shared/flows/fraud-flags';
import { apiHandler, ok } from '../../shared/http/handler';
import { resolveFraudFlagBody } from '../../shared/schemas/fraud';
import { fraudFlagView } from '../../shared/store/fraud-flags';

export const handler = apiHandler({ body: resolveFraudFlagBody, access: 'money' }, async ({ principal, params, body }) =>
  ok(fraudFlagView(await resolveFraudFlag(principal.accountId, params.id ?? '', 'reviewed', { note: body.note }))),
);
