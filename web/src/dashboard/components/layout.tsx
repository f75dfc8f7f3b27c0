// The signed-in frame: skip link, the main navigation, the account and operator in the header, Log out.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, LOGIN_PATH } from '../api';
import { usePendingApplications } from '../lib/affiliates';
import { useOpenFlags } from '../lib/fraud';
import { useSession } from '../lib/session';
import { NAV } from '../routes';
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { useToast } from '../../ui/toast';

/** The pending applications beside their entry: a number read out with its meaning, hidden at zero. */
function PendingBadge() {
  const count = usePendingApplications();
  if (!count) return null;
  return (
    <span class="nav-count" data-pending-applications={String(count)}>
      <span class="sr-only"> (</span>
      {count > 99 ? '99+' : count}
      <span class="sr-only"> pending)</span>
    </span>
  );
}

/** The open fraud flags beside the review queue: hidden at zero. */
function OpenFlagsBadge() {
  const count = useOpenFlags();
  if (!count) return null;
  return (
    <span class="nav-count nav-count-warning" data-open-flags={String(count)}>
      <span class="sr-only"> (</span>
      {count > 99 ? '99+' : count}
      <span class="sr-only"> open)</span>
    </span>
  );
}

function isCurrent(path: string, href: string): boolean {
  const target = href.replace(/\/+$/, '');
  if (target === '/app') return path === '/app';
  return path === target || path.startsWith(`${target}/`);
}

export function Layout({ children }: { children: ComponentChildren }) {
  const session = useSession();
  const { path } = useLocation();
  const notify = useToast();
  const [leaving, setLeaving] = useState(false);

  const logOut = async () => {
    setLeaving(true);
    try {
      await api.DELETE('/auth/sessions/current/');
      location.assign(LOGIN_PATH);
    } catch {
      setLeaving(false);
      notify('Could not log out: the server could not be reached.', 'error');
    }
  };

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to main content
      </a>
      <div class="shell">
        <nav class="sidebar" aria-label="Main">
          <a class="brand" href="/app/">
            <span class="brand-mark" aria-hidden="true">
              R
            </span>
            <span class="brand-name">Refloop</span>
          </a>
          <ul class="nav-list">
            {NAV.map((item) => {
              const current = isCurrent(path, item.href);
              return (
                <li key={item.href}>
                  <a class={current ? 'nav-link is-current' : 'nav-link'} href={item.href} aria-current={current ? 'page' : undefined}>
                    <svg class="nav-icon" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
                      <path d={item.icon} />
                    </svg>
                    {item.label}
                    {item.badge === 'pending-applications' && <PendingBadge />}
                    {item.badge === 'open-flags' && <OpenFlagsBadge />}
                  </a>
                </li>
              );
            })}
          </ul>
        </nav>
        <div class="frame">
          <header class="topbar">
            <div class="topbar-account">
              <span class="account-name">{session.account_name}</span>
            </div>
            <div class="topbar-user">
              <span class="user-email">{session.email}</span>
              <Badge status={session.role} label={session.role} />
              <BusyButton variant="secondary" class="btn-small" busy={leaving} busyLabel="Logging out…" onClick={logOut}>
                Log out
              </BusyButton>
            </div>
          </header>
          <main id="main" class="main" tabIndex={-1}>
            {children}
          </main>
        </div>
      </div>
    </>
  );
}
