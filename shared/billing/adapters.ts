// Which provider adapter serves an account: the flows ask here, never construct a provider themselves.
// An account has one provider at a time (shared/store/provider.ts); its definition (shared/billing/
// registry.ts) loads the adapter on first use, so a function that never calls a provider never loads one,
// and one that does loads only its account's. What the flows branch on (combinesCredits,
// listsDeletedApart, describePlan) comes from the definition's quirks, known before the adapter loads.
import { config } from '../config';
import type { AccountBillingProvider, ProviderAdapter, ProviderDefinition, WebhookProvider } from './definition';
import { definitionOf, type ProviderConnection, type ProviderKind } from './registry';
import {
  forgetProviderConnection,
  getProviderConnection,
  getProviderConnectionCached,
  type ProviderConnection as StoredProviderConnection,
} from '../store/provider';

export type { AccountBillingProvider, WebhookProvider } from './definition';

/** A webhook provider from the container's cache, with the settings item it was read with (webhookProviderFor). */
export type CachedWebhookProvider = WebhookProvider & { connectionSettings?: Record<string, unknown> };

type Definition = ProviderDefinition<ProviderConnection>;

/** The account's provider, or null when the account has no provider settings. One BatchGet. */
export async function billingProviderFor(accountId: string): Promise<AccountBillingProvider | null> {
  return providerFromConnection(accountId, await getProviderConnection(accountId));
}

/** Calls `method` of the adapter `load` gives (loaded once, on the first call). */
function deferred<P extends object>(load: () => Promise<P>) {
  let loaded: Promise<P> | undefined;
  const adapter = () => (loaded ??= load());
  return <M extends keyof P>(method: M) =>
    (async (...args: unknown[]) => {
      const target = await adapter();
      return (target[method] as (...a: unknown[]) => unknown).apply(target, args);
    }) as P[M];
}

/**
 * The same from a connection the caller has already read (in a BatchGet with its own items). The adapter
 * module loads on the first provider call.
 */
export function providerFromConnection(accountId: string, conn: StoredProviderConnection | null): AccountBillingProvider | null {
  if (!conn) return null;
  const definition: Definition = definitionOf(conn.kind);
  const options = { timeoutMs: config().providerTimeoutMs, accountId };
  const call = deferred<AccountBillingProvider>(async () => (await definition.adapter()).provider(conn, options));
  const { quirks } = definition;
  return {
    kind: definition.kind,
    ...(quirks.combinesCredits ? { combinesCredits: true } : {}),
    ...(quirks.listsDeletedApart ? { listsDeletedApart: true } : {}),
    createCoupon: call('createCoupon'),
    applyCredit: call('applyCredit'),
    reverseCredit: call('reverseCredit'),
    resolveCheckout: call('resolveCheckout'),
    getSubscription: call('getSubscription'),
    listSubscriptions: call('listSubscriptions'),
    listPayments: call('listPayments'),
    ...(quirks.describesPlans ? { describePlan: call('describePlan') as NonNullable<AccountBillingProvider['describePlan']> } : {}),
    ...(quirks.parsesWebhooksWithoutConnection
      ? {}
      : { parseWebhook: call('parseWebhook') as NonNullable<AccountBillingProvider['parseWebhook']> }),
  };
}

/**
 * The parser of one provider kind's webhooks for an account. A provider whose webhooks parse without
 * credentials (Paddle Classic: they are read only if a plan must be looked up) gets its parser at once;
 * the others' parsers call the API (customer emails, discount codes), so their connection is read first.
 * Null when the account is not connected to that kind (any more).
 */
export async function webhookProviderFor(
  accountId: string,
  kind: ProviderKind,
  /**
   * The connection from the container's cache (store/provider.ts getProviderConnectionCached): the answer then
   * carries the settings item it was read with (`connectionSettings`), which the caller must check against a
   * fresh read before it writes anything (shared/flows/provider-batch.ts does, in its LOAD).
   */
  how: { cachedConnection?: boolean } = {},
): Promise<CachedWebhookProvider | null> {
  const definition: Definition = definitionOf(kind);
  const options = { timeoutMs: config().providerTimeoutMs, accountId };
  if (definition.quirks.parsesWebhooksWithoutConnection) {
    const load = async () => {
      const conn = await getProviderConnection(accountId);
      return conn && conn.kind === kind ? conn : null;
    };
    const call = deferred<WebhookProvider>(async () => {
      const adapter: ProviderAdapter<ProviderConnection> = await definition.adapter();
      if (!adapter.webhooks) throw new Error(`${kind}'s adapter has no connection-free webhook parser`);
      return adapter.webhooks(load, options);
    });
    return {
      kind,
      parseWebhook: call('parseWebhook'),
      ...(definition.quirks.describesPlans ? { describePlan: call('describePlan') as NonNullable<WebhookProvider['describePlan']> } : {}),
    };
  }
  if (how.cachedConnection) {
    const cached = await getProviderConnectionCached(accountId);
    // A fresh adapter every time (an adapter's own lookups, a customer's email, last one batch).
    const provider = cached && providerFromConnection(accountId, cached.connection);
    if (cached && provider && provider.kind === kind && provider.parseWebhook)
      return { kind, parseWebhook: provider.parseWebhook, getSubscription: provider.getSubscription, connectionSettings: cached.settings };
    // Not connected (never cached: that was a fresh read).
    if (!cached) return null;
    // Another kind in the cache (the account switched meanwhile): read it again below.
    forgetProviderConnection(accountId);
  }
  const provider = await billingProviderFor(accountId);
  return provider && provider.kind === kind && provider.parseWebhook
    ? { kind, parseWebhook: provider.parseWebhook, getSubscription: provider.getSubscription }
    : null;
}
