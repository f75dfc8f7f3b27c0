// Scheduled (daily; it acts on the 1st of the month, UTC): queue one monthly-summary email per member of
// each account that turned `affiliate_emails.monthly_summary` on, for the month that just ended. The
// accounts come from their registry (shared/store/affiliate-summary.ts, a Query), the members from a
// Query of each account's members; the member-emails worker reads the figures and sends each summary once
// (key `monthly-summary-<member>-<YYYY-MM>`), so a repeated run sends nothing twice.
import { startMonthlySummaries } from '../../shared/email/affiliate-summary';
import { scheduledJob } from '../../shared/queue/worker';

export const handler = scheduledJob('affiliate-summary', () => startMonthlySummaries());
