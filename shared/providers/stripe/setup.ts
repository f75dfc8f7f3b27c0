// The Stripe setup an operator follows (README, docs/providers/stripe.md): the restricted key's permissions
// and the webhook endpoint's API version and events. Apart from ./settings.ts, which the connection form
// and the CLI bundle, and from ./events.ts, which the adapter bundles: nothing a function runs needs it.
import { STRIPE_API_VERSION } from './wire';

/** The events to select on the webhook endpoint (README). */
export const WEBHOOK_EVENTS: readonly string[] = [
  'checkout.session.completed',
  'customer.subscription.created',
  'customer.subscription.updated',
  'customer.subscription.deleted',
  'invoice.paid',
  'charge.refunded',
  'charge.refund.updated',
  'charge.dispute.created',
];

/**
 * What a restricted key needs (Dashboard > Developers > API keys > Create restricted key); everything else
 * None. Refloop reads subscriptions, checkouts, invoices, charges, refunds and payment methods, and writes only customer
 * balance transactions (credits), coupons and promotion codes.
 */
export const RESTRICTED_KEY_PERMISSIONS: readonly { resource: string; access: 'Read' | 'Write'; why: string }[] = [
  {
    resource: 'Customers',
    access: 'Write',
    why: 'read emails and credit balances; create balance transactions (referrer credits and their reversals)',
  },
  { resource: 'Subscriptions', access: 'Read', why: 'mirror subscriptions; background sync' },
  { resource: 'Checkout Sessions', access: 'Read', why: 'conversion by checkout_id (cs_…); the checkout of a first invoice' },
  { resource: 'Invoices', access: 'Read', why: 'payments; invoice payments (a charge -> its invoice)' },
  { resource: 'Charges', access: 'Read', why: 'refunds of a charge' },
  { resource: 'Refunds', access: 'Read', why: 'more than 10 refunds on one charge' },
  { resource: 'Products', access: 'Read', why: 'plan names' },
  {
    resource: 'PaymentMethods',
    access: 'Read',
    why: "the card fingerprint of a subscription's default payment method (self-referral, docs/fraud.md)",
  },
  { resource: 'Coupons', access: 'Write', why: 'one coupon per set of campaign discount terms' },
  { resource: 'Promotion Codes', access: 'Write', why: 'one single-use code per referral' },
];

/** README text: the restricted key, the webhook endpoint's API version and events. */
export function stripeSetupMarkdown(webhookUrl = 'https://<api>/webhooks/stripe/<account_id>/'): string {
  const rows = RESTRICTED_KEY_PERMISSIONS.map((p) => `| ${p.resource} | ${p.access} | ${p.why} |`).join('\n');
  return [
    'A restricted key is enough. Create it with these permissions (everything else None):',
    '',
    '| resource | access | why |',
    '|---|---|---|',
    rows,
    '',
    `Create the webhook endpoint \`${webhookUrl}\` with **API version \`${STRIPE_API_VERSION}\`** (the version Refloop pins for every call; an endpoint on another version sends other shapes) and select these events:`,
    '',
    ...WEBHOOK_EVENTS.map((e) => `- \`${e}\``),
    '',
    "Or through the API, with your own secret key (Refloop's restricted key needs no access to webhook endpoints):",
    '',
    '```sh',
    `curl https://api.stripe.com/v1/webhook_endpoints -u "$STRIPE_SECRET_KEY:" -d url='${webhookUrl}' -d api_version=${STRIPE_API_VERSION} ` +
      WEBHOOK_EVENTS.map((e) => `-d 'enabled_events[]=${e}'`).join(' '),
    '```',
    '',
    'Its answer carries the signing secret (`whsec_…`) for `account set-stripe --webhook-secret`.',
  ].join('\n');
}
