// Paddle Billing notifications -> the port's normalized BillingEvents. Pure: no I/O. The body has been
// verified at the intake (signature.ts); here it is parsed, in the worker, so a parser fix can be redriven.
//
// Envelope: {event_id, event_type, occurred_at (RFC 3339, microseconds), notification_id, data}.
// - subscription.{created,activated,updated,trialing,past_due,paused,resumed,canceled,imported}: the
//   subscription's state (status words mapped, plan from the first item, unit price summed over items,
//   dates, customer). `custom_data.refloop_referral_id` -> hints.referralId; only subscription.created
//   carries `transaction_id`, the checkout's transaction -> hints.checkoutId.
// - transaction.completed with a subscription_id: a payment (what the customer paid = grand_total;
//   excluding tax = total - tax). origin `web` = a checkout: its id is the checkoutId. A discount code
//   used at checkout becomes hints.couponCode; the notification carries only `discount_id`, so the adapter
//   looks the code up (lookupsFor) and passes it in `enrichment`. A zero grand_total (trial start, a 100 %
//   discount) is not a payment: the event still carries the subscription and the hints.
//   Every other transaction event (paid, payment_failed, past_due, billed, ...) never counts.
// - adjustment.{created,updated} with action refund|chargeback and status approved: a refund fact whose
//   id is the adjustment id, so a refund created pending and approved later counts once (on approval),
//   and a redelivered approval is the same fact. Everything else about adjustments is ignored.
// - Anything else, or a body that is not a Paddle envelope: one `ignored` event with a reason.
import type {
  AttributionHints,
  BillingEvent,
  PaymentFacts,
  PlanFacts,
  RefundFacts,
  SubscriptionFacts,
  SubscriptionStatus,
} from '../../billing/port';

/** The key the browser script puts in Paddle.js `customData` (the same as Classic's passthrough key). */
export const CUSTOM_DATA_KEY = 'refloop_referral_id';

export interface PaddleEnvelope {
  eventId: string;
  eventType: string;
  occurredAtMs: number;
  data: Record<string, unknown>;
}

/** What the adapter looked up for an event: customer emails and discount codes, by id. */
export interface Enrichment {
  emails?: ReadonlyMap<string, string>;
  /** Discount id -> its code (null: the discount has no code). */
  discountCodes?: ReadonlyMap<string, string | null>;
}

export interface Lookups {
  customerIds: string[];
  discountIds: string[];
}

type Json = Record<string, unknown>;

const SUBSCRIPTION_EVENTS = new Set([
  'subscription.created',
  'subscription.activated',
  'subscription.updated',
  'subscription.trialing',
  'subscription.past_due',
  'subscription.paused',
  'subscription.resumed',
  'subscription.canceled',
  'subscription.imported',
]);

const STATUS: Record<string, SubscriptionStatus> = {
  active: 'active',
  trialing: 'trialling',
  past_due: 'past_due',
  paused: 'paused',
  canceled: 'deleted',
};

// --- small readers over untrusted JSON ---------------------------------------------------------------

const isObj = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const obj = (v: unknown): Json | null => (isObj(v) ? v : null);
const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const idOf = (v: unknown, prefix: string): string | null => {
  const s = str(v);
  return s?.startsWith(prefix) && s.length <= 64 ? s : null;
};

/** A minor-unit amount string ("65215", "-100") or integer; null when it is anything else. */
export function minorUnits(v: unknown): number | null {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : null;
  if (typeof v !== 'string' || !/^-?\d{1,15}$/.test(v)) return null;
  return Number(v);
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/;

/** RFC 3339 (any fraction length) -> unix ms; microseconds are truncated. Null when malformed. */
export function instantMs(v: unknown): number | null {
  if (typeof v !== 'string') return null;
  const m = RFC3339.exec(v);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac = '', zone = 'Z'] = m;
  const ms = Number(`${frac}000`.slice(0, 3));
  let t = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s), ms);
  if (zone !== 'Z' && zone !== 'z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    t -= sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6))) * 60_000;
  }
  return Number.isFinite(t) ? t : null;
}

/**
 * An event's `occurred_at` -> unix ms with the microseconds kept as a fraction (a double holds them exactly
 * enough at today's magnitudes: its step near 1.7e12 is 2^-12 ms). Two notifications of one subscription
 * a few hundred microseconds apart (a failed payment, then an immediate cancel) are ordered by it; with
 * whole ms the later-delivered older state would win the tie.
 */
export function preciseInstantMs(v: unknown): number | null {
  const ms = instantMs(v);
  if (ms === null || typeof v !== 'string') return ms;
  const frac = /\.(\d{4,9})/.exec(v)?.[1];
  return frac === undefined ? ms : ms + Number(frac.slice(3, 6).padEnd(3, '0')) / 1000;
}

/** The UTC date `YYYY-MM-DD` of an RFC 3339 instant; null when absent or malformed. */
export function utcDate(v: unknown): string | null {
  const ms = instantMs(v);
  return ms === null ? null : new Date(ms).toISOString().slice(0, 10);
}

function referralIdOf(customData: unknown): string | undefined {
  let data = customData;
  // Paddle stores custom_data as an object; a JSON string (an app's mistake) is read too.
  if (typeof data === 'string') {
    try {
      data = JSON.parse(data);
    } catch {
      return undefined;
    }
  }
  const id = obj(data)?.[CUSTOM_DATA_KEY];
  return typeof id === 'string' && id !== '' && id.length <= 200 ? id : undefined;
}

// --- envelope -----------------------------------------------------------------------------------------

export type EnvelopeResult = { ok: true; envelope: PaddleEnvelope } | { ok: false; event: BillingEvent };

export function parseEnvelope(rawBody: string): EnvelopeResult {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return { ok: false, event: { kind: 'ignored', eventId: '', type: '', reason: 'malformed JSON' } };
  }
  const b = obj(body);
  const eventId = str(b?.event_id) ?? '';
  const eventType = str(b?.event_type) ?? '';
  const occurredAtMs = preciseInstantMs(b?.occurred_at);
  const data = obj(b?.data);
  if (!b || eventId === '' || eventType === '' || !data) {
    return {
      ok: false,
      event: { kind: 'ignored', eventId, type: eventType, reason: 'not a Paddle Billing notification (event_id, event_type, data)' },
    };
  }
  if (occurredAtMs === null) {
    return { ok: false, event: { kind: 'ignored', eventId, type: eventType, reason: 'occurred_at missing or not RFC 3339' } };
  }
  return { ok: true, envelope: { eventId, eventType, occurredAtMs, data } };
}

/** The customer emails and discount codes the event's facts need and do not carry. */
export function lookupsFor(envelope: PaddleEnvelope): Lookups {
  const { eventType, data } = envelope;
  const customerIds: string[] = [];
  const discountIds: string[] = [];
  if (SUBSCRIPTION_EVENTS.has(eventType)) {
    const customer = idOf(data.customer_id, 'ctm_');
    if (customer) customerIds.push(customer);
  } else if (eventType === 'transaction.completed' && idOf(data.subscription_id, 'sub_')) {
    const discount = idOf(data.discount_id, 'dsc_');
    if (discount && data.origin === 'web' && str(obj(data.discount)?.code) === null) discountIds.push(discount);
  }
  return { customerIds, discountIds };
}

// --- facts --------------------------------------------------------------------------------------------

/** A subscription object (a notification's data, or GET /subscriptions/{id}) as facts; null if it has no id. */
export function subscriptionFacts(data: Json, email?: string): SubscriptionFacts | null {
  const id = idOf(data.id, 'sub_');
  if (!id) return null;
  const facts: SubscriptionFacts = { id };
  const status = STATUS[String(data.status)];
  if (status) facts.status = status;
  const currency = str(data.currency_code);
  if (currency) facts.currency = currency.toUpperCase();
  const customerId = idOf(data.customer_id, 'ctm_');
  if (customerId) facts.customerId = customerId;
  if (email) facts.email = email;

  const items = Array.isArray(data.items) ? data.items.map(obj).filter((i): i is Json => i !== null) : [];
  // Items that will renew: not removed, and recurring (one-time charges ride along on some payloads).
  const renewing = items.filter((i) => i.status !== 'inactive' && i.recurring !== false);
  if (renewing.length > 0) {
    let sum = 0;
    for (const item of renewing) {
      const unit = minorUnits(obj(obj(item.price)?.unit_price)?.amount);
      const quantity = typeof item.quantity === 'number' && Number.isInteger(item.quantity) && item.quantity >= 0 ? item.quantity : null;
      if (unit === null || quantity === null) {
        sum = NaN;
        break;
      }
      sum += unit * quantity;
    }
    if (Number.isSafeInteger(sum)) facts.unitPrice = sum;
  }
  const first = renewing[0] ?? items[0];
  if (first) {
    const plan = planFacts(first, obj(data.billing_cycle), facts.currency);
    if (plan) facts.plan = plan;
  }

  if ('next_billed_at' in data) facts.nextBillDate = data.next_billed_at === null ? null : (utcDate(data.next_billed_at) ?? undefined);
  if (facts.nextBillDate === undefined) delete facts.nextBillDate;
  // The last bill: the first item's previously_billed_at; else the current period's start, unless that
  // period is a trial (nothing billed yet).
  const lastBill =
    utcDate(first?.previously_billed_at) ?? (data.status !== 'trialing' ? utcDate(obj(data.current_billing_period)?.starts_at) : null);
  if (lastBill) facts.lastBillDate = lastBill;
  return facts;
}

function planFacts(item: Json, subscriptionCycle: Json | null, currency: string | undefined): PlanFacts | null {
  const price = obj(item.price);
  const id = idOf(price?.id, 'pri_');
  if (!price || !id) return null;
  const unit = obj(price.unit_price);
  const cycle = obj(price.billing_cycle) ?? subscriptionCycle;
  const frequency = cycle && typeof cycle.frequency === 'number' && Number.isInteger(cycle.frequency) ? cycle.frequency : null;
  return {
    id,
    name: str(obj(item.product)?.name) ?? str(price.name) ?? str(price.description),
    amount: minorUnits(unit?.amount),
    currency: (str(unit?.currency_code) ?? currency ?? '').toUpperCase(),
    interval: str(cycle?.interval),
    frequency,
  };
}

/** A completed subscription transaction as a payment; null when it is not one (see the header). */
export function paymentFacts(data: Json): PaymentFacts | null {
  const id = idOf(data.id, 'txn_');
  const subscriptionId = idOf(data.subscription_id, 'sub_');
  if (!id || !subscriptionId || data.status !== 'completed') return null;
  const totals = obj(obj(data.details)?.totals);
  const amount = minorUnits(totals?.grand_total);
  const total = minorUnits(totals?.total);
  const tax = minorUnits(totals?.tax);
  const currency = str(totals?.currency_code) ?? str(data.currency_code);
  const paidAtMs = instantMs(data.billed_at) ?? instantMs(data.updated_at);
  if (amount === null || amount <= 0 || !currency || paidAtMs === null) return null;
  const payment: PaymentFacts = {
    id,
    subscriptionId,
    amount,
    currency: currency.toUpperCase(),
    paidAtSeconds: Math.floor(paidAtMs / 1000),
  };
  if (total !== null && tax !== null) payment.amountExcludingTax = total - tax;
  if (data.origin === 'web') payment.checkoutId = id;
  return payment;
}

/** An approved refund or chargeback adjustment of a subscription's transaction; null otherwise. */
export function refundFacts(data: Json, occurredAtMs: number): RefundFacts | null {
  const id = idOf(data.id, 'adj_');
  const paymentId = idOf(data.transaction_id, 'txn_');
  const subscriptionId = idOf(data.subscription_id, 'sub_');
  if (!id || !paymentId || !subscriptionId) return null;
  if ((data.action !== 'refund' && data.action !== 'chargeback') || data.status !== 'approved') return null;
  const totals = obj(data.totals);
  const amount = minorUnits(totals?.total);
  const currency = str(totals?.currency_code) ?? str(data.currency_code);
  if (amount === null || amount <= 0 || !currency) return null;
  const at = instantMs(data.updated_at) ?? instantMs(data.created_at) ?? occurredAtMs;
  return {
    id,
    paymentId,
    subscriptionId,
    amount,
    currency: currency.toUpperCase(),
    refundedAtSeconds: Math.floor(at / 1000),
    kind: data.action,
  };
}

// --- events -------------------------------------------------------------------------------------------

const ignored = (e: PaddleEnvelope, reason: string): BillingEvent => ({ kind: 'ignored', eventId: e.eventId, type: e.eventType, reason });

export function toBillingEvents(envelope: PaddleEnvelope, enrichment: Enrichment = {}): BillingEvent[] {
  const { eventId, eventType, occurredAtMs, data } = envelope;
  const base = { kind: 'subscription' as const, eventId, occurredAtMs };

  if (SUBSCRIPTION_EVENTS.has(eventType)) {
    const customer = idOf(data.customer_id, 'ctm_');
    const subscription = subscriptionFacts(data, customer ? enrichment.emails?.get(customer) : undefined);
    if (!subscription) return [ignored(envelope, 'subscription event without a subscription id')];
    const hints: AttributionHints = {};
    const referralId = referralIdOf(data.custom_data);
    if (referralId) hints.referralId = referralId;
    const checkout = eventType === 'subscription.created' ? idOf(data.transaction_id, 'txn_') : null;
    if (checkout) hints.checkoutId = checkout;
    return [{ ...base, subscription, hints }];
  }

  if (eventType.startsWith('transaction.')) {
    if (eventType !== 'transaction.completed') return [ignored(envelope, `${eventType} is not a completed payment`)];
    const subscriptionId = idOf(data.subscription_id, 'sub_');
    if (!subscriptionId) return [ignored(envelope, 'transaction without a subscription (one-time purchase)')];
    if (data.status !== 'completed') return [ignored(envelope, `transaction status ${String(data.status)} is not completed`)];
    const subscription: SubscriptionFacts = { id: subscriptionId };
    const customer = idOf(data.customer_id, 'ctm_');
    if (customer) subscription.customerId = customer;
    const email = str(obj(data.customer)?.email) ?? (customer ? enrichment.emails?.get(customer) : undefined);
    if (email) subscription.email = email;
    const hints: AttributionHints = {};
    const referralId = referralIdOf(data.custom_data);
    if (referralId) hints.referralId = referralId;
    const txnId = idOf(data.id, 'txn_');
    if (data.origin === 'web' && txnId) {
      hints.checkoutId = txnId;
      const discountId = idOf(data.discount_id, 'dsc_');
      const code = str(obj(data.discount)?.code) ?? (discountId ? enrichment.discountCodes?.get(discountId) : null) ?? null;
      if (code) hints.couponCode = code;
    }
    const payment = paymentFacts(data);
    if (payment) {
      subscription.lastBillDate = new Date(payment.paidAtSeconds * 1000).toISOString().slice(0, 10);
      return [{ ...base, subscription, payment, hints }];
    }
    if (minorUnits(obj(obj(data.details)?.totals)?.grand_total) === 0) return [{ ...base, subscription, hints }];
    return [ignored(envelope, 'completed transaction without a usable total, currency or billed_at')];
  }

  if (eventType === 'adjustment.created' || eventType === 'adjustment.updated') {
    const action = String(data.action);
    if (action !== 'refund' && action !== 'chargeback')
      return [ignored(envelope, `adjustment action ${action} is not a refund or chargeback`)];
    if (data.status !== 'approved') return [ignored(envelope, `adjustment status ${String(data.status)}: counts only once approved`)];
    const refund = refundFacts(data, occurredAtMs);
    if (!refund) return [ignored(envelope, 'approved adjustment without a subscription transaction or a usable total')];
    return [{ ...base, subscription: { id: refund.subscriptionId }, refund, hints: {} }];
  }

  return [ignored(envelope, `event type ${eventType} is not used`)];
}

/** Parse a verified raw body (no lookups): malformed JSON or envelope -> one ignored event. */
export function parsePaddleBillingEvents(rawBody: string, enrichment: Enrichment = {}): BillingEvent[] {
  const parsed = parseEnvelope(rawBody);
  return parsed.ok ? toBillingEvents(parsed.envelope, enrichment) : [parsed.event];
}
