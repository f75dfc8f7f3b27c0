// Refunds: one item per refund alert, in the payments partition of its subscription right after the
// payment it refunds (recordKeys.refund), written in the same transaction as the alert's idempotency marker
// and the payment's new status (applyProviderUpdate's extra items). A referral's evaluation reads the
// subscription's payments and refunds with one Query.
import type { RefundRecord } from '../domain/clawbacks';
import { storedProviderId, type Payment, type ProviderId } from '../domain/models';
import { tableName } from './client';
import { queryAll, type TransactItem } from './ops';
import { listPaymentsFrom } from './subscriptions';
import { keys, recordKeys } from './table';

export function refundItem(accountId: string, subscriptionId: ProviderId, refund: RefundRecord & { currency: string }): TransactItem {
  return {
    // Keyed by the alert id: the alert's marker keeps it to one write, and a rewrite would be identical.
    Put: {
      TableName: tableName(),
      Item: {
        ...recordKeys.refund(accountId, subscriptionId, refund.payment_id, refund.id),
        type: 'Refund',
        alert_id: refund.id,
        subscription_id: subscriptionId,
        payment_id: refund.payment_id,
        amount: refund.amount,
        currency: refund.currency,
        refunded_at: refund.refunded_at,
        ...(refund.refund_type ? { refund_type: refund.refund_type } : {}),
      },
    },
  };
}

function toRefund(item: Record<string, unknown>): RefundRecord | null {
  if (item.type !== 'Refund') return null;
  return {
    id: String(item.alert_id),
    payment_id: storedProviderId(item.payment_id),
    amount: Number(item.amount),
    refunded_at: Number(item.refunded_at),
    ...(typeof item.refund_type === 'string' ? { refund_type: item.refund_type } : {}),
  };
}

/** Every payment and refund of a subscription, in one Query of its payments partition (`items`: as stored). */
export async function listPaymentsAndRefunds(
  accountId: string,
  subscriptionId: ProviderId,
): Promise<{ payments: Payment[]; refunds: RefundRecord[]; items: Record<string, unknown>[] }> {
  const items = await queryAll({ partitionValue: keys.paymentsOf(accountId, subscriptionId), consistent: true });
  return { payments: listPaymentsFrom(items), refunds: items.map(toRefund).filter((r): r is RefundRecord => r !== null), items };
}

/** A payment or refund of the partition not in the report buckets yet (recorded before its subscription was converted). */
export interface Unreported {
  key: { pk: string; sk: string };
  metric: 'revenue' | 'refunds';
  /** Unix seconds: when it was paid or refunded. */
  at: number;
  /** Cents. */
  amount: number;
  currency: string;
}

/** The items of a payments partition (as listPaymentsAndRefunds returns them) that no report bucket counts yet. */
export function unreportedOf(items: Record<string, unknown>[]): Unreported[] {
  const out: Unreported[] = [];
  for (const item of items) {
    if (item.reported === true) continue;
    const payment = item.type === 'Payment' && item.status !== 'failed';
    if (!payment && item.type !== 'Refund') continue;
    out.push({
      key: { pk: String(item.pk), sk: String(item.sk) },
      metric: payment ? 'revenue' : 'refunds',
      at: Number(payment ? item.paid_at : item.refunded_at),
      amount: Number(item.amount),
      currency: String(item.currency),
    });
  }
  return out;
}

/** Marks a payment or refund counted in the report buckets, once (the transaction fails if it is already). */
export function reportedMark(key: { pk: string; sk: string }): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: key,
      UpdateExpression: 'SET reported = :t',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(reported)',
      ExpressionAttributeValues: { ':t': true },
    },
  };
}
