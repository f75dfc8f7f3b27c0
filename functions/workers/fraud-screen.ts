// SQS consumer of `fraud`: runs the fraud rules over what one committed event is about (docs/fraud.md).
import type { QueueMessages } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';
import { screenEvent } from '../../shared/flows/fraud-screen';

export const handler = sqsWorker<QueueMessages['fraud']>('fraud-screen', async (message) => {
  if (message.kind !== 'screen') throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
  await screenEvent(message);
});
