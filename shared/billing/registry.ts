// Which provider adapter serves an account: the flows ask here, never construct a provider themselves.
// An account has one provider at a time (shared/store/provider.ts); each kind has its adapter here.
import { config } from '../config';
import type { BillingProvider, ProviderKind } from './port';
import { paddleClassicProvider, paddleClassicWebhooks } from '../providers/paddle-classic/adapter';
import { getProviderConnection, getProviderCredentials, type ProviderConnection } from '../store/provider';
import { paddleBillingProvider } from '../providers/paddle-billing/adapter';
import { stripeProvider } from '../providers/stripe/adapter';

/**
 * The part of the port the flows call through the registry so far; it grows to `BillingProvider` as the
 * remaining flows move onto the port (test/unit/import-graph.test.ts lists what still calls Classic directly).
 */
export type AccountBillingProvider = Pick<
  BillingProvider,
  'kind' | 'combinesCredits' | 'createCoupon' | 'applyCredit' | 'reverseCredit' | 'resolveCheckout' | 'getSubscription' | 'listSubscriptions' | 'listsDeletedApart' | 'listPayments' | 'describePlan'
> &
  Partial<Pick<BillingProvider, 'parseWebhook'>>;

/** The account's provider, or null when the account has no provider settings. One BatchGet. */
export async function billingProviderFor(accountId: string): Promise<AccountBillingProvider | null> {
  return providerFromConnection(accountId, await getProviderConnection(accountId));
}

/** The same from a connection the caller has already read (in a BatchGet with its own items). */
export function providerFromConnection(accountId: string, conn: ProviderConnection | null): AccountBillingProvider | null {
  if (!conn) return null;
  const timeoutMs = config().providerTimeoutMs;
  switch (conn.kind) {
    case 'paddle-classic':
      return paddleClassicProvider(conn, { timeoutMs, accountId });
    case 'paddle-billing':
      return paddleBillingProvider({ apiKey: conn.apiKey, apiUrl: conn.apiUrl }, { timeoutMs });
    case 'stripe':
      return stripeProvider({ secretKey: conn.secretKey, apiUrl: conn.apiUrl }, { timeoutMs });
  }
}

/** What the subscription-sync worker needs to apply an account's webhooks: the parser and plan lookups. */
export type WebhookProvider = Pick<BillingProvider, 'kind' | 'parseWebhook' | 'describePlan'> & Partial<Pick<BillingProvider, 'getSubscription'>>;

/**
 * The parser of one provider kind's webhooks for an account. Paddle Classic's alerts need no credentials
 * to parse (they are read only if a plan must be looked up); Billing's and Stripe's parsers call the API
 * (customer emails, discount codes), so their connection is read first. Null when the account is not
 * connected to that kind (any more).
 */
export async function webhookProviderFor(accountId: string, kind: ProviderKind): Promise<WebhookProvider | null> {
  if (kind === 'paddle-classic') return paddleClassicWebhooks(accountId, () => getProviderCredentials(accountId), { timeoutMs: config().providerTimeoutMs });
  const provider = await billingProviderFor(accountId);
  return provider && provider.kind === kind && provider.parseWebhook ? { kind, parseWebhook: provider.parseWebhook, getSubscription: provider.getSubscription } : null;
}
