// THE map of payment providers: kind -> definition (shared/billing/definition.ts). The only place that
// lists the provider kinds; everything else reads them from here (test/unit/provider-kinds.test.ts).
// Adding a provider: its folder under shared/providers/<kind>/ and one line below
// (docs/providers/adding-a-provider.md). Which adapter serves an account: shared/billing/adapters.ts.
import type { ConnectionOf, ProviderDefinition } from './definition';
import { chargebee } from '../providers/chargebee';
import { paddleBilling } from '../providers/paddle-billing';
import { paddleClassic } from '../providers/paddle-classic';
import { stripe } from '../providers/stripe';

export const PROVIDERS = {
  'paddle-classic': paddleClassic,
  'paddle-billing': paddleBilling,
  stripe,
  chargebee,
} as const;

export type ProviderKind = keyof typeof PROVIDERS;
export const PROVIDER_KINDS = Object.keys(PROVIDERS) as ProviderKind[];

/** Every kind's connection (the definitions' own types). */
export type ProviderConnection = { [K in ProviderKind]: ConnectionOf<(typeof PROVIDERS)[K]> }[ProviderKind];

/** Every definition, in the map's order. */
export const PROVIDER_DEFINITIONS: readonly ProviderDefinition<ProviderConnection>[] = PROVIDER_KINDS.map(
  (kind) => PROVIDERS[kind] as ProviderDefinition<ProviderConnection>,
);

export const isProviderKind = (value: unknown): value is ProviderKind => typeof value === 'string' && Object.hasOwn(PROVIDERS, value);

/** The definition of a kind. */
export const definitionOf = (kind: ProviderKind): ProviderDefinition<ProviderConnection> =>
  PROVIDERS[kind] as ProviderDefinition<ProviderConnection>;

/**
 * The provider of a stored settings item, by its `provider` attribute. Items written before the attribute
 * existed are Paddle Classic's (the first provider): the legacy definition below.
 */
export function definitionOfStored(item: Record<string, unknown> | undefined): ProviderDefinition<ProviderConnection> | null {
  if (item?.type !== 'ProviderSettings') return null;
  return PROVIDER_DEFINITIONS.find((d) => d.storedKind === item.provider) ?? LEGACY_PROVIDER;
}

/** The provider whose intake serves `/webhooks/<segment>/{account_id}/`, or null (404). */
export const definitionOfWebhookPath = (segment: string): ProviderDefinition<ProviderConnection> | null =>
  PROVIDER_DEFINITIONS.find((d) => d.webhook.path === segment) ?? null;

/**
 * The first provider (Paddle Classic): its settings items may predate the `provider` attribute, and the
 * store keeps the Classic-shaped helpers its callers have always used (saveProviderSettings, ...).
 */
export const LEGACY_PROVIDER = PROVIDERS['paddle-classic'] as ProviderDefinition<ProviderConnection>;
export type LegacyConnection = ConnectionOf<(typeof PROVIDERS)['paddle-classic']>;
