// The signed-in operator (GET /auth/sessions/current/) and what their role lets the UI offer.
// The server enforces the same rules (docs/dashboard.md "Roles"); hiding a control only spares a 403.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Role, Session } from '../../api/types';

/**
 * - `manage`: members, referrals, campaigns, webhooks (owner, admin)
 * - `money`: approve and void rewards, payout batches and payouts (owner, admin, finance)
 * - `account`: account settings and the provider connection (owner, admin)
 * - `owner`: the team and the API keys (owner)
 */
export type Capability = 'manage' | 'money' | 'account' | 'owner';

const GRANTS: Record<Role, readonly Capability[]> = {
  owner: ['manage', 'money', 'account', 'owner'],
  admin: ['manage', 'money', 'account'],
  finance: ['money'],
  viewer: [],
};

export function roleCan(role: Role | undefined, capability: Capability): boolean {
  return role !== undefined && (GRANTS[role] ?? []).includes(capability);
}

export interface SessionState {
  session: Session;
  setSession: (session: Session) => void;
}

export const SessionContext = createContext<SessionState | null>(null);

export function useSession(): Session {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSession outside the signed-in app');
  return state.session;
}

export function useSessionState(): SessionState {
  const state = useContext(SessionContext);
  if (!state) throw new Error('useSessionState outside the signed-in app');
  return state;
}

/** Whether the signed-in role may use a control. */
export function useCan(capability: Capability): boolean {
  const state = useContext(SessionContext);
  return roleCan(state?.session.role, capability);
}
