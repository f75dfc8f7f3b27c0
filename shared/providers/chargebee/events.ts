// Chargebee events -> the port's normalized BillingEvents. Pure: no I/O. The adapter hands in only the
// event it fetched again from Chargebee by id (GET /api/v2/events/{id}), never the delivered body, and the
// plan names it looked up (GET /item_prices/{id}).
//
// Envelope: {id: "ev_…", occurred_at (unix s), object: "event", api_version: "v2", event_type, content}.
// Order: `occurredAtMs` = content.subscription.resource_version (unix ms, bumped on every change of the
// subscription), else occurred_at × 1000 (whole seconds: then `orderUncertain`, and the worker re-reads).
// - subscription_{created,started,activated,changed,renewed,cancelled,reactivated,paused,resumed,deleted,
//   cancellation_scheduled,scheduled_cancellation_removed}: the subscription's state. Statuses: future,
//   in_trial -> trialling; active -> active, or past_due while it has unpaid invoices (due_invoices_count
//   > 0: Chargebee has no past-due status); non_renewing -> active without a next bill; paused -> paused;
//   cancelled, transferred, or `deleted: true` -> deleted. Product Catalog 2.0: the plan is the
//   subscription item of item_type `plan` (its name from the lookup), the unit price Σ unit_price ×
//   quantity over the plan and addon items. Catalog 1.0 (plan_id, plan_unit_price, plan_quantity) is read
//   too, its plan without a name (Catalog 1.0 plans are not looked up). email = content.customer.email,
//   customerId = the subscription's customer_id. A subscription_created with a 100 % coupon and no payment
//   still mirrors the subscription.
// - payment_succeeded: the invoice as a payment (id = the invoice id, amount = amount_paid, excluding tax =
//   total − tax, at most amount_paid), only for a `success` transaction of type payment on a paid invoice of a
//   subscription; a $0 invoice is no payment (the event still carries the subscription).
// - payment_failed: the subscription, past_due (unless trialling, paused or ended).
// - payment_refunded and credit_note_created: one refund fact per REFUNDABLE credit note, id = the credit
//   note's id, so both events of one refund give the same fact (the flow counts it once); paymentId =
//   reference_invoice_id, amount = the note's total, kind chargeback when reason_code is `chargeback`.
//   payment_refunded without a credit_note reads the refund transaction's linked_credit_notes.
//   Counted once the money went back, as for every provider: credit_note_created counts a note already
//   `refunded`; a note still `refund_due` (an asynchronous refund in progress, or money kept as
//   refundable credits) counts when its payment_refunded comes. Adjustment and store notes return no
//   money: ignored. refund_initiated (a refund still in progress) claws back nothing either.
// - Anything else, or a body that is not a Chargebee v2 event: one `ignored` event with a reason.
import type {
  AttributionHints,
  BillingEvent,
  PaymentFacts,
  PlanFacts,
  ProviderId,
  RefundFacts,
  SubscriptionFacts,
  SubscriptionStatus,
} from '../../billing/port';
import { isSupportedCurrency, REFERRAL_FIELD, REFERRAL_META_KEY } from './wire';

type Json = Record<string, unknown>;

export interface ChargebeeEnvelope {
  eventId: string;
  type: string;
  occurredAtSeconds: number;
  content: Json;
}

export const SUBSCRIPTION_EVENTS: ReadonlySet<string> = new Set([
  'subscription_created',
  'subscription_started',
  'subscription_activated',
  'subscription_changed',
  'subscription_renewed',
  'subscription_cancelled',
  'subscription_reactivated',
  'subscription_paused',
  'subscription_resumed',
  'subscription_deleted',
  'subscription_cancellation_scheduled',
  'subscription_scheduled_cancellation_removed',
]);
export const PAYMENT_EVENTS: ReadonlySet<string> = new Set(['payment_succeeded', 'payment_failed']);
export const REFUND_EVENTS: ReadonlySet<string> = new Set(['payment_refunded', 'credit_note_created']);

/** The event types the worker applies (and so fetches again from Chargebee first); every other is ignored as delivered. */
export function isAppliedType(type: string): boolean {
  return SUBSCRIPTION_EVENTS.has(type) || PAYMENT_EVENTS.has(type) || REFUND_EVENTS.has(type);
}

/** Why a type is not applied (the reason logged with the `ignored` event). */
export function ignoredReason(type: string): string {
  if (type === 'refund_initiated') return 'a refund still in progress claws back nothing; its payment_refunded does';
  if (type.startsWith('promotional_credits_')) return "Refloop's credits are read from the customer's balance when needed";
  return `event type ${type || '(none)'} is not used`;
}

// --- small readers over untrusted JSON ---------------------------------------------------------------

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Json | null => (isObj(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
/** A Chargebee id: merchants may choose customer and subscription ids (letters, digits, `_ - .` and spaces seen). */
const idOf = (v: unknown): string | null => {
  const s = str(v);
  return s !== null && s.length <= 100 && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(s) ? s : null;
};
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) ? v : null);
const list = (v: unknown): Json[] => (Array.isArray(v) ? v.map(obj).filter((i): i is Json => i !== null) : []);
const dateOf = (seconds: number | null): string | null =>
  seconds === null || seconds <= 0 ? null : new Date(seconds * 1000).toISOString().slice(0, 10);
const currencyOf = (v: unknown): string | null => {
  const s = str(v);
  return s && /^[A-Za-z]{3}$/.test(s) ? s.toUpperCase() : null;
};
/** A Chargebee amount is already the port's minor units (wire.ts); null when not an integer or the currency is refused. */
const amountOf = (v: unknown, currency: string | null): number | null => {
  const n = int(v);
  return n === null || currency === null || !isSupportedCurrency(currency) ? null : n;
};

const INTERVALS = new Set(['day', 'week', 'month', 'year']);

/** `meta_data` is an object in events and answers; a JSON string is read too. */
function metaOf(v: unknown): Json | null {
  if (typeof v === 'string') {
    try {
      return obj(JSON.parse(v));
    } catch {
      return null;
    }
  }
  return obj(v);
}

const referralOf = (v: unknown): string | undefined => {
  const s = str(v);
  return s !== null && s.length <= 200 ? s : undefined;
};

// --- envelope -----------------------------------------------------------------------------------------

export type EnvelopeResult = { ok: true; envelope: ChargebeeEnvelope } | { ok: false; event: BillingEvent };

export const EVENT_ID = /^ev_[A-Za-z0-9_-]{1,100}$/;

/** An event object (the delivered body, or GET /events/{id}'s `event`) checked for its envelope. */
export function envelopeOf(body: unknown): EnvelopeResult {
  const b = obj(body);
  const eventId = str(b?.id) ?? '';
  const type = str(b?.event_type) ?? '';
  const content = obj(b?.content);
  if (b?.object !== 'event' || !EVENT_ID.test(eventId) || type === '' || !content) {
    return {
      ok: false,
      event: {
        kind: 'ignored',
        eventId: EVENT_ID.test(eventId) ? eventId : '',
        type,
        reason: 'not a Chargebee event (object "event", id ev_…, event_type, content)',
      },
    };
  }
  const apiVersion = str(b.api_version);
  if (apiVersion !== null && apiVersion !== 'v2')
    return {
      ok: false,
      event: { kind: 'ignored', eventId, type, reason: `the webhook sends API version ${apiVersion}; Refloop reads v2` },
    };
  const occurred = int(b.occurred_at);
  if (occurred === null || occurred <= 0)
    return { ok: false, event: { kind: 'ignored', eventId, type, reason: 'occurred_at missing or not unix seconds' } };
  return { ok: true, envelope: { eventId, type, occurredAtSeconds: occurred, content } };
}

/** Parses the delivered (or fetched) raw body; malformed JSON or envelope -> one ignored event. */
export function parseEnvelope(rawBody: string): EnvelopeResult {
  try {
    return envelopeOf(JSON.parse(rawBody));
  } catch {
    return { ok: false, event: { kind: 'ignored', eventId: '', type: '', reason: 'malformed JSON' } };
  }
}

// --- facts --------------------------------------------------------------------------------------------

/** The subscription's plan item (Catalog 2.0): the subscription item of item_type `plan`. */
export function planItemOf(subscription: Json): Json | null {
  return list(subscription.subscription_items).find((i) => i.item_type === 'plan') ?? null;
}

/** The item price ids whose names the facts want (the adapter looks them up). */
export function planLookupsFor(envelope: ChargebeeEnvelope): string[] {
  const sub = obj(envelope.content.subscription);
  const id = sub ? idOf(planItemOf(sub)?.item_price_id) : null;
  return id ? [id] : [];
}

export function statusOf(subscription: Json): SubscriptionStatus | null {
  if (subscription.deleted === true) return 'deleted';
  const dues = int(subscription.due_invoices_count) ?? 0;
  switch (subscription.status) {
    case 'future':
    case 'in_trial':
      return 'trialling';
    case 'active':
    case 'non_renewing':
      return dues > 0 ? 'past_due' : 'active';
    case 'paused':
      return 'paused';
    case 'cancelled':
    case 'transferred':
      return 'deleted';
    default:
      return null;
  }
}

/**
 * A subscription object (an event's content.subscription, GET /subscriptions/{id}, a list row) as facts,
 * with its customer when given (the email); null if it has no id.
 */
export function subscriptionFacts(
  data: Json,
  customer: Json | null = null,
  planNames: ReadonlyMap<string, string> = new Map(),
): SubscriptionFacts | null {
  const id = idOf(data.id);
  if (!id) return null;
  const facts: SubscriptionFacts = { id };
  const status = statusOf(data);
  if (status) facts.status = status;
  const currency = currencyOf(data.currency_code);
  if (currency) facts.currency = currency;
  const customerId = idOf(data.customer_id) ?? idOf(customer?.id);
  if (customerId) facts.customerId = customerId;
  const email = customer && (customerId === null || idOf(customer.id) === customerId) ? str(customer.email) : null;
  if (email && email.length <= 320) facts.email = email;

  const items = list(data.subscription_items);
  if (items.length > 0) {
    let sum = 0;
    for (const item of items) {
      if (item.item_type === 'charge') continue; // one-time charges do not renew
      const unit = amountOf(item.unit_price, currency);
      const quantity = item.quantity === undefined ? 1 : int(item.quantity);
      if (unit === null || quantity === null || quantity < 0) {
        sum = Number.NaN;
        break;
      }
      sum += unit * quantity;
    }
    if (Number.isSafeInteger(sum)) facts.unitPrice = sum;
    const planItem = planItemOf(data);
    const planId = idOf(planItem?.item_price_id);
    if (planItem && planId) facts.plan = planFacts(planId, planNames.get(planId) ?? null, planItem.unit_price, planItem, currency);
  } else {
    // Product Catalog 1.0: the plan on the subscription itself.
    const planId = idOf(data.plan_id);
    const unit = amountOf(data.plan_unit_price, currency);
    const quantity = data.plan_quantity === undefined ? 1 : int(data.plan_quantity);
    if (unit !== null && quantity !== null && quantity >= 0) facts.unitPrice = unit * quantity;
    if (planId) facts.plan = planFacts(planId, null, data.plan_unit_price, data, currency);
  }

  const ended = status === 'deleted';
  if (ended || data.status === 'non_renewing' || data.status === 'paused') facts.nextBillDate = null;
  else {
    const next = dateOf(int(data.next_billing_at));
    if (next) facts.nextBillDate = next;
  }
  if (data.status !== 'future' && data.status !== 'in_trial') {
    const last = dateOf(int(data.current_term_start));
    if (last) facts.lastBillDate = last;
  }
  return facts;
}

function planFacts(id: string, name: string | null, unitPrice: unknown, period: Json, currency: string | null): PlanFacts {
  const unit = str(period.billing_period_unit);
  return {
    id,
    name,
    amount: amountOf(unitPrice, currency),
    currency: currency ?? '',
    interval: unit && INTERVALS.has(unit) ? unit : null,
    frequency: int(period.billing_period),
  };
}

/** Where the subscription or its customer names a referral (docs/providers/chargebee.md "Attribution"). */
export function hintsOf(subscription: Json | null, customer: Json | null): AttributionHints {
  const hints: AttributionHints = {};
  const referralId =
    referralOf(subscription?.[REFERRAL_FIELD]) ??
    referralOf(customer?.[REFERRAL_FIELD]) ??
    referralOf(metaOf(subscription?.meta_data)?.[REFERRAL_META_KEY]) ??
    referralOf(metaOf(customer?.meta_data)?.[REFERRAL_META_KEY]);
  if (referralId) hints.referralId = referralId;
  for (const c of list(subscription?.coupons)) {
    const code = str(c.coupon_code);
    if (code && code.length <= 100) {
      hints.couponCode = code;
      break;
    }
  }
  return hints;
}

/** A paid invoice of a subscription as a payment; null when it is not one (unpaid, $0, no subscription). */
export function paymentFacts(invoice: Json, eventSubscriptionId: ProviderId | null = null): PaymentFacts | null {
  const id = idOf(invoice.id);
  const subscriptionId = idOf(invoice.subscription_id) ?? eventSubscriptionId;
  const currency = currencyOf(invoice.currency_code);
  if (!id || !subscriptionId || !currency || invoice.status !== 'paid') return null;
  const amount = amountOf(invoice.amount_paid, currency);
  const paidAt = int(invoice.paid_at) ?? int(invoice.date);
  if (amount === null || amount <= 0 || paidAt === null) return null;
  const payment: PaymentFacts = { id, subscriptionId, amount, currency, paidAtSeconds: paidAt };
  const total = int(invoice.total);
  const tax = int(invoice.tax);
  // Coupons and promotional credits are discounts inside `total`, before tax.
  if (total !== null && tax !== null && total - tax >= 0) payment.amountExcludingTax = Math.min(total - tax, amount);
  return payment;
}

/**
 * A refundable credit note as a refund fact (id = the note's id); null when it returns no money (an
 * adjustment or store note, voided, $0) or names no invoice or subscription.
 */
export function refundFacts(note: Json, fallbackSubscriptionId: ProviderId | null, occurredAtSeconds: number): RefundFacts | null {
  const id = idOf(note.id);
  const paymentId = idOf(note.reference_invoice_id);
  const subscriptionId = idOf(note.subscription_id) ?? fallbackSubscriptionId;
  const currency = currencyOf(note.currency_code);
  if (!id || !paymentId || !subscriptionId || !currency) return null;
  if (note.type !== 'refundable' || note.status === 'voided' || note.deleted === true) return null;
  const amount = amountOf(note.total, currency);
  if (amount === null || amount <= 0) return null;
  return {
    id,
    paymentId,
    subscriptionId,
    amount,
    currency,
    refundedAtSeconds: int(note.date) ?? int(note.generated_at) ?? occurredAtSeconds,
    kind: note.reason_code === 'chargeback' ? 'chargeback' : 'refund',
  };
}

/** The credit note a refund transaction names (`linked_credit_notes`), as a note (when the event carries none). */
function noteFromTransaction(txn: Json, subscriptionId: ProviderId | null): Json | null {
  const link = list(txn.linked_credit_notes)[0];
  if (!link) return null;
  return {
    id: link.cn_id,
    reference_invoice_id: link.cn_reference_invoice_id,
    subscription_id: txn.subscription_id ?? subscriptionId,
    currency_code: txn.currency_code,
    type: 'refundable',
    status: link.cn_status,
    total: link.cn_total ?? link.applied_amount,
    reason_code: link.cn_reason_code,
    date: link.cn_date ?? txn.date,
  };
}

// --- events -------------------------------------------------------------------------------------------

const ignored = (e: ChargebeeEnvelope, reason: string): BillingEvent => ({ kind: 'ignored', eventId: e.eventId, type: e.type, reason });

export interface Enrichment {
  /** Item price id -> its name. */
  planNames?: ReadonlyMap<string, string>;
}

export function toBillingEvents(envelope: ChargebeeEnvelope, enrichment: Enrichment = {}): BillingEvent[] {
  const { type, content } = envelope;
  if (!isAppliedType(type)) return [ignored(envelope, ignoredReason(type))];
  const subscription = obj(content.subscription);
  const customer = obj(content.customer);
  const version = int(subscription?.resource_version);
  const base = {
    kind: 'subscription' as const,
    eventId: envelope.eventId,
    occurredAtMs: version !== null && version > 0 ? version : envelope.occurredAtSeconds * 1000,
    ...(version !== null && version > 0 ? {} : { orderUncertain: true }),
  };
  const currency = currencyOf(
    subscription?.currency_code ?? obj(content.invoice)?.currency_code ?? obj(content.credit_note)?.currency_code,
  );
  if (currency && !isSupportedCurrency(currency))
    return [ignored(envelope, `${currency} is a three-decimal currency: Chargebee's unit for it is not verified, so it is not read`)];
  const facts = subscription ? subscriptionFacts(subscription, customer, enrichment.planNames) : null;
  const hints = hintsOf(subscription, customer);

  if (SUBSCRIPTION_EVENTS.has(type)) {
    if (!facts) return [ignored(envelope, 'subscription event without a subscription id')];
    if (type === 'subscription_deleted') facts.status = 'deleted';
    if (facts.status === 'deleted') facts.nextBillDate = null;
    return [{ ...base, subscription: facts, hints }];
  }

  if (type === 'payment_failed') {
    if (!facts) return [ignored(envelope, 'payment_failed without a subscription')];
    if (facts.status === 'active') facts.status = 'past_due';
    return [{ ...base, subscription: facts, hints }];
  }

  if (type === 'payment_succeeded') {
    const txn = obj(content.transaction);
    const invoice = obj(content.invoice);
    if (!invoice) return [ignored(envelope, 'payment_succeeded without an invoice')];
    if (txn && (txn.status !== 'success' || (txn.type !== undefined && txn.type !== 'payment')))
      return [ignored(envelope, `transaction ${String(txn.type)} ${String(txn.status)} is not a successful payment`)];
    const subscriptionId = idOf(invoice.subscription_id) ?? facts?.id ?? null;
    if (!subscriptionId) return [ignored(envelope, 'the invoice belongs to no subscription')];
    if (invoice.status !== 'paid') return [ignored(envelope, `invoice status ${String(invoice.status)} is not paid`)];
    const subscriptionFactsOrId: SubscriptionFacts = facts && facts.id === subscriptionId ? facts : { id: subscriptionId };
    const payment = paymentFacts(invoice, subscriptionId);
    if (payment) return [{ ...base, subscription: subscriptionFactsOrId, payment, hints }];
    if (int(invoice.amount_paid) === 0) return [{ ...base, subscription: subscriptionFactsOrId, hints }];
    return [ignored(envelope, 'paid invoice without a usable amount_paid, currency or paid_at')];
  }

  // payment_refunded, credit_note_created
  let note = obj(content.credit_note);
  const txn = obj(content.transaction);
  if (type === 'payment_refunded') {
    if (txn && (txn.status !== 'success' || txn.type !== 'refund'))
      return [ignored(envelope, `transaction ${String(txn.type)} ${String(txn.status)} is not a successful refund`)];
    note ??= txn ? noteFromTransaction(txn, facts?.id ?? null) : null;
  }
  if (!note) return [ignored(envelope, `${type} without a credit note`)];
  if (type === 'credit_note_created' && note.status === 'refund_due')
    return [ignored(envelope, `credit note ${String(note.id)} is refund_due: no money went back yet (its payment_refunded counts it)`)];
  const refund = refundFacts(note, facts?.id ?? idOf(obj(content.invoice)?.subscription_id), envelope.occurredAtSeconds);
  if (!refund)
    return [
      ignored(
        envelope,
        `credit note ${String(note.id)} (${String(note.type)}, ${String(note.status)}) returns no money of a subscription payment`,
      ),
    ];
  const sub: SubscriptionFacts = facts && facts.id === refund.subscriptionId ? facts : { id: refund.subscriptionId };
  return [{ ...base, subscription: sub, refund, hints: sub === facts ? hints : {} }];
}

/** Parse a raw body (no lookups): malformed JSON or envelope -> one ignored event. */
export function parseChargebeeEvents(rawBody: string, enrichment: Enrichment = {}): BillingEvent[] {
  const parsed = parseEnvelope(rawBody);
  return parsed.ok ? toBillingEvents(parsed.envelope, enrichment) : [parsed.event];
}
