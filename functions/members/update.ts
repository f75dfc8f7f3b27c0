// PATCH /v1/members/{id}/ - update a member; campaign / subscription take {id} or null.
// Answers 200: the specification's example shows 201, but PATCH changes an existing resource.
// What follows from the change (payouts, credits waiting for a subscription) is the flow's (shared/flows/members.ts).
import { apiHandler, ok } from '../../shared/http/handler';
import { memberView } from '../../shared/domain/views';
import { updateMemberBody } from '../../shared/schemas/member';
import { changeMember } from '../../shared/flows/members';

export const handler = apiHandler({ body: updateMemberBody }, async ({ principal, params, body }) => {
  const { member, campaign, subscription } = await changeMember(principal.accountId, params.id ?? '', body);
  return ok(memberView(member, campaign, subscription));
});
