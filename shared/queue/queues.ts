// The queues between the edges (webhook intake, conversion, member updates, the schedule) and the
// workers, and the messages they carry. CDK, the local runtime and the publisher all take the queue
// list from here; a function learns a queue's URL from the environment variable named here.
import type { AlertFields } from '../provider/signature';

export const QUEUES = {
  /** Verified Paddle alerts and background-sync pages, consumed by the subscription-sync worker. */
  'provider-events': { envVar: 'PROVIDER_EVENTS_QUEUE_URL' },
  /** Reward evaluations and credit applications, consumed by the reward fan-out worker. */
  rewards: { envVar: 'REWARDS_QUEUE_URL' },
  /** Outgoing webhook events handed over from the outbox, fanned out to the account's endpoints. */
  'webhook-events': { envVar: 'WEBHOOK_EVENTS_QUEUE_URL' },
  /** One delivery attempt of one event to one endpoint. */
  'webhook-deliveries': { envVar: 'WEBHOOK_DELIVERIES_QUEUE_URL' },
} as const;

export type QueueName = keyof typeof QUEUES;
export const QUEUE_NAMES = Object.keys(QUEUES) as QueueName[];

/** A verified Paddle Classic alert, exactly as decoded from the form body (p_signature removed). */
export interface PaddleAlertMessage {
  kind: 'paddle-alert';
  account_id: string;
  fields: AlertFields;
  /** Unix milliseconds when the intake accepted it. */
  received_at: number;
}

/** One page of the provider's subscription users for one account (background sync). */
export interface SyncAccountMessage {
  kind: 'sync-account';
  account_id: string;
  /** `live` = Paddle's default listing (active, trialing, past_due, paused); `deleted` = cancelled ones. */
  state: 'live' | 'deleted';
  page: number;
  /** Unix milliseconds when this sync run started: the "as of" time of the state it reads. */
  started_at: number;
}

export type ProviderEventMessage = PaddleAlertMessage | SyncAccountMessage;

/** Recompute the rewards of one converted referral from its subscription's payments. */
export interface EvaluateReferralMessage {
  kind: 'evaluate-referral';
  account_id: string;
  referral_id: string;
}

/** Apply a member's pending credits to the subscription now attached to them. */
export interface ApplyMemberCreditsMessage {
  kind: 'apply-member-credits';
  account_id: string;
  member_id: string;
}

export type RewardMessage = EvaluateReferralMessage | ApplyMemberCreditsMessage;

/** An outbox event to fan out to the account's endpoints (idempotent on the event id). */
export interface DispatchEventMessage {
  kind: 'dispatch-event';
  account_id: string;
  event_id: string;
}

/** Remove a page of a deleted endpoint's deliveries (idempotent; re-queued by the sweep until none remain). */
export interface PurgeEndpointMessage {
  kind: 'purge-endpoint';
  account_id: string;
  endpoint_id: string;
}

/** Make the due attempt of one delivery (idempotent on the delivery and its attempt count). */
export interface DeliverMessage {
  kind: 'deliver';
  account_id: string;
  endpoint_id: string;
  /** The delivery's sort key (`<event ms>#<event id>`). */
  delivery: string;
}

export interface QueueMessages {
  'provider-events': ProviderEventMessage;
  rewards: RewardMessage;
  'webhook-events': DispatchEventMessage | PurgeEndpointMessage;
  'webhook-deliveries': DeliverMessage;
}
