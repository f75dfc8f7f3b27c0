// SQS consumer of `webhook-deliveries`: makes the due attempt of each delivery of the batch (signed POST,
// outcome recorded), all records at once, their claims and their outcomes each written in one transaction
// (shared/webhooks/delivery-writes.ts). What the attempts read first is read for the whole batch in one BatchGet
// (shared/store/prefetch.ts).
import type { Context, SQSEvent } from 'aws-lambda';
import type { DeliverMessage } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';
import { parsedBodies, prefetch } from '../../shared/store/prefetch';
import { attemptDelivery, deliveryReadKeys } from '../../shared/webhooks/deliver';
import { batchWrites } from '../../shared/webhooks/delivery-writes';

export const handler = async (event: SQSEvent, context?: Context) => {
  const records = event.Records ?? [];
  // The records the worker hands to the function below: those whose body is JSON (sqsWorker fails the others
  // on their own).
  const bodies = parsedBodies<DeliverMessage | null>(records);
  const writes = batchWrites(bodies.length);
  // What every attempt reads first, in one BatchGet for the batch (a failure: each reads on its own).
  const pre = await prefetch(bodies.filter(isDeliver).flatMap(deliveryReadKeys));
  return sqsWorker<DeliverMessage>(
    'webhook-delivery',
    async (message) => {
      const mine = writes.join();
      try {
        if (message.kind !== 'deliver')
          throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
        await attemptDelivery(message, mine, pre);
      } finally {
        mine.done();
      }
    },
    // Every record at once: a gathered write waits for the others' calls.
    Math.max(1, records.length),
  )(event, context);
};

/** A deliver message with the fields its keys are made of (others fail in the worker, on their own). */
const isDeliver = (m: DeliverMessage | null): m is DeliverMessage =>
  m?.kind === 'deliver' && typeof m.account_id === 'string' && typeof m.endpoint_id === 'string' && typeof m.delivery === 'string';
