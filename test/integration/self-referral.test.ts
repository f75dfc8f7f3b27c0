// Self-referral (issue 11, item 5) on real parts: a member never earns from a conversion of their own
// subscription, the one attached to them or one with their email address (compared without case).
// - API path (POST conversion): a 400 in the DRF shape, keyed by the field the conversion named;
//   nothing converted.
// - Automatic path (checkout passthrough, referral coupon): logged, not converted, not rewarded; the
//   alert is acknowledged (never retried into the DLQ).
import { getSubscription } from '../../shared/store/subscriptions';
import { api } from '../support/api';
import { pollUntil } from '../support/fixtures';
import { paddleTenants, pipelineWorld, type Tenant } from '../support/paddle-tenant';
import { setLogLevel } from '../../shared/log';

const world = pipelineWorld();
const { tenant, json, deliver, campaign, member, referral, subscribed, getReferral, getMember } = paddleTenants(() => world.paddle);
const drained = () => world.queues.drained(['rewards', 'provider-events']);

/** Nothing converted: the referral is open, the subscription free, the member's stats unchanged. */
async function unconverted(t: Tenant, referralId: string, subscriptionId: number, memberId: string) {
  const r = await getReferral(t, referralId);
  expect({ is_converted: r.is_converted, converted_at: r.converted_at, subscription: r.subscription, rewards: r.rewards }).toEqual({
    is_converted: false,
    converted_at: null,
    subscription: null,
    rewards: [],
  });
  expect((await getSubscription(t.accountId, subscriptionId))?.referral_id).toBeUndefined();
  expect((await getMember(t, memberId)).stats).toMatchObject({ conversions: 0, credit_earned: '0.00', commission_earned: '0.00' });
}

describe('self-referral through the conversion endpoint', () => {
  it("the member's own attached subscription: 400 on subscription_id, nothing converted", async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '5.00' });
    const own = await subscribed(t, 'billing-of-mia@example.com');
    const id = own.subscription.subscription_id;
    const m = await member(t, 'mia', { campaign: { id: c.id }, subscription: { id } });
    const r = await referral(t, 'mia-second-account', m.code);

    const res = await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: id });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      subscription_id: [`Subscription ${id} is attached to the referring member; a member cannot refer themselves`],
    });
    await unconverted(t, r.id, id, m.id);
  });

  it("a subscription with the member's email in another case: 400 on subscription_id, and on checkout_id for a checkout", async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_credit: true, credit_amount: '5.00' });
    const m = await member(t, 'ned', { campaign: { id: c.id }, email: 'Ned.Self@Example.com' });
    const r = await referral(t, 'ned-alias', m.code);
    const out = await subscribed(t, 'ned.self@EXAMPLE.com');
    const id = out.subscription.subscription_id;
    const message = `Subscription ${id} has the referring member's email address; a member cannot refer themselves`;

    const bySubscription = await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: id });
    expect(bySubscription.status).toBe(400);
    expect(bySubscription.body).toEqual({ subscription_id: [message] });
    const byCheckout = await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { checkout_id: out.checkout_id });
    expect(byCheckout.status).toBe(400);
    expect(byCheckout.body).toEqual({ checkout_id: [message] });
    await unconverted(t, r.id, id, m.id);

    // Another person's subscription still converts the same referral.
    const other = await subscribed(t, 'someone-else@example.com');
    expect(
      (await json('POST', `/v1/referrals/${r.id}/conversion/`, t, { subscription_id: other.subscription.subscription_id })).status,
    ).toBe(200);
  });
});

describe('self-referral on the automatic path', () => {
  it("a checkout passthrough naming the member's referral, paid with the member's email: acknowledged, logged, not converted", async () => {
    const t = await tenant();
    const c = await campaign(t, { allows_commission: true, commission_amount: '2.00', commission_currency: 'USD' });
    const m = await member(t, 'pia', { campaign: { id: c.id } });
    const js = await api('POST', '/js/v1/referrals/', { key: t.publishableKey, body: { member_code: m.code, user_identifier: 'pia-alt' } });
    expect(js.status).toBe(200);
    const referralId = js.body.id as string;

    // The logger (shared/log.ts, silent under Jest) writes JSON lines straight to the streams.
    const warnings: string[] = [];
    const writer = (chunk: unknown): boolean => {
      for (const line of String(chunk).split('\n')) if (line.trim().startsWith('{')) warnings.push(line);
      return true;
    };
    setLogLevel('WARN');
    const spies = [
      jest.spyOn(process.stdout, 'write').mockImplementation(writer as typeof process.stdout.write),
      jest.spyOn(process.stderr, 'write').mockImplementation(writer as typeof process.stderr.write),
    ];
    const spy = {
      mockRestore: () => {
        for (const x of spies) x.mockRestore();
        setLogLevel('SILENT');
      },
    };
    try {
      const out = await world.paddle.checkout({
        plan_id: 9001,
        email: 'PIA@example.com',
        deliver: false,
        passthrough: JSON.stringify({ refloop_referral_id: referralId }),
      });
      await deliver(t, out.alerts);
      await pollUntil(async () => (await getSubscription(t.accountId, out.subscription.subscription_id))?.last_bill_date != null, {
        timeoutMs: 15_000,
      });
      await drained();
      await unconverted(t, referralId, out.subscription.subscription_id, m.id);
      expect(await world.queues.count('provider-events-dlq')).toBe(0);
      expect(warnings.map((w) => JSON.parse(w) as Record<string, unknown>)).toContainEqual(
        expect.objectContaining({
          message: 'attribution refused: self-referral, not converted and not rewarded',
          referral_id: referralId,
          source: 'passthrough',
          reason: 'email',
        }),
      );
    } finally {
      spy.mockRestore();
    }
  });

  it("a referral coupon used on the member's own attached subscription: acknowledged, not converted", async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_credit: true,
      credit_amount: '5.00',
      referred_discount_type: 'percentage',
      referred_discount_amount: '10',
      referred_discount_recurring: false,
    });
    const m = await member(t, 'cal', { campaign: { id: c.id } });
    const r = await referral(t, 'cal-alt', m.code);
    const withCode = await pollUntil(async () => {
      const body = await getReferral(t, r.id);
      return body.coupon_code ? (body as { coupon_code: string }) : null;
    });
    // The member checks out with their own referral's coupon (another address), then attaches that
    // subscription to themselves before its payment alert arrives.
    const out = await world.paddle.checkout({
      plan_id: 9001,
      email: 'cal-billing@example.com',
      coupon: withCode.coupon_code,
      deliver: false,
    });
    const id = out.subscription.subscription_id;
    const created = out.alerts.filter((a) => a.fields.alert_name === 'subscription_created');
    const payments = out.alerts.filter((a) => a.fields.alert_name !== 'subscription_created');
    await deliver(t, created);
    await pollUntil(async () => (await getSubscription(t.accountId, id))?.status === 'active');
    expect((await json('PATCH', `/v1/members/${m.id}/`, t, { subscription: { id } })).status).toBe(200);
    await deliver(t, payments);
    await pollUntil(async () => (await getSubscription(t.accountId, id))?.last_bill_date != null, { timeoutMs: 15_000 });
    await drained();
    await unconverted(t, r.id, id, m.id);
    expect(await world.queues.count('provider-events-dlq')).toBe(0);
  });
});
