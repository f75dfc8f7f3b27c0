// GET /v1/account/payout-rails/ - the account's connected payout rails (their public parts, never a secret)
// and every rail's connection form (shared/rails/registry.ts), for the dashboard's Settings. Owner or admin,
// dashboard session only (docs/payouts.md "Connecting a rail").
import { apiHandler, ok } from '../../shared/http/handler';
import { railOptions, railPublicView } from '../../shared/rails/options';
import { noQuery } from '../../shared/schemas/query';
import { railConnections } from '../../shared/store/rail-connections';

export const handler = apiHandler({ query: noQuery, access: 'write', sessionOnly: true }, async ({ principal }) =>
  ok({
    connected: (await railConnections(principal.accountId)).map((c) => railPublicView(c, principal.accountId)),
    rail_options: railOptions(),
  }),
);
