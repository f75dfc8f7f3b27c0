// SQS consumer of `fraud`: runs the fraud rules over what one committed event is about (docs/fraud.md).
import type { Context, SQSEvent } from 'aws-lambda';
import type { FraudSettings } from '../../shared/domain/fraud';
import type { QueueMessages } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';
import { screenEvent } from '../../shared/flows/fraud-screen';
import { loadFraudSettings } from '../../shared/store/fraud-settings';

export const handler = (event: SQSEvent, context?: Context) => {
  // An account's settings are read once per batch, not once per record: a batch screens the events of a few
  // accounts (fair queues interleave them), and a change of the rules applies from the next batch.
  const settings = new Map<string, Promise<FraudSettings>>();
  const settingsOf = (accountId: string) => {
    let loaded = settings.get(accountId);
    if (!loaded) {
      loaded = loadFraudSettings(accountId);
      settings.set(accountId, loaded);
      // A failed read is not kept: the next record of that account reads again.
      loaded.catch(() => settings.delete(accountId));
    }
    return loaded;
  };
  return sqsWorker<QueueMessages['fraud']>('fraud-screen', async (message) => {
    if (message.kind !== 'screen') throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
    await screenEvent(message, { settings: await settingsOf(message.account_id) });
  })(event, context);
};
