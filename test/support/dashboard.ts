// Dashboard sessions for integration tests (docs/dashboard.md "Roles"): a team member of a
// given role added through the store, a login token issued for them and traded for a session, as the
// login-link worker and POST /auth/sessions/ would; and the headers a browser on this site would send.
import './local-guard';
import { randomBytes } from 'node:crypto';
import type { Role } from '../../shared/domain/team';
import { addTeamMember, issueLoginToken, openSession, type Session, type TeamMember } from '../../shared/store/team';

/** The origin of the requests test/support/api.ts sends (`https://api.test`). */
export const API_ORIGIN = 'https://api.test';

export interface DashboardLogin {
  member: TeamMember;
  /** The session's token: the `refloop_session` cookie's value. */
  token: string;
  session: Session;
  /** `cookie` and (for writes) `origin` headers of a browser on this site. */
  headers: Record<string, string>;
}

/** A fresh address (team addresses are unique per account; logins are rate limited per address). */
export const freshEmail = (tag = 'op') => `${tag}-${randomBytes(5).toString('hex')}@team.example`;

/** Cookie (and Origin) headers for a session token; `origin: null` leaves the Origin out. */
export function sessionHeaders(token: string, origin: string | null = API_ORIGIN): Record<string, string> {
  return { cookie: `refloop_session=${token}`, ...(origin === null ? {} : { origin }) };
}

/** Adds a team member of `role` (a fresh address unless given) and opens a session for them through the store. */
export async function loginAs(accountId: string, role: Role, email = freshEmail(role), origin = API_ORIGIN): Promise<DashboardLogin> {
  const member = await addTeamMember(accountId, email, role);
  const { token: linkToken } = await issueLoginToken(accountId, member.id);
  const { token, session } = await openSession(linkToken);
  return { member, token, session, headers: sessionHeaders(token, origin) };
}

/** Another session for an existing member (a second browser). */
export async function anotherSession(accountId: string, member: TeamMember, origin = API_ORIGIN): Promise<Omit<DashboardLogin, 'member'>> {
  const { token: linkToken } = await issueLoginToken(accountId, member.id);
  const { token, session } = await openSession(linkToken);
  return { token, session, headers: sessionHeaders(token, origin) };
}
