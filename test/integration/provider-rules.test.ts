// The business rules of the asynchronous pipeline, stated once and run for every payment provider against
// its emulator (test/support/provider-harness.ts): signed webhooks through the real intake, the local SQS
// with the real workers behind pollers, the adapter calling the emulator's API. The provider-specific files
// (paddle-pipeline, paddle-billing-pipeline, stripe-pipeline, chargebee-pipeline) keep what only one provider has.
import type { Pollers } from '../../infra/local/pollers';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';
import { deliver, PROVIDER_HARNESSES, type Delivery, type ProviderHarness } from '../support/provider-harness';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let pollers: Pollers;

beforeAll(async () => {
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
});

interface Reward {
  id: string;
  type: string;
  amount: string;
  payment_id: string | number;
  reverses: string | null;
}

describe.each(PROVIDER_HARNESSES.map((h) => [h.kind, h] as const))('%s', (_kind, provider: ProviderHarness) => {
  beforeAll(() => provider.start());
  afterAll(() => provider.stop());

  let accountId: string;
  let key: string;
  let serial = 0;
  const json = (method: string, path: string, body?: unknown) => api(method, path, { key, ...(body === undefined ? {} : { body }) });
  const send = async (deliveries: Delivery[]) => {
    for (const d of deliveries) expect((await deliver(accountId, d)).status).toBe(200);
  };
  const referral = async (id: string) =>
    (await json('GET', `/v1/referrals/${id}/`)).body as {
      is_converted: boolean;
      rewards: Reward[];
      subscription: { id: unknown; status: string } | null;
    };
  const rewardsOf = async (id: string, count: number) =>
    pollUntil(async () => ((await referral(id)).rewards.length === count ? (await referral(id)).rewards : null));

  /** A campaign, a referring member (with a subscription of their own when `subscribed`), and a referral. */
  async function programme(terms: Record<string, unknown>, subscribed = false) {
    const n = ++serial;
    const campaign = await json('POST', '/v1/campaigns/', { name: `rules-${provider.kind}-${n}`, ...terms });
    expect(campaign.status).toBe(201);
    let own: Awaited<ReturnType<ProviderHarness['checkout']>> | null = null;
    if (subscribed) {
      own = await provider.checkout(`referrer-${n}@example.com`);
      await send(own.deliveries);
      await pollUntil(async () => ((await json('GET', `/v1/subscriptions/${own!.subscriptionId}/`)).status === 200 ? true : null));
    }
    const member = await json('POST', '/v1/members/', {
      identifier: `m-${n}`,
      email: `m-${n}@example.com`,
      campaign: { id: campaign.body.id },
      ...(own ? { subscription: { id: own.subscriptionId } } : {}),
    });
    expect(member.status).toBe(201);
    const ref = await json('POST', '/v1/referrals/', { user_identifier: `user-${provider.kind}-${n}`, member_code: member.body.code });
    expect(ref.status).toBe(200);
    return { referralId: ref.body.id as string, own };
  }

  beforeAll(async () => {
    ({ accountId, apiKey: key } = await newAccount('unlimited'));
    await provider.connect(accountId);
  });

  it('attributes a checkout to its referral by itself, exactly once, however often and in whatever order its webhooks arrive', async () => {
    const { referralId } = await programme({ allows_commission: true, commission_amount: '2.00', commission_currency: 'USD' });
    const out = await provider.checkout(`buyer-${serial}@example.com`, referralId);
    await send([...out.deliveries].reverse());
    await send(out.deliveries);
    await send(out.deliveries);
    const rewards = await rewardsOf(referralId, 1);
    expect(rewards[0]).toMatchObject({ type: 'commission', amount: '2.00', payment_id: out.paymentId });
    const after = await referral(referralId);
    expect(after).toMatchObject({ is_converted: true, subscription: { id: out.subscriptionId, status: 'active' } });
  });

  it('earns nothing until the paid total reaches reward_threshold, then once', async () => {
    const { referralId } = await programme({
      allows_commission: true,
      commission_amount: '3.00',
      commission_currency: 'USD',
      reward_threshold: '15.00',
    });
    const out = await provider.checkout(`buyer-${serial}@example.com`, referralId);
    await send(out.deliveries);
    await pollUntil(async () => ((await referral(referralId)).is_converted ? true : null));
    expect((await referral(referralId)).rewards).toEqual([]);
    const renewal = await provider.renew(out.subscriptionId);
    await send(renewal.deliveries);
    const rewards = await rewardsOf(referralId, 1);
    expect(rewards[0]).toMatchObject({ amount: '3.00', payment_id: renewal.paymentId });
  });

  it("credits the referrer's own subscription once at the provider, and a full refund claws back the reward and removes the unbilled credit", async () => {
    const { referralId, own } = await programme({ allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' }, true);
    const out = await provider.checkout(`buyer-${serial}@example.com`, referralId);
    await send(out.deliveries);
    const [credit] = await rewardsOf(referralId, 1);
    expect(credit).toMatchObject({ type: 'credit', amount: '5.00' });
    await pollUntil(async () => (provider.creditOn(own!.subscriptionId) === 500 ? true : null));
    // Redelivered: still one credit.
    await send(out.deliveries);
    expect(provider.creditOn(own!.subscriptionId)).toBe(500);

    await send(await provider.refund(out.refundable));
    const rewards = await rewardsOf(referralId, 2);
    expect(rewards[1]).toMatchObject({ amount: '-5.00', reverses: credit!.id });
    await pollUntil(async () => (provider.creditOn(own!.subscriptionId) === 0 ? true : null));
    expect((await referral(referralId)).rewards).toHaveLength(2);
  });

  it("converts a referral when its referred user's single-use code is used at checkout (double-sided campaigns)", async () => {
    const { referralId } = await programme({
      allows_commission: true,
      commission_amount: '1.50',
      commission_currency: 'USD',
      referred_discount_type: 'percentage',
      referred_discount_amount: '10',
      referred_discount_recurring: false,
    });
    const code = await pollUntil(
      async () => ((await json('GET', `/v1/referrals/${referralId}/`)).body.coupon_code as string | null) ?? null,
    );
    const out = await provider.checkout(`coupon-buyer-${serial}@example.com`, undefined, code);
    // The payment (which names the code) arrives and is applied before the subscription it belongs to.
    for (const d of [...out.deliveries].reverse()) {
      await send([d]);
      await pollUntil(async () => ((await queues.count('provider-events')) === 0 ? true : null));
    }
    const rewards = await rewardsOf(referralId, 1);
    expect(rewards[0]).toMatchObject({ amount: '1.50', payment_id: out.paymentId });
    expect((await referral(referralId)).subscription).toMatchObject({ id: out.subscriptionId });
  });
});
