// Which provider adapter serves an account: the flows ask here, never construct a provider themselves.
// Today every connected account is a Paddle Classic one (shared/store/provider.ts); Paddle Billing and
// Stripe settings join the same switch when their settings items are wired.
import { config } from '../config';
import type { BillingProvider } from './port';
import { paddleClassicProvider } from '../providers/paddle-classic/adapter';
import { getProviderCredentials, type ProviderCredentials } from '../store/provider';

/**
 * The part of the port the flows call through the registry so far; it grows to `BillingProvider` as the
 * remaining flows move onto the port (test/unit/import-graph.test.ts lists what still calls Classic directly).
 */
export type AccountBillingProvider = Pick<BillingProvider, 'kind' | 'combinesCredits' | 'createCoupon' | 'applyCredit' | 'reverseCredit' | 'resolveCheckout' | 'getSubscription'> &
  Partial<Pick<BillingProvider, 'parseWebhook' | 'listSubscriptions' | 'listPayments'>>;

/** The account's provider, or null when the account has no provider settings. One BatchGet. */
export async function billingProviderFor(accountId: string): Promise<AccountBillingProvider | null> {
  return providerFromCredentials(accountId, await getProviderCredentials(accountId));
}

/** The same from credentials the caller has already read (in a BatchGet with its own items). */
export function providerFromCredentials(accountId: string, creds: ProviderCredentials | null): AccountBillingProvider | null {
  return creds ? paddleClassicProvider(creds, { timeoutMs: config().providerTimeoutMs, accountId }) : null;
}
