// SQS consumer of `webhook-events`: fans one outbox event out to its account's endpoints.
import type { DispatchEventMessage } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';
import { dispatchEvent } from '../../shared/webhooks/fanout';

export const handler = sqsWorker<DispatchEventMessage>('webhook-fanout', async (message) => {
  if (message.kind !== 'dispatch-event') throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
  await dispatchEvent(message.account_id, message.event_id);
});
