// Stripe as the service sees it: its connection, event intake, adapter (loaded on first use), quirks, CLI
// command and docs (shared/billing/definition.ts). Registered in shared/billing/registry.ts.
import { formSentence, headerSignedWebhook, MAX_WEBHOOK_BYTES, type ProviderAdapter, type ProviderDefinition } from '../../billing/definition';
import { DEFAULT_API_URL, stripeSettings, type StripeConnection } from './settings';
import { SIGNATURE_HEADER, verifyStripeSignature } from './signature';

const settingsOf = (values: { secretKey: string; webhookSecret: string; apiUrl: string | undefined }) =>
  stripeSettings({ secretKey: values.secretKey, webhookSecret: values.webhookSecret, ...(values.apiUrl ? { apiUrl: values.apiUrl } : {}) });

export const stripe: ProviderDefinition<StripeConnection> = {
  kind: 'stripe',
  name: 'Stripe',
  docsUrl: 'https://docs.stripe.com/webhooks',
  docsPage: 'docs/providers/stripe.md',

  fields: [
    { name: 'secret_key', label: 'Secret key', type: 'password', required: true, placeholder: 'sk_live_…', hint: 'A restricted key with read access to customers, subscriptions and invoices is enough.' },
    { name: 'webhook_secret', label: 'Webhook signing secret', type: 'password', required: true, placeholder: 'whsec_…', hint: 'From the webhook endpoint you create with the URL above.' },
  ],
  apiHosts: [DEFAULT_API_URL],
  connectionFromBody(body, apiUrl) {
    const checked = settingsOf({ secretKey: body.secret_key as string, webhookSecret: body.webhook_secret as string, apiUrl });
    return checked.ok ? { ok: true, value: checked.settings } : { ok: false, field: checked.field, message: formSentence(checked.message) };
  },

  storedKind: 'stripe',
  apiSecretAttribute: 'secret_key',
  toStored: (c) => ({ settings: { api_url: c.apiUrl }, apiSecret: c.secretKey, webhookSecret: c.webhookSecret ?? null }),
  fromStored: (item, secretKey) => ({ kind: 'stripe', apiUrl: String(item.api_url), secretKey }),
  view: (item) => ({ vendor_id: null, api_url: typeof item.api_url === 'string' ? item.api_url : null }),

  // Stripe-Signature (v1, any match, 300 s tolerance) over the raw JSON body, with the endpoint's whsec_ secret.
  webhook: headerSignedWebhook({ path: 'stripe', header: SIGNATURE_HEADER, maxBytes: MAX_WEBHOOK_BYTES, verify: verifyStripeSignature }),

  async adapter(): Promise<ProviderAdapter<StripeConnection>> {
    const { stripeProvider } = await import('./adapter');
    return { provider: (c, options) => stripeProvider({ secretKey: c.secretKey, apiUrl: c.apiUrl }, { timeoutMs: options.timeoutMs }) };
  },
  // Balance transactions stack: no combining.
  quirks: { combinesCredits: false, listsDeletedApart: false, describesPlans: false, parsesWebhooksWithoutConnection: false },

  cli: {
    command: 'set-stripe',
    args: '--secret-key <key> --webhook-secret <whsec_…> [--api-url <url>]',
    summary: "Connect the account to Stripe (a restricted secret key and the webhook endpoint's signing secret).",
    flags: ['secret-key', 'webhook-secret', 'api-url'],
    required: ['secret-key', 'webhook-secret'],
    check(values) {
      const r = settingsOf({ secretKey: values['secret-key'] as string, webhookSecret: values['webhook-secret'] as string, apiUrl: values['api-url'] });
      return r.ok ? null : `--${r.field.replace(/_/g, '-')} ${r.message}`;
    },
    connection(values) {
      const r = settingsOf({ secretKey: values['secret-key'] as string, webhookSecret: values['webhook-secret'] as string, apiUrl: values['api-url'] });
      return r.ok ? { ok: true, connection: r.settings } : { ok: false, message: r.message };
    },
    output: () => ({ provider: 'stripe' }),
  },
  emulator: { folder: 'stripe' },
};
