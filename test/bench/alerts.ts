// Paddle Classic alert bodies for the bench, with the fields the emulator's own checkouts send
// (infra/local/emulators/paddle-classic), signed by the emulator (`sign`), form-encoded as Paddle posts them.
import { createHash } from 'node:crypto';

export type Sign = (fields: Record<string, string>) => Record<string, string>;

const pad = (n: number) => String(n).padStart(2, '0');
const dateOf = (d: Date) => `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
/** Paddle's `YYYY-MM-DD HH:MM:SS` (UTC). */
export const dateTimeOf = (d: Date) => `${dateOf(d)} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
const token = (...parts: (string | number)[]) => createHash('sha256').update(parts.join(':')).digest('hex').slice(0, 10);

export const toForm = (fields: Record<string, string>) => new URLSearchParams(fields).toString();

/** The emulator's plan 9001, "Pro monthly", USD 10.00: the worker resolves it through the emulator's plan API. */
export const BENCH_PLAN = { id: 9001, name: 'Pro monthly', unitPrice: '10.00', currency: 'USD' };

export interface AlertIds {
  /** Unique per alert, digits. */
  alertId: number;
  subscriptionId: number;
  paymentId: number;
  userId: number;
  orderNumber: number;
}

function common(ids: AlertIds, email: string): Record<string, string> {
  return {
    checkout_id: `${ids.orderNumber}-chre${token('k', ids.orderNumber).slice(0, 10)}-${token('x', ids.orderNumber)}`,
    currency: BENCH_PLAN.currency,
    email,
    marketing_consent: '0',
    passthrough: '',
    subscription_id: String(ids.subscriptionId),
    subscription_plan_id: String(BENCH_PLAN.id),
    user_id: String(ids.userId),
  };
}

/**
 * A checkout's two alerts: subscription_created, then subscription_payment_succeeded for the first
 * payment (alert ids `alertId` and `alertId + 1`).
 */
export function checkoutAlerts(sign: Sign, ids: AlertIds, now = new Date()): [string, string] {
  const eventTime = dateTimeOf(now);
  const next = new Date(now);
  next.setUTCMonth(next.getUTCMonth() + 1);
  const email = `buyer-${ids.subscriptionId}@example.com`;
  const orderId = `${ids.orderNumber}-${3600000 + ids.orderNumber}`;
  const created = sign({
    alert_id: String(ids.alertId),
    alert_name: 'subscription_created',
    event_time: eventTime,
    ...common(ids, email),
    cancel_url: `https://sandbox-subscription-management.paddle.com/subscription/${ids.subscriptionId}/hash/${token('c', ids.subscriptionId)}/cancel`,
    update_url: `https://sandbox-subscription-management.paddle.com/subscription/${ids.subscriptionId}/hash/${token('u', ids.subscriptionId)}/update`,
    custom_data: '',
    linked_subscriptions: '',
    next_bill_date: dateOf(next),
    quantity: '1',
    source: '',
    status: 'active',
    unit_price: BENCH_PLAN.unitPrice,
  });
  const gross = 1000;
  const fee = Math.round(gross * 0.05) + 50;
  const money = (cents: number) => (cents / 100).toFixed(2);
  const paid = sign({
    alert_id: String(ids.alertId + 1),
    alert_name: 'subscription_payment_succeeded',
    event_time: eventTime,
    ...common(ids, email),
    balance_currency: BENCH_PLAN.currency,
    balance_earnings: money(gross - fee),
    balance_fee: money(fee),
    balance_gross: money(gross),
    balance_tax: '0.00',
    country: 'US',
    coupon: '',
    custom_data: '',
    customer_name: 'Bench Customer',
    earnings: money(gross - fee),
    fee: money(fee),
    initial_payment: '1',
    instalments: '1',
    next_bill_date: dateOf(next),
    next_payment_amount: money(gross),
    order_id: orderId,
    payment_method: 'card',
    payment_tax: '0.00',
    plan_name: BENCH_PLAN.name,
    quantity: '1',
    receipt_url: `https://sandbox-my.paddle.com/receipt/${orderId}/${token('r', orderId)}`,
    sale_gross: money(gross),
    status: 'active',
    subscription_payment_id: String(ids.paymentId),
    unit_price: BENCH_PLAN.unitPrice,
  });
  return [toForm(created), toForm(paid)];
}

/**
 * Paddle's one-off `payment_succeeded` (a product sale, not a subscription): a real alert with a
 * comparable field count that Refloop acknowledges without any write. The intake does the same work for
 * it as for a subscription alert (verify, enqueue, 200); the worker's share is measured by the drain.
 */
export function oneOffPaymentAlert(sign: Sign, alertId: number, now = new Date()): string {
  const orderId = `${alertId}-${3600000 + (alertId % 1_000_000)}`;
  return toForm(
    sign({
      alert_id: String(alertId),
      alert_name: 'payment_succeeded',
      event_time: dateTimeOf(now),
      balance_currency: 'USD',
      balance_earnings: '8.95',
      balance_fee: '1.05',
      balance_gross: '10.00',
      balance_tax: '0.00',
      checkout_id: `${alertId}-chre${token('k', alertId)}`,
      country: 'US',
      coupon: '',
      currency: 'USD',
      customer_name: 'Bench Customer',
      earnings: '8.95',
      email: `buyer-${alertId}@example.com`,
      fee: '1.05',
      ip: '203.0.113.7',
      marketing_consent: '0',
      order_id: orderId,
      passthrough: '',
      payment_method: 'card',
      payment_tax: '0.00',
      product_id: '501',
      product_name: 'Bench add-on',
      quantity: '1',
      receipt_url: `https://sandbox-my.paddle.com/receipt/${orderId}/${token('r', orderId)}`,
      sale_gross: '10.00',
      used_price_override: 'false',
    }),
  );
}
