// Jest global teardown: stops the DynamoDB Local that global-setup started.
import { holder } from './global-setup';

export default async function globalTeardown(): Promise<void> {
  await holder.__refloopDynamo?.stop();
  holder.__refloopDynamo = undefined;
}
