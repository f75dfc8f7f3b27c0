// Paddle Classic alerts, after `verifyPaddleSignature`, turned into what the subscription-sync worker
// applies: a patch of the subscription copy and, for payment alerts, the payment. Pure, no I/O.
// Value formats: docs/design/providers.md "Paddle Classic".
//
// - Every value arrives as a string. A field goes into the patch only when it is present and well formed
//   (an empty string counts as absent); a malformed optional field is left out, not guessed.
// - What identifies the alert (alert_id, event_time, subscription_id, and for payment alerts
//   subscription_payment_id and the amount and currency) must be valid, or the alert is `ignored` with
//   the reason: the alert is signed by Paddle, so retrying it cannot fix it.
// - A `status` outside Paddle's five makes the alert `ignored`; `trialing` becomes `trialling`.
// - Alert types other than the six subscription ones, and bodies without `alert_name`, are `ignored`
//   ("unhandled alert type"); the webhook still answers 200 to them.
import { decimalToCents, paddleDateTimeToUnixMs } from '../../domain/billing';
import { formatCents } from '../../domain/money';
import type { Payment } from '../../domain/models';
import type { AlertFields } from './signature';

export type SubscriptionStatusWord = 'active' | 'trialling' | 'past_due' | 'paused' | 'deleted';

export interface SubscriptionPatch {
  id: number;
  status?: SubscriptionStatusWord;
  plan_id?: number;
  /** Two decimals, e.g. "9.99". */
  unit_price?: string;
  quantity?: number;
  currency?: string;
  email?: string;
  /** YYYY-MM-DD; null when the subscription will not bill again (cancelled). */
  next_bill_date?: string | null;
  /** YYYY-MM-DD. */
  last_bill_date?: string;
  /** YYYY-MM-DD. */
  cancellation_effective_date?: string;
}

/** A payment as an alert reports it (`paid_at` from event_time). */
export type PaymentEvent = Payment;

export type ParsedAlert =
  | {
      kind: 'subscription';
      alert_id: string;
      alert_name: string;
      /** Unix milliseconds. */
      event_time: number;
      subscription: SubscriptionPatch;
      payment: PaymentEvent | null;
      plan_name: string | null;
    }
  | { kind: 'ignored'; alert_id: string | null; alert_name: string | null; reason: string };

export const HANDLED_ALERTS: readonly string[] = Object.freeze([
  'subscription_created',
  'subscription_updated',
  'subscription_cancelled',
  'subscription_payment_succeeded',
  'subscription_payment_failed',
  'subscription_payment_refunded',
]);

const PAYMENT_ALERTS: readonly string[] = [
  'subscription_payment_succeeded',
  'subscription_payment_failed',
  'subscription_payment_refunded',
];

const PADDLE_STATUSES: Readonly<Record<string, SubscriptionStatusWord>> = {
  active: 'active',
  trialing: 'trialling',
  past_due: 'past_due',
  paused: 'paused',
  deleted: 'deleted',
};

const DIGITS = /^\d+$/;
const CURRENCY = /^[A-Z]{3}$/;
const ORDER_ID = /^\d+(-\d+)?$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;

export function parseAlert(fields: AlertFields): ParsedAlert {
  const alertName = text(fields, 'alert_name');
  const rawAlertId = text(fields, 'alert_id');
  const alertId = rawAlertId !== undefined && DIGITS.test(rawAlertId) ? rawAlertId : null;
  const ignored = (reason: string): ParsedAlert => ({
    kind: 'ignored',
    alert_id: alertId,
    alert_name: alertName ?? null,
    reason,
  });

  if (alertName === undefined || !HANDLED_ALERTS.includes(alertName)) return ignored('unhandled alert type');
  if (rawAlertId === undefined) return ignored('missing alert_id');
  if (alertId === null) return ignored(`invalid alert_id ${show(rawAlertId)}`);

  const rawEventTime = text(fields, 'event_time');
  if (rawEventTime === undefined) return ignored('missing event_time');
  const eventTime = paddleDateTimeToUnixMs(rawEventTime);
  if (eventTime === null) return ignored(`invalid event_time ${show(rawEventTime)}`);

  const rawSubscriptionId = text(fields, 'subscription_id');
  if (rawSubscriptionId === undefined) return ignored('missing subscription_id');
  const subscriptionId = id(rawSubscriptionId);
  if (subscriptionId === null) return ignored(`invalid subscription_id ${show(rawSubscriptionId)}`);

  const rawStatus = text(fields, 'status');
  let status: SubscriptionStatusWord | undefined;
  if (rawStatus !== undefined) {
    status = Object.hasOwn(PADDLE_STATUSES, rawStatus) ? PADDLE_STATUSES[rawStatus] : undefined;
    if (status === undefined) return ignored(`invalid status ${show(rawStatus)}`);
  }

  let paymentId: number | null = null;
  if (PAYMENT_ALERTS.includes(alertName)) {
    const raw = text(fields, 'subscription_payment_id');
    if (raw === undefined) return ignored('missing subscription_payment_id');
    paymentId = id(raw);
    if (paymentId === null) return ignored(`invalid subscription_payment_id ${show(raw)}`);
  }

  const patch: SubscriptionPatch = { id: subscriptionId };
  if (status !== undefined) patch.status = status;
  const planId = id(text(fields, 'subscription_plan_id'));
  if (planId !== null) patch.plan_id = planId;
  const currency = text(fields, 'currency');
  if (currency !== undefined && CURRENCY.test(currency)) patch.currency = currency;
  const email = text(fields, 'email');
  if (email !== undefined && EMAIL.test(email)) patch.email = email;

  const unitPriceField = alertName === 'subscription_updated' ? 'new_unit_price' : 'unit_price';
  const unitPrice = money(text(fields, unitPriceField));
  if (unitPrice !== null) patch.unit_price = formatCents(unitPrice);
  const quantity = count(text(fields, alertName === 'subscription_updated' ? 'new_quantity' : 'quantity'));
  if (quantity !== null) patch.quantity = quantity;

  if (alertName !== 'subscription_payment_failed' && alertName !== 'subscription_cancelled') {
    const nextBillDate = date(text(fields, 'next_bill_date'));
    if (nextBillDate !== null) patch.next_bill_date = nextBillDate;
  }

  let payment: PaymentEvent | null = null;
  let planName: string | null = null;
  const orderId = text(fields, 'order_id');
  const base = {
    id: paymentId ?? 0, // set for the three payment alerts, the only ones that use it
    subscription_id: subscriptionId,
    order_id: orderId !== undefined && ORDER_ID.test(orderId) ? orderId : null,
    paid_at: Math.floor(eventTime / 1000),
  };

  switch (alertName) {
    case 'subscription_cancelled': {
      patch.status = 'deleted';
      patch.next_bill_date = null;
      const effective = date(text(fields, 'cancellation_effective_date'));
      if (effective !== null) patch.cancellation_effective_date = effective;
      break;
    }
    case 'subscription_payment_succeeded': {
      patch.last_bill_date = rawEventTime.slice(0, 10);
      const amount = requiredMoney(fields, 'sale_gross');
      if (typeof amount === 'string') return ignored(amount);
      if (patch.currency === undefined) return ignored(currencyReason(fields));
      payment = { ...base, amount, currency: patch.currency, status: 'paid' };
      // sale_gross includes payment_tax; a percentage commission is computed on the difference.
      const tax = money(text(fields, 'payment_tax'));
      if (tax !== null && tax >= 0 && tax <= amount) payment.tax = tax;
      planName = text(fields, 'plan_name') ?? null;
      break;
    }
    case 'subscription_payment_failed': {
      const amount = requiredMoney(fields, 'amount');
      if (typeof amount === 'string') return ignored(amount);
      if (patch.currency === undefined) return ignored(currencyReason(fields));
      payment = { ...base, amount, currency: patch.currency, status: 'failed' };
      break;
    }
    case 'subscription_payment_refunded': {
      const field = text(fields, 'gross_refund') !== undefined ? 'gross_refund' : 'amount';
      const amount = requiredMoney(fields, field);
      if (typeof amount === 'string') return ignored(amount);
      if (patch.currency === undefined) return ignored(currencyReason(fields));
      payment = { ...base, amount, currency: patch.currency, status: 'refunded', refund_amount: amount };
      const refundType = text(fields, 'refund_type');
      if (refundType !== undefined) payment.refund_type = refundType;
      break;
    }
    default:
      break;
  }

  return {
    kind: 'subscription',
    alert_id: alertId,
    alert_name: alertName,
    event_time: eventTime,
    subscription: patch,
    payment,
    plan_name: planName,
  };
}

/** The field's value; undefined when absent or empty. */
function text(fields: AlertFields, name: string): string | undefined {
  if (!Object.hasOwn(fields, name)) return undefined;
  const value = fields[name];
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** A positive integer id written in digits. */
function id(value: string | undefined): number | null {
  if (value === undefined || !DIGITS.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** A non-negative integer written in digits. */
function count(value: string | undefined): number | null {
  if (value === undefined || !DIGITS.test(value)) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : null;
}

function money(value: string | undefined): number | null {
  return value === undefined ? null : decimalToCents(value);
}

/** `YYYY-MM-DD` of a Paddle date or date-time; null when absent or not a real date. */
function date(value: string | undefined): string | null {
  if (value === undefined || paddleDateTimeToUnixMs(value) === null) return null;
  return value.slice(0, 10);
}

/** The cents of a required money field, or the reason the alert is ignored. */
function requiredMoney(fields: AlertFields, name: string): number | string {
  const value = text(fields, name);
  if (value === undefined) return `missing ${name}`;
  const cents = decimalToCents(value);
  return cents === null ? `invalid ${name} ${show(value)}` : cents;
}

function currencyReason(fields: AlertFields): string {
  const value = text(fields, 'currency');
  return value === undefined ? 'missing currency' : `invalid currency ${show(value)}`;
}

/** A value quoted for a reason, cut short so a huge field cannot bloat logs. */
function show(value: string): string {
  return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value);
}
