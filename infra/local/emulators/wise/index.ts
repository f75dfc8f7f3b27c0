// The Wise emulator: the uniform start (the same three names as every emulator folder, README.md beside
// this folder) and the full handle the tests drive. A payout rail's connection is not a provider's
// (shared/rails/port.ts RailConnection), so its running shape is declared here rather than with
// ../types.ts's provider-typed RunningEmulator; the fields are the same.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RailConnection } from '../../../../shared/rails/port';
import type { EmulatorOptions } from '../types';
import { startWiseEmulator, type WiseEmulator } from './server';

export * from './server';

/** `npm start`'s port for it. */
export const EMULATOR_PORT = 12121;

/** The API token of the emulator `npm start` runs: fixed, so a connected demo account keeps working. Not a secret. */
export const LOCAL_API_TOKEN = 'wise-local-emulator-token';

export interface RunningWiseEmulator {
  kind: 'wise';
  url: string;
  /** api_url, api_token, profile_id and webhook_public_key: what connects an account's Wise rail to it. */
  connection: RailConnection;
  note: string;
  setWebhookUrl(url: string | null): void;
  close(): Promise<void>;
  handle: WiseEmulator;
}

/**
 * The signing key survives restarts when there is a data directory (`wise-emulator-key.pem`), so the
 * public key pasted into a connection stays valid; else a new key each start.
 */
function signingKey(dataDir: string | null | undefined): string | undefined {
  if (!dataDir) return undefined;
  const file = join(dataDir, 'wise-emulator-key.pem');
  return existsSync(file) ? readFileSync(file, 'utf8') : undefined;
}

export const startEmulator = async (options: EmulatorOptions = {}): Promise<RunningWiseEmulator> => {
  const privateKeyPem = signingKey(options.dataDir);
  const wise = await startWiseEmulator({
    port: options.port ?? EMULATOR_PORT,
    apiToken: LOCAL_API_TOKEN,
    webhookUrl: options.webhookUrl ?? null,
    ...(privateKeyPem ? { privateKeyPem } : {}),
  });
  if (options.dataDir && !privateKeyPem) {
    mkdirSync(options.dataDir, { recursive: true });
    writeFileSync(join(options.dataDir, 'wise-emulator-key.pem'), wise.privateKeyPem, { mode: 0o600 });
  }
  return {
    kind: 'wise',
    url: wise.url,
    connection: {
      apiUrl: wise.url,
      credentials: { api_token: wise.apiToken, profile_id: String(wise.profileId), webhook_public_key: wise.publicKeyPem },
    },
    note: `emulator; profile ${wise.profileId}, token ${wise.apiToken}`,
    setWebhookUrl: wise.setWebhookUrl,
    close: wise.stop,
    handle: wise,
  };
};
