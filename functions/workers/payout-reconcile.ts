// Scheduled hourly: queues a reconciliation of every rail batch still processing and older than 10 minutes
// (one Query of the registry of open rail batches; docs/payouts.md "Reconciliation"). The payout-rails
// worker reads each batch back from its rail.
import { log } from '../../shared/log';
import { queueOpenBatchReconciles } from '../../shared/flows/rail-reconcile';
import { scheduledJob } from '../../shared/queue/worker';

export const handler = scheduledJob('payout-reconcile', async () => {
  const queued = await queueOpenBatchReconciles();
  log('info', 'payout-reconcile: queued', { queued });
  return { queued };
});
