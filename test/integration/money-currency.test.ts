// Currencies without decimals and the sanity bounds on amounts (issue 23, findings 26 and 33), on real
// parts (DynamoDB Local, the API, the reward flow): a JPY percentage commission is whole yen where it is
// computed (3.33% of 1,200 JPY is 40, not 39.96), and so are its clawback, the member's stats, the payout
// total and the PayPal and Wise files ("120", not "119.88"); USD keeps its cents on the same path. A
// payment of 33.3 billion dollars is recorded but its reward is held for review; a campaign's fixed
// amounts are checked against their currency and the payout maximum (400).
import { evaluateReferral } from '../../shared/flows/settlement';
import { refundItem } from '../../shared/store/refunds';
import { applyProviderUpdate, saveSubscription } from '../../shared/store/subscriptions';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';
import { startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let subscriptionSeq = 970_000 + Math.floor(Math.random() * 20_000) * 100;

beforeAll(async () => {
  queues = await startTestQueues({ visibilityTimeoutSeconds: 60 });
});

afterAll(async () => {
  await queues?.stop();
});

interface World {
  accountId: string;
  key: string;
  memberId: string;
  referralId: string;
  subscriptionId: number;
  currency: string;
}

const call = (w: { key: string }, method: string, path: string, body?: unknown) =>
  api(method, path, { key: w.key, ...(body === undefined ? {} : { body }) });

/** A converted referral in `currency` whose subscription has paid `amounts` (cents), a percentage commission approved at once. */
async function world(currency: string, amounts: number[], percent = '3.33'): Promise<World> {
  const { accountId, apiKey: key } = await newAccount('unlimited');
  const w = { key };
  const campaign = await call(w, 'POST', '/v1/campaigns/', {
    name: `cur-${currency}`,
    allows_commission: true,
    commission_type: 'percentage',
    commission_percent: percent,
    commission_currency: currency,
    hold_days: 0,
  });
  expect(campaign.status).toBe(201);
  const member = await call(w, 'POST', '/v1/members/', {
    identifier: 'mia',
    email: 'mia@example.com',
    first_name: 'Mia',
    last_name: 'Ito',
    campaign: { id: campaign.body.id },
    payout_email: 'pay-mia@example.com',
  });
  expect(member.status).toBe(201);
  const referral = await call(w, 'POST', '/v1/referrals/', { user_identifier: 'buyer', member_code: member.body.code });
  const subscriptionId = ++subscriptionSeq;
  const price = (amounts[0] ?? 0) / 100;
  const plan = {
    id: 78,
    name: 'Pro',
    amount: price.toFixed(2),
    currency,
    interval: 'month',
    frequency: 1,
    descriptor: `${price} ${currency} / month`,
  };
  await saveSubscription(accountId, {
    id: subscriptionId,
    unit_price: price.toFixed(2),
    currency,
    status: 'active',
    email: `payer-${subscriptionId}@example.com`,
    next_bill_date: '2030-02-01',
    last_bill_date: '2030-01-01',
    plan,
  });
  const now = Math.floor(Date.now() / 1000);
  for (const [i, amount] of amounts.entries()) {
    const id = subscriptionId * 100 + i;
    await applyProviderUpdate(accountId, {
      subscriptionId,
      asOfMs: Date.now(),
      fields: {},
      payment: { id, subscription_id: subscriptionId, order_id: `o-${id}`, amount, currency, paid_at: now - 3600 + i * 60, status: 'paid' },
    });
  }
  const converted = await call(w, 'POST', `/v1/referrals/${referral.body.id}/conversion/`, { subscription_id: subscriptionId });
  expect(converted.status).toBe(200);
  await evaluateReferral(accountId, referral.body.id);
  return { accountId, key, memberId: member.body.id, referralId: referral.body.id, subscriptionId, currency };
}

async function refund(w: World, index: number, amount: number, paymentAmount: number): Promise<void> {
  const paymentId = w.subscriptionId * 100 + index;
  const now = Math.floor(Date.now() / 1000);
  await applyProviderUpdate(w.accountId, {
    subscriptionId: w.subscriptionId,
    asOfMs: Date.now(),
    fields: {},
    alertId: `refund-${paymentId}`,
    payment: {
      id: paymentId,
      subscription_id: w.subscriptionId,
      order_id: `o-${paymentId}`,
      amount: paymentAmount,
      currency: w.currency,
      paid_at: now - 3600 + index * 60,
      status: 'refunded',
      refund_amount: amount,
      refund_type: 'partial',
    },
    extraItems: [
      refundItem(w.accountId, w.subscriptionId, {
        id: `refund-${paymentId}`,
        payment_id: paymentId,
        amount,
        refunded_at: now,
        currency: w.currency,
        refund_type: 'partial',
      }),
    ],
  });
  await evaluateReferral(w.accountId, w.referralId);
}

async function payoutFileOf(w: World, format: 'paypal' | 'wise'): Promise<string[]> {
  const batch = await call(w, 'POST', '/v1/payout-batches/', { format, currency: w.currency });
  expect({ status: batch.status, body: batch.status === 201 ? null : batch.body }).toEqual({ status: 201, body: null });
  const file = await call(w, 'GET', `/v1/payout-batches/${batch.body.id}/file`);
  expect(file.status).toBe(200);
  return String(file.text).split('\r\n');
}

describe.each([
  // currency, payment (cents), one commission, three, the clawback of a refund of 500.00 of the first
  ['JPY', 120_000, '40.00', '120.00', '-17.00', '103.00', { paypal: '120', wise: '120', refunded: '103' }],
  ['USD', 1_200, '0.40', '1.20', '-0.17', '1.03', { paypal: '1.20', wise: '1.20', refunded: '1.03' }],
] as const)('%s: commission, clawback, payout total and files', (currency, amount, one, three, clawback, net, file) => {
  it(`3.33% of each payment is ${one} ${currency}; three make a payout of ${three}; the PayPal and Wise files ask for ${file.paypal}`, async () => {
    const w = await world(currency, [amount, amount, amount]);
    const referral = (await call(w, 'GET', `/v1/referrals/${w.referralId}/`)).body;
    expect(referral.rewards.map((r: { amount: string; status: string }) => [r.amount, r.status])).toEqual([
      [one, 'approved'],
      [one, 'approved'],
      [one, 'approved'],
    ]);
    expect((await call(w, 'GET', `/v1/members/${w.memberId}/`)).body.stats).toMatchObject({
      commission_earned: three,
      commission_approved: three,
      currency: expect.any(String),
    });
    const payouts = (await call(w, 'GET', `/v1/payouts/?member=${w.memberId}`)).body;
    expect(payouts.results[0]).toMatchObject({ amount: three, currency, status: 'due', reward_count: 3 });
    const paypal = await payoutFileOf(w, 'paypal');
    expect(paypal[0]?.split(',').slice(0, 3)).toEqual(['pay-mia@example.com', file.paypal, currency]);
  });

  it(`a refund of part of a payment takes back ${clawback} (whole units in JPY); the payout and the Wise file say ${net}`, async () => {
    // 500.00 of a 1,200.00 payment (JPY) or 5.00 of 12.00 (USD).
    const w = await world(currency, [amount, amount, amount]);
    await refund(w, 0, (amount * 5) / 12, amount);
    const referral = (await call(w, 'GET', `/v1/referrals/${w.referralId}/`)).body;
    expect(referral.rewards).toHaveLength(4);
    expect(referral.rewards[3]).toMatchObject({ amount: clawback, reverses: referral.rewards[0].id, status: 'approved' });
    expect((await call(w, 'GET', `/v1/members/${w.memberId}/`)).body.stats).toMatchObject({ commission_earned: net });
    expect((await call(w, 'GET', `/v1/payouts/?member=${w.memberId}`)).body.results[0]).toMatchObject({ amount: net, reward_count: 4 });
    const wise = await payoutFileOf(w, 'wise');
    expect(wise[1]?.split(',').slice(5)).toEqual([file.refunded, currency, currency]);
  });
});

describe('a payment above the sanity limit', () => {
  it('33.3 billion dollars: the payment is recorded, its commission is held for review (pending, no approval time, a note), no payout takes it', async () => {
    const w = await world('USD', [1_000, 3_330_000_000_000, 1_000], '10');
    const referral = (await call(w, 'GET', `/v1/referrals/${w.referralId}/`)).body;
    expect(referral.rewards.map((r: { amount: string; status: string }) => [r.amount, r.status])).toEqual([
      ['1.00', 'approved'],
      ['3330000000.00', 'pending'],
      ['1.00', 'approved'],
    ]);
    const held = referral.rewards[1];
    expect(held).toMatchObject({
      approves_at: null,
      payout_id: null,
      note: expect.stringMatching(/^Held for review: payment \d+ of 33,300,000,000 USD is above the sanity limit/),
    });
    // Visible in the rewards list with its reason; the payout holds only the two others.
    const listed = (await call(w, 'GET', `/v1/rewards/?member=${w.memberId}&status=pending`)).body;
    expect(listed.results).toEqual([expect.objectContaining({ id: held.id, note: held.note })]);
    expect((await call(w, 'GET', `/v1/payouts/?member=${w.memberId}`)).body.results[0]).toMatchObject({
      amount: '2.00',
      reward_count: 2,
      status: 'due',
    });
    // The payment itself is kept as the provider reported it (nothing is lost).
    const payments = (await call(w, 'GET', `/v1/subscriptions/${w.subscriptionId}/`)).status;
    expect(payments).toBe(200);
    // The member is not told about it: no reward notice is queued for the held reward.
    const notices = await queues.receiveAll('member-emails', { waitMs: 500 });
    expect(notices.map((m) => (m.json as { reward_id?: string }).reward_id)).not.toContain(held.id);
    // An operator who finds it wrong voids it.
    expect((await call(w, 'POST', `/v1/rewards/${held.id}/void/`, { reason: 'fraud' })).status).toBe(200);
    expect((await call(w, 'GET', `/v1/members/${w.memberId}/`)).body.stats).toMatchObject({ commission_earned: '2.00' });
  });
});

describe("a campaign's fixed amounts (400)", () => {
  it('JPY with decimals, or above the payout maximum, is refused with the field named; on PATCH against the merged campaign too', async () => {
    const { apiKey: key } = await newAccount('unlimited');
    const w = { key };
    const jpy = await call(w, 'POST', '/v1/campaigns/', {
      name: 'jpy-decimals',
      allows_commission: true,
      commission_amount: '39.96',
      commission_currency: 'JPY',
    });
    expect(jpy).toMatchObject({ status: 400, body: { commission_amount: ['JPY has no decimals: use a whole amount such as "40".'] } });
    const huge = await call(w, 'POST', '/v1/campaigns/', {
      name: 'huge',
      allows_commission: true,
      commission_amount: '99999999.99',
      commission_currency: 'USD',
    });
    expect(huge).toMatchObject({
      status: 400,
      body: { commission_amount: ['Ensure this value is less than or equal to 1000000.00 (the most one payout in USD may carry).'] },
    });
    const ok = await call(w, 'POST', '/v1/campaigns/', {
      name: 'fine',
      allows_commission: true,
      commission_amount: '39.96',
      commission_currency: 'USD',
    });
    expect(ok.status).toBe(201);
    const patched = await call(w, 'PATCH', `/v1/campaigns/${ok.body.id}/`, { commission_currency: 'JPY' });
    expect(patched).toMatchObject({ status: 400, body: { commission_amount: ['JPY has no decimals: use a whole amount such as "40".'] } });
    expect((await call(w, 'PATCH', `/v1/campaigns/${ok.body.id}/`, { commission_currency: 'JPY', commission_amount: '40' })).status).toBe(
      200,
    );
  });
});
