// Changing a member, whoever asks: the API and the dashboard (PATCH /v1/members/{id}/) and the member portal
// (PATCH /portal/v1/me/, which may change only the payout email and the email opt-out). The store writes
// the member; what follows from the change is decided here:
// - a payout method chosen: only a rail the account has connected (or null), else 400;
// - a payout email given or removed, or a payout method changed: the member's collecting payouts become due or open at once;
// - a subscription attached to a member who has earned credit: the application of the credits that waited
//   for one is queued (sent on every such change, so a retried request heals a failed send).
import type { Member } from '../domain/models';
import { publish } from '../queue/publish';
import type { UpdateMemberInput } from '../schemas/member';
import { updateMember, type MemberWithRelations } from '../store/members';
import { checkPayoutMethod } from './payout-methods';
import { refreshMemberPayouts } from './payouts';

/** Writes the change to the member, then what follows from it (memberChanged). */
export async function changeMember(accountId: string, memberId: string, patch: UpdateMemberInput): Promise<MemberWithRelations> {
  // A method chosen: its rail's check runs beside the member's reads (no round trip of its own).
  const guard = patch.payout_method ? checkPayoutMethod(accountId, patch.payout_method) : undefined;
  const related = await updateMember(accountId, memberId, patch, guard);
  await memberChanged(accountId, related.member, patch);
  return related;
}

/** What follows from a change written to the member: its payouts' status, and credits waiting for a subscription. */
export async function memberChanged(
  accountId: string,
  member: Member,
  patch: Pick<UpdateMemberInput, 'payout_email' | 'payout_method' | 'subscription'>,
): Promise<void> {
  if (patch.payout_email !== undefined || patch.payout_method !== undefined) await refreshMemberPayouts(accountId, member.id);
  if (patch.subscription && member.credit_earned > 0) {
    await publish('rewards', { kind: 'apply-member-credits', account_id: accountId, member_id: member.id });
  }
}
