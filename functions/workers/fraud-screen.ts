// SQS consumer of `fraud`: runs the fraud rules over what one committed event is about (docs/fraud.md).
import type { Context, SQSEvent } from 'aws-lambda';
import type { FraudSettings } from '../../shared/domain/fraud';
import type { QueueMessages } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';
import { screenEvent, screeningReadKeys } from '../../shared/flows/fraud-screen';
import { parsedBodies, prefetch } from '../../shared/store/prefetch';
import { loadFraudSettings } from '../../shared/store/fraud-settings';

export const handler = async (event: SQSEvent, context?: Context) => {
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
  // The referrals the batch screens, in one BatchGet (a failure: each record reads its own).
  const pre = await prefetch(
    parsedBodies<QueueMessages['fraud'] | null>(event.Records ?? []).flatMap((m) => (m?.kind === 'screen' ? screeningReadKeys(m) : [])),
  );
  return sqsWorker<QueueMessages['fraud']>('fraud-screen', async (message) => {
    if (message.kind !== 'screen') throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
    await screenEvent(message, { settings: await settingsOf(message.account_id), pre });
  })(event, context);
};
