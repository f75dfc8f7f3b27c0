// Chargebee as the service sees it: its connection, event intake, adapter (loaded on first use), quirks,
// CLI command and docs (shared/billing/definition.ts). Registered in shared/billing/registry.ts.
// What every function that reaches the registry carries stays here, light; the connection form and the
// CLI command (./connect.ts) and the credentials check (./signature.ts) are read on first use.
import type { ProviderAdapter, ProviderDefinition } from '../../billing/definition';
import type { ChargebeeConnection } from './settings';

const connect = () => require('./connect') as typeof import('./connect');
const signature = () => require('./signature') as typeof import('./signature');

export const chargebee: ProviderDefinition<ChargebeeConnection> = {
  kind: 'chargebee',
  name: 'Chargebee',
  docsUrl: 'https://www.chargebee.com/docs/2.0/webhook_settings.html',
  docsPage: 'docs/providers/chargebee.md',
  openToNewSellers: true,

  get fields() {
    return connect().form.fields;
  },
  get apiHosts() {
    return connect().form.apiHosts;
  },
  connectionFromBody: (body, apiUrl) => connect().form.connectionFromBody(body, apiUrl),

  storedKind: 'chargebee',
  apiSecretAttribute: 'api_key',
  // The webhook secret is the Basic-auth pair as Chargebee sends it, `<username>:<password>` (./connect.ts).
  toStored: (c) => connect().toStored(c),
  fromStored: (item, apiKey) => ({
    kind: 'chargebee',
    site: String(item.site),
    apiUrl: String(item.api_url),
    apiKey,
    ...(typeof item.webhook_username === 'string' ? { webhookUsername: item.webhook_username } : {}),
  }),
  view: (item) => ({ vendor_id: null, api_url: typeof item.api_url === 'string' ? item.api_url : null }),

  // Basic authentication, not a signature (Chargebee signs nothing): ./signature.ts `webhook`, read on
  // first use (only the intake and npm start read it).
  get webhook() {
    return signature().webhook;
  },

  async adapter(): Promise<ProviderAdapter<ChargebeeConnection>> {
    const { chargebeeProvider } = await import('./adapter');
    return {
      provider: (c, options) => chargebeeProvider({ site: c.site, apiKey: c.apiKey, apiUrl: c.apiUrl }, { timeoutMs: options.timeoutMs }),
    };
  },
  // Promotional credits stack in a per-currency balance on the customer: no combining. Subscriptions of
  // every status are listed together. Events carry the item price's id, amount and period; the adapter
  // completes its name itself (it has the connection: the worker re-fetches every applied event anyway).
  quirks: { combinesCredits: false, listsDeletedApart: false, describesPlans: false, parsesWebhooksWithoutConnection: false },

  get cli() {
    return connect().cli;
  },
  emulator: { folder: 'chargebee' },
};
