// The PayPal Payouts emulator: the uniform start `npm start` uses (infra/local/emulators/README.md), and the
// full handle the tests drive. A payout rail is no payment provider: its connection is a RailConnection
// (shared/rails/port.ts) and its kind a RailKind, so its running emulator widens ../types.ts's shape here.
import type { RailConnection } from '../../../../shared/rails/port';
import type { EmulatorOptions, RunningEmulator } from '../types';
import { type PaypalEmulator, startPaypalEmulator } from './server';

export * from './server';

/** `npm start`'s port for it (PAYPAL_PORT). */
export const EMULATOR_PORT = 12131;

/**
 * The credentials of the emulator `npm start` runs: fixed, so an account connected to it keeps working across
 * restarts. Not secrets: they open only this emulator on this machine.
 */
export const LOCAL_KEYS = {
  clientId: 'paypal_local_client_id',
  clientSecret: 'paypal_local_client_secret',
  webhookId: 'WH-LOCAL-EMULATOR',
} as const;

/** A running rail emulator: ../types.ts's RunningEmulator with a rail's kind and connection. */
export type RunningRailEmulator<Handle> = Omit<RunningEmulator<Handle>, 'kind' | 'connection'> & {
  kind: 'paypal';
  connection: RailConnection;
};

export const startEmulator = async (options: EmulatorOptions = {}): Promise<RunningRailEmulator<PaypalEmulator>> => {
  const paypal = await startPaypalEmulator({ port: options.port ?? EMULATOR_PORT, ...LOCAL_KEYS, webhookUrl: options.webhookUrl ?? null });
  return {
    kind: 'paypal',
    url: paypal.url,
    connection: {
      apiUrl: paypal.url,
      credentials: { client_id: paypal.clientId, client_secret: paypal.clientSecret, webhook_id: paypal.webhookId },
    },
    note: `emulator; client id ${paypal.clientId}, webhook id ${paypal.webhookId}`,
    setWebhookUrl: paypal.setWebhookUrl,
    close: paypal.stop,
    handle: paypal,
  };
};
