// GET /v1/email-templates/ - every email to affiliates and applicants (docs/affiliate-emails.md), rendered
// with sample data and the account's sender and programme name: what the dashboard's settings preview
// (each HTML part in a sandboxed iframe). Read-only; one GetItem (the account).
import { config } from '../../shared/config';
import { sampleAffiliateEmails } from '../../shared/email/affiliate-templates';
import { apiHandler, ok } from '../../shared/http/handler';
import { senderOf } from '../../shared/store/emails';
import { getItem } from '../../shared/store/ops';
import { keys } from '../../shared/store/table';

export const handler = apiHandler({}, async ({ principal }) => {
  const account = await getItem(keys.account(principal.accountId), false);
  const accountName = typeof account?.name === 'string' ? account.name : '';
  const senderName = senderOf(account)?.name || accountName || config().emailDefaultFrom.name;
  const results = sampleAffiliateEmails({ programme: senderName, senderName, baseUrl: config().publicBaseUrl }).map((e) => ({
    name: e.name,
    label: e.label,
    transactional: e.transactional,
    subject: e.subject,
    text: e.text,
    html: e.html,
  }));
  return ok({ results });
});
