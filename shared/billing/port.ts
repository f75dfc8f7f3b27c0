// The payment-provider port: what the provider-agnostic flows (conversion, attribution, subscription sync,
// settlement, credits, coupons, refunds, background sync) need from a payment provider, in normalized facts.
// Each provider (shared/providers/<kind>/) implements it; the flows import only this file.
//
// The rules: docs/design/providers.md ("The port"); the layers: docs/design/architecture.md ("Layers").
//
// Conventions:
// - Amounts are integers in the currency's minor unit (cents for USD, yen for JPY); currencies are ISO 4217
//   upper case. Dates are UTC `YYYY-MM-DD`; instants are unix milliseconds unless named `...Seconds`.
// - Provider ids (`ProviderId`) are what the provider calls them: an integer for Paddle Classic, a string
//   (`sub_…`, `txn_…`, `in_…`, `pri_…`) for Paddle Billing and Stripe. The API shows them as they are.
// - Every method that calls the provider has a timeout, retries 429/5xx after `Retry-After` within its
//   budget, and otherwise throws `ProviderUnavailableError` so the worker fails its record (never loses it).

import { ServiceUnavailableError } from '../domain/errors';

/**
 * A provider's kind. The kinds are listed in one place, shared/billing/registry.ts (its `ProviderKind` is
 * the exact union); the port, which every provider imports, takes any of them.
 */
export type ProviderKind = string;

/** A subscription, payment, price or checkout id as the provider names it. */
export type { ProviderId } from '../domain/models';
import type { Plan, ProviderId } from '../domain/models';

/** Refloop's subscription status words (the specification's), whatever the provider calls them. */
export type SubscriptionStatus = 'active' | 'trialling' | 'past_due' | 'paused' | 'deleted';

export interface PlanFacts {
  id: ProviderId;
  /** Product or plan name. */
  name: string | null;
  /** Price per interval, minor units; null when the event does not say. */
  amount: number | null;
  currency: string;
  /** `day`, `week`, `month`, `year`; null when unknown. */
  interval: string | null;
  frequency: number | null;
}

/**
 * What an event or a lookup says about one subscription. Absent fields are unknown (not changed); a
 * `null` is a known "none" (e.g. no next bill date once deleted).
 */
export interface SubscriptionFacts {
  id: ProviderId;
  status?: SubscriptionStatus;
  /** The customer's email; the adapter looks it up when the provider's payload does not carry it. */
  email?: string;
  currency?: string;
  /** Renewal amount before tax and discounts, minor units. */
  unitPrice?: number;
  plan?: PlanFacts;
  nextBillDate?: string | null;
  lastBillDate?: string;
  /**
   * The provider's customer id, when it has one (Billing `ctm_…`, Stripe `cus_…`, Paddle Classic's user
   * id). With `paymentFingerprint`, who pays: the self-referral rule compares it (docs/fraud.md).
   */
  customerId?: string;
  /**
   * The fingerprint of the card that pays the subscription (Stripe `card.fingerprint` of its default
   * payment method: the same card number, the same fingerprint, whatever the customer), when the provider
   * exposes one. Absent = not told (Paddle exposes none).
   */
  paymentFingerprint?: string;
  /**
   * The plan, when the event names it only by id (Paddle Classic's alerts carry `subscription_plan_id`,
   * not the plan): the flow completes it with `describePlan`. Absent when `plan` is given.
   */
  planId?: ProviderId;
  /** The plan's name as the event gives it (a fallback if the plan cannot be described). */
  planName?: string | null;
}

export interface PaymentFacts {
  id: ProviderId;
  subscriptionId: ProviderId;
  /** What the customer paid for it, minor units (counts toward `reward_threshold`). */
  amount: number;
  /** The same excluding tax, minor units (percentage commissions are computed on it). */
  amountExcludingTax?: number;
  currency: string;
  paidAtSeconds: number;
  /** The checkout this payment completed (its first payment only): Billing `txn_…`, Stripe `cs_…`. */
  checkoutId?: string;
  /** The provider's order id, when it has one apart from the checkout (Paddle Classic `order_id`). */
  orderId?: string;
  /**
   * `paid` (default). Providers that report the payment's later states on the payment itself (Paddle
   * Classic) say `failed` (never counted) or `refunded` (with `refundAmount`, `refundType`); the refund
   * itself still comes as its own RefundFacts.
   */
  status?: 'paid' | 'failed' | 'refunded';
  refundAmount?: number;
  refundType?: string;
}

export interface RefundFacts {
  /** Unique per refund: each partial refund is its own fact, counted once. */
  id: string;
  paymentId: ProviderId;
  subscriptionId: ProviderId;
  amount: number;
  currency: string;
  refundedAtSeconds: number;
  kind: 'refund' | 'chargeback';
  /** As the provider words it (Paddle Classic: `full`, `partial`, `vat`); `full` refunds the whole payment. */
  refundType?: string;
}

/** What an event says about which referral a subscription belongs to. No flow reads provider field names. */
export interface AttributionHints {
  /** `refloop_referral_id` from passthrough / custom_data / metadata / client_reference_id. */
  referralId?: string;
  /** A discount or promotion code used at checkout (a referred user's coupon converts its referral). */
  couponCode?: string;
  /** The checkout that started the subscription. */
  checkoutId?: string;
}

/** One normalized fact from a verified webhook. An event may carry several (a payment and its subscription). */
export type BillingEvent =
  | {
      kind: 'subscription';
      /** The provider's event id (de-duplication key: Classic `alert_id`, Billing/Stripe `evt_…`). */
      eventId: string;
      /** When the provider says this state held, ms: a stale snapshot never overwrites a newer one. */
      occurredAtMs: number;
      /** True when the timestamp cannot order it against a stored state (Stripe's whole seconds): re-read. */
      orderUncertain?: boolean;
      subscription: SubscriptionFacts;
      payment?: PaymentFacts;
      refund?: RefundFacts;
      hints: AttributionHints;
    }
  | { kind: 'ignored'; eventId: string; type: string; reason: string };

export type WebhookVerification =
  | { ok: true; eventId: string | null }
  | { ok: false; reason: 'missing_signature' | 'bad_signature' | 'stale_timestamp' };

export interface RawWebhook {
  /** Lower-cased header names. */
  headers: Record<string, string | undefined>;
  /** The exact bytes received. */
  rawBody: string;
}

export type CheckoutResolution =
  | { state: 'not_found' }
  /** The checkout exists but its subscription does not yet: the caller answers 409. */
  | { state: 'processing' }
  | { state: 'no_subscription' }
  | { state: 'subscription'; subscriptionId: ProviderId };

export interface SubscriptionPage {
  subscriptions: SubscriptionFacts[];
  /** Opaque; null on the last page. */
  next: string | null;
}

export interface CreditRequest {
  /** The reward's id: the adapter derives its idempotency key / description from it. */
  rewardId: string;
  /**
   * Several rewards' credits combined into one provider-side credit (Paddle Billing: a subscription holds
   * one discount, so credits pending for the same period become one): every reward with its amount,
   * `rewardId` among them, and `amount` is their sum. Absent = this reward alone. Providers whose credits
   * stack (Classic modifiers, Stripe balance transactions) ignore it.
   */
  combined?: readonly { rewardId: string; amount: number }[];
  subscriptionId: ProviderId;
  amount: number;
  currency: string;
}

export interface AppliedCredit {
  /** Where the credit stands at the provider (modifier id, discount id, balance transaction id). */
  providerRef: string;
  /** True when an earlier attempt had already applied it (found by the reward id). */
  reused: boolean;
  /**
   * Every reward the provider-side credit now covers, when the adapter combined this one with a credit
   * still pending on the subscription (their `providerRef` moves to this one). Absent = just this request's.
   */
  rewardIds?: readonly string[];
}

export type CreditReversalOutcome = 'reversed' | 'consumed';

export interface CouponRequest {
  referralId: string;
  /** Derived from the referral id (shared/domain/discounts.ts couponCodeFor). */
  code: string;
  /** As the referral's ReferredDiscount: `amount` in minor units (flat) or hundredths of a percent (percentage). */
  discount: { type: 'flat' | 'percentage'; amount: number; currency: string | null; recurring: boolean };
}

/** The provider-side operations, bound to one account's credentials. */
export interface BillingProvider {
  readonly kind: ProviderKind;
  /**
   * True when the credits on one subscription combine into one provider object that applyCredit and
   * reverseCredit rewrite (Paddle Billing's one discount): the flows then make one credit change at a time
   * per subscription. Credits that stack (Classic modifiers, Stripe balance transactions) need not.
   */
  readonly combinesCredits?: boolean;
  /** Parses a verified raw webhook (in the worker, so a parser fix can be redriven from the DLQ). */
  parseWebhook(raw: RawWebhook): Promise<BillingEvent[]>;
  /**
   * The whole plan behind a plan id (name, interval, price in `currency`), for providers whose events name
   * the plan only by id (Paddle Classic). Never fails for an unreachable provider: it falls back to what is
   * known (`current`, then a partial plan the background sync completes later).
   */
  describePlan?(
    planId: ProviderId,
    context: { currency: string; unitPrice: string | null; planName: string | null; current: Plan | null },
  ): Promise<Plan>;
  getSubscription(id: ProviderId): Promise<SubscriptionFacts | null>;
  resolveCheckout(checkoutId: string): Promise<CheckoutResolution>;
  /**
   * One page of the account's subscriptions. Providers whose list API keeps cancelled subscriptions apart
   * (Paddle Classic: `listsDeletedApart`) page each `part` on its own; the others list every status in
   * the `live` part. `updatedAfterSeconds`: only subscriptions changed after that instant (unix seconds),
   * for providers whose list can filter on it (Chargebee's `updated_at[after]`); the others ignore it and
   * list everything. Every page of a run is asked with the same value (a cursor belongs to its query).
   */
  listSubscriptions(cursor: string | null, part?: 'live' | 'deleted', updatedAfterSeconds?: number): Promise<SubscriptionPage>;
  readonly listsDeletedApart?: boolean;
  listPayments(subscriptionId: ProviderId): Promise<PaymentFacts[]>;
  /** Exactly once per reward: finds an earlier attempt's credit by the reward id before creating one. */
  applyCredit(credit: CreditRequest): Promise<AppliedCredit>;
  /** Removes what has not been billed yet; 'consumed' when the provider already used it (it stays, noted). */
  reverseCredit(credit: CreditRequest & { providerRef: string | null }): Promise<CreditReversalOutcome>;
  /** 'existed' when an earlier attempt created the same code. */
  createCoupon(coupon: CouponRequest): Promise<'created' | 'existed'>;
}

/** Verification happens at the intake, before anything is queued, with the account's webhook secret. */
export interface WebhookVerifier {
  readonly kind: ProviderKind;
  verify(raw: RawWebhook, secret: string, nowMs: number): WebhookVerification;
}

/**
 * The credit cannot be applied now, and retrying at once will not help: the subscription carries a
 * discount Refloop did not create (Paddle Billing holds one discount per subscription and Refloop never
 * replaces a customer's own). The flow keeps the credit pending and tries again in a later period.
 */
export class CreditMustWaitError extends Error {
  constructor(
    message: string,
    readonly provider: ProviderKind,
    /** When the blocking discount ends (unix ms), if the provider says; null = not known, or never. */
    readonly blockedUntilMs: number | null = null,
  ) {
    super(message);
    this.name = 'CreditMustWaitError';
  }
}

/** What the API answers (503, with Retry-After) when a provider call fails for good within its budget. */
export const PROVIDER_UNAVAILABLE = 'The payment provider could not be reached; retry later.';

/**
 * The provider could not be reached or answered 5xx/429 past the retry budget: a worker fails its record
 * (SQS retries it, never loses it); an HTTP request answers 503 with Retry-After (it is a
 * ServiceUnavailableError). `reason` says what happened, for logs; it is never shown to API callers.
 */
export class ProviderUnavailableError extends ServiceUnavailableError {
  override readonly name = 'ProviderUnavailableError';
  constructor(
    readonly reason: string,
    readonly provider: ProviderKind,
    readonly call: string,
  ) {
    super(PROVIDER_UNAVAILABLE, 5);
  }
}
