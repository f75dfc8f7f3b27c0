// The Chargebee emulator: the uniform start `npm start` uses (../types.ts), and the full handle the tests
// and the `chargebee` CLI drive (./server.ts).
import type { ProviderConnection } from '../../../../shared/store/provider';
import type { StartEmulator } from '../types';
import { type ChargebeeEmulator, startChargebeeEmulator } from './server';

export * from './server';

/** `npm start`'s port for it (a free one when the tests ask for free ports), the one the `chargebee` CLI calls by default. */
export const EMULATOR_PORT = 12141;

/**
 * The keys of the emulator `npm start` runs: fixed, so a demo account connected to it keeps working across
 * restarts (its state is in memory). Not secrets: they open only this emulator on this machine.
 */
export const LOCAL_KEYS = {
  site: 'refloop-local-test',
  apiKey: 'test_local_emulator_key',
  webhookUsername: 'refloop',
  webhookPassword: 'local-emulator-webhook-password',
} as const;

/** The shell command that simulates a checkout on the emulator at `url` (the CLI's default URL needs no variable). */
export const checkoutCommandFor = (url: string): string =>
  `${url === `http://127.0.0.1:${EMULATOR_PORT}` ? '' : `CHARGEBEE_EMULATOR_URL=${url} `}npm run --silent chargebee -- checkout --email buyer@example.com`;

export const startEmulator: StartEmulator<ChargebeeEmulator, Extract<ProviderConnection, { kind: 'chargebee' }>> = async (options = {}) => {
  const emulator = await startChargebeeEmulator({
    port: options.port ?? EMULATOR_PORT,
    apiKey: LOCAL_KEYS.apiKey,
    site: LOCAL_KEYS.site,
    webhookUsername: LOCAL_KEYS.webhookUsername,
    webhookPassword: LOCAL_KEYS.webhookPassword,
    webhookUrl: options.webhookUrl ?? null,
  });
  return {
    kind: 'chargebee',
    url: emulator.url,
    connection: {
      kind: 'chargebee',
      site: emulator.site,
      apiKey: emulator.apiKey,
      apiUrl: emulator.url,
      webhookUsername: emulator.webhookUsername,
      webhookPassword: emulator.webhookPassword,
    },
    note: `emulator; site ${emulator.site}, API key ${emulator.apiKey}`,
    checkoutCommand: checkoutCommandFor(emulator.url),
    setWebhookUrl: emulator.setWebhookUrl,
    close: emulator.stop,
    handle: emulator,
  };
};
