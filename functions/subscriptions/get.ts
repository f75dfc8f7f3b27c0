// GET /v1/subscriptions/{id}/ - retrieve a subscription by the provider's id
import { NotFoundError } from '../../shared/domain/errors';
import { apiHandler, ok } from '../../shared/http/handler';
import { subscriptionView } from '../../shared/domain/views';
import { parseSubscriptionId } from '../../shared/schemas/subscription-id';
import { getSubscriptionOrThrow } from '../../shared/store/subscriptions';

export const handler = apiHandler({}, async ({ principal, params }) => {
  const id = parseSubscriptionId(params.id);
  if (id === null) throw new NotFoundError();
  return ok(subscriptionView(await getSubscriptionOrThrow(principal.accountId, id)));
});
