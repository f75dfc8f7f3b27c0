// The signed-in frame: skip link, the main navigation, the account and operator in the header, Log out.
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { useLocation } from 'preact-iso';
import { api, LOGIN_PATH } from '../api';
import { useSession } from '../lib/session';
import { Badge } from '../../ui/badge';
import { BusyButton } from '../../ui/busy-button';
import { useToast } from '../../ui/toast';

const NAV: { href: string; label: string; icon: string }[] = [
  { href: '/app/', label: 'Overview', icon: 'M3 13h8V3H3v10zm0 8h8v-6H3v6zm10 0h8V11h-8v10zm0-18v6h8V3h-8z' },
  { href: '/app/members', label: 'Members', icon: 'M16 11a4 4 0 1 0-4-4 4 4 0 0 0 4 4zm-8 0a3 3 0 1 0-3-3 3 3 0 0 0 3 3zm0 2c-2.7 0-6 1.3-6 3.5V19h8v-2.5c0-1 .4-2 1.2-2.7A9.7 9.7 0 0 0 8 13zm8 0c-3 0-7 1.5-7 4v2h14v-2c0-2.5-4-4-7-4z' },
  { href: '/app/referrals', label: 'Referrals', icon: 'M10.6 13.4a1 1 0 0 1 0-1.4l3-3a3 3 0 1 1 4.2 4.2l-2 2-1.4-1.4 2-2a1 1 0 1 0-1.4-1.4l-3 3a1 1 0 0 1-1.4 0zm2.8-2.8a1 1 0 0 1 0 1.4l-3 3a3 3 0 1 1-4.2-4.2l2-2 1.4 1.4-2 2a1 1 0 1 0 1.4 1.4l3-3a1 1 0 0 1 1.4 0z' },
  { href: '/app/campaigns', label: 'Campaigns', icon: 'M4 4h2v16H4V4zm4 1h10l-2 4 2 4H8V5z' },
  { href: '/app/subscriptions', label: 'Subscriptions', icon: 'M4 6h16v3H4V6zm0 5h16v7H4v-7zm2 2v2h5v-2H6z' },
  { href: '/app/rewards', label: 'Rewards', icon: 'M20 7h-2.2A3 3 0 0 0 12 4.2 3 3 0 0 0 6.2 7H4v4h1v9h14v-9h1V7zm-6-1a1 1 0 1 1 1 1h-1V6zM9 6a1 1 0 0 1 1 1H9a1 1 0 0 1 0-2zm2 12H7v-7h4v7zm0-9H6V9h5v0zm2 9v-7h4v7h-4zm5-9h-5V9h5v0z' },
  { href: '/app/payouts', label: 'Payouts', icon: 'M3 6h18v12H3V6zm2 2v8h14V8H5zm7 1.5a2.5 2.5 0 1 1 0 5 2.5 2.5 0 0 1 0-5z' },
  { href: '/app/webhooks', label: 'Webhooks', icon: 'M12 3a4 4 0 0 1 3.5 6l-1.7-1A2 2 0 1 0 10 9l-3 5.2a2 2 0 1 1-1.7-1L8 8.5A4 4 0 0 1 12 3zm6 9a4 4 0 1 1-2 7.5l1-1.7a2 2 0 1 0 1-3.8H12v-2h6zM6 12h2v2H6a2 2 0 1 0 2 2h2a4 4 0 1 1-4-4z' },
  { href: '/app/settings', label: 'Settings', icon: 'M19.4 13a7.5 7.5 0 0 0 0-2l2.1-1.6-2-3.5-2.5 1a7.6 7.6 0 0 0-1.7-1L15 3h-4l-.4 2.9a7.6 7.6 0 0 0-1.7 1l-2.5-1-2 3.5L6.6 11a7.5 7.5 0 0 0 0 2l-2.1 1.6 2 3.5 2.5-1a7.6 7.6 0 0 0 1.7 1L11 21h4l.4-2.9a7.6 7.6 0 0 0 1.7-1l2.5 1 2-3.5L19.4 13zM13 15.5a3.5 3.5 0 1 1 0-7 3.5 3.5 0 0 1 0 7z' },
];

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
