// Scheduled: queue one background-sync run (live and deleted subscriptions, page 1) per account with
// provider settings. The pages are read by the subscription-sync worker, one message per page, so this
// job stays small whatever the number of subscriptions, and a missed webhook heals itself.
import { startBackfill } from '../../shared/flows/resync';
import { scheduledJob } from '../../shared/queue/worker';

export const handler = scheduledJob('provider-backfill', startBackfill);
