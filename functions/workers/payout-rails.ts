// SQS consumer of `payout-rails` (docs/payouts.md "Paying through a rail"): sends a rail batch, applies a
// verified rail webhook, reconciles a batch with its rail, re-sends an unclaimed payout. Every message is
// safe to repeat: the rail's idempotency keys are Refloop's own ids, and the ledger's writes are
// conditioned on what they read. A rail that is down throws: the message is retried.
import { applyStripeAccountUpdates } from '../../shared/flows/payout-methods';
import { applyRailOutcomes, sendRailBatch } from '../../shared/flows/rail-payouts';
import { reconcileRailBatch, resendRailPayout } from '../../shared/flows/rail-reconcile';
import type { QueueMessages } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';

export const handler = sqsWorker<QueueMessages['payout-rails']>('payout-rails', async (message) => {
  switch (message.kind) {
    case 'send-rail-batch':
      await sendRailBatch(message.account_id, message.batch_id);
      return;
    case 'rail-webhook':
      await applyRailOutcomes(message.account_id, message.rail, message.outcomes);
      if (message.account_updates.length > 0) await applyStripeAccountUpdates(message.account_id, message.account_updates);
      return;
    case 'reconcile-rail-batch':
      await reconcileRailBatch(message.account_id, message.batch_id);
      return;
    case 'resend-rail-payout':
      await resendRailPayout(message.account_id, message.payout_id, message.attempt);
      return;
    default:
      throw new PoisonMessageError(`payout-rails: unknown message ${(message as { kind?: unknown }).kind}`);
  }
});
