// POST /v1/api-keys/ - a new secret API key; the answer shows it once (an Idempotency-Key replay does not).
import { apiHandler, type Reply } from '../../shared/http/handler';
import { apiKeyBody } from '../../shared/schemas/team';
import { createNamedApiKey } from '../../shared/store/accounts';

export const handler = apiHandler({ body: apiKeyBody, access: 'owner', sessionOnly: true }, async ({ principal, body }): Promise<Reply> => {
  const { record, key } = await createNamedApiKey(principal.accountId, principal.plan, body.name ?? '');
  return { status: 201, body: { ...record, key }, replayBody: { ...record, key: null } };
});
