// parseAlert: verified Paddle Classic alerts (docs/design/providers.md "Paddle Classic") normalized into the subscription
// patch and payment the subscription-sync worker applies. Bodies: Paddle's webhook simulator output and
// the real signed alerts in test/fixtures/paddle.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { HANDLED_ALERTS, parseAlert, type ParsedAlert } from '../../shared/providers/paddle-classic/alerts';
import { verifyPaddleSignature, type AlertFields } from '../../shared/providers/paddle-classic/signature';

const FIXTURES = join(__dirname, '..', 'fixtures', 'paddle');

/** A simulator body decoded exactly once, as the webhook handler does. */
function simulator(name: string): AlertFields {
  const body = readFileSync(join(FIXTURES, `${name}.txt`), 'utf8').replace(/\r?\n$/, '');
  return Object.fromEntries(new URLSearchParams(body));
}

interface SignedFixtures {
  public_key: string;
  alerts: Record<string, { verifies: boolean; fields: AlertFields }>;
}
const signed = JSON.parse(readFileSync(join(FIXTURES, 'signed-alerts.json'), 'utf8')) as SignedFixtures;
function signedAlert(name: string): AlertFields {
  const alert = signed.alerts[name];
  if (!alert) throw new Error(`no signed alert ${name}`);
  return { ...alert.fields };
}

const unixMs = (s: string): number => Date.parse(`${s.replace(' ', 'T')}Z`);

function subscriptionOf(parsed: ParsedAlert) {
  if (parsed.kind !== 'subscription') throw new Error(`ignored: ${parsed.reason}`);
  return parsed;
}

function without(fields: AlertFields, ...names: string[]): AlertFields {
  const copy = { ...fields };
  for (const name of names) delete copy[name];
  return copy;
}

describe('HANDLED_ALERTS', () => {
  it('is the six subscription alerts', () => {
    expect([...HANDLED_ALERTS].sort()).toEqual(
      [
        'subscription_cancelled',
        'subscription_created',
        'subscription_payment_failed',
        'subscription_payment_refunded',
        'subscription_payment_succeeded',
        'subscription_updated',
      ].sort(),
    );
  });
});

describe('parseAlert: simulator bodies', () => {
  it('subscription_created', () => {
    expect(parseAlert(simulator('subscription_created'))).toEqual({
      kind: 'subscription',
      alert_id: '223832926',
      alert_name: 'subscription_created',
      event_time: unixMs('2020-05-20 23:37:36'),
      subscription: {
        id: 7,
        status: 'active',
        plan_id: 2,
        unit_price: '0.00',
        quantity: 100,
        currency: 'GBP',
        email: 'branson.nikolaus@example.org',
        next_bill_date: '2020-05-27',
      },
      payment: null,
      plan_name: null,
    });
  });

  it('subscription_updated: new_unit_price and new_quantity, old_* ignored', () => {
    expect(parseAlert(simulator('subscription_updated'))).toEqual({
      kind: 'subscription',
      alert_id: '1248004610',
      alert_name: 'subscription_updated',
      event_time: unixMs('2020-05-21 00:16:07'),
      subscription: {
        id: 7,
        status: 'active',
        plan_id: 2,
        unit_price: '1.00',
        quantity: 101,
        currency: 'GBP',
        email: 'branson.nikolaus@example.org',
        next_bill_date: '2020-05-21',
      },
      payment: null,
      plan_name: null,
    });
  });

  it('subscription_cancelled: deleted, no next bill date, effective date without its time', () => {
    expect(parseAlert(simulator('subscription_cancelled'))).toEqual({
      kind: 'subscription',
      alert_id: '273174885',
      alert_name: 'subscription_cancelled',
      event_time: unixMs('2020-05-21 00:17:06'),
      subscription: {
        id: 7,
        status: 'deleted',
        plan_id: 2,
        unit_price: '0.00',
        quantity: 85,
        currency: 'GBP',
        email: 'branson.nikolaus@example.org',
        next_bill_date: null,
        cancellation_effective_date: '2020-06-15',
      },
      payment: null,
      plan_name: null,
    });
  });

  it('subscription_payment_succeeded: a paid payment of sale_gross, last_bill_date from event_time, plan_name', () => {
    expect(parseAlert(simulator('subscription_payment_success'))).toEqual({
      kind: 'subscription',
      alert_id: '1814644306',
      alert_name: 'subscription_payment_succeeded',
      event_time: unixMs('2020-05-20 23:27:47'),
      subscription: {
        id: 1,
        status: 'past_due',
        plan_id: 3,
        unit_price: '0.00',
        quantity: 27,
        currency: 'GBP',
        email: 'herbert.rowe@example.org',
        next_bill_date: '2020-06-19',
        last_bill_date: '2020-05-20',
      },
      payment: {
        id: 3,
        subscription_id: 1,
        order_id: '2',
        amount: 17367,
        currency: 'GBP',
        paid_at: unixMs('2020-05-20 23:27:47') / 1000,
        status: 'paid',
        // payment_tax, included in sale_gross (percentage commissions exclude it).
        tax: 96,
      },
      plan_name: 'Example String',
    });
  });

  it('subscription_payment_failed: a failed payment of amount, next_bill_date untouched', () => {
    const parsed = subscriptionOf(parseAlert(simulator('subscription_payment_failed')));
    expect(parsed).toEqual({
      kind: 'subscription',
      alert_id: '1235415795',
      alert_name: 'subscription_payment_failed',
      event_time: unixMs('2020-05-21 00:18:16'),
      subscription: {
        id: 8,
        status: 'active',
        plan_id: 1,
        unit_price: '0.00',
        quantity: 55,
        currency: 'USD',
        email: 'lmitchell@example.org',
      },
      payment: {
        id: 6,
        subscription_id: 8,
        order_id: '8',
        amount: 97421,
        currency: 'USD',
        paid_at: unixMs('2020-05-21 00:18:16') / 1000,
        status: 'failed',
      },
      plan_name: null,
    });
    // Even if Paddle sent one, a failed payment does not move the next bill date.
    const withDate = parseAlert({ ...simulator('subscription_payment_failed'), next_bill_date: '2020-06-05' });
    expect(subscriptionOf(withDate).subscription).not.toHaveProperty('next_bill_date');
  });

  it('subscription_payment_refunded: a refunded payment of gross_refund, status kept when present', () => {
    expect(parseAlert(simulator('subscription_payment_refunded'))).toEqual({
      kind: 'subscription',
      alert_id: '450212099',
      alert_name: 'subscription_payment_refunded',
      event_time: unixMs('2020-05-21 00:19:01'),
      subscription: {
        id: 7,
        status: 'trialling',
        plan_id: 8,
        unit_price: '0.00',
        quantity: 10,
        currency: 'EUR',
        email: 'brennon93@example.net',
      },
      payment: {
        id: 5,
        subscription_id: 7,
        order_id: '7',
        amount: 17,
        currency: 'EUR',
        paid_at: unixMs('2020-05-21 00:19:01') / 1000,
        status: 'refunded',
        refund_amount: 17,
        refund_type: 'partial',
      },
      plan_name: null,
    });
  });

  it.each<[string, string]>([
    ['payment_success', 'payment_succeeded'],
    ['payment_refunded', 'payment_refunded'],
  ])('%s (one-off product alert) is ignored', (file, name) => {
    const fields = simulator(file);
    expect(parseAlert(fields)).toEqual({ kind: 'ignored', alert_id: fields.alert_id, alert_name: name, reason: 'unhandled alert type' });
  });
});

describe('parseAlert: real signed alerts', () => {
  it('the fixtures verify before they are parsed', () => {
    for (const name of [
      'subscriptionCreatedEvent',
      'subscriptionUpdatedEvent',
      'subscriptionCancelledEvent',
      'subscriptionPaymentSucceededEvent',
    ]) {
      expect(verifyPaddleSignature(signedAlert(name), signed.public_key)).toBe(true);
    }
  });

  it('subscription_created: trialing is shown as trialling', () => {
    expect(parseAlert(signedAlert('subscriptionCreatedEvent'))).toEqual({
      kind: 'subscription',
      alert_id: '2091557455',
      alert_name: 'subscription_created',
      event_time: unixMs('2020-08-09 22:11:09'),
      subscription: {
        id: 6,
        status: 'trialling',
        plan_id: 7,
        unit_price: '9.99',
        quantity: 23,
        currency: 'GBP',
        email: 'gordon35@example.org',
        next_bill_date: '2020-09-03',
      },
      payment: null,
      plan_name: null,
    });
  });

  it('subscription_updated', () => {
    const parsed = subscriptionOf(parseAlert(signedAlert('subscriptionUpdatedEvent')));
    expect(parsed.subscription).toEqual({
      id: 1,
      status: 'active',
      plan_id: 3,
      unit_price: '9.99',
      quantity: 2,
      currency: 'USD',
      email: 'rconnelly@example.org',
      next_bill_date: '2020-09-04',
    });
    expect(parsed.event_time).toBe(unixMs('2020-08-12 02:12:03'));
  });

  it('subscription_cancelled', () => {
    const parsed = subscriptionOf(parseAlert(signedAlert('subscriptionCancelledEvent')));
    expect(parsed.subscription).toEqual({
      id: 8,
      status: 'deleted',
      plan_id: 5,
      unit_price: '4.99',
      quantity: 93,
      currency: 'GBP',
      email: 'monroe84@example.com',
      next_bill_date: null,
      cancellation_effective_date: '2020-08-12',
    });
    expect(parsed.payment).toBeNull();
  });

  it('subscription_payment_succeeded', () => {
    const parsed = subscriptionOf(parseAlert(signedAlert('subscriptionPaymentSucceededEvent')));
    expect(parsed.subscription).toEqual({
      id: 4,
      status: 'active',
      plan_id: 1,
      unit_price: '4.99',
      quantity: 35,
      currency: 'EUR',
      email: 'dietrich.karlie@example.com',
      next_bill_date: '2020-08-20',
      last_bill_date: '2020-08-12',
    });
    expect(parsed.payment).toEqual({
      id: 4,
      subscription_id: 4,
      order_id: '4',
      amount: 90030,
      currency: 'EUR',
      paid_at: unixMs('2020-08-12 21:01:30') / 1000,
      status: 'paid',
      tax: 48,
    });
    expect(parsed.plan_name).toBe('Example Plan Name');
  });

  it.each(['paymentSucceededEvent', 'paymentRefundedEvent'])('%s is an unhandled type', (name) => {
    const parsed = parseAlert(signedAlert(name));
    expect(parsed).toMatchObject({ kind: 'ignored', alert_id: '123456789', reason: 'unhandled alert type' });
  });

  it('does not modify its input', () => {
    const fields = signedAlert('subscriptionPaymentSucceededEvent');
    const copy = { ...fields };
    parseAlert(fields);
    expect(fields).toEqual(copy);
  });
});

describe('parseAlert: alerts it cannot apply are ignored with the reason', () => {
  const created = () => simulator('subscription_created');
  const succeeded = () => simulator('subscription_payment_success');

  it('no alert_name, or one it does not handle', () => {
    expect(parseAlert(without(created(), 'alert_name'))).toEqual({
      kind: 'ignored',
      alert_id: '223832926',
      alert_name: null,
      reason: 'unhandled alert type',
    });
    for (const name of [
      'locker_processed',
      'transfer_created',
      'invoice_sent_v2',
      'Subscription_Created',
      'subscription_created ',
      'toString',
      '__proto__',
    ]) {
      expect(parseAlert({ ...created(), alert_name: name })).toEqual({
        kind: 'ignored',
        alert_id: '223832926',
        alert_name: name,
        reason: 'unhandled alert type',
      });
    }
    expect(parseAlert({})).toEqual({ kind: 'ignored', alert_id: null, alert_name: null, reason: 'unhandled alert type' });
  });

  it.each<[string, AlertFields, string]>([
    ['missing alert_id', { alert_id: '' }, 'missing alert_id'],
    ['non-digit alert_id', { alert_id: 'abc' }, 'invalid alert_id "abc"'],
    ['negative alert_id', { alert_id: '-5' }, 'invalid alert_id "-5"'],
    ['empty event_time', { event_time: '' }, 'missing event_time'],
    ['ISO event_time', { event_time: '2020-05-20T23:37:36Z' }, 'invalid event_time "2020-05-20T23:37:36Z"'],
    ['impossible event_time', { event_time: '2020-02-30 10:00:00' }, 'invalid event_time "2020-02-30 10:00:00"'],
    ['empty subscription_id', { subscription_id: '' }, 'missing subscription_id'],
    ['non-digit subscription_id', { subscription_id: '7a' }, 'invalid subscription_id "7a"'],
    ['zero subscription_id', { subscription_id: '0' }, 'invalid subscription_id "0"'],
    ['huge subscription_id', { subscription_id: '99999999999999999999' }, 'invalid subscription_id "99999999999999999999"'],
    ['unknown status', { status: 'expired' }, 'invalid status "expired"'],
    ['our own spelling', { status: 'trialling' }, 'invalid status "trialling"'],
    ['upper-case status', { status: 'ACTIVE' }, 'invalid status "ACTIVE"'],
    ['inherited-property status', { status: 'constructor' }, 'invalid status "constructor"'],
  ])('%s', (_label, change, reason) => {
    const fields = { ...created(), ...change };
    expect(parseAlert(fields)).toEqual({
      kind: 'ignored',
      alert_id: fields.alert_id === '223832926' ? '223832926' : null,
      alert_name: 'subscription_created',
      reason,
    });
  });

  it.each<[string, string]>([
    ['alert_id', 'missing alert_id'],
    ['event_time', 'missing event_time'],
    ['subscription_id', 'missing subscription_id'],
  ])('absent %s', (field, reason) => {
    expect(parseAlert(without(created(), field))).toMatchObject({ kind: 'ignored', reason });
  });

  it('a long bad value is cut short in the reason', () => {
    const parsed = parseAlert({ ...created(), subscription_id: 'x'.repeat(5000) });
    expect(parsed.kind).toBe('ignored');
    if (parsed.kind === 'ignored') expect(parsed.reason.length).toBeLessThan(80);
  });

  it.each(['subscription_payment_success', 'subscription_payment_failed', 'subscription_payment_refunded'])(
    '%s without a valid subscription_payment_id',
    (file) => {
      expect(parseAlert(without(simulator(file), 'subscription_payment_id'))).toMatchObject({
        kind: 'ignored',
        reason: 'missing subscription_payment_id',
      });
      expect(parseAlert({ ...simulator(file), subscription_payment_id: '3.0' })).toMatchObject({
        kind: 'ignored',
        reason: 'invalid subscription_payment_id "3.0"',
      });
    },
  );

  it('a payment without a usable amount or currency', () => {
    expect(parseAlert(without(succeeded(), 'sale_gross'))).toMatchObject({ kind: 'ignored', reason: 'missing sale_gross' });
    expect(parseAlert({ ...succeeded(), sale_gross: '1,00' })).toMatchObject({ kind: 'ignored', reason: 'invalid sale_gross "1,00"' });
    expect(parseAlert(without(succeeded(), 'currency'))).toMatchObject({ kind: 'ignored', reason: 'missing currency' });
    expect(parseAlert({ ...succeeded(), currency: 'gbp' })).toMatchObject({ kind: 'ignored', reason: 'invalid currency "gbp"' });
    const failed = simulator('subscription_payment_failed');
    expect(parseAlert(without(failed, 'amount'))).toMatchObject({ kind: 'ignored', reason: 'missing amount' });
    const refunded = simulator('subscription_payment_refunded');
    expect(parseAlert({ ...refunded, gross_refund: 'x' })).toMatchObject({ kind: 'ignored', reason: 'invalid gross_refund "x"' });
    expect(parseAlert(without(refunded, 'gross_refund', 'amount'))).toMatchObject({ kind: 'ignored', reason: 'missing amount' });
  });
});

describe('parseAlert: only fields present and well formed go into the patch', () => {
  const created = () => simulator('subscription_created');

  it('leaves out malformed optional fields instead of guessing', () => {
    const parsed = subscriptionOf(
      parseAlert({
        ...created(),
        subscription_plan_id: 'two',
        unit_price: '9,99',
        quantity: '1.5',
        currency: 'gbp',
        email: 'not an email',
        next_bill_date: '2020-02-30',
      }),
    );
    expect(parsed.subscription).toEqual({ id: 7, status: 'active' });
  });

  it('treats empty strings as absent', () => {
    const parsed = subscriptionOf(
      parseAlert({
        ...created(),
        status: '',
        subscription_plan_id: '',
        unit_price: '',
        quantity: '',
        currency: '',
        email: '',
        next_bill_date: '',
      }),
    );
    expect(parsed.subscription).toEqual({ id: 7 });
  });

  it.each<[string, string]>([
    ['GBP', 'GBP'],
    ['EUR', 'EUR'],
  ])('currency %s', (value, expected) => {
    expect(subscriptionOf(parseAlert({ ...created(), currency: value })).subscription.currency).toBe(expected);
  });

  it.each(['gbp', 'GB', 'GBPX', 'G1P', ' GBP'])('currency %j is not 3 capital letters', (value) => {
    expect(subscriptionOf(parseAlert({ ...created(), currency: value })).subscription).not.toHaveProperty('currency');
  });

  it("unit_price as a two-decimal string, rounding Paddle's third decimal", () => {
    expect(subscriptionOf(parseAlert({ ...created(), unit_price: '19.980' })).subscription.unit_price).toBe('19.98');
    expect(subscriptionOf(parseAlert({ ...created(), unit_price: '4.995' })).subscription.unit_price).toBe('5.00');
    expect(subscriptionOf(parseAlert({ ...created(), unit_price: '10' })).subscription.unit_price).toBe('10.00');
  });

  it('each Paddle status, trialing spelled trialling', () => {
    for (const [paddle, ours] of [
      ['active', 'active'],
      ['trialing', 'trialling'],
      ['past_due', 'past_due'],
      ['paused', 'paused'],
      ['deleted', 'deleted'],
    ]) {
      expect(subscriptionOf(parseAlert({ ...created(), status: paddle as string })).subscription.status).toBe(ours);
    }
  });

  it('subscription_updated takes no price or quantity from unit_price / quantity / old_*', () => {
    const fields = without(simulator('subscription_updated'), 'new_unit_price', 'new_quantity');
    const parsed = subscriptionOf(parseAlert({ ...fields, unit_price: '5.00', quantity: '3' }));
    expect(parsed.subscription).not.toHaveProperty('unit_price');
    expect(parsed.subscription).not.toHaveProperty('quantity');
  });

  it('subscription_cancelled is deleted even without a status field, and a date-only effective date is kept', () => {
    const fields = { ...without(simulator('subscription_cancelled'), 'status'), cancellation_effective_date: '2020-06-15' };
    const parsed = subscriptionOf(parseAlert(fields));
    expect(parsed.subscription.status).toBe('deleted');
    expect(parsed.subscription.next_bill_date).toBeNull();
    expect(parsed.subscription.cancellation_effective_date).toBe('2020-06-15');
    const bad = subscriptionOf(parseAlert({ ...fields, cancellation_effective_date: 'soon' }));
    expect(bad.subscription).not.toHaveProperty('cancellation_effective_date');
  });

  it('subscription_payment_refunded without status changes no status; without gross_refund uses amount', () => {
    const fields = without(simulator('subscription_payment_refunded'), 'status', 'gross_refund');
    const parsed = subscriptionOf(parseAlert(fields));
    expect(parsed.subscription).not.toHaveProperty('status');
    expect(parsed.payment).toMatchObject({ status: 'refunded', amount: 1064, refund_amount: 1064, refund_type: 'partial' });
    const noType = subscriptionOf(parseAlert(without(fields, 'refund_type')));
    expect(noType.payment).not.toHaveProperty('refund_type');
  });

  it('order_id is kept as a string, including the checkout-style "494576-3601162", and dropped when malformed', () => {
    const succeeded = simulator('subscription_payment_success');
    expect(subscriptionOf(parseAlert({ ...succeeded, order_id: '494576-3601162' })).payment?.order_id).toBe('494576-3601162');
    expect(subscriptionOf(parseAlert({ ...succeeded, order_id: 'abc' })).payment?.order_id).toBeNull();
    expect(subscriptionOf(parseAlert(without(succeeded, 'order_id'))).payment?.order_id).toBeNull();
  });

  it('plan_name is null when empty', () => {
    expect(subscriptionOf(parseAlert({ ...simulator('subscription_payment_success'), plan_name: '' })).plan_name).toBeNull();
  });

  it('a date-only event_time is midnight UTC', () => {
    const parsed = subscriptionOf(parseAlert({ ...simulator('subscription_payment_success'), event_time: '2020-05-20' }));
    expect(parsed.event_time).toBe(Date.UTC(2020, 4, 20));
    expect(parsed.subscription.last_bill_date).toBe('2020-05-20');
    expect(parsed.payment?.paid_at).toBe(Date.UTC(2020, 4, 20) / 1000);
  });

  it('ignores p_signature and unknown fields', () => {
    const fields = simulator('subscription_created');
    const a = parseAlert(fields);
    const b = parseAlert({ ...without(fields, 'p_signature'), custom_data: '{"external_id": 42}', something_new: 'x' });
    expect(b).toEqual(a);
  });
});
