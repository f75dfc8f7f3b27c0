// Where `npm start` runs, for the CLIs: DATA_DIR/runtime.json, written when it has started and removed
// when it stops. A CLI with no port or URL variable of its own takes the running service's from it, so
// `PORT=3100 npm start` and then `npm run admin -- ...` print links to port 3100, not 3000. A file whose
// process is gone (a crash, kill -9) is ignored. Variables still win: DYNAMODB_ENDPOINT / DYNAMODB_PORT,
// SQS_ENDPOINT / SQS_PORT, API_URL / PORT, and each emulator's *_EMULATOR_URL / *_PORT.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface RuntimeFile {
  pid: number;
  api_url: string;
  dynamodb_endpoint: string;
  sqs_endpoint: string;
  paddle_url: string;
  paddle_billing_url: string;
  stripe_url: string;
  /** The payout rails' emulators (PayPal Payouts, Wise); absent in a file from an older start. */
  paypal_url?: string;
  wise_url?: string;
  /** Every provider emulator's URL by provider kind (the CLIs of emulators added later read theirs here). */
  emulator_urls?: Record<string, string>;
}

export const runtimeFilePath = (dataDir: string) => join(dataDir, 'runtime.json');

export function writeRuntimeFile(dataDir: string, info: Omit<RuntimeFile, 'pid'>): void {
  writeFileSync(runtimeFilePath(dataDir), `${JSON.stringify({ pid: process.pid, ...info }, null, 2)}\n`, { mode: 0o600 });
}

export function removeRuntimeFile(dataDir: string): void {
  rmSync(runtimeFilePath(dataDir), { force: true });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The running `npm start` of DATA_DIR (default .data), or null (none, unreadable, or its process gone). */
export function readRuntimeFile(dataDir = process.env.DATA_DIR || '.data'): RuntimeFile | null {
  try {
    const file = JSON.parse(readFileSync(runtimeFilePath(dataDir), 'utf8')) as RuntimeFile;
    return typeof file.pid === 'number' && alive(file.pid) ? file : null;
  } catch {
    return null;
  }
}

/** `http://127.0.0.1:<port variable>` when the variable is set, else the running service's URL, else the default port's. */
export function localUrl(portVariable: string, fromFile: (f: RuntimeFile) => string, defaultPort: number): string {
  const port = process.env[portVariable];
  if (port) return `http://127.0.0.1:${port}`;
  const file = readRuntimeFile();
  return file ? fromFile(file).replace(/\/+$/, '') : `http://127.0.0.1:${defaultPort}`;
}
