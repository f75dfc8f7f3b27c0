// The background sync's incremental runs, on Chargebee (the provider whose list filters on
// `updated_at[after]`): a run that applied every subscription records its start as the account's sync
// mark (shared/store/provider-accounts.ts); a later run from that mark lists only what changed since, so a
// subscription changed before it is not read again, one changed after is mirrored. Real parts: DynamoDB Local, the local SQS with the
// workers behind pollers, and the Chargebee emulator with its own clock.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { type ChargebeeEmulator, startChargebeeEmulator } from '../../infra/local/emulators/chargebee';
import type { Pollers } from '../../infra/local/pollers';
import { SYNC_OVERLAP_SECONDS, syncMessagesOf } from '../../shared/flows/resync';
import { publish } from '../../shared/queue/publish';
import { db, tableName } from '../../shared/store/client';
import { saveProviderConnection } from '../../shared/store/provider';
import { getSubscription } from '../../shared/store/subscriptions';
import { providerRegistryKeys } from '../../shared/store/table';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let pollers: Pollers;
let cb: ChargebeeEmulator;
/** The emulator's clock: moved by hand, so `updated_at` seconds are known. */
let clock = Date.now();

beforeAll(async () => {
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
  cb = await startChargebeeEmulator({ webhookUrl: null, now: () => clock });
});

afterAll(async () => {
  await pollers?.stop();
  await queues?.stop();
  await cb?.stop();
});

async function tenant(): Promise<string> {
  const { accountId } = await newAccount();
  await saveProviderConnection(accountId, {
    kind: 'chargebee',
    site: cb.site,
    apiKey: cb.apiKey,
    apiUrl: cb.url,
    webhookUsername: cb.webhookUsername,
    webhookPassword: cb.webhookPassword,
  });
  return accountId;
}

async function syncMark(accountId: string): Promise<number | undefined> {
  const out = await db().send(
    new GetCommand({ TableName: tableName(), Key: { pk: providerRegistryKeys.providerAccounts(), sk: accountId }, ConsistentRead: true }),
  );
  return typeof out.Item?.sync_mark === 'number' ? out.Item.sync_mark : undefined;
}

/** One run's live half, as the backfill starts it (shared/flows/resync.ts syncMessagesOf) for these marks. */
async function run(accountId: string, mark: number | undefined) {
  const now = Date.now();
  // The hour only decides whether the run is the day's full pass: an afternoon's, so the mark counts.
  const [live] = syncMessagesOf([accountId], mark === undefined ? {} : { [accountId]: mark }, Date.parse('2026-11-27T12:00:00Z'));
  if (!live) throw new Error('no live half');
  const message = { ...live, started_at: now };
  await publish('provider-events', message);
  return message;
}

describe('background sync: incremental runs from the sync mark', () => {
  it('a complete run records its start; the next run lists only what changed after it', async () => {
    const accountId = await tenant();
    const start = Date.now();
    clock = start - 3 * 3600_000;
    const before = await cb.checkout({ email: 'before@example.com', deliver: false });

    const first = await run(accountId, undefined);
    expect(first.updated_after).toBeUndefined();
    await pollUntil(async () => getSubscription(accountId, before.subscription.id), { timeoutMs: 20_000 });
    const mark = await pollUntil(async () => syncMark(accountId), { timeoutMs: 20_000 });
    expect(mark).toBe(first.started_at);

    // Changed before the mark (but never delivered): an incremental run does not read it again.
    const unchanged = await cb.checkout({ email: 'unchanged@example.com', deliver: false });
    clock = start + 3600_000;
    const after = await cb.checkout({ email: 'after@example.com', deliver: false });

    const second = await run(accountId, mark);
    expect(second.updated_after).toBe(Math.floor((mark as number) / 1000) - SYNC_OVERLAP_SECONDS);
    await pollUntil(async () => getSubscription(accountId, after.subscription.id), { timeoutMs: 20_000 });
    await queues.drained(['provider-events'], 20_000);
    expect(await getSubscription(accountId, unchanged.subscription.id)).toBeNull();
    expect(await pollUntil(async () => ((await syncMark(accountId)) === second.started_at ? true : null), { timeoutMs: 20_000 })).toBe(
      true,
    );

    // A full pass (the day's first run, or an account without a mark) reads everything again.
    await run(accountId, undefined);
    await pollUntil(async () => getSubscription(accountId, unchanged.subscription.id), { timeoutMs: 20_000 });
  });

  it('a connection saved after a run started keeps that run from recording a mark', async () => {
    const accountId = await tenant();
    clock = Date.now();
    await cb.checkout({ email: 'late@example.com', deliver: false });
    // A run that started before the connection was saved (its registry item's updated_at).
    await publish('provider-events', {
      kind: 'sync-account',
      account_id: accountId,
      state: 'live',
      page: 1,
      started_at: Date.now() - 3600_000,
    });
    await queues.drained(['provider-events'], 20_000);
    expect(await syncMark(accountId)).toBeUndefined();
  });
});
