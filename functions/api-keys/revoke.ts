// DELETE /v1/api-keys/{id}/ - revoke a secret API key (its record stays, with revoked_at).
import { apiHandler, noContent } from '../../shared/http/handler';
import { revokeApiKeyById } from '../../shared/store/team';

export const handler = apiHandler({ access: 'owner', sessionOnly: true }, async ({ principal, params }) => {
  await revokeApiKeyById(principal.accountId, params.id ?? '');
  return noContent();
});
