// The rail whose payouts go to a member's own connected account (`acct_…`, set up from the portal's "Set up
// payouts") rather than to their payout email: Stripe Connect's Express accounts (docs/payouts.md "Members'
// methods"). Named here, among the rails, so the member, portal and store modules name no kind of their own.
export { ACCOUNT_RAIL } from '../domain/rail-kinds';
