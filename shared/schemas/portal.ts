// Bodies and queries of the member portal: the app's request for a portal session, the portal's session
// opening, the member's own settings, and the portal's lists.
import * as v from 'valibot';
import { REQUIRED, boolean, choice, email, field, text } from './fields';
import { nullablePayoutMethod } from './member';
import { nullablePayoutEmail } from './payout-email';
import { pageQuery } from './query';
import { SUB, SUB_MESSAGE } from '../domain/links';

/** A URL the portal's "back" link may point to: http(s) only, so never `javascript:`. */
const returnUrl = field<string | null>(
  (value) => {
    if (value === null) return { ok: true, value: null };
    if (typeof value !== 'string' || value.length > 2000) return { ok: false, message: 'Enter a valid URL.' };
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return { ok: false, message: 'Enter a valid URL.' };
    }
    if ((url.protocol !== 'https:' && url.protocol !== 'http:') || url.username || url.password)
      return { ok: false, message: 'Enter an http or https URL.' };
    return { ok: true, value: url.toString() };
  },
  {
    type: ['string', 'null'],
    format: 'uri',
    maxLength: 2000,
    description: 'Where the portal\'s "Back" link leads (your app\'s page), http(s) only.',
  },
);

export const createPortalSessionBody = v.object({ return_url: v.optional(returnUrl, null) }, REQUIRED);

export const openPortalSessionBody = v.object({ token: text(100) }, REQUIRED);

export const updatePortalMeBody = v.object(
  {
    payout_email: v.optional(nullablePayoutEmail),
    email_opt_out: v.optional(boolean),
    payout_method: v.optional(nullablePayoutMethod),
  },
  REQUIRED,
);

export const portalStatsQuery = v.object({
  interval: v.optional(choice(['day', 'week', 'month'] as const), 'month'),
  // Only the clicks, referrals and conversions through one of the member's sub-ids (docs/attribution.md).
  sub: v.optional(v.pipe(v.string(), v.regex(SUB, SUB_MESSAGE))),
});
export const portalListQuery = v.object(pageQuery);

/** POST /portal/v1/login-links/: the account (its slug or id, as in the portal's path) and the affiliate's email. */
export const portalLoginLinkBody = v.object(
  { account: text(100, { json: { description: "The account's slug (or id), as in `/portal/<account>/login/`." } }), email },
  REQUIRED,
);

/** POST /portal/v1/login-sessions/: the login link's token (from the URL fragment). */
export const portalLoginSessionBody = v.object({ token: text(100) }, REQUIRED);
