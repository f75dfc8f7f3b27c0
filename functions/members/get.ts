// GET /v1/members/{id}/ - retrieve a member with its campaign and subscription
import { apiHandler, ok } from '../../shared/http/handler';
import { memberView } from '../../shared/domain/views';
import { getMemberWithRelations } from '../../shared/store/members';

export const handler = apiHandler({}, async ({ principal, params }) => {
  const { member, campaign, subscription } = await getMemberWithRelations(principal.accountId, params.id ?? '');
  return ok(memberView(member, campaign, subscription));
});
