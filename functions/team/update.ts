// PATCH /v1/team/{id}/ - change someone's role; their open sessions get it at once. The last owner stays owner.
import { apiHandler, ok } from '../../shared/http/handler';
import { roleBody } from '../../shared/schemas/team';
import { setTeamRole } from '../../shared/store/team';

export const handler = apiHandler({ body: roleBody, access: 'owner', sessionOnly: true }, async ({ principal, params, body }) =>
  ok(await setTeamRole(principal.accountId, params.id ?? '', body.role)),
);
