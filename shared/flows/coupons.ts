// Double-sided campaigns: a referral made in a campaign with a referred-user discount gets a
// single-use coupon at the account's payment provider (through the port, shared/billing/), created asynchronously by the reward fan-out worker (`create-coupon` on the
// rewards queue), and `coupon_code` appears on the referral once it exists (null until then).
//
// Exactly one coupon per referral, whatever the retries and concurrency: the code is derived from the
// referral id before the call (shared/domain/discounts.ts couponCodeFor), so every attempt sends the
// same code; the adapter answers 'existed' when the provider already has it (Classic: Paddle's "duplicate
// code" error 132), i.e. an earlier attempt created it. The code
// is recorded on the referral with a claim item keyed by the code, in one transaction (store/coupons.ts).
//
// Creating a referral queues the job with one SQS send, only for a referral whose coupon is still
// missing; a replayed create (the same user and code again) queues it again, which heals a first
// request whose send failed (that request answered 503).
import { queueAffiliateEmails } from '../email/affiliate-enqueue';
import type { Referral } from '../domain/models';
import { centsToMinor } from '../domain/currency';
import { couponCodeFor } from '../domain/discounts';
import { publish } from '../queue/publish';
import { recordReferralCoupon } from '../store/coupons';
import { getItem } from '../store/ops';
import { createReferral, toReferral, type CreateReferralResult } from '../store/referrals';
import { keys } from '../store/table';
import { billingProviderFor } from '../billing/adapters';
import { log } from '../log';
import { countMetric } from '../metrics';

const needsCoupon = (r: Referral) => r.referred_discount != null && r.coupon_code === null;

/** POST /v1/referrals/: creates (or replays) the referral, then queues its coupon when it needs one. */
export async function createReferralWithCoupon(
  accountId: string,
  input: { user_identifier: string; member_code: string; sub?: string | null | undefined },
  source: Referral['source'],
  ipHash?: string,
): Promise<CreateReferralResult> {
  const result = await createReferral(accountId, input, source, ipHash);
  // Once per referral written (its transaction committed); a replayed create is not a new referral.
  if (result.created) countMetric('ReferralsCreated');
  // The member's optional new-referral email (docs/affiliate-emails.md), once per referral (its key).
  if (result.notifyMember) {
    const r = result.referral;
    await queueAffiliateEmails([
      {
        kind: 'affiliate-email',
        template: 'new-referral',
        account_id: accountId,
        key: `new-referral-${r.id}`,
        member_id: r.member_id,
        referral_id: r.id,
      },
    ]);
  }
  if (needsCoupon(result.referral)) {
    await publish('rewards', { kind: 'create-coupon', account_id: accountId, referral_id: result.referral.id });
  }
  return result;
}

export type CouponOutcome = 'created' | 'existed' | 'recorded_before' | 'not_needed' | 'no_provider' | 'referral_gone';

export async function createReferralCoupon(accountId: string, referralId: string): Promise<CouponOutcome> {
  const referral = toReferral(await getItem(keys.referral(accountId, referralId)));
  const context = { account_id: accountId, referral_id: referralId };
  if (!referral) return 'referral_gone';
  if (referral.coupon_code !== null) return 'recorded_before';
  const discount = referral.referred_discount;
  if (!discount) return 'not_needed';
  const provider = await billingProviderFor(accountId);
  if (!provider) {
    // Acknowledged: nothing can be created without provider settings; a replayed POST queues it again.
    log('warn', 'coupon not created: no provider settings', context);
    return 'no_provider';
  }
  const code = couponCodeFor(referral.id);
  // Flat amounts go to the provider in its minor units; percentages stay hundredths of a percent.
  const amount = discount.type === 'flat' && discount.currency ? centsToMinor(discount.amount, discount.currency) : discount.amount;
  const outcome: CouponOutcome = await provider.createCoupon({ referralId: referral.id, code, discount: { ...discount, amount } });
  if ((await recordReferralCoupon(accountId, referral.id, code)) === 'referral_gone') {
    log('warn', 'coupon created but its referral was deleted meanwhile', { ...context, coupon_code: code });
    return 'referral_gone';
  }
  log('info', outcome === 'created' ? 'referral coupon created' : 'referral coupon found at the provider', {
    ...context,
    coupon_code: code,
  });
  return outcome;
}
