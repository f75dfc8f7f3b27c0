// The dashboard's routes, one table: the router (main.tsx) renders a Route per entry, and the entries with
// `nav` are the main navigation (components/layout.tsx), in this order. A page added here with `nav` is
// both reachable and listed; one without (a detail page) is reachable and highlights its section's entry.
import type { ComponentType } from 'preact';
import { lazy } from 'preact-iso';
import { CampaignEdit, CampaignNew, Campaigns } from './pages/campaigns';
import { MemberDetail, Members } from './pages/members';
import { Overview } from './pages/overview';
import { PayoutBatch, PayoutBatches, Payouts } from './pages/payouts';
import { ReferralPage } from './pages/referral';
import { Referrals } from './pages/referrals';
import { Rewards } from './pages/rewards';
import { Subscriptions } from './pages/subscriptions';
import { WebhookDetail, Webhooks } from './pages/webhooks';

// Settings is the least visited page and the largest form: loaded when opened.
const Settings = lazy(() => import('./pages/settings').then((m) => m.Settings));
const EmailPreviews = lazy(() => import('./pages/settings/emails').then((m) => m.EmailPreviews));
// Applications (affiliate programmes) are visited by the accounts that run one: loaded when opened.
const Applications = lazy(() => import('./pages/applications').then((m) => m.Applications));
const ApplicationDetail = lazy(() => import('./pages/applications').then((m) => m.ApplicationDetail));
// The review queue and the fraud rules (docs/fraud.md): loaded when opened.
const ReviewQueue = lazy(() => import('./pages/review-queue').then((m) => m.ReviewQueue));
const FraudRulesPage = lazy(() => import('./pages/settings/fraud-rules').then((m) => m.FraudRulesPage));

/** The counts a navigation entry may show: pending applications, open fraud flags. */
export type NavBadge = 'pending-applications' | 'open-flags';

export interface DashboardRoute {
  /** The router's pattern (preact-iso: `:id` is a parameter). */
  path: string;
  // biome-ignore lint/suspicious/noExplicitAny: the pages take different props (path parameters).
  component: ComponentType<any>;
  /**
   * An entry of the main navigation: its label and its icon (an SVG path in a 24 x 24 box); `badge` names a
   * count shown beside it (components/layout.tsx), hidden while it is zero or unknown.
   */
  nav?: { label: string; icon: string; badge?: NavBadge };
}

export const ROUTES: readonly DashboardRoute[] = [
  { path: '/app', component: Overview, nav: { label: 'Overview', icon: 'M3 13h8V3H3v10zm0 8h8v-6H3v6zm10 0h8V11h-8v10zm0-18v6h8V3h-8z' } },
  {
    path: '/app/members',
    component: Members,
    nav: {
      label: 'Members',
      icon: 'M16 11a4 4 0 1 0-4-4 4 4 0 0 0 4 4zm-8 0a3 3 0 1 0-3-3 3 3 0 0 0 3 3zm0 2c-2.7 0-6 1.3-6 3.5V19h8v-2.5c0-1 .4-2 1.2-2.7A9.7 9.7 0 0 0 8 13zm8 0c-3 0-7 1.5-7 4v2h14v-2c0-2.5-4-4-7-4z',
    },
  },
  { path: '/app/members/:id', component: MemberDetail },
  {
    path: '/app/applications',
    component: Applications,
    nav: {
      label: 'Applications',
      icon: 'M14 2H6a2 2 0 0 0-2 2v16a2 2 0 0 0 2 2h12a2 2 0 0 0 2-2V8l-6-6zm-1 7V3.5L18.5 9H13zM8 13h8v2H8v-2zm0 4h5v2H8v-2z',
      badge: 'pending-applications',
    },
  },
  { path: '/app/applications/:id', component: ApplicationDetail },
  {
    path: '/app/review',
    component: ReviewQueue,
    nav: {
      label: 'Review queue',
      icon: 'M12 2 4 5v6c0 5 3.4 9.7 8 11 4.6-1.3 8-6 8-11V5l-8-3zm-1 14-4-4 1.4-1.4L11 13.2l4.6-4.6L17 10l-6 6z',
      badge: 'open-flags',
    },
  },
  {
    path: '/app/referrals',
    component: Referrals,
    nav: {
      label: 'Referrals',
      icon: 'M10.6 13.4a1 1 0 0 1 0-1.4l3-3a3 3 0 1 1 4.2 4.2l-2 2-1.4-1.4 2-2a1 1 0 1 0-1.4-1.4l-3 3a1 1 0 0 1-1.4 0zm2.8-2.8a1 1 0 0 1 0 1.4l-3 3a3 3 0 1 1-4.2-4.2l2-2 1.4 1.4-2 2a1 1 0 1 0 1.4 1.4l3-3a1 1 0 0 1 1.4 0z',
    },
  },
  { path: '/app/referrals/:id', component: ReferralPage },
  { path: '/app/campaigns', component: Campaigns, nav: { label: 'Campaigns', icon: 'M4 4h2v16H4V4zm4 1h10l-2 4 2 4H8V5z' } },
  { path: '/app/campaigns/new', component: CampaignNew },
  { path: '/app/campaigns/:id', component: CampaignEdit },
  {
    path: '/app/subscriptions',
    component: Subscriptions,
    nav: { label: 'Subscriptions', icon: 'M4 6h16v3H4V6zm0 5h16v7H4v-7zm2 2v2h5v-2H6z' },
  },
  {
    path: '/app/rewards',
    component: Rewards,
    nav: {
      label: 'Rewards',
      icon: 'M20 7h-2.2A3 3 0 0 0 12 4.2 3 3 0 0 0 6.2 7H4v4h1v9h14v-9h1V7zm-6-1a1 1 0 1 1 1 1h-1V6zM9 6a1 1 0 0 1 1 1H9a1 1 0 0 1 0-2zm2 12H7v-7h4v7zm0-9H6V9h5v0zm2 9v-7h4v7h-4zm5-9h-5V9h5v0z',
    },
  },
  {
    path: '/app/payouts',
    component: Payouts,
    nav: { label: 'Payouts', icon: 'M3 6h18v12H3V6zm2 2v8h14V8H5zm7 1.5a2.5 2.5 0 1 1 0 5 2.5 2.5 0 0 1 0-5z' },
  },
  { path: '/app/payouts/batches', component: PayoutBatches },
  { path: '/app/payouts/batches/:id', component: PayoutBatch },
  {
    path: '/app/webhooks',
    component: Webhooks,
    nav: {
      label: 'Webhooks',
      icon: 'M12 3a4 4 0 0 1 3.5 6l-1.7-1A2 2 0 1 0 10 9l-3 5.2a2 2 0 1 1-1.7-1L8 8.5A4 4 0 0 1 12 3zm6 9a4 4 0 1 1-2 7.5l1-1.7a2 2 0 1 0 1-3.8H12v-2h6zM6 12h2v2H6a2 2 0 1 0 2 2h2a4 4 0 1 1-4-4z',
    },
  },
  { path: '/app/webhooks/:id', component: WebhookDetail },
  {
    path: '/app/settings',
    component: Settings,
    nav: {
      label: 'Settings',
      icon: 'M19.4 13a7.5 7.5 0 0 0 0-2l2.1-1.6-2-3.5-2.5 1a7.6 7.6 0 0 0-1.7-1L15 3h-4l-.4 2.9a7.6 7.6 0 0 0-1.7 1l-2.5-1-2 3.5L6.6 11a7.5 7.5 0 0 0 0 2l-2.1 1.6 2 3.5 2.5-1a7.6 7.6 0 0 0 1.7 1L11 21h4l.4-2.9a7.6 7.6 0 0 0 1.7-1l2.5 1 2-3.5L19.4 13zM13 15.5a3.5 3.5 0 1 1 0-7 3.5 3.5 0 0 1 0 7z',
    },
  },
  { path: '/app/settings/emails', component: EmailPreviews },
  { path: '/app/settings/fraud', component: FraudRulesPage },
];

/** The main navigation, from the table: the link of the Overview is `/app/` (the app's root). */
export const NAV: readonly { href: string; label: string; icon: string; badge?: NavBadge }[] = ROUTES.flatMap((r) =>
  r.nav ? [{ href: r.path === '/app' ? '/app/' : r.path, ...r.nav }] : [],
);
