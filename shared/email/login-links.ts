// Dashboard login links by email (docs/dashboard.md "Logging in"): the member-emails worker's other message kind. The
// request path only queued the address; here it is looked up, and every team it belongs to (or only the
// inviting account's) gets its own single-use, 15-minute link. An address in no team gets nothing, and the
// requester cannot tell the difference.
//
// Pacing per address (not per requester): anyone can ask for a link to a known operator's address, so a
// refusal there would let anyone lock the operator out. Instead the emails slow down: the first
// LOGIN_EMAIL_BURST.limit of a 15-minute window go out at once, then one per 5-minute window; the rest are
// dropped silently (the request answered 202 like any other). A link works for 15 minutes, longer than the
// gap, so the operator's inbox always holds a working link, whoever asked for it. Invitations are not paced.
//
// The link's host: the configured site only (PUBLIC_BASE_URL: the stack sets the dashboard's domain in
// AWS, the local gateway its own URL), never the message's base_url, which came from a request: a forged
// Host header cannot point a victim's link at another site.
import { createHash } from 'node:crypto';
import { config } from '../config';
import type { RateLimit } from '../domain/rate-limits';
import { consumeRateLimit } from '../store/rate-limits';
import { log } from '../log';
import type { LoginLinkMessage } from '../queue/queues';
import { PoisonMessageError } from '../queue/worker';
import { getItem } from '../store/ops';
import { ConditionsFailedError } from '../store/ops';
import { keys } from '../store/table';
import { issueLoginToken, membershipsOf } from '../store/team';
import { loginUrl, tokenHash } from '../domain/team';
import type { EmailSender } from './sender';
import { join } from 'node:path';
import { outboxFileName, outboxSender } from './outbox-sender';
import { escapeHtml } from './templates';

export function loginEmail(input: { accountName: string; url: string; invitedBy?: string }): {
  subject: string;
  text: string;
  html: string;
} {
  const subject = input.invitedBy
    ? `You are invited to ${input.accountName} on Refloop`
    : `Your Refloop login link for ${input.accountName}`;
  const lead = input.invitedBy
    ? `${input.invitedBy} invited you to run the ${input.accountName} referral programme on Refloop.`
    : `Someone (hopefully you) asked to log in to the ${input.accountName} dashboard on Refloop.`;
  const tail = 'The link works once, for 15 minutes. If you did not ask for it, ignore this email: nothing happens without the link.';
  const text = [lead, '', `Log in: ${input.url}`, '', tail, ''].join('\n');
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head><body>`,
    `<p>${escapeHtml(lead)}</p>`,
    `<p><a href="${escapeHtml(input.url)}">Log in to ${escapeHtml(input.accountName)}</a></p>`,
    `<p style="color: #555; font-size: 13px">${escapeHtml(tail)}</p>`,
    '</body></html>',
  ].join('\n');
  return { subject, text, html };
}

/**
 * A login link handed over by an operator tool rather than the worker (`admin account create
 * --owner-email`, `npm start`'s demo owner): the token is issued, and with an outbox folder the email is
 * written there too, like every email on a laptop. The caller prints the URL.
 */
export async function handOverLoginLink(p: {
  accountId: string;
  operatorId: string;
  accountName: string;
  to: string;
  baseUrl: string;
  outboxDir?: string;
}): Promise<{ url: string; expiresAt: number; file?: string }> {
  const { token, expiresAt } = await issueLoginToken(p.accountId, p.operatorId);
  const url = loginUrl(p.baseUrl, token);
  if (!p.outboxDir) return { url, expiresAt };
  const key = `login-${tokenHash(token).slice(0, 24)}`;
  await outboxSender(p.outboxDir).send({
    key,
    from: config().emailDefaultFrom,
    to: p.to,
    ...loginEmail({ accountName: p.accountName, url }),
    tags: { account_id: p.accountId, message_key: key },
  });
  return { url, expiresAt, file: join(p.outboxDir, outboxFileName(key)) };
}

/** Login emails to one address sent at once in a 15-minute window... */
export const LOGIN_EMAIL_BURST: RateLimit = { limit: 2, windowSeconds: 900 };
/** ...then at most one per 5-minute window (shorter than a link's 15 minutes). */
export const LOGIN_EMAIL_GAP: RateLimit = { limit: 1, windowSeconds: 300 };
/** The rate-limit pseudo-account of the login endpoints (shared/http/auth.ts AUTH_FAILURE_ACCOUNT). */
const LOGIN_LIMITS_ACCOUNT = 'auth';

/** Whether a login email to `email` may go out now (each `true` is counted); see the header. */
export async function loginEmailAllowed(email: string, nowMs = Date.now()): Promise<boolean> {
  const scope = `login-email#${createHash('sha256').update(email).digest('base64url').slice(0, 22)}`;
  if ((await consumeRateLimit(LOGIN_LIMITS_ACCOUNT, scope, LOGIN_EMAIL_BURST, nowMs)).allowed) return true;
  return (await consumeRateLimit(LOGIN_LIMITS_ACCOUNT, `${scope}#gap`, LOGIN_EMAIL_GAP, nowMs)).allowed;
}

export async function sendLoginLinks(m: LoginLinkMessage, sender: EmailSender): Promise<number> {
  if (m.kind !== 'login-link' || typeof m.email !== 'string' || typeof m.base_url !== 'string')
    throw new PoisonMessageError('Not a login-link message');
  const base = config().publicBaseUrl;
  const memberships = (await membershipsOf(m.email)).filter((x) => !m.account_id || x.accountId === m.account_id);
  if (memberships.length > 0 && m.invited_by === undefined && !(await loginEmailAllowed(m.email))) {
    log('info', 'login link not sent: the address had its share of emails for now', {});
    return 0;
  }
  let sent = 0;
  for (const { accountId, operatorId } of memberships) {
    const account = await getItem(keys.account(accountId));
    if (!account) continue;
    let token: string;
    try {
      ({ token } = await issueLoginToken(accountId, operatorId));
    } catch (err) {
      if (err instanceof ConditionsFailedError) continue; // removed from the team meanwhile
      throw err;
    }
    const rendered = loginEmail({
      accountName: String(account.name),
      url: loginUrl(base, token),
      ...(m.invited_by ? { invitedBy: m.invited_by } : {}),
    });
    const key = `login-${tokenHash(token).slice(0, 24)}`;
    await sender.send({
      key,
      from: config().emailDefaultFrom,
      to: m.email,
      ...rendered,
      tags: { account_id: accountId, message_key: key },
    });
    sent++;
  }
  log('info', 'login links sent', { links: sent });
  return sent;
}
