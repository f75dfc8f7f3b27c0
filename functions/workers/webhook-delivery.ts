// SQS consumer of `webhook-deliveries`: makes the due attempt of each delivery of the batch (signed POST,
// outcome recorded), all records at once, their claims and their outcomes each written in one transaction
// (shared/webhooks/delivery-writes.ts).
import type { Context, SQSEvent } from 'aws-lambda';
import type { DeliverMessage } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';
import { attemptDelivery } from '../../shared/webhooks/deliver';
import { batchWrites } from '../../shared/webhooks/delivery-writes';

const parses = (body: string) => {
  try {
    JSON.parse(body);
    return true;
  } catch {
    return false;
  }
};

export const handler = (event: SQSEvent, context?: Context) => {
  const records = event.Records ?? [];
  // The records the worker hands to the function below (sqsWorker fails a body that is not JSON on its own).
  const writes = batchWrites(records.filter((r) => parses(r.body)).length);
  return sqsWorker<DeliverMessage>(
    'webhook-delivery',
    async (message) => {
      const mine = writes.join();
      try {
        if (message.kind !== 'deliver')
          throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
        await attemptDelivery(message, mine);
      } finally {
        mine.done();
      }
    },
    // Every record at once: a gathered write waits for the others' calls.
    Math.max(1, records.length),
  )(event, context);
};
