// The Chargebee emulator: the uniform start `npm start` uses (../types.ts), and the full handle the tests
// and the `chargebee` CLI drive. STUB: the server is being written (./server.ts).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ProviderConnection } from '../../../../shared/store/provider';
import type { StartEmulator } from '../types';

/** `npm start`'s port for it (CHARGEBEE_PORT), the one the `chargebee` CLI calls by default. */
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

export const startEmulator: StartEmulator<unknown, Extract<ProviderConnection, { kind: 'chargebee' }>> = async (options = {}) => {
  const server = createServer((_req, res) => {
    res.writeHead(501).end();
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? EMULATOR_PORT, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    kind: 'chargebee',
    url,
    connection: {
      kind: 'chargebee',
      site: LOCAL_KEYS.site,
      apiKey: LOCAL_KEYS.apiKey,
      apiUrl: url,
      webhookUsername: LOCAL_KEYS.webhookUsername,
      webhookPassword: LOCAL_KEYS.webhookPassword,
    },
    note: `emulator; site ${LOCAL_KEYS.site}`,
    setWebhookUrl: () => {},
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    handle: null,
  };
};
