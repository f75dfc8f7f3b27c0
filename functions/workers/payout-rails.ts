// SQS consumer of `payout-rails` (docs/payouts.md): sends a rail batch, applies a verified rail webhook,
// reconciles a batch with its rail. STUB: the payout flows fill it in (shared/flows/rail-payouts.ts).
import type { QueueMessages } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';

export const handler = sqsWorker<QueueMessages['payout-rails']>('payout-rails', async (message) => {
  throw new PoisonMessageError(`payout-rails: ${message.kind} is not handled yet`);
});
