// POST /v1/members/ - create a member (code generated when absent)
import { apiHandler, created } from '../../shared/http/handler';
import { memberView } from '../../shared/domain/views';
import { createMemberBody } from '../../shared/schemas/member';
import { createMember } from '../../shared/store/members';

export const handler = apiHandler({ body: createMemberBody }, async ({ principal, body }) => {
  const { member, campaign, subscription } = await createMember(principal.accountId, body);
  return created(memberView(member, campaign, subscription));
});
