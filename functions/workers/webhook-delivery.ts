// SQS consumer of `webhook-deliveries`: makes the due attempt of one delivery (signed POST, outcome recorded).
import type { DeliverMessage } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';
import { attemptDelivery } from '../../shared/webhooks/deliver';

export const handler = sqsWorker<DeliverMessage>('webhook-delivery', async (message) => {
  if (message.kind !== 'deliver') throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
  await attemptDelivery(message);
});
