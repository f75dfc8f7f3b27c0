// The monthly summary's job (functions/workers/affiliate-summary.ts): on the 1st of a month (UTC), one
// `monthly-summary` message per member of every account whose setting is on, for the previous month.
// Members who opted out are left out here already; the worker checks everything again when it sends.
import { affiliateSettingsOf } from '../domain/affiliates';
import { log } from '../log';
import { publishAll } from '../queue/publish';
import type { AffiliateEmailMessage } from '../queue/queues';
import { listSummaryAccounts, listSummaryMembers } from '../store/affiliate-summary';
import { batchGet, lookup } from '../store/ops';
import { keys } from '../store/table';

/** `YYYY-MM` of the month before the one holding `nowMs` (UTC). */
export function previousMonth(nowMs: number): string {
  const d = new Date(nowMs);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
}

export const summaryMessage = (accountId: string, memberId: string, month: string): AffiliateEmailMessage => ({
  kind: 'affiliate-email',
  template: 'monthly-summary',
  account_id: accountId,
  key: `monthly-summary-${memberId}-${month}`,
  member_id: memberId,
  month,
});

/**
 * Queues the summaries of `month` (default: the previous month, and only when today is the 1st, UTC;
 * `force` runs on any day, for tests and a manual re-run).
 */
export async function startMonthlySummaries(
  opts: { nowMs?: number; month?: string; force?: boolean } = {},
): Promise<{ accounts: number; members: number }> {
  const nowMs = opts.nowMs ?? Date.now();
  if (!opts.force && !opts.month && new Date(nowMs).getUTCDate() !== 1) return { accounts: 0, members: 0 };
  const month = opts.month ?? previousMonth(nowMs);
  let accounts = 0;
  let members = 0;
  let accountsKey: Record<string, unknown> | undefined;
  do {
    const page = await listSummaryAccounts(accountsKey);
    accountsKey = page.next;
    const found = page.accountIds.length > 0 ? await batchGet(page.accountIds.map((id) => keys.account(id))) : new Map();
    for (const accountId of page.accountIds) {
      // A stale registry entry (the setting turned off, the account deleted) sends nothing.
      const account = lookup(found, keys.account(accountId));
      if (!account || !affiliateSettingsOf(account).affiliate_emails.monthly_summary) continue;
      accounts++;
      let membersKey: Record<string, unknown> | undefined;
      do {
        const memberPage = await listSummaryMembers(accountId, membersKey);
        membersKey = memberPage.next;
        await publishAll(
          'member-emails',
          memberPage.memberIds.map((id) => summaryMessage(accountId, id, month)),
        );
        members += memberPage.memberIds.length;
      } while (membersKey);
    }
  } while (accountsKey);
  log('info', 'monthly summaries queued', { month, accounts, members });
  return { accounts, members };
}
