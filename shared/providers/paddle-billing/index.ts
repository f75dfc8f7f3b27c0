// Paddle Billing as the service sees it: its connection, notification intake, adapter (loaded on first
// use), quirks, CLI command and docs (shared/billing/definition.ts). Registered in shared/billing/registry.ts.
import { formSentence, headerSignedWebhook, MAX_WEBHOOK_BYTES, type ProviderAdapter, type ProviderDefinition } from '../../billing/definition';
import { DEFAULT_API_URL, paddleBillingSettings, SANDBOX_API_URL, type PaddleBillingConnection } from './settings';
import { SIGNATURE_HEADER, verifyPaddleBillingSignature } from './signature';

const settingsOf = (values: { apiKey: string; webhookSecret: string; apiUrl: string | undefined }) =>
  paddleBillingSettings({ apiKey: values.apiKey, webhookSecret: values.webhookSecret, ...(values.apiUrl ? { apiUrl: values.apiUrl } : {}) });

export const paddleBilling: ProviderDefinition<PaddleBillingConnection> = {
  kind: 'paddle-billing',
  name: 'Paddle Billing',
  docsUrl: 'https://developer.paddle.com/webhooks/overview',
  docsPage: 'docs/providers/paddle-billing.md',

  fields: [
    { name: 'api_key', label: 'API key', type: 'password', required: true, hint: 'Paddle > Developer tools > Authentication.' },
    { name: 'webhook_secret', label: 'Webhook secret key', type: 'password', required: true, placeholder: 'pdl_ntfset_…', hint: 'From the notification destination you create with the URL above.' },
  ],
  apiHosts: [DEFAULT_API_URL, SANDBOX_API_URL],
  connectionFromBody(body, apiUrl) {
    const apiKey = body.api_key as string;
    // A sandbox key goes with Paddle's sandbox API unless another URL was given.
    const checked = settingsOf({ apiKey, webhookSecret: body.webhook_secret as string, apiUrl: apiUrl ?? (apiKey.startsWith('pdl_sdbx_') ? SANDBOX_API_URL : undefined) });
    return checked.ok ? { ok: true, value: checked.settings } : { ok: false, field: checked.field, message: formSentence(checked.message) };
  },

  storedKind: 'paddle-billing',
  apiSecretAttribute: 'api_key',
  toStored: (c) => ({ settings: { api_url: c.apiUrl }, apiSecret: c.apiKey, webhookSecret: c.webhookSecret ?? null }),
  fromStored: (item, apiKey) => ({ kind: 'paddle-billing', apiUrl: String(item.api_url), apiKey }),
  view: (item) => ({ vendor_id: null, api_url: typeof item.api_url === 'string' ? item.api_url : null }),

  // Paddle-Signature over the raw JSON body (300 s tolerance), with the notification destination's secret.
  webhook: headerSignedWebhook({ path: 'paddle-billing', header: SIGNATURE_HEADER, maxBytes: MAX_WEBHOOK_BYTES, verify: verifyPaddleBillingSignature }),

  async adapter(): Promise<ProviderAdapter<PaddleBillingConnection>> {
    const { paddleBillingProvider } = await import('./adapter');
    return { provider: (c, options) => paddleBillingProvider({ apiKey: c.apiKey, apiUrl: c.apiUrl }, { timeoutMs: options.timeoutMs }) };
  },
  // One discount per subscription holds every credit: credits combine.
  quirks: { combinesCredits: true, listsDeletedApart: false, describesPlans: false, parsesWebhooksWithoutConnection: false },

  cli: {
    command: 'set-paddle-billing',
    args: '--api-key <key> --webhook-secret <secret> [--api-url <url>]',
    // The key needs read on subscriptions, transactions, customers, adjustments; write on discounts, subscriptions.
    summary: 'Connect the account to Paddle Billing (API key, notification secret; sandbox: --api-url https://sandbox-api.paddle.com).',
    flags: ['api-key', 'webhook-secret', 'api-url'],
    required: ['api-key', 'webhook-secret'],
    check(values) {
      const r = settingsOf({ apiKey: values['api-key'] as string, webhookSecret: values['webhook-secret'] as string, apiUrl: values['api-url'] });
      return r.ok ? null : `--${r.field.replace(/_/g, '-')} ${r.message}`;
    },
    connection(values) {
      const r = settingsOf({ apiKey: values['api-key'] as string, webhookSecret: values['webhook-secret'] as string, apiUrl: values['api-url'] });
      return r.ok ? { ok: true, connection: r.settings } : { ok: false, message: r.message };
    },
    // The key and the secret are never echoed back.
    output: () => ({ provider: 'paddle-billing' }),
  },
  emulator: { folder: 'paddle-billing' },
};
