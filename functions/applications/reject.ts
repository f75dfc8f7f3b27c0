// POST /v1/applications/{id}/reject/ - reject a pending application with an internal reason (the applicant's
// email is neutral). A rejected one answers as it is; an approved one 409. Emits application.rejected.
import { applicationView } from '../../shared/domain/applications';
import { rejectApplication } from '../../shared/flows/applications';
import { apiHandler, ok } from '../../shared/http/handler';
import { rejectApplicationBody } from '../../shared/schemas/applications';

export const handler = apiHandler({ body: rejectApplicationBody }, async ({ principal, params, body }) =>
  ok(applicationView(await rejectApplication(principal.accountId, params.id ?? '', body.reason))),
);
