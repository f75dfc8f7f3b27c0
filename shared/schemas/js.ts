// Bodies of the public /js/v1/ endpoints (the browser script's calls).
import * as v from 'valibot';
import { REQUIRED, text } from './fields';
import { createReferralBody } from './referral';
import { optionalSub } from './links';

/**
 * A link click. `code` is any string up to 100 characters: a code that is not a member's counts nothing
 * and answers like one that is, so codes cannot be probed. `visitor_id` is the script's random id for the
 * browser (kept in its cookie); without one the caller's IP and user agent stand in for it.
 */
export const clickBody = v.object(
  {
    code: text(100),
    visitor_id: v.optional(text(64, { pattern: /^[A-Za-z0-9_-]+$/, patternMessage: 'Use only letters, digits, "-" and "_".' })),
    // The sub-id of the link (`?sub=`), counted in the member's sub-id report buckets.
    sub: optionalSub,
  },
  REQUIRED,
);

/** A `js` referral: the same fields and rules as POST /v1/referrals/. */
export const jsReferralBody = createReferralBody;

export type ClickInput = v.InferOutput<typeof clickBody>;
