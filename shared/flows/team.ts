// Inviting someone to an account's team (POST /v1/team/, a dashboard owner's session): they are added with
// their role, then this account's login link is queued for them (the member-emails worker makes the token
// and mails it: shared/email/login-links.ts).
import type { Role } from '../domain/team';
import { publish } from '../queue/publish';
import { addTeamMember, type TeamMember } from '../store/team';

export async function inviteTeamMember(
  accountId: string,
  invite: { email: string; role: Role },
  by: { baseUrl: string; email: string },
): Promise<TeamMember> {
  const member = await addTeamMember(accountId, invite.email, invite.role);
  await publish('member-emails', {
    kind: 'login-link',
    email: member.email,
    base_url: by.baseUrl,
    account_id: accountId,
    invited_by: by.email,
  });
  return member;
}
