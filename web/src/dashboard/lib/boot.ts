// The session the login page just created, handed to the app so it does not ask for it again.
import type { Session } from '../../api/types';

let fromLogin: Session | null = null;

export function handOverSession(session: Session): void {
  fromLogin = session;
}

export function takeSessionFromLogin(): Session | null {
  const session = fromLogin;
  fromLogin = null;
  return session;
}
