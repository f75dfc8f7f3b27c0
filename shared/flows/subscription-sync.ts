// The subscription-sync worker's logic, the same for every payment provider (it imports none: the
// account's adapter comes from shared/billing/adapters.ts): a verified webhook, parsed by the adapter into
// normalized events, or one page of the provider's subscriptions (background sync), becomes ONE
// applyProviderUpdate per subscription. When the
// subscription is assigned to a converted referral and a payment or its status changed, a reward
// evaluation is queued (the reward worker is idempotent, so queuing it again is harmless).
//
// On duplicate input (same alert_id / event_id): nothing is written; the reward evaluation is queued again (for an
// alert with a payment or a status) in case the first delivery crashed between its commit and its send.
// On out-of-order input (an event time older than the stored state): the subscription is left alone, but a
// payment it carries is still recorded.
// On failure (DynamoDB or SQS down): the error propagates, the record is retried by SQS and, after five
// receives, parked in the DLQ (alarmed) — nothing is acknowledged that was not applied. A sync page is the
// exception: one subscription that fails is logged and left to the next run, so it never holds back the
// rest of its page; the page fails as a whole only when none of it could be applied.
import type { Plan, ProviderId, Subscription } from '../domain/models';
import { publish } from '../queue/publish';
import type { PaddleAlertMessage, ProviderWebhookMessage, SyncAccountMessage } from '../queue/queues';
import { refundItem } from '../store/refunds';
import { recordSyncMark } from '../store/provider-accounts';
import {
  applyProviderUpdate,
  getSubscription,
  type PaymentData,
  type ProviderFields,
  type ProviderUpdate,
  type ProviderUpdateResult,
} from '../store/subscriptions';
import type { AttributionHints, BillingEvent, PaymentFacts, SubscriptionFacts } from '../billing/port';
import { billingProviderFor, webhookProviderFor, type AccountBillingProvider, type WebhookProvider } from '../billing/adapters';
import { formatCents } from '../domain/money';
import { minorToCents } from '../domain/currency';
import { planFromFacts } from './conversion';
import { attributeFromHints } from './attribution';
import { followPayers } from './payer-ids';
import { payerIdsOf } from '../domain/payer-ids';
import { log } from '../log';
import { PoisonMessageError } from '../queue/worker';
import { isProviderKind, LEGACY_PROVIDER } from '../billing/registry';
import { timingMetric } from '../metrics';
import type { ProviderKind } from '../billing/port';

export async function evaluate(accountId: string, referralId: string): Promise<void> {
  await publish('rewards', { kind: 'evaluate-referral', account_id: accountId, referral_id: referralId });
}

/**
 * A verified Paddle Classic alert queued as `paddle-alert` (its decoded form fields) by the Classic intake
 * that came before the one webhook intake: such messages may still wait in the queue or its DLQ (a
 * redrive), so the worker keeps accepting them. It is the `provider-webhook` message the intake queues
 * now (the signed fields, form-encoded), applied the same way.
 */
export async function processPaddleAlert(message: PaddleAlertMessage): Promise<void> {
  await processProviderWebhook(webhookOfAlert(message));
}

/** A legacy `paddle-alert` message as the `provider-webhook` message the intake queues now. */
export function webhookOfAlert(message: PaddleAlertMessage): ProviderWebhookMessage {
  return {
    kind: 'provider-webhook',
    provider: LEGACY_PROVIDER.kind,
    account_id: message.account_id,
    headers: {},
    raw_body: new URLSearchParams(message.fields).toString(),
    received_at: message.received_at,
  };
}

/**
 * WebhookLag: from the intake's acceptance (`received_at`, stamped when it queued the event) to now, when
 * every fact of the event is applied (or acknowledged without effect): the last step of the record, so a
 * record that fails and is redelivered counts once, when it finally succeeds.
 */
export function recordLag(provider: ProviderKind, receivedAt: number | undefined): void {
  if (typeof receivedAt === 'number' && Number.isFinite(receivedAt))
    timingMetric('WebhookLag', { Provider: provider }, Date.now() - receivedAt);
}

/**
 * What follows a provider update, whatever the provider: an untied subscription may be attributed from
 * the event's hints; a tied one gets its reward evaluation queued when the event could change it.
 */
export async function afterUpdate(
  accountId: string,
  provider: WebhookProvider,
  result: ProviderUpdateResult,
  event: {
    eventId: string;
    subscriptionId: ProviderId;
    hints: AttributionHints;
    payment: PaymentData | null;
    statusGiven: boolean;
    refund: boolean;
  },
  /** Queues a reward evaluation (the batch path collects them into one send). */
  queueEvaluation: (accountId: string, referralId: string) => Promise<void> = evaluate,
): Promise<void> {
  // Who pays it, if this told something new: its member's copy, and a converted referral's check.
  await followPayers(accountId, result, result.duplicate);
  if (!result.referralId) {
    // Not tied to a referral yet: the event itself may name one (checkout passthrough, coupon). The
    // update has read (or written) the subscription already: no second read. A payment event that
    // overtakes its subscription's creation carries status, plan and currency, so it stores the copy itself.
    let subscription = result.subscription;
    if (!subscription && (event.hints.referralId || event.hints.couponCode) && provider.getSubscription) {
      // An event that names a referral but not the subscription's state (Stripe's checkout.session.completed
      // may be processed before customer.subscription.created): ask the provider, so the hint is not lost.
      const facts = await provider.getSubscription(event.subscriptionId);
      if (facts)
        subscription = (
          await applyProviderUpdate(accountId, {
            subscriptionId: facts.id,
            asOfMs: Date.now(),
            fields: await completeFields(accountId, provider, facts),
            payerIds: payerIdsOf(provider.kind, facts),
          })
        ).subscription;
    }
    if (subscription) await attributeFromHints(accountId, event.eventId, event.hints, subscription);
    return;
  }
  // A duplicate may be the redelivery of a first attempt that committed and then failed to queue the
  // evaluation: queue it again when the event could have needed one (a payment, or a status change,
  // which is what completes a commission when the subscription is cancelled).
  const mayNeedEvaluation = event.payment !== null || event.statusGiven || event.refund;
  if (result.duplicate ? mayNeedEvaluation : result.paymentChanged || result.statusChanged || event.refund)
    await queueEvaluation(accountId, result.referralId);
}

/**
 * The store's fields from the facts, with a plan named only by id described by the provider (Paddle
 * Classic). `known`: the subscription as stored, when the caller has read it already (the batch path).
 */
export async function completeFields(
  accountId: string,
  provider: Pick<WebhookProvider, 'describePlan'>,
  facts: SubscriptionFacts,
  known?: { current: Subscription | null },
): Promise<Partial<ProviderFields>> {
  const fields = fieldsFromFacts(facts);
  if (facts.planId !== undefined && !facts.plan && provider.describePlan) {
    // Keeping the stored plan when it matches (one read of the subscription, unless the caller read it).
    const current = known ? known.current : await getSubscription(accountId, facts.id);
    const currency = facts.currency ?? current?.currency;
    const unitPrice = fields.unit_price ?? current?.unit_price ?? null;
    if (currency) fields.plan = await planFor(provider, accountId, facts.planId, currency, unitPrice, facts.planName ?? null, current);
  }
  return fields;
}

/** The store's fields from the port's subscription facts (absent = unknown, not changed). */
export function fieldsFromFacts(facts: SubscriptionFacts): Partial<ProviderFields> {
  const fields: Partial<ProviderFields> = {};
  if (facts.status !== undefined) fields.status = facts.status;
  if (facts.currency !== undefined) fields.currency = facts.currency;
  if (facts.email !== undefined) fields.email = facts.email;
  // Without a currency (an event that does not say it) the amount is taken as hundredths.
  const currency = facts.currency ?? facts.plan?.currency;
  if (facts.unitPrice !== undefined) fields.unit_price = formatCents(currency ? minorToCents(facts.unitPrice, currency) : facts.unitPrice);
  if (facts.nextBillDate !== undefined) fields.next_bill_date = facts.nextBillDate;
  if (facts.lastBillDate !== undefined) fields.last_bill_date = facts.lastBillDate;
  if (facts.plan) fields.plan = planFromFacts(facts.plan);
  return fields;
}

function paymentFromFacts(p: PaymentFacts): PaymentData {
  return {
    id: p.id,
    subscription_id: p.subscriptionId,
    order_id: p.orderId ?? p.checkoutId ?? null,
    amount: minorToCents(p.amount, p.currency),
    currency: p.currency,
    paid_at: p.paidAtSeconds,
    status: p.status ?? 'paid',
    ...(p.refundAmount !== undefined ? { refund_amount: minorToCents(p.refundAmount, p.currency) } : {}),
    ...(p.refundType !== undefined ? { refund_type: p.refundType } : {}),
    ...(p.amountExcludingTax !== undefined && p.amountExcludingTax <= p.amount
      ? { tax: minorToCents(p.amount - p.amountExcludingTax, p.currency) }
      : {}),
  };
}

/**
 * A verified webhook of any provider (queued by shared/billing/intake.ts): parsed by the account's adapter
 * into normalized events, each applied the same way. The event id is the idempotency marker (one event
 * may carry several facts: the second and later are marked `<event id>#<n>`), and the event's time orders
 * it against the stored state, so redeliveries write nothing and a stale snapshot never wins.
 */
export async function processProviderWebhook(message: ProviderWebhookMessage): Promise<void> {
  const accountId = message.account_id;
  if (!isProviderKind(message.provider)) throw new PoisonMessageError(`Unknown provider ${String(message.provider)}`);
  const provider = await webhookProviderFor(accountId, message.provider);
  if (!provider) {
    // Verified when it arrived, but the account is no longer connected to that provider: nothing to apply to.
    log('warn', 'provider event dropped: the account is not connected to this provider any more', {
      account_id: accountId,
      provider: message.provider,
    });
    return;
  }
  const events = await provider.parseWebhook({ headers: message.headers, rawBody: message.raw_body });
  for (const [index, event] of events.entries()) await applyBillingEvent(accountId, provider, event, index);
  recordLag(message.provider, message.received_at);
}

export async function applyBillingEvent(accountId: string, provider: WebhookProvider, event: BillingEvent, index = 0): Promise<void> {
  if (event.kind === 'ignored') {
    // Acknowledged (the provider must not retry it), and logged so nothing disappears silently.
    log('info', 'provider event acknowledged without effect', {
      account_id: accountId,
      provider: provider.kind,
      event_id: event.eventId,
      event_type: event.type,
      reason: event.reason,
    });
    return;
  }
  await applyPreparedEvent(accountId, provider, await prepareEvent(accountId, provider, event, index));
}

/** One fact of a webhook, ready to apply: its marker, its facts (re-read when its time cannot order it), its payment and refund. */
export interface PreparedEvent {
  /** The idempotency marker: the event id, `#<n>` for the second and later facts of one event. */
  marker: string;
  facts: SubscriptionFacts;
  asOfMs: number;
  payment: PaymentData | null;
  /** The refund record written with it (store/refunds.ts), and the refund's id. */
  refund: { item: ReturnType<typeof refundItem>; id: string } | null;
  hints: AttributionHints;
}

/**
 * The provider calls an event needs before it is applied (the re-read of an event whose time cannot order
 * it), then its payment and refund in the store's terms. Needs no table read.
 */
export async function prepareEvent(
  accountId: string,
  provider: WebhookProvider,
  event: Extract<BillingEvent, { kind: 'subscription' }>,
  index: number,
): Promise<PreparedEvent> {
  const marker = index === 0 ? event.eventId : `${event.eventId}#${index}`;
  let facts = event.subscription;
  let asOfMs = event.occurredAtMs;
  if (event.orderUncertain && facts.status !== undefined && provider.getSubscription) {
    // The event's time cannot order it against a stored state (Stripe's whole seconds: two events of one
    // second may arrive in either order): apply the subscription as the provider has it now, as of now.
    const fresh = await provider.getSubscription(facts.id);
    if (fresh) {
      facts = fresh;
      asOfMs = Math.max(asOfMs, Date.now());
    }
  }
  const payment = event.payment ? paymentFromFacts(event.payment) : null;
  // A refund is also recorded on its own (partial refunds come one each): clawbacks answer each once.
  const r = event.refund;
  const refundType = r?.refundType ?? (r?.kind === 'chargeback' ? 'chargeback' : undefined);
  const refund = r
    ? {
        id: r.id,
        item: refundItem(accountId, facts.id, {
          id: r.id,
          payment_id: r.paymentId,
          amount: minorToCents(r.amount, r.currency),
          refunded_at: r.refundedAtSeconds,
          currency: r.currency,
          ...(refundType ? { refund_type: refundType } : {}),
        }),
      }
    : null;
  return { marker, facts, asOfMs, payment, refund, hints: event.hints };
}

/** The store's update for a prepared event, with its fields completed (completeFields). */
export function updateOf(provider: WebhookProvider, e: PreparedEvent, fields: Partial<ProviderFields>): ProviderUpdate {
  return {
    subscriptionId: e.facts.id,
    asOfMs: e.asOfMs,
    fields,
    payment: e.payment,
    alertId: e.marker,
    payerIds: payerIdsOf(provider.kind, e.facts),
    ...(e.refund ? { extraItems: [e.refund.item] } : {}),
  };
}

/** What the follow-ups (afterUpdate) know of a prepared event. */
export const followUpOf = (e: PreparedEvent) => ({
  eventId: e.marker,
  subscriptionId: e.facts.id,
  hints: e.hints,
  payment: e.payment,
  statusGiven: e.facts.status !== undefined,
  refund: e.refund !== null,
});

/** The per-event path: one event read, applied in its own transaction, then its follow-ups. */
export async function applyPreparedEvent(
  accountId: string,
  provider: WebhookProvider,
  e: PreparedEvent,
  queueEvaluation?: (accountId: string, referralId: string) => Promise<void>,
): Promise<void> {
  const fields = await completeFields(accountId, provider, e.facts);
  const result = await applyProviderUpdate(accountId, updateOf(provider, e, fields));
  log('info', result.duplicate ? 'provider event already processed' : 'provider event applied', {
    account_id: accountId,
    provider: provider.kind,
    event_id: e.marker,
    subscription_id: e.facts.id,
    subscription_written: result.subscriptionWritten,
    payment_changed: result.paymentChanged,
    ...(e.refund ? { refund_id: e.refund.id } : {}),
  });
  await afterUpdate(accountId, provider, result, followUpOf(e), queueEvaluation);
}

// Plan lookups are memoised per container for a minute: a sync page of 200 users on one plan asks once.
const planMemo = new Map<string, { plan: Plan; until: number }>();

async function planFor(
  provider: Pick<WebhookProvider, 'describePlan'>,
  accountId: string,
  planId: ProviderId,
  currency: string,
  unitPrice: string | null,
  planName: string | null,
  current: Subscription | null,
): Promise<Plan> {
  if (current && current.plan.id === planId && current.plan.currency === currency && current.plan.interval !== null) return current.plan;
  const key = `${accountId}|${planId}|${currency}`;
  const hit = planMemo.get(key);
  if (hit && hit.until > Date.now()) return hit.plan;
  // Facts of one batch planned together ask for one plan once (the others wait for that answer).
  // A partial answer (the provider unreachable) depends on the asker's price and name: each asks again.
  const asked = planAsked.get(key);
  if (asked) {
    const plan = await asked.catch(() => null);
    if (plan && plan.interval !== null) return plan;
    return describeFor(provider, key, planId, currency, unitPrice, planName, current);
  }
  const answer = describeFor(provider, key, planId, currency, unitPrice, planName, current);
  planAsked.set(key, answer);
  try {
    return await answer;
  } finally {
    planAsked.delete(key);
  }
}

const planAsked = new Map<string, Promise<Plan>>();

async function describeFor(
  provider: Pick<WebhookProvider, 'describePlan'>,
  key: string,
  planId: ProviderId,
  currency: string,
  unitPrice: string | null,
  planName: string | null,
  current: Subscription | null,
): Promise<Plan> {
  const fallback: Plan = {
    id: planId,
    name: planName ?? '',
    amount: unitPrice ?? '0.00',
    currency,
    interval: null,
    frequency: null,
    descriptor: null,
  };
  const plan = provider.describePlan
    ? await provider.describePlan(planId, { currency, unitPrice, planName, current: current?.plan ?? null })
    : fallback;
  if (plan.interval !== null) {
    if (planMemo.size > 1000) planMemo.clear();
    planMemo.set(key, { plan, until: Date.now() + 60_000 });
  }
  return plan;
}

/**
 * One page of the provider's subscriptions for one account: upserts each (as of the run's start, so a
 * webhook that arrived since wins), heals the payments of subscriptions tied to referrals, and queues
 * the next page while pages come back full.
 */
export async function processSyncPage(message: SyncAccountMessage): Promise<void> {
  const accountId = message.account_id;
  const provider = await billingProviderFor(accountId);
  if (!provider) {
    log('warn', 'sync skipped: no provider settings', { account_id: accountId });
    return;
  }
  // A provider whose list covers every status in one listing has nothing left for the run's `deleted` half.
  if (message.state === 'deleted' && !provider.listsDeletedApart) return;
  const page = await provider.listSubscriptions(message.cursor ?? null, message.state, message.updated_after);
  let failed = 0;
  let lastError: unknown;
  for (const facts of page.subscriptions) {
    // One subscription that cannot be applied never stops the page: the others are synced, and the next
    // run tries it again. (Failing the record would redo the page and queue its next page once per retry.)
    try {
      await syncSubscription(accountId, provider, message, facts);
    } catch (err) {
      failed++;
      lastError = err;
      log('warn', 'sync: subscription not applied', {
        account_id: accountId,
        subscription_id: facts.id,
        error: err instanceof Error ? err.name : 'unknown',
      });
    }
  }
  // Nothing applied at all (DynamoDB or the provider down): the record fails and SQS retries the page.
  if (failed > 0 && failed === page.subscriptions.length) throw lastError;
  log('info', 'sync page applied', {
    account_id: accountId,
    state: message.state,
    page: message.page,
    subscriptions: page.subscriptions.length,
    failed,
  });
  const incomplete = message.incomplete === true || failed > 0;
  if (page.next !== null) {
    await publish('provider-events', {
      ...message,
      page: message.page + 1,
      cursor: page.next,
      ...(incomplete ? { incomplete: true } : {}),
    });
  } else if (message.state === 'live' && !incomplete) {
    // The run's last page, every subscription applied: the next runs may ask only for what changed since
    // it started (shared/flows/resync.ts).
    await recordSyncMark(accountId, message.started_at);
  }
}

/** One subscription of a sync page: upserted as of the run's start, and if referred, its payments and an evaluation. */
async function syncSubscription(
  accountId: string,
  provider: AccountBillingProvider,
  message: SyncAccountMessage,
  facts: SubscriptionFacts,
): Promise<void> {
  const fields = fieldsFromFacts(facts);
  if (facts.planId !== undefined && !facts.plan) {
    // The list names the plan only by id (Paddle Classic): describe it, keeping the stored one if it matches.
    const current = await getSubscription(accountId, facts.id);
    const currency = fields.currency ?? current?.currency;
    if (currency) {
      fields.plan = await planFor(
        provider,
        accountId,
        facts.planId,
        currency,
        fields.unit_price ?? current?.unit_price ?? null,
        facts.planName ?? null,
        current,
      );
      if (!current && fields.unit_price === undefined) fields.unit_price = fields.plan.amount;
    }
  }
  const result = await applyProviderUpdate(accountId, {
    subscriptionId: facts.id,
    asOfMs: message.started_at,
    fields,
    payerIds: payerIdsOf(provider.kind, facts),
  });
  await followPayers(accountId, result, false);
  if (!result.referralId) return;
  // Payments of a referred subscription: a missed payment webhook must still earn its reward.
  for (const p of await provider.listPayments(facts.id)) {
    await applyProviderUpdate(accountId, {
      subscriptionId: facts.id,
      asOfMs: message.started_at,
      fields: {},
      payment: paymentFromFacts(p),
    });
  }
  // Every referred subscription is evaluated on each sync, changed or not: it heals an evaluation whose
  // send failed earlier, and it closes commission periods that ended with time (no webhook marks that).
  await evaluate(accountId, result.referralId);
}
