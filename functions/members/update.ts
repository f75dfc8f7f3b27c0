// PATCH /v1/members/{id}/ - update a member; campaign / subscription take {id} or null.
// Answers 200: the specification's example shows 201, but PATCH changes an existing resource.
import { apiHandler, ok } from '../../shared/http/handler';
import { memberView } from '../../shared/domain/views';
import { updateMemberBody } from '../../shared/schemas/member';
import { updateMember } from '../../shared/store/members';

export const handler = apiHandler({ body: updateMemberBody }, async ({ principal, params, body }) => {
  const { member, campaign, subscription } = await updateMember(principal.accountId, params.id ?? '', body);
  return ok(memberView(member, campaign, subscription));
});
