// Payer identities (shared/domain/payer-ids.ts) and how each provider's adapter reads who pays: Stripe's
// card fingerprint of an expanded default payment method and its customer, Paddle Classic's user id
// (docs/fraud.md "Self-referral beyond email").
import { MAX_PAYER_IDS, newPayerIds, parsePayerId, payerIdsOf, payerMatch, storedPayerIds } from '../../shared/domain/payer-ids';
import { alertEvent, userFacts, userIdOf } from '../../shared/providers/paddle-classic/adapter';
import type { PaddleUser } from '../../shared/providers/paddle-classic/client';
import { cardFingerprintOf, subscriptionFacts } from '../../shared/providers/stripe/events';
import { parseAlert } from '../../shared/providers/paddle-classic/alerts';

describe('payer ids', () => {
  it('names the customer and the card under the provider kind, and nothing unusable', () => {
    expect(payerIdsOf('stripe', { customerId: 'cus_A1', paymentFingerprint: 'Xk9fp' })).toEqual([
      'stripe:customer:cus_A1',
      'stripe:card:Xk9fp',
    ]);
    expect(payerIdsOf('paddle-billing', { customerId: 'ctm_01' })).toEqual(['paddle-billing:customer:ctm_01']);
    expect(payerIdsOf('paddle-classic', { customerId: '42' })).toEqual(['paddle-classic:customer:42']);
    expect(payerIdsOf('stripe', {})).toEqual([]);
    expect(payerIdsOf('stripe', { customerId: '', paymentFingerprint: 'a b' })).toEqual([]);
    expect(payerIdsOf('stripe', { customerId: 'c'.repeat(256) })).toEqual([]);
  });

  it('parses what it names, and nothing else', () => {
    expect(parsePayerId('stripe:card:Xk9')).toEqual({ provider: 'stripe', kind: 'payment_fingerprint' });
    expect(parsePayerId('paddle-billing:customer:ctm_1')).toEqual({ provider: 'paddle-billing', kind: 'customer_id' });
    for (const bad of ['stripe:cus:cus_1', 'stripe:card:', 'card:x', '']) expect(parsePayerId(bad)).toBeNull();
  });

  it('learns only new ids, once each, up to the cap', () => {
    expect(newPayerIds(['a:customer:1'], ['a:customer:1', 'a:card:x', 'a:card:x'])).toEqual(['a:card:x']);
    expect(newPayerIds([], [])).toEqual([]);
    const many = Array.from({ length: MAX_PAYER_IDS + 5 }, (_, i) => `a:card:${i}`);
    expect(newPayerIds(['a:customer:1'], many)).toHaveLength(MAX_PAYER_IDS - 1);
  });

  it('matches a shared id, a card before a customer, with its provider', () => {
    const member = ['stripe:customer:cus_1', 'stripe:card:fp1'];
    expect(payerMatch(member, ['stripe:customer:cus_1', 'stripe:card:fp1'])).toEqual({
      id: 'stripe:card:fp1',
      kind: 'payment_fingerprint',
      provider: 'stripe',
    });
    expect(payerMatch(member, ['stripe:customer:cus_1', 'stripe:card:fp2'])).toMatchObject({ kind: 'customer_id' });
    expect(payerMatch(member, ['stripe:customer:cus_2', 'stripe:card:fp2'])).toBeNull();
    expect(payerMatch([], ['stripe:card:fp1'])).toBeNull();
    // The same value at another provider is another payer.
    expect(payerMatch(['paddle-billing:customer:x'], ['stripe:customer:x'])).toBeNull();
  });

  it('reads a stored string set or list', () => {
    expect(storedPayerIds(new Set(['a:card:1']))).toEqual(['a:card:1']);
    expect(storedPayerIds(['a:card:1', 3, ''])).toEqual(['a:card:1']);
    expect(storedPayerIds(undefined)).toEqual([]);
    expect(storedPayerIds('a:card:1')).toEqual([]);
  });
});

describe('Stripe: who pays', () => {
  it("reads an expanded card payment method's fingerprint, never an id or another type", () => {
    expect(cardFingerprintOf({ id: 'pm_1', type: 'card', card: { fingerprint: 'Xk9fp' } })).toBe('Xk9fp');
    expect(cardFingerprintOf('pm_1')).toBeNull();
    expect(cardFingerprintOf(null)).toBeNull();
    expect(cardFingerprintOf({ type: 'sepa_debit', sepa_debit: { fingerprint: 'x' } })).toBeNull();
    expect(cardFingerprintOf({ type: 'card', card: { fingerprint: 'no spaces!' } })).toBeNull();
  });

  it("puts the customer and the default payment method's fingerprint on the subscription's facts", () => {
    const facts = subscriptionFacts({
      id: 'sub_1',
      status: 'active',
      currency: 'usd',
      customer: 'cus_9',
      default_payment_method: { id: 'pm_1', object: 'payment_method', type: 'card', card: { fingerprint: 'Fp42' } },
      items: { data: [] },
    });
    expect(facts).toMatchObject({ customerId: 'cus_9', paymentFingerprint: 'Fp42' });
    expect(subscriptionFacts({ id: 'sub_1', default_payment_method: 'pm_1' })?.paymentFingerprint).toBeUndefined();
  });
});

describe('Paddle Classic: who pays', () => {
  it('takes the user id as the customer, from an alert and from the users list', () => {
    expect(userIdOf(42)).toBe('42');
    expect(userIdOf('42')).toBe('42');
    for (const bad of [0, -1, '4x', '', null, 1.5]) expect(userIdOf(bad)).toBeNull();
    const fields = {
      alert_name: 'subscription_created',
      alert_id: '7',
      event_time: '2026-01-02 03:04:05',
      subscription_id: '11',
      status: 'active',
      user_id: '501',
    };
    const event = alertEvent(parseAlert(fields), fields);
    expect(event.kind === 'subscription' && event.subscription.customerId).toBe('501');
    const user = { subscription_id: 11, plan_id: 9, user_id: 502, user_email: 'a@example.com', state: 'active' } as unknown as PaddleUser;
    expect(userFacts(user)?.customerId).toBe('502');
  });
});
