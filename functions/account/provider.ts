// POST /v1/account/provider/ - connect the account to its payment provider, any of shared/billing/registry.ts
// (owner or admin, dashboard session only: an API key never changes provider secrets). The secrets are written to
// their own items, which IAM denies to every function that does not need them; the answer shows the
// connection's public part and the webhook URL to give the provider, never a secret.
import { DetailError } from '../../shared/domain/errors';
import { apiHandler, ok } from '../../shared/http/handler';
import { connectionOf } from '../../shared/billing/connections';
import { providerBody } from '../../shared/schemas/team';
import { accountSettings } from '../../shared/store/account-settings';
import { ProviderSwitchRefusedError, saveProviderConnection } from '../../shared/store/provider';

export const handler = apiHandler({ body: providerBody, sessionOnly: true }, async ({ principal, body, baseUrl }) => {
  const connection = connectionOf(body);
  try {
    await saveProviderConnection(principal.accountId, connection);
  } catch (err) {
    if (err instanceof ProviderSwitchRefusedError)
      throw new DetailError(409, `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`);
    throw err;
  }
  return ok((await accountSettings(principal.accountId, baseUrl)).provider);
});
