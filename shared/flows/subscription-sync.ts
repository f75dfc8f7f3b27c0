// The subscription-sync worker's logic: a verified Paddle alert, or one page of the provider's
// subscription users (background sync), becomes ONE applyProviderUpdate per subscription. When the
// subscription is assigned to a converted referral and a payment or its status changed, a reward
// evaluation is queued (the reward worker is idempotent, so queuing it again is harmless).
//
// On duplicate input (same alert_id): nothing is written; the reward evaluation is queued again (for an
// alert with a payment or a status) in case the first delivery crashed between its commit and its send.
// On out-of-order input (event_time older than the stored state): the subscription is left alone, but a
// payment it carries is still recorded.
// On failure (DynamoDB or SQS down): the error propagates, the record is retried by SQS and, after five
// receives, parked in the DLQ (alarmed) — nothing is acknowledged that was not applied. A sync page is the
// exception: one subscription that fails is logged and left to the next run, so it never holds back the
// rest of its page; the page fails as a whole only when none of it could be applied.
import { config } from '../config';
import type { Plan, ProviderId, Subscription } from '../domain/models';
import { publish } from '../queue/publish';
import type { PaddleAlertMessage, ProviderWebhookMessage, SyncAccountMessage } from '../queue/queues';
import { getProviderConnection } from '../store/provider';
import { refundItem } from '../store/refunds';
import { applyProviderUpdate, getSubscription, type PaymentData, type ProviderFields, type ProviderUpdateResult } from '../store/subscriptions';
import type { AttributionHints, BillingEvent, PaymentFacts, SubscriptionFacts } from '../billing/port';
import { providerFromConnection, webhookProviderFor, type AccountBillingProvider, type WebhookProvider } from '../billing/registry';
import { formatCents } from '../domain/money';
import { planFromFacts } from './conversion';
import { attributeFromHints } from './attribution';
import { PaddleClient, type PaddlePayment, type PaddleUser } from '../providers/paddle-classic/client';
import { resolvePlan } from '../providers/paddle-classic/plans';
import { log } from '../log';

export const SYNC_PAGE_SIZE = 200;



async function evaluate(accountId: string, referralId: string): Promise<void> {
  await publish('rewards', { kind: 'evaluate-referral', account_id: accountId, referral_id: referralId });
}

/**
 * A verified Paddle Classic alert (its decoded form fields, queued by the Classic intake), applied through
 * the port like any provider's webhook.
 */
export async function processPaddleAlert(message: PaddleAlertMessage): Promise<void> {
  const provider = await webhookProviderFor(message.account_id, 'paddle-classic');
  if (!provider) return;
  const events = await provider.parseWebhook({ headers: {}, rawBody: new URLSearchParams(message.fields).toString() });
  for (const [index, event] of events.entries()) await applyBillingEvent(message.account_id, provider, event, index);
}

/**
 * What follows a provider update, whatever the provider: an untied subscription may be attributed from
 * the event's hints; a tied one gets its reward evaluation queued when the event could change it.
 */
async function afterUpdate(
  accountId: string,
  result: ProviderUpdateResult,
  event: { eventId: string; hints: AttributionHints; payment: PaymentData | null; statusGiven: boolean; refund: boolean },
): Promise<void> {
  if (!result.referralId) {
    // Not tied to a referral yet: the event itself may name one (checkout passthrough, coupon). The
    // update has read (or written) the subscription already: no second read. A payment event that
    // overtakes its subscription's creation carries status, plan and currency, so it stores the copy itself.
    if (result.subscription) await attributeFromHints(accountId, event.eventId, event.hints, result.subscription);
    return;
  }
  // A duplicate may be the redelivery of a first attempt that committed and then failed to queue the
  // evaluation: queue it again when the event could have needed one (a payment, or a status change,
  // which is what completes a commission when the subscription is cancelled).
  const mayNeedEvaluation = event.payment !== null || event.statusGiven || event.refund;
  if (result.duplicate ? mayNeedEvaluation : result.paymentChanged || result.statusChanged || event.refund) await evaluate(accountId, result.referralId);
}

/** The store's fields from the port's subscription facts (absent = unknown, not changed). */
export function fieldsFromFacts(facts: SubscriptionFacts): Partial<ProviderFields> {
  const fields: Partial<ProviderFields> = {};
  if (facts.status !== undefined) fields.status = facts.status;
  if (facts.currency !== undefined) fields.currency = facts.currency;
  if (facts.email !== undefined) fields.email = facts.email;
  if (facts.unitPrice !== undefined) fields.unit_price = formatCents(facts.unitPrice);
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
    amount: p.amount,
    currency: p.currency,
    paid_at: p.paidAtSeconds,
    status: p.status ?? 'paid',
    ...(p.refundAmount !== undefined ? { refund_amount: p.refundAmount } : {}),
    ...(p.refundType !== undefined ? { refund_type: p.refundType } : {}),
  };
}

/**
 * A verified webhook of a JSON provider (Paddle Billing, Stripe): parsed by the account's adapter into
 * normalized events, each applied like a Classic alert. The event id is the idempotency marker (one event
 * may carry several facts: the second and later are marked `<event id>#<n>`), and the event's time orders
 * it against the stored state, so redeliveries write nothing and a stale snapshot never wins.
 */
export async function processProviderWebhook(message: ProviderWebhookMessage): Promise<void> {
  const accountId = message.account_id;
  const provider = await webhookProviderFor(accountId, message.provider);
  if (!provider) {
    // Verified when it arrived, but the account is no longer connected to that provider: nothing to apply to.
    log('warn', 'provider event dropped: the account is not connected to this provider any more', { account_id: accountId, provider: message.provider });
    return;
  }
  const events = await provider.parseWebhook({ headers: message.headers, rawBody: message.raw_body });
  for (const [index, event] of events.entries()) await applyBillingEvent(accountId, provider, event, index);
}

export async function applyBillingEvent(accountId: string, provider: WebhookProvider, event: BillingEvent, index = 0): Promise<void> {
  if (event.kind === 'ignored') {
    // Acknowledged (the provider must not retry it), and logged so nothing disappears silently.
    log('info', 'provider event acknowledged without effect', { account_id: accountId, provider: provider.kind, event_id: event.eventId, event_type: event.type, reason: event.reason });
    return;
  }
  const facts = event.subscription;
  const marker = index === 0 ? event.eventId : `${event.eventId}#${index}`;
  const fields = fieldsFromFacts(facts);
  if (facts.planId !== undefined && !facts.plan && provider.describePlan) {
    // The event names the plan only by id (Paddle Classic): complete it, keeping the stored one if it matches.
    const current = await getSubscription(accountId, facts.id);
    const currency = facts.currency ?? current?.currency;
    const unitPrice = fields.unit_price ?? current?.unit_price ?? null;
    if (currency) fields.plan = await planFor(provider, accountId, facts.planId, currency, unitPrice, facts.planName ?? null, current);
  }
  const payment = event.payment ? paymentFromFacts(event.payment) : null;
  // A refund is also recorded on its own (partial refunds come one each): clawbacks answer each once.
  const r = event.refund;
  const refundType = r?.refundType ?? (r?.kind === 'chargeback' ? 'chargeback' : undefined);
  const refund = r
    ? refundItem(accountId, facts.id, { id: r.id, payment_id: r.paymentId, amount: r.amount, refunded_at: r.refundedAtSeconds, currency: r.currency, ...(refundType ? { refund_type: refundType } : {}) })
    : null;
  const result = await applyProviderUpdate(accountId, { subscriptionId: facts.id, asOfMs: event.occurredAtMs, fields, payment, alertId: marker, ...(refund ? { extraItems: [refund] } : {}) });
  log('info', result.duplicate ? 'provider event already processed' : 'provider event applied', {
    account_id: accountId,
    provider: provider.kind,
    event_id: marker,
    subscription_id: facts.id,
    subscription_written: result.subscriptionWritten,
    payment_changed: result.paymentChanged,
    ...(r ? { refund_id: r.id } : {}),
  });
  await afterUpdate(accountId, result, { eventId: marker, hints: event.hints, payment, statusGiven: facts.status !== undefined, refund: refund !== null });
}

// Plan lookups are memoised per container for a minute: a sync page of 200 users on one plan asks once.
const planMemo = new Map<string, { plan: Plan; until: number }>();

async function planFor(provider: Pick<WebhookProvider, 'describePlan'>, accountId: string, planId: ProviderId, currency: string, unitPrice: string | null, planName: string | null, current: Subscription | null): Promise<Plan> {
  if (current && current.plan.id === planId && current.plan.currency === currency && current.plan.interval !== null) return current.plan;
  const key = `${accountId}|${planId}|${currency}`;
  const hit = planMemo.get(key);
  if (hit && hit.until > Date.now()) return hit.plan;
  const fallback: Plan = { id: planId, name: planName ?? '', amount: unitPrice ?? '0.00', currency, interval: null, frequency: null, descriptor: null };
  const plan = provider.describePlan ? await provider.describePlan(planId, { currency, unitPrice, planName, current: current?.plan ?? null }) : fallback;
  if (plan.interval !== null) {
    if (planMemo.size > 1000) planMemo.clear();
    planMemo.set(key, { plan, until: Date.now() + 60_000 });
  }
  return plan;
}

/** Classic's plan lookups for its own sync page (still beside the port; see test/unit/import-graph.test.ts). */
const classicPlans = (accountId: string, client: PaddleClient): Pick<WebhookProvider, 'describePlan'> => ({
  describePlan: (planId, c) => resolvePlan(client, { accountId, planId: Number(planId), currency: c.currency, unitPrice: c.unitPrice, planName: c.planName, current: c.current }),
});

function userFields(user: PaddleUser): Partial<ProviderFields> {
  const fields: Partial<ProviderFields> = { status: user.state === 'trialing' ? 'trialling' : user.state, email: user.user_email };
  const currency = user.next_payment?.currency ?? user.last_payment?.currency;
  if (currency) fields.currency = currency;
  fields.next_bill_date = user.state === 'deleted' ? null : user.next_payment?.date ?? null;
  if (user.last_payment?.date) fields.last_bill_date = user.last_payment.date;
  return fields;
}

function paymentFrom(p: PaddlePayment): PaymentData | null {
  const paidAt = Date.parse(`${p.payout_date}T00:00:00Z`);
  if (!Number.isFinite(paidAt) || !Number.isSafeInteger(Number(p.id))) return null;
  return {
    id: Number(p.id),
    subscription_id: Number(p.subscription_id),
    order_id: null,
    amount: Math.round(Number(p.amount) * 100),
    currency: String(p.currency),
    paid_at: Math.floor(paidAt / 1000),
    status: 'paid',
  };
}

/**
 * One page of the provider's subscriptions for one account: upserts each (as of the run's start, so a
 * webhook that arrived since wins), heals the payments of subscriptions tied to referrals, and queues
 * the next page while pages come back full.
 */
export async function processSyncPage(message: SyncAccountMessage): Promise<void> {
  const accountId = message.account_id;
  const conn = await getProviderConnection(accountId);
  const provider = conn && conn.kind !== 'paddle-classic' ? providerFromConnection(accountId, conn) : null;
  if (provider?.listSubscriptions && provider.listPayments) {
    return processCursorSyncPage(message, { listSubscriptions: provider.listSubscriptions, listPayments: provider.listPayments });
  }
  const client = conn?.kind === 'paddle-classic' ? new PaddleClient(conn, { timeoutMs: config().providerTimeoutMs }) : null;
  if (!client) {
    log('warn', 'sync skipped: no provider settings', { account_id: accountId });
    return;
  }
  const users = await client.listUsers({
    ...(message.state === 'deleted' ? { state: 'deleted' } : {}),
    page: message.page,
    resultsPerPage: SYNC_PAGE_SIZE,
  });
  let attempted = 0;
  let failed = 0;
  let lastError: unknown;
  for (const user of users) {
    const subscriptionId = Number(user.subscription_id);
    if (!Number.isSafeInteger(subscriptionId) || subscriptionId <= 0) continue;
    // One subscription that cannot be applied never stops the page: the others are synced, and the next
    // run tries it again. (Failing the record would redo the page and queue its next page once per retry.)
    attempted++;
    try {
      await syncUser(accountId, client, message, user, subscriptionId);
    } catch (err) {
      failed++;
      lastError = err;
      log('warn', 'sync: subscription not applied', { account_id: accountId, subscription_id: subscriptionId, error: err instanceof Error ? err.name : 'unknown' });
    }
  }
  // Nothing applied at all (DynamoDB or the provider down): the record fails and SQS retries the page.
  if (failed > 0 && failed === attempted) throw lastError;
  log('info', 'sync page applied', { account_id: accountId, state: message.state, page: message.page, subscriptions: users.length, failed });
  if (users.length >= SYNC_PAGE_SIZE) {
    await publish('provider-events', { ...message, page: message.page + 1 });
  }
}

/** One provider user of a sync page: its subscription upserted, and if referred, its payments and an evaluation. */
async function syncUser(accountId: string, client: PaddleClient, message: SyncAccountMessage, user: PaddleUser, subscriptionId: number): Promise<void> {
  const fields = userFields(user);
  const current = await getSubscription(accountId, subscriptionId);
  const currency = fields.currency ?? current?.currency;
  if (currency && Number.isSafeInteger(Number(user.plan_id))) {
    const unitPrice = current?.unit_price ?? null;
    fields.plan = await planFor(classicPlans(accountId, client), accountId, Number(user.plan_id), currency, unitPrice, null, current);
    if (!current) fields.unit_price = fields.plan.amount;
  }
  const result = await applyProviderUpdate(accountId, { subscriptionId, asOfMs: message.started_at, fields });
  if (!result.referralId) return;
  // Payments of a referred subscription: a missed payment alert must still earn its reward.
  let paymentChanged = false;
  for (const p of await client.listPayments({ subscriptionId, isPaid: true })) {
    const payment = paymentFrom(p);
    if (!payment) continue;
    const r = await applyProviderUpdate(accountId, { subscriptionId, asOfMs: message.started_at, fields: {}, payment });
    paymentChanged ||= r.paymentChanged;
  }
  // Every referred subscription is evaluated on each sync, changed or not: it heals an evaluation whose
  // send failed earlier, and it closes commission periods that ended with time (no alert marks that).
  await evaluate(accountId, result.referralId);
}

/**
 * One page of a provider that pages by cursor (Paddle Billing, Stripe) through the port: the same rules as
 * Classic's pages (as of the run's start, payments healed for referred subscriptions, every referred
 * subscription evaluated, one failure never holds back the page). Its list covers every status, so the
 * run's `deleted` half has nothing left to do.
 */
async function processCursorSyncPage(message: SyncAccountMessage, provider: Required<Pick<AccountBillingProvider, 'listSubscriptions' | 'listPayments'>>): Promise<void> {
  const accountId = message.account_id;
  if (message.state === 'deleted') return;
  const page = await provider.listSubscriptions(message.cursor ?? null);
  let failed = 0;
  let lastError: unknown;
  for (const facts of page.subscriptions) {
    try {
      const result = await applyProviderUpdate(accountId, { subscriptionId: facts.id, asOfMs: message.started_at, fields: fieldsFromFacts(facts) });
      if (!result.referralId) continue;
      for (const p of await provider.listPayments(facts.id)) {
        await applyProviderUpdate(accountId, { subscriptionId: facts.id, asOfMs: message.started_at, fields: {}, payment: paymentFromFacts(p) });
      }
      await evaluate(accountId, result.referralId);
    } catch (err) {
      failed++;
      lastError = err;
      log('warn', 'sync: subscription not applied', { account_id: accountId, subscription_id: facts.id, error: err instanceof Error ? err.name : 'unknown' });
    }
  }
  if (failed > 0 && failed === page.subscriptions.length) throw lastError;
  log('info', 'sync page applied', { account_id: accountId, page: message.page, subscriptions: page.subscriptions.length, failed });
  if (page.next !== null) await publish('provider-events', { ...message, page: message.page + 1, cursor: page.next });
}
