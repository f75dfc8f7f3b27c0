// POST /v1/applications/{id}/approve/ - approve a pending application: its member is created in the same
// transaction and the approval email (with a login link) is queued. An approved one answers as it is; a
// rejected one 409. Emits application.approved and member.created. Owner and admin, like member writes.
import { applicationView } from '../../shared/domain/applications';
import { approveApplication } from '../../shared/flows/applications';
import { apiHandler, ok } from '../../shared/http/handler';

export const handler = apiHandler({}, async ({ principal, params }) =>
  ok(applicationView(await approveApplication(principal.accountId, params.id ?? ''))),
);
