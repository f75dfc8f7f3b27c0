// SQS consumer of `provider-events`: verified Paddle alerts and background-sync pages -> subscriptions,
// payments, and reward evaluations. Partial batch responses: only failed records are redelivered.
import { processPaddleAlert, processSyncPage } from '../../shared/flows/subscription-sync';
import type { ProviderEventMessage } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';

export const handler = sqsWorker<ProviderEventMessage>('subscription-sync', async (message) => {
  switch (message.kind) {
    case 'paddle-alert':
      return processPaddleAlert(message);
    case 'sync-account':
      return processSyncPage(message);
    default:
      throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
  }
});
