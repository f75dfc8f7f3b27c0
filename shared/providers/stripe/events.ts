// Stripe webhook events -> the port's normalized BillingEvents. Pure: no I/O. The body has been verified
// at the intake (signature.ts); here it is parsed, in the worker, so a parser fix can be redriven. What an
// event does not carry (emails, product names, promotion codes, a charge's refunds, the invoice a payment
// intent paid) the adapter looks up first (lookupsFor) and passes in `enrichment`.
//
// Envelope: {id: "evt_…", object: "event", api_version, created (unix seconds), type, data: {object}}.
// - customer.subscription.{created,updated,deleted} (also paused, resumed, trial_will_end): the
//   subscription's state. Status words mapped (trialing -> trialling; unpaid, incomplete -> past_due;
//   canceled, incomplete_expired -> deleted); plan from the first item's price (product name from the
//   expanded product or the lookup, else the price's nickname); unit price = Σ unit_amount × quantity over
//   the items; dates from the ITEMS' current period (Basil moved current_period_* there): next bill = the
//   earliest item current_period_end (none once canceled or set to cancel), last bill = its start (none
//   while trialing or incomplete). metadata.refloop_referral_id -> hints.referralId. `created` has whole
//   seconds, so these events say orderUncertain: the flow re-reads each one from Stripe (the read also
//   brings the paying card, which the self-referral rule compares).
// - checkout.session.completed (mode subscription, status complete): attribution only. client_reference_id
//   (else metadata.refloop_referral_id) -> hints.referralId, the session id (cs_…) -> hints.checkoutId, a
//   promotion code used -> hints.couponCode; the customer's email. The payment comes with invoice.paid.
// - invoice.paid of a subscription (parent.subscription_details.subscription): a payment, first or renewal,
//   id in_…; amount = amount_paid (after any customer balance), excluding tax = total - Σ total_taxes.
//   A $0 invoice (trial, 100 % discount, fully paid by credit) is no payment; the event still carries the
//   subscription. The first invoice (billing_reason subscription_create) carries the checkout id when the
//   adapter found the session.
// - charge.refunded: amount_refunded is CUMULATIVE, so the facts come from the charge's refunds list (the
//   adapter reads the charge with `expand[]=refunds`): one refund fact per succeeded refund (id re_…); a
//   second partial refund re-sends the first, which the flow has already counted by its id, and a
//   redelivery makes nothing new. A refund that is pending counts when charge.refund.updated (or
//   refund.updated) says it succeeded, under the same id. Charge -> invoice: the invoice payments API by
//   the charge's payment intent (Basil removed Charge.invoice); the payment id is the invoice id (in_…).
// - charge.dispute.created: a chargeback fact for the disputed amount (the whole charge for a card
//   dispute), id = the dispute id.
// - Anything else, a body that is not a Stripe event, or an endpoint on an API version before Basil (its
//   payloads lack the fields read here): one `ignored` event with a reason.
import type {
  AttributionHints,
  BillingEvent,
  PaymentFacts,
  PlanFacts,
  RefundFacts,
  SubscriptionFacts,
  SubscriptionStatus,
} from '../../billing/port';
import { STRIPE_API_VERSION, fromStripeAmount } from './wire';

/** The metadata key (subscription and Checkout `subscription_data.metadata`) naming the referral. */
export const METADATA_KEY = 'refloop_referral_id';
/** The first API version with the shapes read here (invoice.parent, item periods, no Charge.invoice). */
export const OLDEST_READABLE_API_VERSION = '2025-03-31';

export interface StripeEnvelope {
  eventId: string;
  type: string;
  createdSeconds: number;
  apiVersion: string | null;
  object: Json;
}

/** What the adapter invoice payments API answered for a payment intent. */
export interface PaidInvoiceRef {
  invoiceId: string;
  subscriptionId: string;
}

/** What the adapter looked up for an event. */
export interface Enrichment {
  /** Customer id -> email. */
  emails?: ReadonlyMap<string, string>;
  /** Product id -> name. */
  productNames?: ReadonlyMap<string, string>;
  /** Promotion code id (promo_…) -> its code. */
  promotionCodes?: ReadonlyMap<string, string>;
  /** Charge id -> the charge read with its refunds (`expand[]=refunds`). */
  charges?: ReadonlyMap<string, Json>;
  /** Payment intent id -> the subscription invoice it paid (absent = none). */
  invoicesByPaymentIntent?: ReadonlyMap<string, PaidInvoiceRef>;
  /** Subscription id -> the Checkout Session that created it (for its first invoice). */
  checkoutBySubscription?: ReadonlyMap<string, string>;
}

export interface Lookups {
  customerIds: string[];
  productIds: string[];
  promotionCodeIds: string[];
  /** Charges whose refunds list the event does not carry in full. */
  chargeIds: string[];
  paymentIntentIds: string[];
  /** First invoices whose Checkout Session is wanted. */
  checkoutForSubscriptions: string[];
}

type Json = Record<string, unknown>;

export const SUBSCRIPTION_EVENTS: ReadonlySet<string> = new Set([
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'customer.subscription.paused',
  'customer.subscription.resumed',
  'customer.subscription.trial_will_end',
]);

const STATUS: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'trialling',
  past_due: 'past_due',
  unpaid: 'past_due',
  incomplete: 'past_due',
  paused: 'paused',
  canceled: 'deleted',
  incomplete_expired: 'deleted',
};

// --- small readers over untrusted JSON ---------------------------------------------------------------

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Json | null => (isObj(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const idOf = (v: unknown, ...prefixes: string[]): string | null => {
  const s = str(v) ?? str(obj(v)?.id);
  return s !== null && prefixes.some((p) => s.startsWith(p)) && s.length <= 255 && /^[A-Za-z0-9_]+$/.test(s) ? s : null;
};
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) ? v : null);
const listData = (v: unknown): Json[] => {
  const data = obj(v)?.data;
  return Array.isArray(data) ? data.map(obj).filter((i): i is Json => i !== null) : [];
};
const dateOf = (seconds: number | null): string | null => (seconds === null ? null : new Date(seconds * 1000).toISOString().slice(0, 10));
const currencyOf = (v: unknown): string | null => {
  const s = str(v);
  return s && /^[A-Za-z]{3}$/.test(s) ? s.toUpperCase() : null;
};
/** A Stripe amount in `currency` -> the port's minor units; null when it is not an integer. */
const amountOf = (v: unknown, currency: string): number | null => {
  const n = int(v);
  return n === null ? null : fromStripeAmount(n, currency);
};

function referralIdOf(metadata: unknown): string | undefined {
  const id = obj(metadata)?.[METADATA_KEY];
  return typeof id === 'string' && id !== '' && id.length <= 200 ? id : undefined;
}

const customerIdOf = (v: unknown): string | null => idOf(v, 'cus_');

/**
 * The card fingerprint of an expanded payment method (`default_payment_method`, read with
 * `expand[]=default_payment_method`): who pays, for the self-referral rule (docs/fraud.md). Null for an id
 * not expanded, another type than a card, or a malformed value.
 */
export function cardFingerprintOf(paymentMethod: unknown): string | null {
  const pm = obj(paymentMethod);
  if (pm?.type !== undefined && pm.type !== 'card') return null;
  const fp = str(obj(pm?.card)?.fingerprint);
  return fp !== null && fp.length <= 64 && /^[A-Za-z0-9]+$/.test(fp) ? fp : null;
}

// --- envelope -----------------------------------------------------------------------------------------

export type EnvelopeResult = { ok: true; envelope: StripeEnvelope } | { ok: false; event: BillingEvent };

export function parseEnvelope(rawBody: string): EnvelopeResult {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return { ok: false, event: { kind: 'ignored', eventId: '', type: '', reason: 'malformed JSON' } };
  }
  const b = obj(body);
  const eventId = str(b?.id) ?? '';
  const type = str(b?.type) ?? '';
  const created = int(b?.created);
  const object = obj(obj(b?.data)?.object);
  if (b?.object !== 'event' || !eventId.startsWith('evt_') || type === '' || !object) {
    return {
      ok: false,
      event: { kind: 'ignored', eventId, type, reason: 'not a Stripe event (object "event", id evt_…, type, data.object)' },
    };
  }
  if (created === null || created <= 0)
    return { ok: false, event: { kind: 'ignored', eventId, type, reason: 'created missing or not unix seconds' } };
  const apiVersion = str(b.api_version);
  if (apiVersion !== null && apiVersion.slice(0, 10) < OLDEST_READABLE_API_VERSION) {
    return {
      ok: false,
      event: {
        kind: 'ignored',
        eventId,
        type,
        reason: `the endpoint sends API version ${apiVersion}; Refloop reads ${STRIPE_API_VERSION}: recreate the webhook endpoint with that api_version`,
      },
    };
  }
  return { ok: true, envelope: { eventId, type, createdSeconds: created, apiVersion, object } };
}

const productIdOf = (item: Json | undefined): string | null => {
  const product = obj(item?.price)?.product;
  return typeof product === 'string' ? idOf(product, 'prod_') : null;
};

/**
 * What an event tells that another event of the same batch would otherwise look up: a customer's email
 * (an invoice's `customer_email`, a completed checkout's `customer_details.email`) and the Checkout Session
 * that created a subscription (a completed checkout of mode subscription). Pure; see the adapter's
 * parseWebhook.
 */
export function batchLookupsOf(envelope: StripeEnvelope): { emails: [string, string][]; checkouts: [string, string][] } {
  const { type, object } = envelope;
  const out: { emails: [string, string][]; checkouts: [string, string][] } = { emails: [], checkouts: [] };
  const customerId = customerIdOf(object.customer);
  if (type === 'invoice.paid') {
    const email = str(object.customer_email);
    if (customerId && email) out.emails.push([customerId, email]);
  } else if (type === 'checkout.session.completed' && object.mode === 'subscription' && object.status === 'complete') {
    const email = str(obj(object.customer_details)?.email) ?? str(object.customer_email);
    if (customerId && email) out.emails.push([customerId, email]);
    const subscriptionId = idOf(object.subscription, 'sub_');
    const sessionId = idOf(object.id, 'cs_');
    if (subscriptionId && sessionId) out.checkouts.push([subscriptionId, sessionId]);
  }
  return out;
}

/** What the event's facts need and do not carry. */
export function lookupsFor(envelope: StripeEnvelope): Lookups {
  const { type, object } = envelope;
  const out: Lookups = {
    customerIds: [],
    productIds: [],
    promotionCodeIds: [],
    chargeIds: [],
    paymentIntentIds: [],
    checkoutForSubscriptions: [],
  };
  if (SUBSCRIPTION_EVENTS.has(type)) {
    const customer = object.customer;
    if (typeof customer === 'string' && customerIdOf(customer)) out.customerIds.push(customer);
    const product = productIdOf(listData(object.items)[0]);
    if (product) out.productIds.push(product);
  } else if (type === 'checkout.session.completed') {
    for (const d of Array.isArray(object.discounts) ? object.discounts : []) {
      const promo = obj(d)?.promotion_code;
      if (typeof promo === 'string' && idOf(promo, 'promo_')) out.promotionCodeIds.push(promo);
    }
    const customer = object.customer;
    if (!str(obj(object.customer_details)?.email) && !str(object.customer_email) && typeof customer === 'string' && customerIdOf(customer))
      out.customerIds.push(customer);
  } else if (type === 'invoice.paid') {
    const sub = invoiceSubscriptionId(object);
    if (sub && object.billing_reason === 'subscription_create') out.checkoutForSubscriptions.push(sub);
    const customer = object.customer;
    if (!str(object.customer_email) && typeof customer === 'string' && customerIdOf(customer)) out.customerIds.push(customer);
  } else if (type === 'charge.refunded') {
    const refunds = obj(object.refunds);
    if (refunds?.has_more !== false || !Array.isArray(refunds.data)) {
      const id = idOf(object.id, 'ch_', 'py_');
      if (id) out.chargeIds.push(id);
    }
    const pi = idOf(object.payment_intent, 'pi_');
    if (pi) out.paymentIntentIds.push(pi);
  } else if (type === 'charge.dispute.created' || type === 'charge.refund.updated' || type === 'refund.updated') {
    const pi = idOf(object.payment_intent, 'pi_');
    const charge = idOf(object.charge, 'ch_', 'py_');
    if (pi) out.paymentIntentIds.push(pi);
    // Older charges may have no payment intent on the dispute or refund: the charge says.
    else if (charge) out.chargeIds.push(charge);
  }
  return out;
}

// --- facts --------------------------------------------------------------------------------------------

/**
 * A subscription object (an event's data.object, or GET /v1/subscriptions/{id}, possibly with the customer
 * and the products expanded) as facts; null if it has no id.
 */
export function subscriptionFacts(data: Json, enrichment: Pick<Enrichment, 'emails' | 'productNames'> = {}): SubscriptionFacts | null {
  const id = idOf(data.id, 'sub_');
  if (!id) return null;
  const facts: SubscriptionFacts = { id };
  const status = STATUS[String(data.status)];
  if (status) facts.status = status;
  const currency = currencyOf(data.currency);
  if (currency) facts.currency = currency;
  const customer = obj(data.customer);
  const customerId = customerIdOf(data.customer);
  if (customerId) facts.customerId = customerId;
  const email = str(customer?.email) ?? (customerId ? enrichment.emails?.get(customerId) : undefined);
  if (email) facts.email = email;
  const fingerprint = cardFingerprintOf(data.default_payment_method);
  if (fingerprint) facts.paymentFingerprint = fingerprint;

  const items = listData(data.items);
  if (items.length > 0 && currency) {
    let sum = 0;
    for (const item of items) {
      const price = obj(item.price);
      const unit = amountOf(price?.unit_amount, currency);
      // Metered prices have no quantity and bill on usage; tiered ones have no unit_amount: unknown.
      const metered = obj(price?.recurring)?.usage_type === 'metered';
      const quantity = item.quantity === undefined ? 1 : int(item.quantity);
      if (unit === null || metered || quantity === null || quantity < 0) {
        sum = NaN;
        break;
      }
      sum += unit * quantity;
    }
    if (Number.isSafeInteger(sum)) facts.unitPrice = sum;
  }
  const first = items[0];
  if (first) {
    const plan = planFacts(first, currency, enrichment.productNames);
    if (plan) facts.plan = plan;
  }

  const ends = items.map((i) => int(i.current_period_end)).filter((n): n is number => n !== null);
  const starts = items.map((i) => int(i.current_period_start)).filter((n): n is number => n !== null);
  const canceled = data.status === 'canceled' || data.status === 'incomplete_expired';
  if (canceled || data.cancel_at_period_end === true) facts.nextBillDate = null;
  else if (ends.length > 0) facts.nextBillDate = dateOf(Math.min(...ends));
  if (data.status !== 'trialing' && data.status !== 'incomplete' && data.status !== 'incomplete_expired' && starts.length > 0) {
    const last = dateOf(Math.max(...starts));
    if (last) facts.lastBillDate = last;
  }
  return facts;
}

function planFacts(
  item: Json,
  subscriptionCurrency: string | null,
  productNames: ReadonlyMap<string, string> | undefined,
): PlanFacts | null {
  const price = obj(item.price);
  const id = idOf(price?.id, 'price_', 'plan_');
  if (!price || !id) return null;
  const currency = currencyOf(price.currency) ?? subscriptionCurrency ?? '';
  const product = obj(price.product);
  const productId = idOf(price.product, 'prod_');
  const recurring = obj(price.recurring);
  return {
    id,
    name: str(product?.name) ?? (productId ? productNames?.get(productId) : undefined) ?? str(price.nickname),
    amount: currency ? amountOf(price.unit_amount, currency) : null,
    currency,
    interval: str(recurring?.interval),
    frequency: int(recurring?.interval_count),
  };
}

/** The subscription an invoice belongs to (Basil and later: parent.subscription_details.subscription). */
export function invoiceSubscriptionId(invoice: Json): string | null {
  return idOf(obj(obj(invoice.parent)?.subscription_details)?.subscription, 'sub_');
}

/** A paid subscription invoice as a payment; null when it is not one (see the header). */
export function paymentFacts(invoice: Json, checkoutId?: string): PaymentFacts | null {
  const id = idOf(invoice.id, 'in_');
  const subscriptionId = invoiceSubscriptionId(invoice);
  const currency = currencyOf(invoice.currency);
  if (!id || !subscriptionId || !currency || invoice.status !== 'paid') return null;
  const amount = amountOf(invoice.amount_paid, currency);
  const paidAt = int(obj(invoice.status_transitions)?.paid_at);
  if (amount === null || amount <= 0 || paidAt === null) return null;
  const payment: PaymentFacts = { id, subscriptionId, amount, currency, paidAtSeconds: paidAt };
  const total = int(invoice.total);
  const taxes = Array.isArray(invoice.total_taxes) ? invoice.total_taxes.map((t) => int(obj(t)?.amount)) : [];
  if (total !== null && taxes.every((t): t is number => t !== null)) {
    payment.amountExcludingTax = fromStripeAmount(total - taxes.reduce((a, b) => a + b, 0), currency);
  }
  if (checkoutId) payment.checkoutId = checkoutId;
  return payment;
}

/** A succeeded refund of a subscription invoice's payment as a refund fact; null otherwise. */
export function refundFacts(refund: Json, paid: PaidInvoiceRef): RefundFacts | null {
  const id = idOf(refund.id, 're_', 'pyr_');
  const currency = currencyOf(refund.currency);
  if (!id || !currency || refund.status !== 'succeeded') return null;
  const amount = amountOf(refund.amount, currency);
  const at = int(refund.created);
  if (amount === null || amount <= 0 || at === null) return null;
  return { id, paymentId: paid.invoiceId, subscriptionId: paid.subscriptionId, amount, currency, refundedAtSeconds: at, kind: 'refund' };
}

// --- events -------------------------------------------------------------------------------------------

const ignored = (e: StripeEnvelope, reason: string): BillingEvent => ({ kind: 'ignored', eventId: e.eventId, type: e.type, reason });

/** The payment intent of a dispute or refund: its own, else its charge's (looked up). */
function paymentIntentOf(object: Json, enrichment: Enrichment): string | null {
  const own = idOf(object.payment_intent, 'pi_');
  if (own) return own;
  const charge = idOf(object.charge, 'ch_', 'py_');
  return charge ? idOf(enrichment.charges?.get(charge)?.payment_intent, 'pi_') : null;
}

export function toBillingEvents(envelope: StripeEnvelope, enrichment: Enrichment = {}): BillingEvent[] {
  const { eventId, type, createdSeconds, object } = envelope;
  const base = { kind: 'subscription' as const, eventId, occurredAtMs: createdSeconds * 1000 };

  if (SUBSCRIPTION_EVENTS.has(type)) {
    const subscription = subscriptionFacts(object, enrichment);
    if (!subscription) return [ignored(envelope, 'subscription event without a subscription id')];
    const hints: AttributionHints = {};
    const referralId = referralIdOf(object.metadata);
    if (referralId) hints.referralId = referralId;
    return [{ ...base, orderUncertain: true, subscription, hints }];
  }

  if (type === 'checkout.session.completed') {
    if (object.mode !== 'subscription') return [ignored(envelope, `checkout session mode ${String(object.mode)} is not a subscription`)];
    if (object.status !== undefined && object.status !== 'complete')
      return [ignored(envelope, `checkout session status ${String(object.status)} is not complete`)];
    const subscriptionId = idOf(object.subscription, 'sub_');
    const sessionId = idOf(object.id, 'cs_');
    if (!subscriptionId || !sessionId) return [ignored(envelope, 'checkout session without a session or subscription id')];
    const subscription: SubscriptionFacts = { id: subscriptionId };
    const customerId = customerIdOf(object.customer);
    if (customerId) subscription.customerId = customerId;
    const email =
      str(obj(object.customer_details)?.email) ??
      str(object.customer_email) ??
      (customerId ? enrichment.emails?.get(customerId) : undefined);
    if (email) subscription.email = email;
    const hints: AttributionHints = { checkoutId: sessionId };
    const reference = str(object.client_reference_id);
    const referralId = reference !== null && reference.length <= 200 ? reference : referralIdOf(object.metadata);
    if (referralId) hints.referralId = referralId;
    for (const d of Array.isArray(object.discounts) ? object.discounts : []) {
      const promo = obj(d)?.promotion_code;
      const code = str(obj(promo)?.code) ?? (typeof promo === 'string' ? enrichment.promotionCodes?.get(promo) : undefined);
      if (code) {
        hints.couponCode = code;
        break;
      }
    }
    return [{ ...base, subscription, hints }];
  }

  if (type === 'invoice.paid') {
    const subscriptionId = invoiceSubscriptionId(object);
    if (!subscriptionId) return [ignored(envelope, 'invoice without a subscription (parent.subscription_details)')];
    if (object.status !== 'paid') return [ignored(envelope, `invoice status ${String(object.status)} is not paid`)];
    const subscription: SubscriptionFacts = { id: subscriptionId };
    const customerId = customerIdOf(object.customer);
    if (customerId) subscription.customerId = customerId;
    const email = str(object.customer_email) ?? (customerId ? enrichment.emails?.get(customerId) : undefined);
    if (email) subscription.email = email;
    const hints: AttributionHints = {};
    const referralId = referralIdOf(obj(obj(object.parent)?.subscription_details)?.metadata);
    if (referralId) hints.referralId = referralId;
    const checkoutId = object.billing_reason === 'subscription_create' ? enrichment.checkoutBySubscription?.get(subscriptionId) : undefined;
    if (checkoutId) hints.checkoutId = checkoutId;
    const payment = paymentFacts(object, checkoutId);
    if (payment) {
      subscription.lastBillDate = dateOf(payment.paidAtSeconds) as string;
      return [{ ...base, subscription, payment, hints }];
    }
    if (int(object.amount_paid) === 0) return [{ ...base, subscription, hints }];
    return [ignored(envelope, 'paid invoice without a usable amount_paid, currency or paid_at')];
  }

  if (type === 'charge.refunded') {
    const chargeId = idOf(object.id, 'ch_', 'py_');
    if (!chargeId) return [ignored(envelope, 'charge.refunded without a charge id')];
    const pi = idOf(object.payment_intent, 'pi_');
    const paid = pi ? enrichment.invoicesByPaymentIntent?.get(pi) : undefined;
    if (!paid) return [ignored(envelope, 'the refunded charge paid no subscription invoice')];
    const charge = enrichment.charges?.get(chargeId) ?? object;
    const refunds = obj(charge.refunds);
    if (!refunds || !Array.isArray(refunds.data)) return [ignored(envelope, "the charge's refunds list was not read")];
    const facts = listData(refunds)
      .map((r) => refundFacts(r, paid))
      .filter((r): r is RefundFacts => r !== null);
    if (facts.length === 0) return [ignored(envelope, 'no succeeded refund on the charge yet')];
    // One fact per refund object; the flow counts each refund id once (a later partial refund re-sends
    // the earlier ones, and they add nothing).
    return facts.map((refund) => ({ ...base, subscription: { id: refund.subscriptionId }, refund, hints: {} }));
  }

  if (type === 'charge.refund.updated' || type === 'refund.updated') {
    if (object.status !== 'succeeded') return [ignored(envelope, `refund status ${String(object.status)} is not succeeded`)];
    const pi = paymentIntentOf(object, enrichment);
    const paid = pi ? enrichment.invoicesByPaymentIntent?.get(pi) : undefined;
    if (!paid) return [ignored(envelope, 'the refund is of no subscription invoice')];
    const refund = refundFacts(object, paid);
    if (!refund) return [ignored(envelope, 'refund without a usable id, amount or currency')];
    return [{ ...base, subscription: { id: refund.subscriptionId }, refund, hints: {} }];
  }

  if (type === 'charge.dispute.created') {
    const id = idOf(object.id, 'dp_', 'du_');
    const currency = currencyOf(object.currency);
    const pi = paymentIntentOf(object, enrichment);
    const paid = pi ? enrichment.invoicesByPaymentIntent?.get(pi) : undefined;
    if (!id || !currency) return [ignored(envelope, 'dispute without an id or currency')];
    if (!paid) return [ignored(envelope, 'the disputed charge paid no subscription invoice')];
    const amount = amountOf(object.amount, currency);
    const at = int(object.created) ?? createdSeconds;
    if (amount === null || amount <= 0) return [ignored(envelope, 'dispute without a usable amount')];
    const refund: RefundFacts = {
      id,
      paymentId: paid.invoiceId,
      subscriptionId: paid.subscriptionId,
      amount,
      currency,
      refundedAtSeconds: at,
      kind: 'chargeback',
    };
    return [{ ...base, subscription: { id: paid.subscriptionId }, refund, hints: {} }];
  }

  return [ignored(envelope, `event type ${type} is not used`)];
}

/** Parse a verified raw body (no lookups): malformed JSON or envelope -> one ignored event. */
export function parseStripeEvents(rawBody: string, enrichment: Enrichment = {}): BillingEvent[] {
  const parsed = parseEnvelope(rawBody);
  return parsed.ok ? toBillingEvents(parsed.envelope, enrichment) : [parsed.event];
}
