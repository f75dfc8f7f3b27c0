// The email-events worker's logic: SES bounce and complaint events (EventBridge -> SQS in AWS) mark the
// member's address as suppressed, so they get no further member emails until their email changes. The
// member is found from the message tags the sender attached (account_id, member_id): no lookup by address.
// Transient bounces are ignored (SES retries those itself). Events that are not about a member email are
// acknowledged and logged; DynamoDB errors fail the record (retried, then the DLQ).
import { isAccountId, isEntityId } from '../domain/ids';
import type { EmailEventMessage } from '../queue/queues';
import { sqsWorker } from '../queue/worker';
import { suppressMemberEmail } from '../store/emails';
import { log } from '../log';

export async function applyEmailEvent(event: EmailEventMessage): Promise<'suppressed' | 'ignored'> {
  const detail = event.detail;
  const type = detail?.eventType;
  const tag = (name: string) => detail?.mail?.tags?.[name]?.[0];
  const accountId = tag('account_id');
  const memberId = tag('member_id');
  const context = { event_type: type ?? null, account_id: accountId ?? null, member_id: memberId ?? null };
  if (!accountId || !isAccountId(accountId) || !memberId || !isEntityId(memberId)) {
    log('warn', 'email event ignored: not a member email', context);
    return 'ignored';
  }
  let reason: 'bounce' | 'complaint';
  let recipients: (string | undefined)[];
  if (type === 'Bounce' && detail?.bounce?.bounceType === 'Permanent') {
    reason = 'bounce';
    recipients = (detail.bounce.bouncedRecipients ?? []).map((r) => r.emailAddress);
  } else if (type === 'Complaint') {
    reason = 'complaint';
    recipients = (detail?.complaint?.complainedRecipients ?? []).map((r) => r.emailAddress);
  } else {
    log('info', 'email event ignored: not a hard bounce or complaint', context);
    return 'ignored';
  }
  let suppressed = false;
  for (const address of recipients) {
    if (!address) continue;
    suppressed = (await suppressMemberEmail(accountId, memberId, address, reason)) || suppressed;
  }
  log('info', suppressed ? 'member email suppressed' : 'email event for a deleted member', { ...context, reason });
  return suppressed ? 'suppressed' : 'ignored';
}

export const emailEventsHandler = sqsWorker<EmailEventMessage>('email-events', async (event) => {
  await applyEmailEvent(event);
});
