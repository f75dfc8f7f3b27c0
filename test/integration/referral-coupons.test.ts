// Double-sided campaigns (issue 6, item 2): a referral made in a campaign with a referred-user discount
// gets ONE single-use Paddle coupon, created asynchronously by the reward worker, whatever the retries
// and concurrency; its coupon_code shows on the referral; a payment with that coupon converts it.
import { couponCodeFor } from '../../shared/domain/discounts';
import { PaddleClient } from '../../shared/providers/paddle-classic/client';
import { publish } from '../../shared/queue/publish';
import { recordReferralCoupon, referralIdByCoupon } from '../../shared/store/coupons';
import { getItem } from '../../shared/store/ops';
import { saveProviderSettings } from '../../shared/store/provider';
import { getSubscription } from '../../shared/store/subscriptions';
import { keys } from '../../shared/store/table';
import { newAccount, pollUntil } from '../support/fixtures';
import { paddleTenants, pipelineWorld, type Tenant } from '../support/paddle-tenant';

const world = pipelineWorld();

const { tenant, json, deliver, campaign, member, referral, getReferral } = paddleTenants(() => world.paddle);
const drained = () => world.queues.drained(['rewards', 'provider-events']);
const couponsNamed = (code: string) => world.paddle.coupons().filter((c) => c.coupon_code === code);
const withCoupon = async (t: Tenant, id: string) =>
  pollUntil(async () => {
    const body = await getReferral(t, id);
    return body.coupon_code ? body : null;
  });

describe('campaign discount fields', () => {
  it('are additive, validated together, and shown on the campaign', async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_credit: true,
      credit_amount: '5.00',
      referred_discount_type: 'flat',
      referred_discount_amount: '4.50',
      referred_discount_recurring: true,
    });
    expect(c).toMatchObject({ referred_discount_type: 'flat', referred_discount_amount: '4.50', referred_discount_recurring: true });
    const bad = async (body: Record<string, unknown>) =>
      (await json('POST', '/v1/campaigns/', t, { name: `bad-${Math.random()}`, ...body })).body;
    expect(await bad({ referred_discount_type: 'percentage', referred_discount_amount: '100' })).toEqual({
      referred_discount_amount: ['Ensure this value is less than 100 for a percentage discount.'],
    });
    expect(await bad({ referred_discount_type: 'flat' })).toEqual({
      referred_discount_amount: ['Ensure this value is greater than or equal to 0.01.'],
    });
    expect(await bad({ referred_discount_type: 'half' })).toEqual({ referred_discount_type: ['"half" is not a valid choice.'] });
    expect(await bad({ referred_discount_type: ['flat'] })).toEqual({ referred_discount_type: ['Not a valid string.'] });
    // PATCH is checked on the merged campaign.
    const patched = await json('PATCH', `/v1/campaigns/${c.id}/`, t, {
      referred_discount_type: 'percentage',
      referred_discount_amount: '150',
    });
    expect(patched.status).toBe(400);
    const off = await json('PATCH', `/v1/campaigns/${c.id}/`, t, { referred_discount_type: null });
    expect(off.status).toBe(200);
    expect(off.body.referred_discount_type).toBeNull();
  });
});

describe('referral coupons', () => {
  it('a double-sided referral gets one single-use checkout coupon; coupon_code is null until it exists', async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_credit: true,
      credit_amount: '5.00',
      referred_discount_type: 'percentage',
      referred_discount_amount: '10',
      referred_discount_recurring: false,
    });
    const alice = await member(t, 'alice-cpn', { campaign: { id: c.id } });
    const res = await json('POST', '/v1/referrals/', t, { user_identifier: 'user-bob-cpn', member_code: alice.code });
    expect(res.status).toBe(200);
    expect(res.body.coupon_code).toBeNull();
    const r = await withCoupon(t, res.body.id);
    expect(r.coupon_code).toBe(couponCodeFor(r.id));
    expect(r.coupon_code).toMatch(/^RF[0-9A-Z]{12}$/);
    expect(couponsNamed(r.coupon_code)).toEqual([
      expect.objectContaining({
        coupon_type: 'checkout',
        discount_type: 'percentage',
        discount_amount: '10',
        allowed_uses: 1,
        times_used: 0,
        recurring: false,
        currency: null,
      }),
    ]);
    expect(await referralIdByCoupon(t.accountId, r.coupon_code.toLowerCase())).toBe(r.id);

    // A one-sided campaign's referral gets none, and queues nothing.
    const plain = await campaign(t, { allows_credit: true, credit_amount: '5.00' });
    const carl = await member(t, 'carl-cpn', { campaign: { id: plain.id } });
    const one = await referral(t, 'user-dee-cpn', carl.code);
    await drained();
    expect((await getReferral(t, one.id)).coupon_code).toBeNull();
  });

  it('flat discounts are in the campaign currency', async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_commission: true,
      commission_amount: '1.00',
      commission_currency: 'EUR',
      referred_discount_type: 'flat',
      referred_discount_amount: '3.00',
      referred_discount_recurring: true,
    });
    const m = await member(t, 'eve-cpn', { campaign: { id: c.id } });
    const r = await withCoupon(t, (await referral(t, 'user-fred-cpn', m.code)).id);
    expect(couponsNamed(r.coupon_code)).toEqual([
      expect.objectContaining({ discount_type: 'flat', discount_amount: '3.00', currency: 'EUR', recurring: true, allowed_uses: 1 }),
    ]);
  });

  it('one coupon per referral under duplicate jobs, concurrent replays, and a retry after Paddle created it', async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_credit: true,
      credit_amount: '5.00',
      referred_discount_type: 'percentage',
      referred_discount_amount: '20',
    });
    const m = await member(t, 'gil-cpn', { campaign: { id: c.id } });
    const body = { user_identifier: 'user-hal-cpn', member_code: m.code };
    const before = world.paddle.callCounts()['/vendors/api/2.1/product/create_coupon'] ?? 0;
    const answers = await Promise.all(Array.from({ length: 5 }, () => json('POST', '/v1/referrals/', t, body)));
    expect(new Set(answers.map((a) => `${a.status} ${a.body.id}`)).size).toBe(1);
    const id = answers[0]?.body.id as string;
    await Promise.all(
      Array.from({ length: 5 }, () => publish('rewards', { kind: 'create-coupon', account_id: t.accountId, referral_id: id })),
    );
    const r = await withCoupon(t, id);
    await drained();
    expect(couponsNamed(r.coupon_code)).toHaveLength(1);
    expect((world.paddle.callCounts()['/vendors/api/2.1/product/create_coupon'] ?? 0) - before).toBeGreaterThanOrEqual(1);
    expect((await getReferral(t, id)).coupon_code).toBe(r.coupon_code);

    // The state after a crash between Paddle's answer and our write: the coupon exists at Paddle, the
    // referral has no code. An account without Paddle settings first, so the job cannot run.
    const { accountId, apiKey, publishableKey } = await newAccount();
    const u: Tenant = { accountId, key: apiKey, publishableKey };
    const uc = await campaign(u, {
      allows_credit: true,
      credit_amount: '5.00',
      referred_discount_type: 'percentage',
      referred_discount_amount: '15',
    });
    const um = await member(u, 'ivy-cpn', { campaign: { id: uc.id } });
    const ur = await referral(u, 'user-jo-cpn', um.code);
    await drained();
    expect((await getReferral(u, ur.id)).coupon_code).toBeNull();
    const creds = {
      vendorId: world.paddle.vendorId,
      authCode: world.paddle.authCode,
      publicKey: world.paddle.publicKeyPem,
      vendorsApiUrl: world.paddle.vendorsApiUrl,
      checkoutApiUrl: world.paddle.checkoutApiUrl,
    };
    await saveProviderSettings(accountId, creds);
    const code = couponCodeFor(ur.id);
    await new PaddleClient(creds, { timeoutMs: 4000 }).createCoupon({
      couponCode: code,
      discountType: 'percentage',
      discountAmount: '15',
      allowedUses: 1,
      recurring: false,
      description: 'crashed attempt',
    });
    // A replayed create queues the job again; Paddle answers "duplicate code": recorded, not created twice.
    await referral(u, 'user-jo-cpn', um.code);
    expect((await withCoupon(u, ur.id)).coupon_code).toBe(code);
    expect(couponsNamed(code)).toHaveLength(1);
  });

  it('a payment with the coupon converts the referral (no conversion call), with the discounted amount', async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_commission: true,
      commission_amount: '2.00',
      commission_currency: 'USD',
      referred_discount_type: 'percentage',
      referred_discount_amount: '10',
    });
    const kim = await member(t, 'kim-cpn', { campaign: { id: c.id }, first_name: 'Kim' });
    const r = await withCoupon(t, (await referral(t, 'user-lee-cpn', kim.code)).id);

    // Lowercase at checkout: codes compare without case.
    const out = await world.paddle.checkout({
      plan_id: 9001,
      email: 'lee-cpn@example.com',
      coupon: r.coupon_code.toLowerCase(),
      deliver: false,
    });
    expect(out.payment?.amount).toBe(9);
    expect(out.alerts[1]?.fields.coupon).toBe(r.coupon_code);
    await deliver(t, out.alerts);
    const converted = await pollUntil(
      async () => {
        const body = await getReferral(t, r.id);
        return body.is_converted && body.rewards.length === 1 ? body : null;
      },
      { timeoutMs: 15_000 },
    );
    expect(converted.subscription).toMatchObject({ id: out.subscription.subscription_id });
    expect(converted.rewards[0]).toMatchObject({ type: 'commission', amount: '2.00', payment_id: out.payment?.id });
    expect(world.paddle.coupons().find((x) => x.coupon_code === r.coupon_code)?.times_used).toBe(1);

    // The app still reports the conversion with the checkout id: the same conversion, 200 unchanged.
    const replay = await json('POST', `/referrals/${r.id}/conversion/`, t, { checkout_id: out.checkout_id });
    expect(replay.status).toBe(200);
    expect(replay.body).toMatchObject({
      id: r.id,
      converted_at: converted.converted_at,
      subscription: { id: out.subscription.subscription_id },
    });
    const other = await world.paddle.checkout({ plan_id: 9001, email: 'other-cpn@example.com', deliver: false });
    expect((await json('POST', `/referrals/${r.id}/conversion/`, t, { checkout_id: other.checkout_id })).body).toEqual({
      non_field_errors: [`Referral ${r.id} is already converted`],
    });

    // The single-use coupon cannot be used again at the emulator; a payment naming it on a subscription
    // already tied to a referral changes nothing.
    await expect(
      world.paddle.checkout({ plan_id: 9001, email: 'again@example.com', coupon: r.coupon_code, deliver: false }),
    ).rejects.toThrow(/used up/);
    const renewal = await world.paddle.renew(out.subscription.subscription_id, { deliver: false });
    await deliver(t, renewal.alerts);
    await drained();
    expect((await getReferral(t, r.id)).subscription.id).toBe(out.subscription.subscription_id);
  });

  it('a coupon payment that overtakes its subscription_created converts the referral on its own', async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_commission: true,
      commission_amount: '1.00',
      commission_currency: 'USD',
      referred_discount_type: 'percentage',
      referred_discount_amount: '10',
    });
    const ann = await member(t, 'ann-cpn', { campaign: { id: c.id } });
    const r = await withCoupon(t, (await referral(t, 'user-out-of-order', ann.code)).id);
    const out = await world.paddle.checkout({ plan_id: 9001, email: 'ooo-cpn@example.com', coupon: r.coupon_code, deliver: false });
    const [created, payment] = out.alerts;
    if (!created || !payment) throw new Error('the emulator produced fewer than two alerts for a checkout');
    // Paddle's order is not guaranteed: the payment (with the coupon) is applied first. It carries the
    // status, plan and currency, so it stores the subscription and converts the referral by itself.
    await deliver(t, [payment]);
    await pollUntil(() => getItem(keys.alert(t.accountId, String(payment.fields.alert_id))));
    expect(await getSubscription(t.accountId, out.subscription.subscription_id)).toMatchObject({ status: 'active' });
    await deliver(t, [created]);
    const converted = await pollUntil(
      async () => {
        const body = await getReferral(t, r.id);
        return body.is_converted && body.rewards.length === 1 ? body : null;
      },
      { timeoutMs: 20_000 },
    );
    expect(converted.subscription).toMatchObject({ id: out.subscription.subscription_id });
    await drained();
    expect(await world.queues.count('provider-events-dlq')).toBe(0);
  });

  it('a coupon code is checked as ASCII before it is upper-cased: a ligature or long s finds nothing', async () => {
    const t = await tenant();
    const m = await member(t, 'lig-cpn', {});
    const r = await referral(t, 'user-lig-cpn', m.code);
    expect(await recordReferralCoupon(t.accountId, r.id, 'RFSTOCKSS')).toBe('recorded');
    expect(await referralIdByCoupon(t.accountId, 'rfstockss')).toBe(r.id);
    for (const spoof of ['rf\uFB06ockss', 'rfstock\u00DF', 'rf\u017Ftock\u017F\u017F']) {
      expect({ spoof, found: await referralIdByCoupon(t.accountId, spoof) }).toEqual({ spoof, found: null });
    }
  });

  it('deleting the referral frees its coupon code: a later payment with it converts nothing', async () => {
    const t = await tenant();
    const c = await campaign(t, {
      allows_credit: true,
      credit_amount: '1.00',
      referred_discount_type: 'flat',
      referred_discount_amount: '1.00',
    });
    const m = await member(t, 'max-cpn', { campaign: { id: c.id } });
    const r = await withCoupon(t, (await referral(t, 'user-ned-cpn', m.code)).id);
    expect((await json('DELETE', `/v1/referrals/${r.id}/`, t)).status).toBe(204);
    expect(await referralIdByCoupon(t.accountId, r.coupon_code)).toBeNull();
    const out = await world.paddle.checkout({ plan_id: 9001, email: 'ned-cpn@example.com', coupon: r.coupon_code, deliver: false });
    await deliver(t, out.alerts);
    await drained();
    expect((await json('GET', `/v1/referrals/${r.id}/`, t)).status).toBe(404);
    expect((await json('GET', `/v1/members/${m.id}/`, t)).body.stats).toMatchObject({ referrals: 0, conversions: 0 });
  });
});
