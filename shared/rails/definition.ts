// What a payout rail is to the rest of the service: one PayoutRailDefinition per rail, exported by
// shared/rails/<kind>/index.ts and listed in shared/rails/registry.ts, shaped like the providers'
// definitions (shared/billing/definition.ts): its connection form, its webhook check, its adapter (loaded
// on first use) and its emulator folder.
import type { ConnectionField, IncomingWebhook } from '../billing/definition';
import type { PayoutRail, RailConnection, RailItemOutcome } from './port';

import type { RailKind } from '../domain/rail-kinds';

export type { RailKind };

/** A rail webhook's verdict: the events it reports (already mapped), or the 4xx to answer. */
export type RailWebhookVerdict =
  | { ok: true; deliveryId: string; outcomes: RailItemOutcome[]; accountUpdates: { destination: string; ready: boolean }[] }
  | { ok: false; status: 400 | 403 | 413 | 415 | 503; detail: string };

export interface PayoutRailDefinition {
  kind: RailKind;
  /** As the dashboard names it: "PayPal Payouts", "Stripe Connect", "Wise". */
  name: string;
  /** The connection form (PUT /v1/account/payout-rails/{kind}/ takes these fields and `api_url`). */
  fields: readonly ConnectionField[];
  /** The rail's production API, when `api_url` is not given. */
  defaultApiUrl: string;
  /** Where a member's money goes: a payout email, or a connected account the member onboards. */
  destination: 'email' | 'connected-account';
  /** The path segment of its webhook intake, `/webhooks/<path>/{account_id}/`. */
  webhookPath: string;
  /**
   * Verifies a webhook with the connection (a signing secret, a public key, a certificate host allow-list)
   * and maps what it reports. Never throws; a forged request changes nothing.
   */
  verifyWebhook(request: IncomingWebhook, connection: RailConnection, nowMs: number): Promise<RailWebhookVerdict>;
  /** The adapter for a connection (a dynamic import: only the functions that send money load it). */
  adapter(connection: RailConnection): Promise<PayoutRail>;
  /** infra/local/emulators/<folder>/: its emulator under npm start. */
  emulator: string;
}
