// PUT /v1/account/payout-rails/{kind}/ - connect a payout rail (any of shared/rails/registry.ts) or replace
// its connection. Owner or admin, dashboard session only: an API key never changes rail secrets. The
// credentials are checked at the rail first (its adapter's verifyConnection; refused or unreachable is a 400
// and nothing is stored), then written: the public part and the secrets in their own item, encrypted, which
// IAM denies to every function without `railSecrets`. The answer is the public part and the webhook path(s)
// to register at the rail, never a secret (docs/payouts.md "Connecting a rail").
import { NotFoundError } from '../../shared/domain/errors';
import { apiHandler, ok } from '../../shared/http/handler';
import { railConnectionOf, railOfPath, verifyRailConnection } from '../../shared/rails/connect';
import { railPublicView } from '../../shared/rails/options';
import { payoutRailBody } from '../../shared/schemas/payout-rails';
import { saveRailConnection } from '../../shared/store/rail-connections';

export const handler = apiHandler({ body: payoutRailBody, access: 'write', sessionOnly: true }, async ({ principal, params, body }) => {
  const definition = railOfPath(params.kind);
  if (!definition) throw new NotFoundError();
  const connection = railConnectionOf(definition, body as Record<string, unknown>);
  await verifyRailConnection(definition, connection);
  const saved = await saveRailConnection(principal.accountId, definition.kind, connection);
  return ok(railPublicView(saved, principal.accountId));
});
