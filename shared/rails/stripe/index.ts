// Stripe Connect (Express) as a payout rail: members onboard an Express account through an Account Link
// from the portal, and each payout is one transfer from the platform's Stripe balance to that account.
// The adapter (./adapter.ts) is loaded on first use; the webhook check (./webhook.ts) is small.
// docs/payouts/stripe.md: the platform settings, the keys, the two webhook endpoints, a test-mode walk-through.
import type { PayoutRailDefinition } from '../definition';
import { verifyStripeRailWebhook } from './webhook';

export const stripeRailDefinition: PayoutRailDefinition = {
  kind: 'stripe',
  name: 'Stripe Connect',
  fields: [
    {
      name: 'secret_key',
      label: 'Secret key',
      type: 'password',
      required: true,
      placeholder: 'sk_live_…',
      hint: "The platform's secret key (or a restricted key with write access to Connect accounts, account links and transfers).",
    },
    {
      name: 'webhook_secret',
      label: 'Webhook signing secret (your account)',
      type: 'password',
      required: true,
      placeholder: 'whsec_…',
      hint: 'From the endpoint that listens to events on your account (transfer.created, transfer.reversed).',
    },
    {
      name: 'connect_webhook_secret',
      label: 'Webhook signing secret (connected accounts)',
      type: 'password',
      required: true,
      placeholder: 'whsec_…',
      hint: 'From the endpoint that listens to events on connected accounts (account.updated).',
    },
  ],
  defaultApiUrl: 'https://api.stripe.com',
  destination: 'connected-account',
  webhookPath: 'stripe-connect',
  verifyWebhook: verifyStripeRailWebhook,
  async adapter(connection) {
    const { stripeRail } = await import('./adapter');
    return stripeRail(connection);
  },
  emulator: 'stripe',
};
