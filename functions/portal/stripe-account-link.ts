// POST /portal/v1/me/stripe-account-link/ - the portal's "Set up payouts" for Stripe: the member's Express
// account (created once), Stripe as their payout method, and an Account Link to Stripe's onboarding that
// comes back to the portal (docs/portal.md "Payouts"). 409 when the programme has not connected Stripe.
import { createStripeAccountLink } from '../../shared/flows/payout-methods';
import { memberOf } from '../../shared/flows/portal';
import { portalHandler } from '../../shared/http/portal';

export const handler = portalHandler({}, async ({ session }) => ({
  status: 201,
  body: await memberOf(session, () => createStripeAccountLink(session.accountId, session.memberId, session.mode)),
}));
