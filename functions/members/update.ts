// PATCH /v1/members/{id}/ - update a member; campaign / subscription take {id} or null.
// Answers 200: the specification's example shows 201, but PATCH changes an existing resource.
// Attaching a subscription to a member who has earned credit queues the application of credits that
// were waiting for one (sent on every such PATCH, so a retried request heals a failed send).
import { apiHandler, ok } from '../../shared/http/handler';
import { memberView } from '../../shared/domain/views';
import { publish } from '../../shared/queue/publish';
import { updateMemberBody } from '../../shared/schemas/member';
import { updateMember } from '../../shared/store/members';
import { refreshMemberPayouts } from '../../shared/flows/payouts';

export const handler = apiHandler({ body: updateMemberBody }, async ({ principal, params, body }) => {
  const { member, campaign, subscription } = await updateMember(principal.accountId, params.id ?? '', body);
  // A payout email given or removed: the member's collecting payouts become due or open at once.
  if (body.payout_email !== undefined) await refreshMemberPayouts(principal.accountId, member.id);
  if (body.subscription && member.credit_earned > 0) {
    await publish('rewards', { kind: 'apply-member-credits', account_id: principal.accountId, member_id: member.id });
  }
  return ok(memberView(member, campaign, subscription));
});
