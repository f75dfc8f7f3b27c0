// Queues affiliate emails from the flows (docs/affiliate-emails.md), after their transaction committed.
// Light on purpose (the publisher only): request paths that import it carry no template or store code.
// Never fails the write that committed: when the function has no member-emails queue (a test calling a
// flow directly, a job that does not send emails) nothing is queued, and a failed send is logged; the
// email is a notice, the committed change is what matters. The worker sends each one once per key.
import { config } from '../config';
import { log } from '../log';
import { publishAll } from '../queue/publish';
import type { AffiliateEmailMessage } from '../queue/queues';

export async function queueAffiliateEmails(messages: AffiliateEmailMessage[]): Promise<void> {
  if (messages.length === 0 || !config().queueUrls['member-emails']) return;
  try {
    await publishAll('member-emails', messages);
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    log('warn', 'affiliate email not queued', { templates: messages.map((m) => m.template), error: e.name, reason: e.message });
  }
}

/** The payout-sent email of a payout just marked paid (once per payout: its key). */
export const payoutSentMessage = (accountId: string, payoutId: string, memberId: string): AffiliateEmailMessage => ({
  kind: 'affiliate-email',
  template: 'payout-sent',
  account_id: accountId,
  key: `payout-sent-${payoutId}`,
  payout_id: payoutId,
  member_id: memberId,
});
