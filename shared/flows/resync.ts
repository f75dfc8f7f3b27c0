// The background sync's starting point: every account in the provider registry gets a sync-account
// message for its live and its deleted subscriptions.
import { publishAll } from '../queue/publish';
import type { SyncAccountMessage } from '../queue/queues';
import { listProviderAccounts } from '../store/provider-accounts';
import { log } from '../log';

export async function startBackfill(now = Date.now()): Promise<{ accounts: number }> {
  let accounts = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await listProviderAccounts(startKey);
    const messages: SyncAccountMessage[] = page.accountIds.flatMap((accountId) => [
      { kind: 'sync-account', account_id: accountId, state: 'live', page: 1, started_at: now },
      { kind: 'sync-account', account_id: accountId, state: 'deleted', page: 1, started_at: now },
    ]);
    await publishAll('provider-events', messages);
    accounts += page.accountIds.length;
    startKey = page.next;
  } while (startKey);
  log('info', 'background sync queued', { accounts });
  return { accounts };
}
