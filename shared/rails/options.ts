// The payout rails as the dashboard's Settings sees them (GET /v1/account/payout-rails/): every rail's
// connection form (like the providers' `provider_options`, shared/billing/options.ts), and a connected
// rail's public part with the webhook path(s) to register at the rail. Never a secret.
import type { ConnectionField } from '../billing/definition';
import type { RailKind } from './definition';
import { RAIL_DEFINITIONS, railDefinition } from './registry';

export interface RailOption {
  kind: RailKind;
  name: string;
  default_api_url: string;
  fields: {
    name: string;
    label: string;
    type: ConnectionField['type'];
    required: boolean;
    secret: boolean;
    placeholder?: string;
    hint?: string;
  }[];
}

export const railOptions = (): RailOption[] =>
  RAIL_DEFINITIONS.map((d) => ({
    kind: d.kind,
    name: d.name,
    default_api_url: d.defaultApiUrl,
    fields: d.fields.map((f) => ({
      name: f.name,
      label: f.label,
      type: f.type,
      required: f.required,
      secret: f.type === 'password',
      ...(f.placeholder !== undefined ? { placeholder: f.placeholder } : {}),
      ...(f.hint !== undefined ? { hint: f.hint } : {}),
    })),
  }));

export interface RailView {
  kind: RailKind;
  name: string;
  api_url: string;
  /** The connection's fields that are not secrets (PayPal client_id and webhook_id, Wise profile_id and public key). */
  settings: Record<string, string>;
  connected_at: number;
  /** Where the rail sends its webhooks: `/webhooks/<path>/{account_id}/`, relative to the API's base URL. */
  webhook_path: string;
  /** Stripe: the endpoint for events on connected accounts (the same intake, told apart by its secret). */
  connect_webhook_path?: string;
}

/** The webhook path of `kind` for an account. */
export const railWebhookPath = (kind: RailKind, accountId: string): string =>
  `/webhooks/${railDefinition(kind)?.webhookPath ?? kind}/${accountId}/`;

export function railPublicView(
  conn: { kind: RailKind; api_url: string; fields: Record<string, string>; connected_at: number },
  accountId: string,
): RailView {
  const path = railWebhookPath(conn.kind, accountId);
  return {
    kind: conn.kind,
    name: railDefinition(conn.kind)?.name ?? conn.kind,
    api_url: conn.api_url,
    settings: conn.fields,
    connected_at: conn.connected_at,
    webhook_path: path,
    ...(conn.kind === 'stripe' ? { connect_webhook_path: path } : {}),
  };
}
