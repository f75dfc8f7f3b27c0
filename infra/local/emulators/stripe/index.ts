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
export const LOCAL_KEYS = { secretKey: 'sk_test_local_emulator', webhookSecret: 'whsec_local_emulator' } as const;

export const startEmulator: StartEmulator<StripeEmulator, Extract<ProviderConnection, { kind: 'stripe' }>> = async (options = {}) => {
  const stripe = await startStripeEmulator({ port: options.port ?? EMULATOR_PORT, ...LOCAL_KEYS, webhookUrl: options.webhookUrl ?? null });
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
