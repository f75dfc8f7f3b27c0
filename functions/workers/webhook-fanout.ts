// SQS consumer of `webhook-events`: fans one outbox event out to its account's endpoints; removes a page
// of a deleted endpoint's deliveries.
import type { QueueMessages } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';
import { dispatchEvent, purgeEndpoint } from '../../shared/webhooks/fanout';

export const handler = sqsWorker<QueueMessages['webhook-events']>('webhook-fanout', async (message) => {
  switch (message.kind) {
    case 'dispatch-event':
      await dispatchEvent(message.account_id, message.event_id);
      return;
    case 'purge-endpoint':
      await purgeEndpoint(message.account_id, message.endpoint_id);
      return;
    default:
      throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
  }
});
