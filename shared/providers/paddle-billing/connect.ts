// Paddle Billing's connection form and CLI command (its definition's `form` and `cli`, ./index.ts): the
// parts that parse and check settings, read only by the dashboard's provider route, the API reference and
// the operator CLI. Loaded on first use; in a bundle, a file of its own (infra/cloud/bundling.ts).
import { formSentence, type CliConnectSpec, type ConnectionForm, type StoredConnection } from '../../billing/definition';
import { DEFAULT_API_URL, paddleBillingSettings, SANDBOX_API_URL, type PaddleBillingConnection } from './settings';

const settingsOf = (values: { apiKey: string; webhookSecret: string; apiUrl: string | undefined }) =>
  paddleBillingSettings({
    apiKey: values.apiKey,
    webhookSecret: values.webhookSecret,
    ...(values.apiUrl ? { apiUrl: values.apiUrl } : {}),
  });

export const form: ConnectionForm<PaddleBillingConnection> = {
  fields: [
    { name: 'api_key', label: 'API key', type: 'password', required: true, hint: 'Paddle > Developer tools > Authentication.' },
    {
      name: 'webhook_secret',
      label: 'Webhook secret key',
      type: 'password',
      required: true,
      placeholder: 'pdl_ntfset_…',
      hint: 'From the notification destination you create with the URL above.',
    },
  ],
  apiHosts: [DEFAULT_API_URL, SANDBOX_API_URL],
  connectionFromBody(body, apiUrl) {
    const apiKey = body.api_key as string;
    // A sandbox key goes with Paddle's sandbox API unless another URL was given.
    const checked = settingsOf({
      apiKey,
      webhookSecret: body.webhook_secret as string,
      apiUrl: apiUrl ?? (apiKey.startsWith('pdl_sdbx_') ? SANDBOX_API_URL : undefined),
    });
    return checked.ok ? { ok: true, value: checked.settings } : { ok: false, field: checked.field, message: formSentence(checked.message) };
  },
};

export const cli: CliConnectSpec<PaddleBillingConnection> = {
  command: 'set-paddle-billing',
  args: '--api-key <key> --webhook-secret <secret> [--api-url <url>]',
  // The key needs read on subscriptions, transactions, customers, adjustments; write on discounts, subscriptions.
  summary: 'Connect the account to Paddle Billing (API key, notification secret; sandbox: --api-url https://sandbox-api.paddle.com).',
  flags: ['api-key', 'webhook-secret', 'api-url'],
  required: ['api-key', 'webhook-secret'],
  check(values) {
    const r = settingsOf({
      apiKey: values['api-key'] as string,
      webhookSecret: values['webhook-secret'] as string,
      apiUrl: values['api-url'],
    });
    return r.ok ? null : `--${r.field.replace(/_/g, '-')} ${r.message}`;
  },
  connection(values) {
    const r = settingsOf({
      apiKey: values['api-key'] as string,
      webhookSecret: values['webhook-secret'] as string,
      apiUrl: values['api-url'],
    });
    return r.ok ? { ok: true, connection: r.settings } : { ok: false, message: r.message };
  },
  // The key and the secret are never echoed back.
  output: () => ({ provider: 'paddle-billing' }),
};

/** How the store keeps a connection (the definition's `toStored`). */
export const toStored = (c: PaddleBillingConnection): StoredConnection => ({
  settings: { api_url: c.apiUrl },
  apiSecret: c.apiKey,
  webhookSecret: c.webhookSecret ?? null,
});
