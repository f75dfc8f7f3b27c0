// The background sync's starting point: every account in the provider registry gets a sync-account
// message for its live and its deleted subscriptions.
//
// Incremental runs: an account whose last run applied every subscription (its sync mark,
// shared/store/provider-accounts.ts) is asked only for the subscriptions changed since that run started,
// less SYNC_OVERLAP_SECONDS (a change being written while the last run read it), by providers that can
// filter so (Chargebee's `updated_at[after]`; the others list everything anyway). The run that starts in
// the first FULL_SYNC_HOURS of each UTC day is a full pass for every account, so whatever an incremental
// run could miss (a provider's clock, a change without a new `updated_at`) is healed within a day.
import { publishAll } from '../queue/publish';
import type { SyncAccountMessage } from '../queue/queues';
import { listProviderAccounts } from '../store/provider-accounts';
import { log } from '../log';

/** Overlap of an incremental run with the previous run's start. */
export const SYNC_OVERLAP_SECONDS = 15 * 60;
/** A run starting in these first hours of the UTC day is a full pass (the schedule runs every 6 hours). */
export const FULL_SYNC_HOURS = 6;

export async function startBackfill(now = Date.now()): Promise<{ accounts: number }> {
  let accounts = 0;
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await listProviderAccounts(startKey);
    const messages = syncMessagesOf(page.accountIds, page.syncMarks, now);
    await publishAll('provider-events', messages);
    accounts += page.accountIds.length;
    startKey = page.next;
  } while (startKey);
  log('info', 'background sync queued', { accounts });
  return { accounts };
}

/**
 * The messages that start one run for these accounts: live and deleted halves, each live half
 * incremental when the account has a sync mark and the run is not the day's full pass.
 */
export function syncMessagesOf(accountIds: readonly string[], syncMarks: Record<string, number>, now: number): SyncAccountMessage[] {
  const full = new Date(now).getUTCHours() < FULL_SYNC_HOURS;
  return accountIds.flatMap((accountId): SyncAccountMessage[] => [
    {
      kind: 'sync-account',
      account_id: accountId,
      state: 'live',
      page: 1,
      started_at: now,
      ...(incrementalFrom(full, syncMarks[accountId]) ?? {}),
    },
    { kind: 'sync-account', account_id: accountId, state: 'deleted', page: 1, started_at: now },
  ]);
}

/** The `updated_after` of an incremental run, or null for a full pass. */
function incrementalFrom(full: boolean, mark: number | undefined): { updated_after: number } | null {
  if (full || mark === undefined) return null;
  return { updated_after: Math.max(0, Math.floor(mark / 1000) - SYNC_OVERLAP_SECONDS) };
}
