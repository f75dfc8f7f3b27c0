// THE worker table: every SQS consumer and scheduled job. The CDK stack builds one queue + worker
// construct per queue consumer and one schedule per job from it; the local runtime starts one poller
// per consumer from it. Adding a worker = one line here + one handler file.
import type { QueueName } from '../shared/queue/queues';

export interface QueueWorker {
  /** Stable name, used for the Lambda function's logical id. */
  name: string;
  /** Handler module relative to the repository root; it exports `handler` (SQSEvent -> SQSBatchResponse). */
  entry: string;
  /** The queue it consumes. */
  queue: QueueName;
  /** Lambda timeout; the queue's visibility timeout is 6x this. */
  timeoutSeconds: number;
  batchSize: number;
  /**
   * How long Lambda waits to fill a batch, in seconds (the event source's MaximumBatchingWindowInSeconds;
   * default 1, the local pollers play it too). 0: invoked as soon as a message is there, for a worker whose
   * records gain nothing from company and whose effect someone waits for. Lambda requires at least 1 above
   * 10 records a batch (infra/cloud/queue-worker.ts checks it).
   */
  batchingWindowSeconds?: 0 | 1;
  /** Queues it sends to. */
  sends: QueueName[];
  /** Whether it reads the provider's secret settings (vendor auth code). */
  providerSecrets: boolean;
  /** Whether it reads webhook signing secrets (to sign deliveries); others are denied them. */
  webhookSecrets?: boolean;
  /** Whether it reads payout-rail secrets (`A#<acct>#RAIL_SECRET`, to send money); others are denied them. */
  railSecrets?: boolean;
}

export interface ScheduledJob {
  name: string;
  entry: string;
  /** Minutes between runs. */
  everyMinutes: number;
  timeoutSeconds: number;
  sends: QueueName[];
  providerSecrets: boolean;
}

export const workers: readonly QueueWorker[] = [
  {
    name: 'SubscriptionSync',
    entry: 'functions/workers/subscription-sync.ts',
    queue: 'provider-events',
    timeoutSeconds: 30,
    batchSize: 25,
    // fraud: a converted referral's subscription that told a payer (shared/flows/payer-ids.ts).
    sends: ['provider-events', 'rewards', 'webhook-events', 'fraud'],
    providerSecrets: true,
  },
  {
    name: 'RewardFanout',
    entry: 'functions/workers/reward-fanout.ts',
    queue: 'rewards',
    timeoutSeconds: 30,
    batchSize: 10,
    // No batching window: its records run one by one (nothing is read or written for the batch as a whole),
    // and the reward a conversion earns is what members and operators wait for. A window would only cost
    // each reward up to a second (docs/capacity.md "Freshness on npm start").
    batchingWindowSeconds: 0,
    sends: ['rewards', 'member-emails', 'webhook-events'],
    providerSecrets: true,
  },
  {
    // The only function that bundles the SES client and may send email (ses:SendEmail on the identity).
    name: 'MemberEmails',
    entry: 'functions/workers/member-emails.ts',
    queue: 'member-emails',
    timeoutSeconds: 20,
    batchSize: 10,
    sends: [],
    providerSecrets: false,
  },
  {
    name: 'EmailEvents',
    entry: 'functions/workers/email-events.ts',
    queue: 'email-events',
    timeoutSeconds: 10,
    batchSize: 10,
    sends: [],
    providerSecrets: false,
  },
  {
    // One outbox event -> one delivery per subscribed endpoint; a deleted endpoint's deliveries removed.
    name: 'WebhookFanout',
    entry: 'functions/workers/webhook-fanout.ts',
    queue: 'webhook-events',
    timeoutSeconds: 30,
    // 25, like SubscriptionSync: a batch's fixed calls (one BatchGet, one Query and one transaction per
    // account) are shared by more events (docs/webhooks.md "Fan-out").
    batchSize: 25,
    // fraud: the events the fraud rules look at are handed on to the fraud-screen worker.
    sends: ['webhook-deliveries', 'webhook-events', 'fraud'],
    providerSecrets: false,
  },
  {
    // One signed POST per record (10 s timeout each, 5 records at a time).
    name: 'WebhookDelivery',
    entry: 'functions/workers/webhook-delivery.ts',
    queue: 'webhook-deliveries',
    timeoutSeconds: 30,
    batchSize: 5,
    sends: [],
    providerSecrets: false,
    webhookSecrets: true,
  },
  {
    // Payout rails (docs/payouts.md): sends a batch through its rail, applies a verified rail webhook's
    // outcomes to the ledger, reads a batch back from its rail (reconciliation). The one worker that holds
    // rail secrets. One message at a time: a batch's sends are many calls to the rail.
    name: 'PayoutRails',
    entry: 'functions/workers/payout-rails.ts',
    queue: 'payout-rails',
    timeoutSeconds: 120,
    batchSize: 1,
    // webhook-events: the payout.* events its ledger writes hand to the fan-out at once.
    sends: ['member-emails', 'payout-rails', 'webhook-events'],
    providerSecrets: false,
    railSecrets: true,
  },
  {
    // Fraud rules (docs/fraud.md): runs the rules over what a committed event is about and records what they
    // find (flags, holds, fraud.flagged). Off the request path: the rules that need history run here.
    name: 'FraudScreen',
    entry: 'functions/workers/fraud-screen.ts',
    queue: 'fraud',
    timeoutSeconds: 60,
    batchSize: 10,
    sends: ['webhook-events'],
    providerSecrets: false,
  },
];

export const scheduledJobs: readonly ScheduledJob[] = [
  {
    // Enqueues one sync-account message per account with provider settings; the pages are read by
    // the subscription-sync worker, so no single invocation grows with the number of subscriptions.
    name: 'ProviderBackfill',
    entry: 'functions/workers/provider-backfill.ts',
    everyMinutes: 360,
    timeoutSeconds: 60,
    sends: ['provider-events'],
    providerSecrets: false,
  },
  {
    // Queues one approve-due message per account (rewards queue): commissions whose hold has ended are
    // approved into their member's payout. Approvals of a hold of 0 days happen at once, in the evaluation.
    name: 'RewardApprovals',
    entry: 'functions/workers/reward-approvals.ts',
    everyMinutes: 60,
    timeoutSeconds: 60,
    sends: ['rewards'],
    providerSecrets: false,
  },
  {
    // Daily; on the 1st (UTC) it queues one monthly-summary email per member of each account that turned
    // the summary on (their registry, a Query), for the month that ended (docs/affiliate-emails.md).
    name: 'AffiliateSummary',
    entry: 'functions/workers/affiliate-summary.ts',
    everyMinutes: 1440,
    timeoutSeconds: 300,
    sends: ['member-emails'],
    providerSecrets: false,
  },
  {
    // The outbox's healing path and the retry clock of webhook deliveries (sparse GSI2 partitions).
    name: 'WebhookSweep',
    entry: 'functions/workers/webhook-sweep.ts',
    everyMinutes: 1,
    timeoutSeconds: 60,
    sends: ['webhook-events', 'webhook-deliveries'],
    providerSecrets: false,
  },
  {
    // Hourly: queues a reconcile-rail-batch message for each rail batch still processing (a registry of
    // open rail batches, a Query; docs/payouts.md "Reconciliation").
    name: 'PayoutReconcile',
    entry: 'functions/workers/payout-reconcile.ts',
    everyMinutes: 60,
    timeoutSeconds: 60,
    sends: ['payout-rails'],
    providerSecrets: false,
  },
];
