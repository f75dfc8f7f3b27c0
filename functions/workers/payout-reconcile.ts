// Scheduled hourly: queues a reconciliation of every rail batch still processing (docs/payouts.md).
// STUB: the payout flows fill it in.
import { scheduledJob } from '../../shared/queue/worker';

export const handler = scheduledJob('payout-reconcile', async () => undefined);
