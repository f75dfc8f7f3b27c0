// The one start signature every emulator's index.ts exports (`startEmulator`), so `npm start` can run the
// emulator of any provider kind the same way (infra/local/emulators/README.md).
import type { ProviderConnection } from '../../../shared/store/provider';

export interface EmulatorOptions {
  /** The port on 127.0.0.1: undefined = the kind's `npm start` port (its `EMULATOR_PORT`), 0 = a free one. */
  port?: number;
  /**
   * `npm start`'s data directory: an emulator that keeps its state across restarts keeps its file there
   * (Paddle Classic's `paddle-emulator.json`). Undefined or null: memory only.
   */
  dataDir?: string | null;
  /** Where its signed webhooks are POSTed; undefined or null = built and recorded, not delivered. */
  webhookUrl?: string | null;
}

export interface RunningEmulator<Handle, Connection extends ProviderConnection = ProviderConnection> {
  kind: Connection['kind'];
  /** http://127.0.0.1:<port> */
  url: string;
  /** The connection that points an account at this emulator (what saveProviderConnection takes). */
  connection: Connection;
  /** A few words for `npm start`'s listing after the URL, e.g. `Classic, vendor 12345` (an emulator's keys are no secrets). */
  note: string;
  /** The shell command that simulates a checkout on it, as `npm start` prints it (its CLI with the URL it needs). */
  checkoutCommand?: string;
  setWebhookUrl(url: string | null): void;
  /** Stops it: in-flight deliveries are aborted, the port is freed. */
  close(): Promise<void>;
  /** The kind's own handle: its simulations (checkout, renew…), faults and counts, for tests and the runtime. */
  handle: Handle;
}

export type StartEmulator<Handle = unknown, Connection extends ProviderConnection = ProviderConnection> = (
  options?: EmulatorOptions,
) => Promise<RunningEmulator<Handle, Connection>>;
