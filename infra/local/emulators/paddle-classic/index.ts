// The Paddle Classic emulator: the uniform start `npm start` uses (../types.ts), and the full handle the
// tests and the `paddle` CLI drive.
import { join } from 'node:path';
import type { ProviderConnection } from '../../../../shared/store/provider';
import type { StartEmulator } from '../types';
import { startPaddleEmulator, type PaddleEmulator } from './server';

export * from './server';

/** `npm start`'s port for it (PADDLE_PORT), the one the `paddle` CLI calls by default. */
export const EMULATOR_PORT = 8025;

/** Its state and key pair persist in `<dataDir>/paddle-emulator.json`, so a restart keeps the demo's signatures valid. */
export const startEmulator: StartEmulator<PaddleEmulator, Extract<ProviderConnection, { kind: 'paddle-classic' }>> = async (
  options = {},
) => {
  const paddle = await startPaddleEmulator({
    port: options.port ?? EMULATOR_PORT,
    dataFile: options.dataDir ? join(options.dataDir, 'paddle-emulator.json') : null,
    webhookUrl: options.webhookUrl ?? null,
  });
  return {
    kind: 'paddle-classic',
    url: paddle.url,
    connection: {
      kind: 'paddle-classic',
      vendorId: paddle.vendorId,
      authCode: paddle.authCode,
      publicKey: paddle.publicKeyPem,
      vendorsApiUrl: paddle.vendorsApiUrl,
      checkoutApiUrl: paddle.checkoutApiUrl,
    },
    note: `Classic, vendor ${paddle.vendorId}`,
    setWebhookUrl: paddle.setWebhookUrl,
    close: paddle.stop,
    handle: paddle,
  };
};
