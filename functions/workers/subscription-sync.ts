// SQS consumer of `provider-events`: verified provider webhooks and background-sync pages -> subscriptions,
// payments, and reward evaluations. Partial batch responses: only failed records are redelivered.
import { processPaddleAlert, processProviderWebhook, processSyncPage } from '../../shared/flows/subscription-sync';
import type { ProviderEventMessage } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';

export const handler = sqsWorker<ProviderEventMessage>('subscription-sync', async (message) => {
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
