// SQS consumer of `webhook-events`: fans outbox events out to their accounts' endpoints (the batch's
// events together: shared/webhooks/fanout-batch.ts); removes a page of a deleted endpoint's deliveries.
import type { QueueMessages } from '../../shared/queue/queues';
import { sqsBatchWorker } from '../../shared/queue/worker';
import { fanOutBatch } from '../../shared/webhooks/fanout-batch';

export const handler = sqsBatchWorker<QueueMessages['webhook-events']>('webhook-fanout', fanOutBatch);
