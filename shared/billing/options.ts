// The providers an account can connect, as GET /v1/account/ offers them (`provider_options`): the dashboard
// renders its connection form from these, so a provider added to shared/billing/registry.ts appears there
// without a change to the web app.
import type { ConnectionField } from './definition';
import { PROVIDER_DEFINITIONS, type ProviderKind } from './registry';

export interface ProviderOption {
  kind: ProviderKind;
  name: string;
  docs_url: string;
  fields: { name: string; label: string; type: ConnectionField['type']; required: boolean; placeholder?: string; hint?: string }[];
}

/**
 * Every registered provider, the same for every account: those still open to new sellers first, then the
 * others, each group in the registry's order (the dashboard's form starts on the first).
 */
export const providerOptions = (): ProviderOption[] =>
  [...PROVIDER_DEFINITIONS.filter((d) => d.openToNewSellers), ...PROVIDER_DEFINITIONS.filter((d) => !d.openToNewSellers)].map((d) => ({
    kind: d.kind as ProviderKind,
    name: d.name,
    docs_url: d.docsUrl,
    fields: d.fields.map((f) => ({
      name: f.name,
      label: f.label,
      type: f.type,
      required: f.required,
      ...(f.placeholder !== undefined ? { placeholder: f.placeholder } : {}),
      ...(f.hint !== undefined ? { hint: f.hint } : {}),
    })),
  }));
