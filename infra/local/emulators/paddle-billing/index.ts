// The Paddle Billing emulator: the uniform start `npm start` uses (../types.ts), and the full handle the
// tests and the `paddle-billing` CLI drive.
import type { ProviderConnection } from '../../../../shared/store/provider';
import type { StartEmulator } from '../types';
import { startPaddleBillingEmulator, type PaddleBillingEmulator } from './server';

export * from './server';

/** `npm start`'s port for it (PADDLE_BILLING_PORT), the one the `paddle-billing` CLI calls by default. */
export const EMULATOR_PORT = 8026;

/**
 * The keys of the emulator `npm start` runs: fixed, so a demo account connected to it keeps working across
 * restarts (its state is in memory). Not secrets: they open only this emulator on this machine.
 */
export const LOCAL_KEYS = { apiKey: 'pdl_sdbx_apikey_local_emulator', webhookSecret: 'pdl_ntfset_local_emulator' } as const;

export const startEmulator: StartEmulator<PaddleBillingEmulator, Extract<ProviderConnection, { kind: 'paddle-billing' }>> = async (
  options = {},
) => {
  const billing = await startPaddleBillingEmulator({
    port: options.port ?? EMULATOR_PORT,
    ...LOCAL_KEYS,
    webhookUrl: options.webhookUrl ?? null,
  });
  return {
    kind: 'paddle-billing',
    url: billing.url,
    connection: { kind: 'paddle-billing', apiKey: billing.apiKey, apiUrl: billing.url, webhookSecret: billing.webhookSecret },
    note: `emulator; API key ${billing.apiKey}`,
    setWebhookUrl: billing.setWebhookUrl,
    close: billing.stop,
    handle: billing,
  };
};
