// One-click unsubscribe from member emails (RFC 8058). Every conversion and reward email carries
//   List-Unsubscribe: <https://<site>/unsubscribe/<token>/>
//   List-Unsubscribe-Post: List-Unsubscribe=One-Click
// and the same link in its body. A mail client's one-click POSTs `List-Unsubscribe=One-Click` to the URL;
// a person who follows the link gets a page (GET) whose button POSTs to the same URL. A GET never changes
// anything, so a link scanner that fetches every URL of a message unsubscribes nobody. The POST sets the
// member's `email_opt_out` (as the portal's switch and PATCH /v1/members/{id}/ do), without a login: the
// token is the credential (shared/store/unsubscribe.ts). The site is the configured one (PUBLIC_BASE_URL).
import { NotFoundError } from '../domain/errors';
import { getMemberOrThrow, updateMember } from '../store/members';
import { optOutApplicant, type UnsubscribeTarget } from '../store/unsubscribe';
import { escapeHtml } from './templates';

export const unsubscribeUrl = (baseUrl: string, token: string): string => `${baseUrl}/unsubscribe/${token}/`;

/** The RFC 8058 headers of a member email whose unsubscribe link is `url`. */
export const unsubscribeHeaders = (url: string): Record<string, string> => ({
  'List-Unsubscribe': `<${url}>`,
  'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click',
});

/** Sets the member's opt-out; false when the member was deleted meanwhile (nothing left to email). */
export async function optOut(target: UnsubscribeTarget): Promise<boolean> {
  // An applicant's link (no member): the address gets no more of the account's applicant emails.
  if (target.memberId === '' && target.email) {
    await optOutApplicant(target.accountId, target.email);
    return true;
  }
  try {
    const member = await getMemberOrThrow(target.accountId, target.memberId);
    if (!member.email_opt_out) await updateMember(target.accountId, target.memberId, { email_opt_out: true });
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

/**
 * The page's headers: nothing but the HTML may load (no script, no style from anywhere), the form posts
 * only to this site, no frame, no cache, and no Referer (the URL holds the token).
 */
export const UNSUBSCRIBE_PAGE_HEADERS: Record<string, string> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': "default-src 'none'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'Cache-Control': 'no-store',
  'X-Frame-Options': 'DENY',
};

function page(title: string, body: string[]): string {
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">',
    `<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title></head>`,
    '<body>',
    '<main>',
    `<h1>${escapeHtml(title)}</h1>`,
    ...body,
    '</main>',
    '</body></html>',
    '',
  ].join('\n');
}

const named = (programme: string) => (programme ? `the ${programme} referral programme` : 'this referral programme');

/** GET: asks for the click that unsubscribes (a scanner fetching the link changes nothing); `applicant`: no member yet. */
export const confirmPage = (programme: string, applicant = false): string =>
  page('Unsubscribe from referral emails', [
    applicant
      ? `<p>Stop the emails of ${escapeHtml(named(programme))} to this address about applications?</p>`
      : `<p>Stop the emails of ${escapeHtml(named(programme))} about your referrals and rewards? Your membership, your rewards and your referral link stay as they are.</p>`,
    '<form method="post"><input type="hidden" name="List-Unsubscribe" value="One-Click"><button type="submit">Unsubscribe</button></form>',
  ]);

/** POST answered: done (also when it was already done). */
export const donePage = (programme: string, applicant = false): string =>
  page('You are unsubscribed', [
    applicant
      ? `<p>This address will get no more emails about applications from ${escapeHtml(named(programme))}.</p>`
      : `<p>You will get no more emails from ${escapeHtml(named(programme))}. You can turn them back on in your member portal.</p>`,
  ]);

/** An unknown, expired or malformed link, or a member deleted since. */
export const UNKNOWN_LINK_PAGE = page('This unsubscribe link does not work', [
  '<p>It is unknown or has expired, or the membership was deleted. Nothing was changed. Use the link of a more recent email, or the member portal.</p>',
]);
