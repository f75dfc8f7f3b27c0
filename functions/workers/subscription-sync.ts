// SQS consumer of `provider-events`: verified provider webhooks and background-sync pages -> subscriptions,
// payments, and reward evaluations. The whole batch is handed over at once: the webhooks of one account
// are applied together (shared/flows/provider-batch.ts: one read, one transaction per wave), sync pages
// each on its own. Partial batch responses: only failed records are redelivered.
// PROVIDER_EVENTS_PER_RECORD=1 applies each record on its own instead (the path before batches: every
// event read and written alone), to compare the two or to step back from the batch path without a deploy
// of new code.
import type { Context, SQSEvent } from 'aws-lambda';
import { config } from '../../shared/config';
import { processProviderEventBatch } from '../../shared/flows/provider-batch';
import { processPaddleAlert, processProviderWebhook, processSyncPage } from '../../shared/flows/subscription-sync';
import type { ProviderEventMessage } from '../../shared/queue/queues';
import { PoisonMessageError, sqsBatchWorker, sqsWorker } from '../../shared/queue/worker';

const perRecord = sqsWorker<ProviderEventMessage>('subscription-sync', async (message) => {
  switch (message.kind) {
    case 'paddle-alert':
      return processPaddleAlert(message);
    case 'provider-webhook':
      return processProviderWebhook(message);
    case 'sync-account':
      return processSyncPage(message);
    default:
      throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
  }
});
const batched = sqsBatchWorker<ProviderEventMessage>('subscription-sync', processProviderEventBatch);

export const handler = (event: SQSEvent, context?: Context) => (config().providerEventsPerRecord ? perRecord : batched)(event, context);
