// The route groups: each group of functions/routes.ts gets a nested stack of its own (./route-stack.ts), and
// the queue workers and scheduled jobs one more (./workers-stack.ts), so that no CloudFormation template
// comes near the 500-resource limit and a new route costs resources only in its own group's template.
//
// A route's group follows from its handler's folder (`functions/<folder>/...`): a route added to an existing
// folder joins that folder's group without an edit here; a new folder (or a handler directly in functions/)
// lands in the `ApiRoutes` group until it is listed below.
import type { Route } from '../../functions/routes';

export interface RouteGroup {
  /** The nested stack's construct id (`RefloopApi/<id>`), its logical id's prefix in RefloopApi's template. */
  id: string;
  /** What the group serves (the nested stack's description). */
  description: string;
  /** The handler folders under functions/ whose routes belong to it. */
  folders: readonly string[];
}

/** The group of every route whose folder no other group lists. */
export const DEFAULT_ROUTE_GROUP = 'ApiRoutes';

export const ROUTE_GROUPS: readonly RouteGroup[] = [
  {
    id: DEFAULT_ROUTE_GROUP,
    description: 'the /v1/ API of referrals, members, campaigns and subscriptions, the documentation and health',
    folders: ['referrals', 'members', 'campaigns', 'subscriptions', 'docs'],
  },
  {
    id: 'MoneyRoutes',
    description: 'rewards, payouts, payout batches, payout-rail connections, reports and exports',
    folders: ['rewards', 'payouts', 'payout-batches', 'payout-rails', 'reports', 'exports'],
  },
  {
    id: 'DashboardRoutes',
    description: 'the dashboard (login, team, API keys, account), the member portal, unsubscribe links and the browser scripts',
    folders: ['auth', 'team', 'api-keys', 'account', 'portal', 'unsubscribe', 'js'],
  },
  {
    id: 'AffiliateRoutes',
    description: 'affiliate programmes: the public sign-up pages, applications, email previews, fraud rules and the review queue',
    folders: ['join', 'applications', 'affiliates', 'email-templates', 'fraud-rules', 'fraud-flags'],
  },
  {
    id: 'IntakeRoutes',
    description: 'provider webhooks (intake) and the outgoing webhook endpoints',
    folders: ['webhooks', 'webhook-endpoints'],
  },
];

/** The nested stack of the queue workers, the scheduled jobs and the SES events (./workers-stack.ts). */
export const WORKERS_GROUP = 'Workers';

/** `functions/rewards/list.ts` -> `rewards`; a handler directly in functions/ has no folder (''). */
export function routeFolder(route: Pick<Route, 'entry'>): string {
  const parts = route.entry.split('/');
  return parts.length > 2 && parts[0] === 'functions' ? (parts[1] as string) : '';
}

/** The id of the group a route belongs to. */
export function routeGroup(route: Pick<Route, 'entry'>): string {
  const folder = routeFolder(route);
  return ROUTE_GROUPS.find((g) => g.folders.includes(folder))?.id ?? DEFAULT_ROUTE_GROUP;
}
