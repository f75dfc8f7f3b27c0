// The two member emails, in plain text and HTML, personalised with the member's first name (the
// specification: "first_name ... used to personalise automated emails"). Pure: no I/O.
// The referred user is never named (their identifier is the app's internal id, and their email is
// theirs): the member learns that a referral converted and what they earned.
import { formatCents } from '../domain/money';
import type { Referral, Reward } from '../domain/models';

export interface RenderedEmail {
  subject: string;
  text: string;
  html: string;
}

export interface TemplateInput {
  firstName: string | null;
  memberCode: string;
  senderName: string;
  referral: Referral;
  /** The member's one-click unsubscribe link (shared/email/unsubscribe.ts), shown under the footer. */
  unsubscribeUrl?: string;
}

export const escapeHtml = (s: string) =>
  s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string);

const greeting = (firstName: string | null) => (firstName ? `Hi ${firstName},` : 'Hi there,');

function compose(subject: string, input: TemplateInput, paragraphs: string[]): RenderedEmail {
  const footer = `You receive this email because you take part in the ${input.senderName} referral programme with the code ${input.memberCode}.`;
  const unsubscribe = input.unsubscribeUrl ? [`Unsubscribe from these emails: ${input.unsubscribeUrl}`, ''] : [];
  const text = [
    greeting(input.firstName),
    '',
    ...paragraphs.flatMap((p) => [p, '']),
    `-- ${input.senderName}`,
    '',
    footer,
    '',
    ...unsubscribe,
  ].join('\n');
  const html = [
    '<!doctype html>',
    `<html><head><meta charset="utf-8"><title>${escapeHtml(subject)}</title></head>`,
    '<body style="font-family: sans-serif; line-height: 1.5">',
    `<p>${escapeHtml(greeting(input.firstName))}</p>`,
    ...paragraphs.map((p) => `<p>${escapeHtml(p)}</p>`),
    `<p>&mdash; ${escapeHtml(input.senderName)}</p>`,
    `<p style="color: #777; font-size: 12px">${escapeHtml(footer)}</p>`,
    ...(input.unsubscribeUrl
      ? [`<p style="color: #777; font-size: 12px"><a href="${escapeHtml(input.unsubscribeUrl)}">Unsubscribe from these emails</a></p>`]
      : []),
    '</body></html>',
    '',
  ].join('\n');
  return { subject, text, html };
}

const amount = (cents: number, currency: string) => `${formatCents(cents)} ${currency}`;

/** Sent once per converted referral. */
export function conversionEmail(input: TemplateInput): RenderedEmail {
  const subject = input.firstName ? `${input.firstName}, your referral just subscribed` : 'Your referral just subscribed';
  const r = input.referral;
  const terms =
    r.reward_type === 'credit'
      ? `Your reward for it is a credit of ${amount(r.reward_amount, r.currency ?? 'USD')} on your own subscription; we will email you when it is earned.`
      : r.reward_type === 'commission'
        ? `It earns you a commission of ${amount(r.reward_amount, r.currency ?? 'USD')} per qualifying payment; we will email you for each one.`
        : null;
  return compose(subject, input, [
    `Good news: someone you referred with your code ${input.memberCode} has just started a paid subscription.`,
    ...(terms ? [terms] : []),
    'Thank you for spreading the word!',
  ]);
}

/** Sent once per reward earned. */
export function rewardEmail(input: TemplateInput, reward: Reward): RenderedEmail {
  const value = amount(reward.amount, reward.currency);
  const subject = input.firstName ? `${input.firstName}, you earned a ${value} ${reward.type}` : `You earned a ${value} ${reward.type}`;
  const detail =
    reward.type === 'credit'
      ? `You earned a credit of ${value} for a referral. It is taken off your next bill (once a subscription is attached to your membership).`
      : `You earned a commission of ${value} for a payment by someone you referred.`;
  return compose(subject, input, [detail, 'Thank you for spreading the word!']);
}
