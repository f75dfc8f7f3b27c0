// PayPal Payouts as the service sees it (../definition.ts): its connection form, its webhook check
// (./webhook.ts, offline RSA verification) and its adapter (./adapter.ts, loaded on first use). Registered in
// shared/rails/registry.ts; how to connect it: docs/payouts/paypal.md.
import type { PayoutRailDefinition } from '../definition';
import { verifyPaypalWebhook } from './webhook';

/** Per HTTP call to PayPal. */
const TIMEOUT_MS = 10_000;

export const paypal: PayoutRailDefinition = {
  kind: 'paypal',
  name: 'PayPal Payouts',
  fields: [
    { name: 'client_id', label: 'Client ID', type: 'text', required: true, hint: 'Of a PayPal REST app with Payouts enabled.' },
    { name: 'client_secret', label: 'Secret', type: 'password', required: true },
    {
      name: 'webhook_id',
      label: 'Webhook ID',
      type: 'text',
      required: true,
      hint: "The id PayPal shows for the app's webhook (PAYMENT.PAYOUTS-ITEM.* events); it is part of what PayPal signs.",
    },
  ],
  defaultApiUrl: 'https://api-m.paypal.com',
  destination: 'email',
  webhookPath: 'paypal',
  verifyWebhook: (request, connection, nowMs) => verifyPaypalWebhook(request, connection, nowMs),
  async adapter(connection) {
    const { paypalRail } = await import('./adapter');
    return paypalRail(connection, { timeoutMs: TIMEOUT_MS });
  },
  emulator: 'paypal-payouts',
};
