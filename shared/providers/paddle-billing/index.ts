// Paddle Billing as the service sees it: its connection, notification intake, adapter (loaded on first
// use), quirks, CLI command and docs (shared/billing/definition.ts). Registered in shared/billing/registry.ts.
// What every function that reaches the registry carries stays here, light; the connection form and the CLI
// command (./connect.ts) and the signature check (./signature.ts) are read on first use with require(),
// each a file of its own in a bundle (infra/cloud/bundling.ts, docs/operations.md "Bundles").
import type { ProviderAdapter, ProviderDefinition } from '../../billing/definition';
import type { PaddleBillingConnection } from './settings';

const connect = () => require('./connect') as typeof import('./connect');
const signature = () => require('./signature') as typeof import('./signature');

export const paddleBilling: ProviderDefinition<PaddleBillingConnection> = {
  kind: 'paddle-billing',
  name: 'Paddle Billing',
  docsUrl: 'https://developer.paddle.com/webhooks/overview',
  docsPage: 'docs/providers/paddle-billing.md',
  openToNewSellers: true,

  get fields() {
    return connect().form.fields;
  },
  get apiHosts() {
    return connect().form.apiHosts;
  },
  connectionFromBody: (body, apiUrl) => connect().form.connectionFromBody(body, apiUrl),

  storedKind: 'paddle-billing',
  apiSecretAttribute: 'api_key',
  toStored: (c) => connect().toStored(c),
  fromStored: (item, apiKey) => ({ kind: 'paddle-billing', apiUrl: String(item.api_url), apiKey }),
  view: (item) => ({ vendor_id: null, api_url: typeof item.api_url === 'string' ? item.api_url : null }),

  // Paddle-Signature over the raw JSON body (300 s tolerance), with the notification destination's secret
  // (the header is ./signature.ts SIGNATURE_HEADER).
  get webhook() {
    return signature().webhook;
  },

  async adapter(): Promise<ProviderAdapter<PaddleBillingConnection>> {
    const { paddleBillingProvider } = await import('./adapter');
    return { provider: (c, options) => paddleBillingProvider({ apiKey: c.apiKey, apiUrl: c.apiUrl }, { timeoutMs: options.timeoutMs }) };
  },
  // One discount per subscription holds every credit: credits combine.
  quirks: { combinesCredits: true, listsDeletedApart: false, describesPlans: false, parsesWebhooksWithoutConnection: false },

  get cli() {
    return connect().cli;
  },
  emulator: { folder: 'paddle-billing' },
};
