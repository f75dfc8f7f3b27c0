// Which provider adapter serves an account: the flows ask here, never construct a provider themselves.
// Today every connected account is a Paddle Classic one (shared/store/provider.ts); Paddle Billing and
// Stripe settings join the same switch when their settings items are wired.
import { config } from '../config';
import { paddleClassicProvider, type ClassicProvider } from '../providers/paddle-classic/adapter';
import { getProviderCredentials } from '../store/provider';

/** The account's provider, or null when the account has no provider settings. One BatchGet. */
export async function billingProviderFor(accountId: string): Promise<ClassicProvider | null> {
  const creds = await getProviderCredentials(accountId);
  return creds ? paddleClassicProvider(creds, { timeoutMs: config().providerTimeoutMs }) : null;
}
