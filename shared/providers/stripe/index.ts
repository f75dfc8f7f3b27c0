// Stripe as the service sees it: its connection, event intake, adapter (loaded on first use), quirks, CLI
// command and docs (shared/billing/definition.ts). Registered in shared/billing/registry.ts.
// What every function that reaches the registry carries stays here, light; the connection form and the CLI
// command (./connect.ts) and the signature check (./signature.ts) are read on first use with require(),
// each a file of its own in a bundle (infra/cloud/bundling.ts, docs/operations.md "Bundles").
import type { ProviderAdapter, ProviderDefinition } from '../../billing/definition';
import type { StripeConnection } from './settings';

const connect = () => require('./connect') as typeof import('./connect');
const signature = () => require('./signature') as typeof import('./signature');

export const stripe: ProviderDefinition<StripeConnection> = {
  kind: 'stripe',
  name: 'Stripe',
  docsUrl: 'https://docs.stripe.com/webhooks',
  docsPage: 'docs/providers/stripe.md',
  openToNewSellers: true,

  get fields() {
    return connect().form.fields;
  },
  get apiHosts() {
    return connect().form.apiHosts;
  },
  connectionFromBody: (body, apiUrl) => connect().form.connectionFromBody(body, apiUrl),

  storedKind: 'stripe',
  apiSecretAttribute: 'secret_key',
  toStored: (c) => connect().toStored(c),
  fromStored: (item, secretKey) => ({ kind: 'stripe', apiUrl: String(item.api_url), secretKey }),
  view: (item) => ({ vendor_id: null, api_url: typeof item.api_url === 'string' ? item.api_url : null }),

  // Stripe-Signature (v1, any match, 300 s tolerance) over the raw JSON body, with the endpoint's whsec_ secret
  // (the header is ./signature.ts SIGNATURE_HEADER).
  get webhook() {
    return signature().webhook;
  },

  async adapter(): Promise<ProviderAdapter<StripeConnection>> {
    const { stripeProvider } = await import('./adapter');
    return { provider: (c, options) => stripeProvider({ secretKey: c.secretKey, apiUrl: c.apiUrl }, { timeoutMs: options.timeoutMs }) };
  },
  // Balance transactions stack: no combining.
  quirks: { combinesCredits: false, listsDeletedApart: false, describesPlans: false, parsesWebhooksWithoutConnection: false },

  get cli() {
    return connect().cli;
  },
  emulator: { folder: 'stripe' },
};
