import { parseAlert } from '../../shared/providers/paddle-classic/alerts';
import { alertEvent } from '../../shared/providers/paddle-classic/adapter';
import { couponAmount } from '../../shared/providers/paddle-classic/adapter';

describe('Paddle Classic adapter: coupon amounts in the vendor API form', () => {
  it.each([
    ['percentage', 1000, '10'],
    ['percentage', 1250, '12.5'],
    ['percentage', 5, '0.05'],
    ['flat', 500, '5.00'],
    ['flat', 1, '0.01'],
    ['flat', 123456, '1234.56'],
  ] as const)('%s %i -> %s', (type, amount, expected) => {
    expect(couponAmount(type, amount)).toBe(expected);
  });
});

describe('alertEvent: a Classic alert as the port event', () => {
  const base = { alert_id: '700001', event_time: '2025-06-01 12:00:00', subscription_id: '4001', currency: 'USD' };

  it('maps a refund alert to the refunded payment and its own refund, named by the alert', () => {
    const fields = {
      ...base,
      alert_name: 'subscription_payment_refunded',
      subscription_payment_id: '9001',
      gross_refund: '4.00',
      refund_type: 'partial',
      order_id: '123-456',
    };
    expect(alertEvent(parseAlert(fields), fields)).toEqual({
      kind: 'subscription',
      eventId: '700001',
      occurredAtMs: Date.UTC(2025, 5, 1, 12),
      subscription: { id: 4001, currency: 'USD' },
      hints: {},
      payment: {
        id: 9001,
        subscriptionId: 4001,
        amount: 400,
        currency: 'USD',
        paidAtSeconds: Date.UTC(2025, 5, 1, 12) / 1000,
        status: 'refunded',
        orderId: '123-456',
        refundAmount: 400,
        refundType: 'partial',
      },
      refund: {
        id: '700001',
        paymentId: 9001,
        subscriptionId: 4001,
        amount: 400,
        currency: 'USD',
        refundedAtSeconds: Date.UTC(2025, 5, 1, 12) / 1000,
        kind: 'refund',
        refundType: 'partial',
      },
    });
  });

  it('names the plan by id for the flow to describe, carries the passthrough hint, and ignores what Classic ignores', () => {
    const fields = {
      ...base,
      alert_name: 'subscription_created',
      status: 'trialing',
      subscription_plan_id: '9002',
      unit_price: '12.50',
      passthrough: '{"refloop_referral_id":"abc"}',
    };
    const event = alertEvent(parseAlert(fields), fields);
    expect(event).toMatchObject({
      kind: 'subscription',
      subscription: { id: 4001, status: 'trialling', planId: 9002, planName: null, unitPrice: 1250 },
      hints: { referralId: 'abc' },
    });
    expect(event).not.toHaveProperty('payment');
    const other = { alert_id: '5', alert_name: 'transfer_created' };
    expect(alertEvent(parseAlert(other), other)).toEqual({
      kind: 'ignored',
      eventId: '5',
      type: 'transfer_created',
      reason: 'unhandled alert type',
    });
  });
});
