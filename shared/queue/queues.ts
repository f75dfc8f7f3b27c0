// The queues between the edges (webhook intake, conversion, member updates, the schedule) and the
// workers, and the messages they carry. CDK, the local runtime and the publisher all take the queue
// list from here; a function learns a queue's URL from the environment variable named here.
//
// Fair queues (docs/operations.md "Fair queues and worker concurrency"): every message of a per-tenant
// queue is sent with MessageGroupId = its account id (messageGroupId below), so SQS serves a quiet
// account's messages before a noisy account's backlog. The queues stay standard queues.
import type { ProviderKind } from '../billing/port';
import type { RailKind } from '../rails/definition';
import type { RailItemOutcome } from '../rails/port';

export const QUEUES = {
  /** Verified Paddle alerts and background-sync pages, consumed by the subscription-sync worker. */
  'provider-events': { envVar: 'PROVIDER_EVENTS_QUEUE_URL' },
  /** Reward evaluations, credit applications and referral coupons, consumed by the reward fan-out worker. */
  rewards: { envVar: 'REWARDS_QUEUE_URL' },
  /**
   * Member emails (conversion and reward notices), consumed by the member-emails worker. Per tenant, but a
   * login link asked for by address names no account (it may mail several teams): that one has no group.
   */
  'member-emails': { envVar: 'MEMBER_EMAILS_QUEUE_URL' },
  /**
   * SES bounce and complaint events (EventBridge in AWS; the admin CLI simulates them locally). The one
   * queue that is not per tenant (SHARED_QUEUES): EventBridge sends them, with no message group.
   */
  'email-events': { envVar: 'EMAIL_EVENTS_QUEUE_URL' },
  /** Outgoing webhook events handed over from the outbox, fanned out to the account's endpoints. */
  'webhook-events': { envVar: 'WEBHOOK_EVENTS_QUEUE_URL' },
  /** One delivery attempt of one event to one endpoint. */
  'webhook-deliveries': { envVar: 'WEBHOOK_DELIVERIES_QUEUE_URL' },
  /**
   * Payout rails (docs/payouts.md): a batch to send through its rail, a verified rail webhook's outcomes, a
   * batch to reconcile with its rail; consumed by the payout-rails worker, the one that holds rail secrets.
   */
  'payout-rails': { envVar: 'PAYOUT_RAILS_QUEUE_URL' },
  /**
   * Fraud screening (docs/fraud.md): what a committed referral, conversion, refund or application asks the
   * rules to look at, handed over by the webhook fan-out from the outbox; consumed by the fraud-screen worker.
   */
  fraud: { envVar: 'FRAUD_QUEUE_URL' },
} as const;

export type QueueName = keyof typeof QUEUES;
// Pure: a bundle that needs only messageGroupId leaves the queue table out (the functions are near their size budget).
export const QUEUE_NAMES = /* @__PURE__ */ Object.keys(QUEUES) as QueueName[];

/** Queues whose messages are no tenant's (we do not send them): no MessageGroupId. Every other queue is per tenant. */
export const SHARED_QUEUES: readonly QueueName[] = ['email-events'];

/**
 * The SQS MessageGroupId of a message (fair queues): its `account_id` on a per-tenant queue; none on a
 * shared queue, or for a message that names no account (SQS then counts it as a tenant of its own).
 * Every sender (shared/queue/publish.ts, the operator's DLQ redrive in infra/ops.ts) takes it from here.
 */
export function messageGroupId<Q extends QueueName>(queue: Q, message: QueueMessages[Q]): string | undefined {
  if (SHARED_QUEUES.includes(queue)) return undefined;
  const account = (message as { account_id?: unknown }).account_id;
  return typeof account === 'string' && account !== '' ? account : undefined;
}

/**
 * A verified Paddle Classic alert, exactly as decoded from the form body (p_signature removed), as the
 * Classic intake queued it before the one webhook intake: no longer queued, but still accepted by the
 * subscription-sync worker for messages already waiting in the queue or its DLQ.
 */
export interface PaddleAlertMessage {
  kind: 'paddle-alert';
  account_id: string;
  fields: Record<string, string>;
  /** Unix milliseconds when the intake accepted it. */
  received_at: number;
}

/**
 * A verified webhook of any provider: the body and the headers its parser reads (the exact JSON body for
 * Paddle Billing and Stripe; Paddle Classic's signed fields, form-encoded), queued by the intake
 * (shared/billing/intake.ts) after the signature verified. The worker parses it through the
 * account's adapter (shared/billing/port.ts parseWebhook), so a parser fix can be redriven from the DLQ.
 */
export interface ProviderWebhookMessage {
  kind: 'provider-webhook';
  provider: ProviderKind;
  account_id: string;
  /** Lower-cased header names. */
  headers: Record<string, string>;
  raw_body: string;
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
  /** Providers that page by cursor (Paddle Billing, Stripe): the next page's cursor; absent on the first. */
  cursor?: string;
  /** Unix milliseconds when this sync run started: the "as of" time of the state it reads. */
  started_at: number;
  /**
   * An incremental run: only subscriptions the provider changed after this instant (unix seconds), for
   * providers that can filter on it (shared/flows/resync.ts). Absent: a full pass.
   */
  updated_after?: number;
  /** Set once a page of this run could not apply a subscription: the run then moves no high-water mark. */
  incomplete?: true;
}

export type ProviderEventMessage = PaddleAlertMessage | ProviderWebhookMessage | SyncAccountMessage;

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

/** Create the single-use Paddle coupon of a referral made in a double-sided campaign. */
export interface CreateCouponMessage {
  kind: 'create-coupon';
  account_id: string;
  referral_id: string;
}

/** Approve an account's commissions whose hold has ended (the hourly approval job queues one per account). */
export interface ApproveDueMessage {
  kind: 'approve-due';
  account_id: string;
}

export type RewardMessage = EvaluateReferralMessage | ApplyMemberCreditsMessage | CreateCouponMessage | ApproveDueMessage;

/** One email to a referring member; `key` names it for exactly-once delivery. */
export interface MemberEmailMessage {
  kind: 'member-email';
  account_id: string;
  template: 'conversion' | 'reward';
  referral_id: string;
  /** The referring member (the recipient), so the worker reads everything in one BatchGet. */
  member_id: string;
  /** template `reward` only. */
  reward_id?: string;
}

/**
 * An SES event as EventBridge delivers it (`source` aws.ses, `detail-type` "Email Bounced" / "Email
 * Complaint Received"); `detail.mail.tags` carries the account and member the email was sent for.
 */
export interface EmailEventMessage {
  source?: string;
  'detail-type'?: string;
  detail?: {
    eventType?: string;
    bounce?: { bounceType?: string; bouncedRecipients?: { emailAddress?: string }[] };
    complaint?: { complainedRecipients?: { emailAddress?: string }[] };
    mail?: { tags?: Record<string, string[]> };
  };
}

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

/**
 * Someone asked for a dashboard login link (POST /auth/login-links/) or was invited to a team. The worker
 * looks the address up, and mails one link per team it is in (only `account_id`'s for an invitation); the
 * request path does neither, so its answer and its timing are the same for every address. The token is
 * made by the worker: no queue holds a usable link.
 */
export interface LoginLinkMessage {
  kind: 'login-link';
  email: string;
  /** scheme://host of the dashboard, as the request saw it. */
  base_url: string;
  /** An invitation: only this account's team. */
  account_id?: string;
  invited_by?: string;
}

/**
 * One email to an affiliate or applicant (docs/affiliate-emails.md). The request path and the flows only
 * say what happened; the worker (shared/email/affiliate-emails.ts) reads what it needs, issues any
 * credential the email carries (a confirmation or login link: no queue holds a usable link), renders and
 * sends it exactly once per `key`.
 */
export interface AffiliateEmailMessage {
  kind: 'affiliate-email';
  template:
    | 'application-confirm'
    | 'application-exists'
    | 'member-exists'
    | 'application-approved'
    | 'application-rejected'
    | 'portal-login'
    | 'payout-sent'
    | 'new-referral'
    | 'monthly-summary';
  account_id: string;
  /** Exactly-once key of the email (e.g. `approved-<application id>`); absent for login and confirmation emails, which are paced per address instead. */
  key?: string;
  /** The recipient when no member exists yet (confirmation, exists, portal login by address). */
  email?: string;
  member_id?: string;
  application_id?: string;
  campaign_id?: string;
  /** application-confirm: the stored join request the confirmation link opens. */
  join_request_id?: string;
  payout_id?: string;
  referral_id?: string;
  /** monthly-summary: `YYYY-MM`. */
  month?: string;
}

/** Send a rail batch (`pb_…`) through its rail: created by POST /v1/payout-batches/ with a rail. Safe to repeat. */
export interface SendRailBatchMessage {
  kind: 'send-rail-batch';
  account_id: string;
  batch_id: string;
}

/**
 * A rail webhook, verified by its intake (functions/webhooks/<rail>.ts) before it was queued, as the rail's
 * definition mapped it (shared/rails/definition.ts RailWebhookVerdict). `delivery_id` is the rail's id of the
 * delivery: a redelivery applies nothing twice (the outcomes are idempotent anyway).
 */
export interface RailWebhookMessage {
  kind: 'rail-webhook';
  account_id: string;
  rail: RailKind;
  delivery_id: string;
  outcomes: RailItemOutcome[];
  /** Connected accounts whose readiness changed (Stripe's account.updated). */
  account_updates: { destination: string; ready: boolean }[];
  /** Unix milliseconds when the intake accepted it. */
  received_at: number;
}

/** Read a rail batch back from its rail and apply what it says (a late webhook; hourly and on demand). */
export interface ReconcileRailBatchMessage {
  kind: 'reconcile-rail-batch';
  account_id: string;
  batch_id: string;
}

/**
 * Cancel an unclaimed PayPal item and send the payout again as `pb_…-r<attempt>` (POST /v1/payouts/{id}/resend/,
 * after the member's payout email was corrected). The attempt number makes a repeat of the message harmless.
 */
export interface ResendRailPayoutMessage {
  kind: 'resend-rail-payout';
  account_id: string;
  payout_id: string;
  attempt: number;
}

export type PayoutRailMessage = SendRailBatchMessage | RailWebhookMessage | ReconcileRailBatchMessage | ResendRailPayoutMessage;

export interface QueueMessages {
  'provider-events': ProviderEventMessage;
  rewards: RewardMessage;
  'member-emails': MemberEmailMessage | LoginLinkMessage | AffiliateEmailMessage;
  'email-events': EmailEventMessage;
  'webhook-events': DispatchEventMessage | PurgeEndpointMessage;
  'webhook-deliveries': DeliverMessage;
  'payout-rails': PayoutRailMessage;
  fraud: FraudScreenMessage;
}

/**
 * Run the fraud rules over what one committed event is about (docs/fraud.md "When the rules run"): a new
 * referral, a conversion, a reward taken back by a refund, a confirmed application. Safe to repeat: a
 * finding is recorded once (its dedupe key).
 */
export interface FraudScreenMessage {
  kind: 'screen';
  account_id: string;
  /** The event that asked: `referral.created`, `referral.converted`, `reward.voided`, `reward.created`, `application.created`. */
  event_type: string;
  /** The referral, reward or application id the event names. */
  subject_id: string;
  /** The referring member, when the event says. */
  member_id?: string;
}
