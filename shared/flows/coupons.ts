// Double-sided campaigns: a referral made in a campaign with a referred-user discount gets a
// single-use Paddle coupon, created asynchronously by the reward fan-out worker (`create-coupon` on the
// rewards queue), and `coupon_code` appears on the referral once it exists (null until then).
//
// Exactly one coupon per referral, whatever the retries and concurrency: the code is derived from the
// referral id before the call (shared/domain/discounts.ts couponCodeFor), so every attempt sends the
// same code; Paddle's "duplicate code" error (132) then means an earlier attempt created it. The code
// is recorded on the referral with a claim item keyed by the code, in one transaction (store/coupons.ts).
//
// Creating a referral queues the job with one SQS send, only for a referral whose coupon is still
// missing; a replayed create (the same user and code again) queues it again, which heals a first
// request whose send failed (that request answered 503).
import { config } from '../config';
import { formatCents } from '../domain/money';
import type { Referral } from '../domain/models';
import { couponCodeFor } from '../domain/discounts';
import { publish } from '../queue/publish';
import { recordReferralCoupon } from '../store/coupons';
import { getItem } from '../store/ops';
import { getProviderCredentials } from '../store/provider';
import { createReferral, toReferral, type CreateReferralResult } from '../store/referrals';
import { keys } from '../store/table';
import { DUPLICATE_COUPON_CODE, PaddleClient, ProviderApiError } from '../providers/paddle-classic/client';
import { log } from '../log';


const needsCoupon = (r: Referral) => r.referred_discount != null && r.coupon_code === null;

/** POST /v1/referrals/: creates (or replays) the referral, then queues its coupon when it needs one. */
export async function createReferralWithCoupon(
  accountId: string,
  input: { user_identifier: string; member_code: string },
  source: Referral['source'],
): Promise<CreateReferralResult> {
  const result = await createReferral(accountId, input, source);
  if (needsCoupon(result.referral)) {
    await publish('rewards', { kind: 'create-coupon', account_id: accountId, referral_id: result.referral.id });
  }
  return result;
}

/** Percent without trailing zeros ("10", "12.5"); flat amounts with two decimals. */
function discountAmount(type: 'flat' | 'percentage', amount: number): string {
  return type === 'flat' ? formatCents(amount) : String(amount / 100);
}

export type CouponOutcome = 'created' | 'existed' | 'recorded_before' | 'not_needed' | 'no_provider' | 'referral_gone';

export async function createReferralCoupon(accountId: string, referralId: string): Promise<CouponOutcome> {
  const referral = toReferral(await getItem(keys.referral(accountId, referralId)));
  const context = { account_id: accountId, referral_id: referralId };
  if (!referral) return 'referral_gone';
  if (referral.coupon_code !== null) return 'recorded_before';
  const discount = referral.referred_discount;
  if (!discount) return 'not_needed';
  const creds = await getProviderCredentials(accountId);
  if (!creds) {
    // Acknowledged: nothing can be created without Paddle settings; a replayed POST queues it again.
    log('warn', 'coupon not created: no provider settings', context);
    return 'no_provider';
  }
  const client = new PaddleClient(creds, { timeoutMs: config().providerTimeoutMs });
  const code = couponCodeFor(referral.id);
  let outcome: CouponOutcome = 'created';
  try {
    await client.createCoupon({
      couponCode: code,
      discountType: discount.type,
      discountAmount: discountAmount(discount.type, discount.amount),
      ...(discount.type === 'flat' && discount.currency ? { currency: discount.currency } : {}),
      allowedUses: 1,
      recurring: discount.recurring,
      description: `Refloop referral ${referral.id}`,
    });
  } catch (err) {
    // Paddle refuses a code it already has: an earlier attempt created this coupon.
    if (!(err instanceof ProviderApiError && err.code === DUPLICATE_COUPON_CODE)) throw err;
    outcome = 'existed';
  }
  if ((await recordReferralCoupon(accountId, referral.id, code)) === 'referral_gone') {
    log('warn', 'coupon created but its referral was deleted meanwhile', { ...context, coupon_code: code });
    return 'referral_gone';
  }
  log('info', outcome === 'created' ? 'referral coupon created' : 'referral coupon found at the provider', { ...context, coupon_code: code });
  return outcome;
}
