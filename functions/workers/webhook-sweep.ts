// Scheduled every minute: re-queues outbox events whose hand-off did not happen and deliveries that are due.
import { scheduledJob } from '../../shared/queue/worker';
import { sweep } from '../../shared/webhooks/sweep';

export const handler = scheduledJob('webhook-sweep', sweep);
