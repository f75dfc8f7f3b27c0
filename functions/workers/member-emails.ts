// SQS consumer of `member-emails`: conversion and reward notices to referring members, exactly once per
// message key; SES in AWS, .eml files in EMAIL_OUTBOX_DIR under `npm start` and in tests.
import { config } from '../../shared/config';
import { memberEmailHandler } from '../../shared/email/member-emails';
import { outboxSender } from '../../shared/email/outbox-sender';
import type { EmailSender } from '../../shared/email/sender';
import { sesSender } from '../../shared/email/ses-sender';

let ses: EmailSender | undefined;

export const handler = memberEmailHandler(() => {
  const outbox = config().emailOutboxDir;
  return outbox ? outboxSender(outbox) : (ses ??= sesSender());
});
