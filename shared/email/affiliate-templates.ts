// The emails to affiliates and applicants (docs/affiliate-emails.md), in plain text and HTML. Pure: no
// I/O; the worker (./affiliate-emails.ts) reads what they show, issues the links and sends them, and the
// dashboard's previews (functions/email-templates/list.ts) render them with sample data.
//
// Everything shown is escaped in the HTML part (names, programme names, links). The referred user is
// never named: an affiliate learns that someone signed up, not who. A rejection never carries its reason.
// Login and confirmation emails (TRANSACTIONAL) carry no unsubscribe link; every other one shows the
// link its caller passes (the same URL as its RFC 8058 List-Unsubscribe header).
import { formatCents } from '../domain/money';
import type { AffiliateEmailMessage } from '../queue/queues';
import { escapeHtml, type RenderedEmail } from './templates';

export type AffiliateTemplate = AffiliateEmailMessage['template'];

export interface AffiliateTemplateInfo {
  name: AffiliateTemplate;
  /** What the dashboard calls it. */
  label: string;
  /** A login or confirmation email (or the answer to an application): no unsubscribe, never turned off. */
  transactional: boolean;
  /** Sent only when the account turns it on (`affiliate_emails.<setting>`). */
  setting: 'new_referral' | 'monthly_summary' | null;
}

/** Every affiliate email, in the order the dashboard shows them. */
export const AFFILIATE_TEMPLATES: readonly AffiliateTemplateInfo[] = [
  { name: 'application-confirm', label: 'Confirm your email (application)', transactional: true, setting: null },
  { name: 'application-exists', label: 'Already applied', transactional: true, setting: null },
  { name: 'member-exists', label: 'Already a member (login link)', transactional: true, setting: null },
  { name: 'application-approved', label: 'Application approved (login link)', transactional: true, setting: null },
  { name: 'application-rejected', label: 'Application not accepted', transactional: false, setting: null },
  { name: 'portal-login', label: 'Portal login link', transactional: true, setting: null },
  { name: 'payout-sent', label: 'Payout sent', transactional: false, setting: null },
  { name: 'new-referral', label: 'New referral (optional)', transactional: false, setting: 'new_referral' },
  { name: 'monthly-summary', label: 'Monthly summary (optional)', transactional: false, setting: 'monthly_summary' },
];

const TRANSACTIONAL: ReadonlySet<AffiliateTemplate> = new Set(AFFILIATE_TEMPLATES.filter((t) => t.transactional).map((t) => t.name));

/** Login, confirmation and application answers: no List-Unsubscribe, paced per address instead. */
export const isTransactional = (template: AffiliateTemplate): boolean => TRANSACTIONAL.has(template);

export const isAffiliateTemplate = (value: unknown): value is AffiliateTemplate =>
  typeof value === 'string' && AFFILIATE_TEMPLATES.some((t) => t.name === value);

/** What every affiliate email shows. */
export interface AffiliateEmailContext {
  /** The programme's name (the campaign applied to, or the account's programme). */
  programme: string;
  /** Who signs it (the account's sender name). */
  senderName: string;
  /** The recipient's first name, when known. */
  firstName?: string | null;
}

interface Body {
  subject: string;
  paragraphs: string[];
  /** The button (HTML) and the line with the URL (text). */
  action?: { label: string; url: string };
  /** Under the action, smaller (e.g. "the link works once, for 15 minutes"). */
  note?: string;
  /** Why the recipient gets this email. */
  footer: string;
  unsubscribeUrl?: string | undefined;
}

const greeting = (firstName: string | null | undefined) => (firstName ? `Hi ${firstName},` : 'Hi there,');

function compose(ctx: AffiliateEmailContext, body: Body): RenderedEmail {
  const text = [
    greeting(ctx.firstName),
    '',
    ...body.paragraphs.flatMap((p) => [p, '']),
    ...(body.action ? [`${body.action.label}: ${body.action.url}`, ''] : []),
    ...(body.note ? [body.note, ''] : []),
    `-- ${ctx.senderName}`,
    '',
    body.footer,
    '',
    ...(body.unsubscribeUrl ? [`Unsubscribe from these emails: ${body.unsubscribeUrl}`, ''] : []),
  ].join('\n');
  const small = 'style="color: #666; font-size: 12px"';
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(body.subject)}</title></head>`,
    '<body style="font-family: sans-serif; line-height: 1.5; color: #222">',
    `<p>${escapeHtml(greeting(ctx.firstName))}</p>`,
    ...body.paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    ...(body.action
      ? [
          `<p><a href="${escapeHtml(body.action.url)}" style="display: inline-block; padding: 10px 16px; background: #1f4fd1; color: #fff; border-radius: 6px; text-decoration: none">${escapeHtml(body.action.label)}</a></p>`,
          `<p ${small}>Or open this address: ${escapeHtml(body.action.url)}</p>`,
        ]
      : []),
    ...(body.note ? [`<p ${small}>${escapeHtml(body.note)}</p>`] : []),
    `<p>&mdash; ${escapeHtml(ctx.senderName)}</p>`,
    `<p ${small}>${escapeHtml(body.footer)}</p>`,
    ...(body.unsubscribeUrl ? [`<p ${small}><a href="${escapeHtml(body.unsubscribeUrl)}">Unsubscribe from these emails</a></p>`] : []),
    '</body></html>',
    '',
  ].join('\n');
  return { subject: body.subject, text, html };
}

const LINK_NOTE = 'The link works once, for 15 minutes. If you did not ask for it, ignore this email: nothing happens without the link.';
const memberFooter = (ctx: AffiliateEmailContext) => `You receive this email because you are an affiliate of ${ctx.programme}.`;
const applicantFooter = (ctx: AffiliateEmailContext) =>
  `You receive this email because this address was used to apply to ${ctx.programme}.`;

/** The applicant confirms their address; only then is the application stored. */
export function applicationConfirmEmail(ctx: AffiliateEmailContext, input: { url: string }): RenderedEmail {
  return compose(ctx, {
    subject: `Confirm your email to apply to ${ctx.programme}`,
    paragraphs: [
      `Thank you for applying to ${ctx.programme}. Confirm that this address is yours and we will send your application for review.`,
    ],
    action: { label: 'Confirm my email', url: input.url },
    note: 'If you did not apply, ignore this email: nothing is stored without the confirmation.',
    footer: applicantFooter(ctx),
  });
}

/** Someone applied again with an address whose application is waiting for a decision. */
export function applicationExistsEmail(ctx: AffiliateEmailContext): RenderedEmail {
  return compose(ctx, {
    subject: `Your application to ${ctx.programme}`,
    paragraphs: [
      `You have already applied to ${ctx.programme} with this address, and your application is being reviewed. There is nothing more to do: we will email you when it is decided.`,
    ],
    note: 'If you did not apply again, ignore this email.',
    footer: applicantFooter(ctx),
  });
}

/** Someone applied with the address of an existing affiliate: a login link instead. */
export function memberExistsEmail(ctx: AffiliateEmailContext, input: { url: string }): RenderedEmail {
  return compose(ctx, {
    subject: `You are already in ${ctx.programme}`,
    paragraphs: [
      `This address already belongs to an affiliate of ${ctx.programme}, so there is no need to apply. Log in to your portal to find your links and earnings.`,
    ],
    action: { label: 'Log in to your portal', url: input.url },
    note: LINK_NOTE,
    footer: memberFooter(ctx),
  });
}

/** The application was approved: welcome, and a login link (a login email: no unsubscribe). */
export function applicationApprovedEmail(ctx: AffiliateEmailContext, input: { url: string; loginPageUrl?: string }): RenderedEmail {
  return compose(ctx, {
    subject: `Welcome to ${ctx.programme}`,
    paragraphs: [
      `Your application to ${ctx.programme} is approved: welcome aboard!`,
      'Log in to your portal to get your referral link, create links for your posts and follow your referrals and earnings.',
    ],
    action: { label: 'Log in to your portal', url: input.url },
    note: input.loginPageUrl
      ? `The link works once, for 15 minutes. Later, ask for a new one on your portal's login page: ${input.loginPageUrl}`
      : 'The link works once, for 15 minutes. When it has expired, ask for a new one on the login page.',
    footer: memberFooter(ctx),
  });
}

/** The application was not accepted. Neutral, and never the reason (it stays internal). */
export function applicationRejectedEmail(ctx: AffiliateEmailContext, input: { unsubscribeUrl?: string | undefined }): RenderedEmail {
  return compose(ctx, {
    subject: `Your application to ${ctx.programme}`,
    paragraphs: [
      `Thank you for your interest in ${ctx.programme}. We have reviewed your application and are not able to accept it at this time.`,
      'We appreciate the time you took to apply.',
    ],
    footer: applicantFooter(ctx),
    unsubscribeUrl: input.unsubscribeUrl,
  });
}

/** A login link asked for on the portal's login page. */
export function portalLoginEmail(ctx: AffiliateEmailContext, input: { url: string }): RenderedEmail {
  return compose(ctx, {
    subject: `Your login link for ${ctx.programme}`,
    paragraphs: [`Someone (hopefully you) asked to log in to your ${ctx.programme} affiliate portal.`],
    action: { label: 'Log in to your portal', url: input.url },
    note: LINK_NOTE,
    footer: memberFooter(ctx),
  });
}

export const money = (cents: number, currency: string) => `${formatCents(cents)} ${currency}`;

/** A payout was marked paid: how much, and where it went. */
export function payoutSentEmail(
  ctx: AffiliateEmailContext,
  input: { amount: number; currency: string; destination: string | null; reference?: string | null; unsubscribeUrl?: string | undefined },
): RenderedEmail {
  const value = money(input.amount, input.currency);
  return compose(ctx, {
    subject: `Your payout of ${value} is on its way`,
    paragraphs: [
      input.destination ? `We have sent you ${value}, to ${input.destination}.` : `We have sent you ${value}.`,
      ...(input.reference ? [`Its reference: ${input.reference}.`] : []),
      'Depending on the payment method, it may take a few days to reach you. Thank you for promoting us!',
    ],
    footer: memberFooter(ctx),
    unsubscribeUrl: input.unsubscribeUrl,
  });
}

/** Someone signed up through the affiliate's link (optional). The person is never named. */
export function newReferralEmail(
  ctx: AffiliateEmailContext,
  input: { memberCode: string; unsubscribeUrl?: string | undefined },
): RenderedEmail {
  return compose(ctx, {
    subject: 'Someone signed up through your link',
    paragraphs: [
      `Good news: someone has just signed up through your ${ctx.programme} link (code ${input.memberCode}).`,
      'You will earn your reward when they become a paying customer; your portal shows where each referral stands.',
    ],
    footer: memberFooter(ctx),
    unsubscribeUrl: input.unsubscribeUrl,
  });
}

export interface MonthlyFigures {
  /** `YYYY-MM`. */
  month: string;
  clicks: number;
  referrals: number;
  conversions: number;
  /** Earned in the month, per currency and kind (cents). */
  earnings: { currency: string; commission: number; credit: number }[];
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** `2026-10` -> `October 2026`. */
export function monthName(month: string): string {
  const [year, m] = month.split('-');
  return `${MONTHS[Number(m) - 1] ?? m} ${year}`;
}

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

/** Last month's clicks, referrals, conversions and earnings (optional). */
export function monthlySummaryEmail(
  ctx: AffiliateEmailContext,
  input: MonthlyFigures & { unsubscribeUrl?: string | undefined },
): RenderedEmail {
  const earned = input.earnings.flatMap((e) => [
    ...(e.commission !== 0 ? [`${money(e.commission, e.currency)} in commission`] : []),
    ...(e.credit !== 0 ? [`${money(e.credit, e.currency)} in credit`] : []),
  ]);
  return compose(ctx, {
    subject: `Your ${monthName(input.month)} with ${ctx.programme}`,
    paragraphs: [
      `Here is how your ${ctx.programme} links did in ${monthName(input.month)}:`,
      `${plural(input.clicks, 'click', 'clicks')}, ${plural(input.referrals, 'referral', 'referrals')} and ${plural(input.conversions, 'conversion', 'conversions')}.`,
      earned.length > 0 ? `You earned ${earned.join(' and ')}.` : 'No earnings this month yet.',
      'Your portal has the details, link by link.',
    ],
    footer: memberFooter(ctx),
    unsubscribeUrl: input.unsubscribeUrl,
  });
}

/**
 * Every template rendered with sample data, for the dashboard's previews: the account's programme and
 * sender name, and links that lead nowhere (`<base>/…/example`).
 */
export function sampleAffiliateEmails(ctx: {
  programme: string;
  senderName: string;
  baseUrl: string;
}): (AffiliateTemplateInfo & RenderedEmail)[] {
  const c: AffiliateEmailContext = { programme: ctx.programme, senderName: ctx.senderName, firstName: 'Alex' };
  const login = `${ctx.baseUrl}/portal/example/login/#token=example`;
  const unsubscribeUrl = `${ctx.baseUrl}/unsubscribe/example/`;
  const month = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() - 1, 1)).toISOString().slice(0, 7);
  const rendered: Record<AffiliateTemplate, RenderedEmail> = {
    'application-confirm': applicationConfirmEmail({ ...c, firstName: null }, { url: `${ctx.baseUrl}/join/confirm/example/` }),
    'application-exists': applicationExistsEmail({ ...c, firstName: null }),
    'member-exists': memberExistsEmail(c, { url: login }),
    'application-approved': applicationApprovedEmail(c, { url: login, loginPageUrl: `${ctx.baseUrl}/portal/example/login/` }),
    'application-rejected': applicationRejectedEmail(c, { unsubscribeUrl }),
    'portal-login': portalLoginEmail(c, { url: login }),
    'payout-sent': payoutSentEmail(c, {
      amount: 12550,
      currency: 'USD',
      destination: 'alex@example.com',
      reference: 'PAY-1042',
      unsubscribeUrl,
    }),
    'new-referral': newReferralEmail(c, { memberCode: 'ALEX10', unsubscribeUrl }),
    'monthly-summary': monthlySummaryEmail(c, {
      month,
      clicks: 420,
      referrals: 12,
      conversions: 3,
      earnings: [{ currency: 'USD', commission: 8700, credit: 0 }],
      unsubscribeUrl,
    }),
  };
  return AFFILIATE_TEMPLATES.map((t) => ({ ...t, ...rendered[t.name] }));
}
