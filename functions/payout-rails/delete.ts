// DELETE /v1/account/payout-rails/{kind}/ - disconnect a payout rail: its public part and its secrets go
// (204, also when it was not connected: a retry answers the same; 404 for a kind no rail has). Owner or
// admin, dashboard session only.
import { NotFoundError } from '../../shared/domain/errors';
import { apiHandler, noContent } from '../../shared/http/handler';
import { railOfPath } from '../../shared/rails/connect';
import { deleteRailConnection } from '../../shared/store/rail-connections';

export const handler = apiHandler({ access: 'write', sessionOnly: true }, async ({ principal, params }) => {
  const definition = railOfPath(params.kind);
  if (!definition) throw new NotFoundError();
  await deleteRailConnection(principal.accountId, definition.kind);
  return noContent();
});
