// The Stripe emulator: the uniform start `npm start` uses (../types.ts), and the full handle the tests and
// the `stripe` CLI drive.
import type { ProviderConnection } from '../../../../shared/store/provider';
import type { StartEmulator } from '../types';
import { startStripeEmulator, type StripeEmulator } from './server';

export * from './server';

/** `npm start`'s port for it (STRIPE_PORT), the one the `stripe` CLI calls by default. */
export const EMULATOR_PORT = 12111;

/**
 * The keys of the emulator `npm start` runs: fixed, so a demo account connected to it keeps working across
 * restarts (its state is in memory). Not secrets: they open only this emulator on this machine.
 */
export const LOCAL_KEYS = {
  secretKey: 'sk_test_local_emulator',
  webhookSecret: 'whsec_local_emulator',
  /** Connect (the Stripe payout rail): the platform endpoint's secret, which signs transfer.* events. */
  connectPlatformWebhookSecret: 'whsec_local_connect_platform',
  /** Connect: the Connect endpoint's secret, which signs account.updated. */
  connectWebhookSecret: 'whsec_local_connect_accounts',
} as const;

export const startEmulator: StartEmulator<StripeEmulator, Extract<ProviderConnection, { kind: 'stripe' }>> = async (options = {}) => {
  const stripe = await startStripeEmulator({
    port: options.port ?? EMULATOR_PORT,
    secretKey: LOCAL_KEYS.secretKey,
    webhookSecret: LOCAL_KEYS.webhookSecret,
    webhookUrl: options.webhookUrl ?? null,
    // Its Connect side (`/v1/accounts`, `/v1/transfers`…, `/_emulator/connect/…`) on the same port, with fixed
    // secrets so a rail connected to it keeps verifying across restarts.
    connect: { webhookSecret: LOCAL_KEYS.connectPlatformWebhookSecret, connectWebhookSecret: LOCAL_KEYS.connectWebhookSecret },
  });
  return {
    kind: 'stripe',
    url: stripe.url,
    connection: { kind: 'stripe', secretKey: stripe.secretKey, apiUrl: stripe.url, webhookSecret: stripe.webhookSecret },
    note: `emulator; secret key ${stripe.secretKey}`,
    setWebhookUrl: stripe.setWebhookUrl,
    close: stripe.stop,
    handle: stripe,
  };
};
