// Stripe's connection form and CLI command (its definition's `form` and `cli`, ./index.ts): the parts that
// parse and check settings, read only by the dashboard's provider route, the API reference and the
// operator CLI. Loaded on first use; in a bundle, a file of its own (infra/cloud/bundling.ts).
import { formSentence, type CliConnectSpec, type ConnectionForm, type StoredConnection } from '../../billing/definition';
import { DEFAULT_API_URL, stripeSettings, type StripeConnection } from './settings';

const settingsOf = (values: { secretKey: string; webhookSecret: string; apiUrl: string | undefined }) =>
  stripeSettings({ secretKey: values.secretKey, webhookSecret: values.webhookSecret, ...(values.apiUrl ? { apiUrl: values.apiUrl } : {}) });

export const form: ConnectionForm<StripeConnection> = {
  fields: [
    {
      name: 'secret_key',
      label: 'Secret key',
      type: 'password',
      required: true,
      placeholder: 'sk_live_…',
      hint: 'A restricted key with read access to customers, subscriptions and invoices is enough.',
    },
    {
      name: 'webhook_secret',
      label: 'Webhook signing secret',
      type: 'password',
      required: true,
      placeholder: 'whsec_…',
      hint: 'From the webhook endpoint you create with the URL above.',
    },
  ],
  apiHosts: [DEFAULT_API_URL],
  connectionFromBody(body, apiUrl) {
    const checked = settingsOf({ secretKey: body.secret_key as string, webhookSecret: body.webhook_secret as string, apiUrl });
    return checked.ok ? { ok: true, value: checked.settings } : { ok: false, field: checked.field, message: formSentence(checked.message) };
  },
};

export const cli: CliConnectSpec<StripeConnection> = {
  command: 'set-stripe',
  args: '--secret-key <key> --webhook-secret <whsec_…> [--api-url <url>]',
  summary: "Connect the account to Stripe (a restricted secret key and the webhook endpoint's signing secret).",
  flags: ['secret-key', 'webhook-secret', 'api-url'],
  required: ['secret-key', 'webhook-secret'],
  check(values) {
    const r = settingsOf({
      secretKey: values['secret-key'] as string,
      webhookSecret: values['webhook-secret'] as string,
      apiUrl: values['api-url'],
    });
    return r.ok ? null : `--${r.field.replace(/_/g, '-')} ${r.message}`;
  },
  connection(values) {
    const r = settingsOf({
      secretKey: values['secret-key'] as string,
      webhookSecret: values['webhook-secret'] as string,
      apiUrl: values['api-url'],
    });
    return r.ok ? { ok: true, connection: r.settings } : { ok: false, message: r.message };
  },
  output: () => ({ provider: 'stripe' }),
};

/** How the store keeps a connection (the definition's `toStored`). */
export const toStored = (c: StripeConnection): StoredConnection => ({
  settings: { api_url: c.apiUrl },
  apiSecret: c.secretKey,
  webhookSecret: c.webhookSecret ?? null,
});
