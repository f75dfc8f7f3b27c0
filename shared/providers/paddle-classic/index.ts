// Paddle Classic as the service sees it: its connection, alert intake, adapter (loaded on first use),
// quirks, CLI command and docs (shared/billing/definition.ts). Registered in shared/billing/registry.ts.
// What every function that reaches the registry carries stays here, light; the connection form and the CLI
// command (./connect.ts) and the alert check (./webhook.ts) are read on first use with require(), each a
// file of its own in a bundle (infra/cloud/bundling.ts, docs/operations.md "Bundles").
import type { ProviderAdapter, ProviderDefinition } from '../../billing/definition';
import type { ClassicConnection } from './settings';

const connect = () => require('./connect') as typeof import('./connect');
const webhook = () => require('./webhook') as typeof import('./webhook');

export const paddleClassic: ProviderDefinition<ClassicConnection> = {
  kind: 'paddle-classic',
  name: 'Paddle Classic',
  docsUrl: 'https://developer.paddle.com/classic/',
  docsPage: 'docs/providers/paddle-classic.md',
  // Paddle no longer opens Classic accounts to new sellers: listed after the others in the dashboard.
  openToNewSellers: false,

  get fields() {
    return connect().form.fields;
  },
  get apiHosts() {
    return connect().form.apiHosts;
  },
  connectionFromBody: (body, apiUrl) => connect().form.connectionFromBody(body, apiUrl),

  storedKind: 'paddle',
  apiSecretAttribute: 'auth_code',
  toStored: (c) => connect().toStored(c),
  fromStored: (item, authCode) => ({
    kind: 'paddle-classic',
    vendorId: Number(item.vendor_id),
    publicKey: String(item.public_key),
    vendorsApiUrl: String(item.vendors_api_url),
    checkoutApiUrl: String(item.checkout_api_url),
    authCode,
  }),
  view: (item) => ({
    vendor_id: typeof item.vendor_id === 'number' ? item.vendor_id : null,
    api_url: typeof item.vendors_api_url === 'string' ? item.vendors_api_url.replace(/\/vendors\/api$/, '') : null,
  }),

  // The alert check and where its key comes from (the public key in the settings item): ./webhook.ts
  // `webhook`, read on first use.
  get webhook() {
    return webhook().webhook;
  },

  async adapter(): Promise<ProviderAdapter<ClassicConnection>> {
    const { paddleClassicProvider, paddleClassicWebhooks } = await import('./adapter');
    return {
      provider: (connection, options) => paddleClassicProvider(connection, options),
      webhooks: (load, options) => paddleClassicWebhooks(options.accountId, load, { timeoutMs: options.timeoutMs }),
    };
  },
  quirks: { combinesCredits: false, listsDeletedApart: true, describesPlans: true, parsesWebhooksWithoutConnection: true },

  get cli() {
    return connect().cli;
  },
  emulator: { folder: 'paddle-classic' },
};
