// GET /portal/v1/stats/?interval=day|week|month - the member's clicks, referrals and conversions per bucket
// (30 days, 12 weeks or 12 months), for the portal's chart; `&sub=<slug>` narrows it to one of their sub-ids.
import { portalStats } from '../../shared/flows/portal';
import { portalHandler } from '../../shared/http/portal';
import { portalStatsQuery } from '../../shared/schemas/portal';

export const handler = portalHandler({ query: portalStatsQuery }, async ({ session, query }) => ({
  status: 200,
  body: await portalStats(session, query.interval, undefined, query.sub),
}));
