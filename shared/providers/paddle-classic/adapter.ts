// Paddle Classic behind the payment-provider port (shared/billing/port.ts).
//
// The flows move onto the port one at a time (../shared/design/STRUCTURE-NEXT.md); this adapter grows with
// them. `ClassicProvider` is the part of `BillingProvider` Classic implements today: the referred-user coupon.
// The rest (credits as modifiers, checkout resolution, users and payments, alert parsing) is still called
// directly by the flows listed in test/unit/import-graph.test.ts, and moves here as each of them does.
import type { BillingProvider, CouponRequest } from '../../billing/port';
import { formatCents } from '../../domain/money';
import type { ProviderCredentials } from '../../store/provider';
import { DUPLICATE_COUPON_CODE, PaddleClient, ProviderApiError } from './client';

export type ClassicProvider = Pick<BillingProvider, 'kind' | 'createCoupon'>;

/** Percent without trailing zeros ("10", "12.5") from hundredths of a percent; flat amounts with two decimals. */
export function couponAmount(type: 'flat' | 'percentage', amount: number): string {
  return type === 'flat' ? formatCents(amount) : String(amount / 100);
}

export function paddleClassicProvider(creds: ProviderCredentials, options: { timeoutMs: number }): ClassicProvider {
  const client = new PaddleClient(creds, options);
  return {
    kind: 'paddle-classic',

    /** A single-use checkout coupon; Paddle's "duplicate code" (132) means an earlier attempt created it. */
    async createCoupon(coupon: CouponRequest): Promise<'created' | 'existed'> {
      const { discount } = coupon;
      try {
        await client.createCoupon({
          couponCode: coupon.code,
          discountType: discount.type,
          discountAmount: couponAmount(discount.type, discount.amount),
          ...(discount.type === 'flat' && discount.currency ? { currency: discount.currency } : {}),
          allowedUses: 1,
          recurring: discount.recurring,
          description: `Refloop referral ${coupon.referralId}`,
        });
        return 'created';
      } catch (err) {
        if (err instanceof ProviderApiError && err.code === DUPLICATE_COUPON_CODE) return 'existed';
        throw err;
      }
    },
  };
}
