// The payout rails as the portal names them (docs/portal.md "Payouts"): each method's name and where it
// pays, and the one that pays the member's own Stripe account through "Set up payouts". `stripe` here is the
// Stripe Connect rail, a rail kind that shares the payment provider's name (test/unit/provider-kinds.test.ts).
import type { PayoutMethod } from './api';

export const METHOD_NAMES: Record<PayoutMethod, string> = { paypal: 'PayPal', stripe: 'Stripe', wise: 'Wise' };
export const METHOD_HINTS: Record<PayoutMethod, string> = {
  paypal: 'To your PayPal account, by your payout email',
  wise: 'To your Wise account, by your payout email',
  stripe: 'To your bank account, through your own Stripe account',
};
/** The method paid to the member's own connected account (set up at Stripe), not to the payout email. */
export const ACCOUNT_METHOD: PayoutMethod = 'stripe';
/** The query parameter of Stripe's way back to the portal (`?stripe=return` or `?stripe=refresh`). */
export const RETURN_PARAM = 'stripe';
