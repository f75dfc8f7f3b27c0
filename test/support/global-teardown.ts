// Jest global teardown: stops the DynamoDB Local and the Chromium that global-setup started.
import { rmSync } from 'node:fs';
import { holder } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  await holder.__refloopDynamo?.stop();
  holder.__refloopDynamo = undefined;
  await holder.__refloopBrowser?.close();
  holder.__refloopBrowser = undefined;
  if (holder.__refloopOutbox) rmSync(holder.__refloopOutbox, { recursive: true, force: true });
}
