// SQS consumer of `provider-events`: verified provider webhooks and background-sync pages -> subscriptions,
// payments, and reward evaluations. The whole batch is handed over at once: the webhooks of one account
// are applied together (shared/flows/provider-batch.ts: one read, one transaction per wave), sync pages
// each on its own. Partial batch responses: only failed records are redelivered.
import { processProviderEventBatch } from '../../shared/flows/provider-batch';
import type { ProviderEventMessage } from '../../shared/queue/queues';
import { sqsBatchWorker } from '../../shared/queue/worker';

export const handler = sqsBatchWorker<ProviderEventMessage>('subscription-sync', processProviderEventBatch);
