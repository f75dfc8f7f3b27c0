// The member-emails worker's affiliate emails (docs/affiliate-emails.md): one `affiliate-email` message in,
// at most one email out. The request paths and the flows only said what happened; here the recipient is
// looked up, any link the email carries is issued (no queue holds a usable link), and it is rendered
// (./affiliate-templates.ts) and sent.
//
// Two kinds:
// - Login and confirmation emails (application-confirm, application-exists, member-exists, portal-login,
//   application-approved): no unsubscribe (a person needs them to get in). The ones anybody can trigger
//   with an address (all but the approval) are paced per address like the dashboard's login emails
//   (./login-links.ts): two at once in 15 minutes, then one per 5 minutes, the rest dropped silently. A
//   link lives 15 minutes, longer than the gap, so the inbox always holds a working one.
// - The others (application-rejected, payout-sent, new-referral, monthly-summary): the RFC 8058
//   List-Unsubscribe headers and a link in the body, the member's opt-out and a bounced address honoured.
//   The optional ones (new-referral, monthly-summary) are sent only while the account's setting is on.
// Every message with a key (always for the second kind and the approval; default keys below) is sent
// exactly once per key with the marker of ./member-emails.ts (a claim with a lease, ./email-lease.ts, then
// sent or skipped; its header explains the crash window).
import { createHash } from 'node:crypto';
import { config } from '../config';
import { affiliateSettingsOf } from '../domain/affiliates';
import { affiliateLoginUrl, portalLoginPageUrl } from '../flows/affiliate-login';
import { issueJoinConfirmation } from '../flows/applications';
import { isAccountId, isCampaignId, isEntityId, newEntityId } from '../domain/ids';
import { log } from '../log';
import type { AffiliateEmailMessage } from '../queue/queues';
import { PoisonMessageError } from '../queue/worker';
import { claimEmail, completeEmail, memberIdByEmail, releaseEmail, senderOf, suppressedAddress } from '../store/emails';
import { toCampaign } from '../store/campaigns';
import { toMember } from '../store/members';
import { batchGet, getItem, lookup } from '../store/ops';
import { toPayout } from '../store/payouts';
import { consumeRateLimit } from '../store/rate-limits';
import { toReferral } from '../store/referrals';
import { readDays } from '../store/reports';
import { keys, moneyKeys } from '../store/table';
import { applicantOptedOut, issueUnsubscribeToken } from '../store/unsubscribe';
import type { Member } from '../domain/models';
import {
  type AffiliateEmailContext,
  applicationApprovedEmail,
  applicationConfirmEmail,
  applicationExistsEmail,
  applicationRejectedEmail,
  isAffiliateTemplate,
  isTransactional,
  memberExistsEmail,
  type MonthlyFigures,
  monthlySummaryEmail,
  newReferralEmail,
  payoutSentEmail,
  portalLoginEmail,
} from './affiliate-templates';
import { LOGIN_EMAIL_BURST, LOGIN_EMAIL_GAP } from './login-links';
import type { EmailSender, Mailbox } from './sender';
import type { RenderedEmail } from './templates';
import { unsubscribeHeaders, unsubscribeUrl } from './unsubscribe';
import { claimOrWait, EmailInFlightError, LEASE_SECONDS } from './email-lease';

export type AffiliateEmailOutcome = 'sent' | 'skipped' | 'duplicate' | 'paced';

/** The exactly-once key of a message: its own, else one derived from what it is about (null: none). */
export function affiliateEmailKey(m: AffiliateEmailMessage): string | null {
  if (typeof m.key === 'string' && m.key !== '') return m.key;
  switch (m.template) {
    case 'application-approved':
      return m.application_id ? `approved-${m.application_id}` : null;
    case 'application-rejected':
      return m.application_id ? `rejected-${m.application_id}` : null;
    case 'payout-sent':
      return m.payout_id ? `payout-sent-${m.payout_id}` : null;
    case 'new-referral':
      return m.referral_id ? `new-referral-${m.referral_id}` : null;
    case 'monthly-summary':
      return m.member_id && m.month ? `monthly-summary-${m.member_id}-${m.month}` : null;
    default:
      return null;
  }
}

/** Anybody can trigger these with an address: paced per address (see the header). */
const PACED = new Set<AffiliateEmailMessage['template']>(['application-confirm', 'application-exists', 'member-exists', 'portal-login']);

const EMAIL = /^[^\s@]+@[^\s@]+$/;
const addressOf = (value: unknown): string | null =>
  typeof value === 'string' && value.length <= 254 && EMAIL.test(value.trim()) ? value.trim().toLowerCase() : null;

/** Whether an affiliate login or confirmation email to `email` may go out now (each `true` is counted). */
export async function affiliateEmailAllowed(accountId: string, email: string, nowMs = Date.now()): Promise<boolean> {
  const scope = `affiliate-email#${createHash('sha256').update(email.trim().toLowerCase()).digest('base64url').slice(0, 22)}`;
  if ((await consumeRateLimit(accountId, scope, LOGIN_EMAIL_BURST, nowMs)).allowed) return true;
  return (await consumeRateLimit(accountId, `${scope}#gap`, LOGIN_EMAIL_GAP, nowMs)).allowed;
}

interface Ready {
  to: string;
  from: Mailbox;
  rendered: RenderedEmail;
  headers?: Record<string, string>;
  memberId?: string;
}
type Prepared = Ready | { skip: string } | { paced: true };

/** What one email needs: the account, and the member and campaign when the message names them. */
async function readContext(m: AffiliateEmailMessage, memberId: string | null) {
  const campaignKey = m.campaign_id && isCampaignId(m.campaign_id) ? keys.campaign(m.account_id, m.campaign_id) : null;
  const memberKey = memberId && isEntityId(memberId) ? keys.member(m.account_id, memberId) : null;
  const found = await batchGet([keys.account(m.account_id), ...(memberKey ? [memberKey] : []), ...(campaignKey ? [campaignKey] : [])]);
  const account = lookup(found, keys.account(m.account_id));
  const memberItem = memberKey ? lookup(found, memberKey) : undefined;
  const member = toMember(memberItem);
  let campaign = campaignKey ? toCampaign(lookup(found, campaignKey)) : null;
  if (!campaign && member?.campaign_id) campaign = toCampaign(await getItem(keys.campaign(m.account_id, member.campaign_id), false));
  // The account's sender; without one the service's address under the account's name.
  const own = senderOf(account);
  const accountName = typeof account?.name === 'string' ? account.name : '';
  const senderName = own?.name || accountName || config().emailDefaultFrom.name;
  const sender: Mailbox = own ?? { address: config().emailDefaultFrom.address, name: senderName };
  const ctx: AffiliateEmailContext = {
    programme: campaign?.name || senderName,
    senderName,
    firstName: member?.first_name ?? null,
  };
  return { account, member, memberItem, sender, ctx };
}

type Context = Awaited<ReturnType<typeof readContext>>;

/** The affiliate's unsubscribe link and headers for a non-transactional member email. */
async function unsubscribeFor(accountId: string, member: Member, c: Context) {
  const url = unsubscribeUrl(
    config().publicBaseUrl,
    await issueUnsubscribeToken({ accountId, memberId: member.id, programme: c.ctx.senderName }),
  );
  return { url, headers: unsubscribeHeaders(url) };
}

/** Why a member is not sent a non-transactional email, or null. */
function memberRefusal(member: Member | null, memberItem: Record<string, unknown> | undefined): string | null {
  if (!member) return 'member deleted';
  if (member.email_opt_out) return 'member opted out';
  if (suppressedAddress(memberItem) === member.email.toLowerCase()) return 'address bounced or complained';
  return null;
}

const sumOf = (days: Map<string, Record<string, number>>, attr: string) => [...days.values()].reduce((n, d) => n + (d[attr] ?? 0), 0);

/** A month's figures from the member's daily report buckets (scope `M#<member>`). */
export async function monthlyFigures(accountId: string, memberId: string, month: string): Promise<MonthlyFigures> {
  const days = await readDays(accountId, `M#${memberId}`, `${month}-01`, `${month}-31`);
  const currencies = new Set<string>();
  for (const d of days.values())
    for (const attr of Object.keys(d)) {
      const found = /^(?:commission|credit)_earned_([A-Z]{3})$/.exec(attr);
      if (found) currencies.add(found[1]!);
    }
  return {
    month,
    clicks: sumOf(days, 'link_clicks'),
    referrals: sumOf(days, 'referrals'),
    conversions: sumOf(days, 'conversions'),
    earnings: [...currencies].sort().map((currency) => ({
      currency,
      commission: sumOf(days, `commission_earned_${currency}`),
      credit: sumOf(days, `credit_earned_${currency}`),
    })),
  };
}

async function prepare(m: AffiliateEmailMessage, pace: (address: string) => Promise<boolean>): Promise<Prepared> {
  const acct = m.account_id;
  switch (m.template) {
    case 'application-confirm': {
      const to = addressOf(m.email);
      if (!to || !m.join_request_id) throw new PoisonMessageError('application-confirm needs an email and a join_request_id');
      const c = await readContext(m, null);
      if (!c.account) return { skip: 'account deleted' };
      if (!(await pace(to))) return { paced: true };
      const url = await issueJoinConfirmation(acct, m.join_request_id);
      if (!url) return { skip: 'join request gone' };
      return { to, from: c.sender, rendered: applicationConfirmEmail({ ...c.ctx, firstName: null }, { url }) };
    }
    case 'application-exists': {
      const to = addressOf(m.email);
      if (!to) throw new PoisonMessageError('application-exists needs an email');
      const c = await readContext(m, null);
      if (!c.account) return { skip: 'account deleted' };
      if (!(await pace(to))) return { paced: true };
      return { to, from: c.sender, rendered: applicationExistsEmail({ ...c.ctx, firstName: null }) };
    }
    case 'member-exists':
    case 'portal-login': {
      const to = addressOf(m.email);
      if (!to) throw new PoisonMessageError(`${m.template} needs an email`);
      const memberId = await memberIdByEmail(acct, to);
      // Nobody with this address: nothing is sent (the request answered the same either way).
      if (!memberId) return { skip: 'no member with this address' };
      const c = await readContext(m, memberId);
      if (!c.account || !c.member) return { skip: 'no member with this address' };
      if (!(await pace(to))) return { paced: true };
      const url = await affiliateLoginUrl(acct, c.member.id);
      if (!url) return { skip: 'member deleted' };
      const render = m.template === 'member-exists' ? memberExistsEmail : portalLoginEmail;
      return { to: c.member.email, from: c.sender, rendered: render(c.ctx, { url }), memberId: c.member.id };
    }
    case 'application-approved': {
      if (!m.member_id) throw new PoisonMessageError('application-approved needs a member_id');
      const c = await readContext(m, m.member_id);
      if (!c.account || !c.member) return { skip: 'member deleted' };
      const url = await affiliateLoginUrl(acct, c.member.id);
      if (!url) return { skip: 'member deleted' };
      const loginPageUrl = portalLoginPageUrl(config().publicBaseUrl, { id: acct, slug: c.account.slug });
      return {
        to: c.member.email,
        from: c.sender,
        rendered: applicationApprovedEmail(c.ctx, { url, loginPageUrl }),
        memberId: c.member.id,
      };
    }
    case 'application-rejected': {
      const to = addressOf(m.email);
      if (!to) throw new PoisonMessageError('application-rejected needs an email');
      const c = await readContext(m, null);
      if (!c.account) return { skip: 'account deleted' };
      if (await applicantOptedOut(acct, to)) return { skip: 'address opted out' };
      // The applicant is no member: the link opts the address out of this account's applicant emails.
      const url = unsubscribeUrl(
        config().publicBaseUrl,
        await issueUnsubscribeToken({ accountId: acct, memberId: '', programme: c.ctx.senderName, email: to }),
      );
      return {
        to,
        from: c.sender,
        rendered: applicationRejectedEmail({ ...c.ctx, firstName: null }, { unsubscribeUrl: url }),
        headers: unsubscribeHeaders(url),
      };
    }
    case 'payout-sent': {
      if (!m.payout_id) throw new PoisonMessageError('payout-sent needs a payout_id');
      const payout = toPayout(await getItem(moneyKeys.payout(acct, m.payout_id)));
      if (!payout) return { skip: 'payout not found' };
      if (payout.status !== 'paid') return { skip: `payout is ${payout.status}` };
      const c = await readContext(m, payout.member_id);
      const refused = memberRefusal(c.member, c.memberItem);
      if (refused || !c.member) return { skip: refused ?? 'member deleted' };
      const unsub = await unsubscribeFor(acct, c.member, c);
      const rendered = payoutSentEmail(c.ctx, {
        amount: payout.amount,
        currency: payout.currency,
        destination: payout.payout_email ?? c.member.payout_email,
        reference: payout.reference,
        unsubscribeUrl: unsub.url,
      });
      return { to: c.member.email, from: c.sender, rendered, headers: unsub.headers, memberId: c.member.id };
    }
    case 'new-referral': {
      if (!m.member_id || !m.referral_id) throw new PoisonMessageError('new-referral needs a member_id and a referral_id');
      const c = await readContext(m, m.member_id);
      if (!affiliateSettingsOf(c.account).affiliate_emails.new_referral) return { skip: 'new-referral emails are off' };
      const refused = memberRefusal(c.member, c.memberItem);
      if (refused || !c.member) return { skip: refused ?? 'member deleted' };
      const referral = toReferral(await getItem(keys.referral(acct, m.referral_id), false));
      if (!referral || referral.member_id !== c.member.id) return { skip: 'referral deleted' };
      const unsub = await unsubscribeFor(acct, c.member, c);
      return {
        to: c.member.email,
        from: c.sender,
        rendered: newReferralEmail(c.ctx, { memberCode: c.member.code, unsubscribeUrl: unsub.url }),
        headers: unsub.headers,
        memberId: c.member.id,
      };
    }
    case 'monthly-summary': {
      if (!m.member_id || !m.month || !/^\d{4}-(0[1-9]|1[0-2])$/.test(m.month))
        throw new PoisonMessageError('monthly-summary needs a member_id and a month');
      const c = await readContext(m, m.member_id);
      if (!affiliateSettingsOf(c.account).affiliate_emails.monthly_summary) return { skip: 'monthly summaries are off' };
      const refused = memberRefusal(c.member, c.memberItem);
      if (refused || !c.member) return { skip: refused ?? 'member deleted' };
      const figures = await monthlyFigures(acct, c.member.id, m.month);
      const earned = figures.earnings.some((e) => e.commission !== 0 || e.credit !== 0);
      if (figures.clicks === 0 && figures.referrals === 0 && figures.conversions === 0 && !earned)
        return { skip: 'nothing happened that month' };
      const unsub = await unsubscribeFor(acct, c.member, c);
      return {
        to: c.member.email,
        from: c.sender,
        rendered: monthlySummaryEmail(c.ctx, { ...figures, unsubscribeUrl: unsub.url }),
        headers: unsub.headers,
        memberId: c.member.id,
      };
    }
  }
}

/** Sends one affiliate email (see the header); throws to have the record retried. */
export async function sendAffiliateEmail(m: AffiliateEmailMessage, sender: EmailSender): Promise<AffiliateEmailOutcome> {
  if (m?.kind !== 'affiliate-email' || !isAffiliateTemplate(m.template) || typeof m.account_id !== 'string' || !isAccountId(m.account_id))
    throw new PoisonMessageError('Not an affiliate-email message');
  const key = affiliateEmailKey(m);
  if (!key && !isTransactional(m.template)) throw new PoisonMessageError(`${m.template} needs a key`);
  const context = { account_id: m.account_id, template: m.template, key };

  if (key) {
    const claim = await claimOrWait(() => claimEmail(m.account_id, key, LEASE_SECONDS));
    if (!claim.claimed) {
      if (claim.state === 'sending') throw new EmailInFlightError(`email ${key} is being sent by another attempt`);
      log('info', 'affiliate email already handled', { ...context, state: claim.state });
      return 'duplicate';
    }
  }
  const release = async () => {
    if (key) await releaseEmail(m.account_id, key).catch(() => undefined);
  };

  let prepared: Prepared;
  try {
    const pace = (address: string) => (PACED.has(m.template) ? affiliateEmailAllowed(m.account_id, address) : Promise.resolve(true));
    prepared = await prepare(m, pace);
    if ('skip' in prepared || 'paced' in prepared) {
      const reason = 'skip' in prepared ? prepared.skip : 'paced: the address had its share of emails for now';
      if (key) await completeEmail(m.account_id, key, { state: 'skipped', reason });
      log('info', 'affiliate email not sent', { ...context, reason });
      return 'skip' in prepared ? 'skipped' : 'paced';
    }
  } catch (err) {
    await release();
    throw err;
  }

  // Without a key (a login or confirmation email), the outbox file is named after the template and a fresh id.
  const sendKey = key ?? `${m.template}-${newEntityId()}`;
  let messageId: string;
  try {
    ({ messageId } = await sender.send({
      key: sendKey,
      from: prepared.from,
      to: prepared.to,
      ...prepared.rendered,
      ...(prepared.headers ? { headers: prepared.headers } : {}),
      tags: { account_id: m.account_id, ...(prepared.memberId ? { member_id: prepared.memberId } : {}), message_key: sendKey },
    }));
  } catch (err) {
    await release();
    throw err;
  }
  if (key) await completeEmail(m.account_id, key, { state: 'sent', messageId });
  log('info', 'affiliate email sent', { ...context, message_id: messageId });
  return 'sent';
}
