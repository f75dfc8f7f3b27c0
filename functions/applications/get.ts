// GET /v1/applications/{id}/ - one application with its answers; another account's id answers 404.
import { applicationView } from '../../shared/domain/applications';
import { getApplicationOrThrow } from '../../shared/flows/applications';
import { apiHandler, ok } from '../../shared/http/handler';

export const handler = apiHandler({}, async ({ principal, params }) =>
  ok(applicationView(await getApplicationOrThrow(principal.accountId, params.id ?? ''))),
);
