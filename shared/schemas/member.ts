// Member bodies. `campaign` and `subscription` are `{id}` references or null.
import * as v from 'valibot';
import type { ProviderId } from '../domain/models';
import { REQUIRED, boolean, email, nullableText, pythonType, reference, text } from './fields';
import { nullablePayoutEmail } from './payout-email';

export { MEMBER_CODE_PATTERN as CODE_PATTERN } from '../domain/ids';
import { MEMBER_CODE_MAX, MEMBER_CODE_PATTERN } from '../domain/ids';

// A blank id is refused here: downstream an empty campaign id would read as "no campaign" on create and
// be stored as campaign_id "" on update (after which every referral by that member lost its race: 503).
const campaignRef = reference(
  (id) => (typeof id === 'string' ? id.trim() || null : typeof id === 'number' ? String(id) : null),
  (id) => (typeof id === 'string' ? 'This field may not be blank.' : 'Not a valid string.'),
  { type: 'string', description: 'Campaign id.' },
);

/**
 * A provider id from input: Paddle Classic's integers (a string of digits is accepted too, as always), or
 * Paddle Billing's and Stripe's string ids (`sub_01h…`, `sub_1Mo…`: a lower-case prefix, `_`, letters and
 * digits). Anything else is null (the caller answers 400 or 404 as before).
 */
export function parseSubscriptionId(id: unknown): ProviderId | null {
  if (typeof id === 'string' && PROVIDER_STRING_ID.test(id.trim())) return id.trim();
  const n = typeof id === 'string' && /^\s*\d{1,15}\s*$/.test(id) ? Number(id) : id;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** A string provider id (Paddle Billing `sub_…`/`txn_…`/`pri_…`, Stripe `sub_…`/`in_…`/`price_…`). */
export const PROVIDER_STRING_ID = /^[a-z]{2,12}_[A-Za-z0-9]{1,120}$/;

// Only a scalar id is quoted back: String() of a JSON object can throw ({"toString": 1}) or overflow the
// stack (deeply nested arrays), which made such a body a 500.
const subscriptionRef = reference(parseSubscriptionId, (id) =>
  id !== null && typeof id === 'object'
    ? `Incorrect type. Expected pk value, received ${pythonType(id)}.`
    : `Subscription ${String(id)} could not be found`,
  { type: ['integer', 'string'], description: 'The payment provider\'s subscription id: an integer for Paddle Classic (a string of digits is accepted too), a string (`sub_…`) for Paddle Billing and Stripe.' },
);

const fields = {
  identifier: text(100),
  email,
  first_name: nullableText(50),
  last_name: nullableText(50),
  code: text(MEMBER_CODE_MAX, { pattern: MEMBER_CODE_PATTERN, patternMessage: 'Use only letters, digits, "-" and "_".' }),
  campaign: campaignRef,
  subscription: subscriptionRef,
  // Additive: the member asked not to be emailed (no conversion or reward notices).
  email_opt_out: boolean,
  // Additive (docs/design/money.md "Payouts"): where the member's payouts are sent (PayPal or Wise by email); a payout is due only with one.
  payout_email: nullablePayoutEmail,
};

export const createMemberBody = v.object(
  {
    identifier: fields.identifier,
    email: fields.email,
    first_name: v.optional(fields.first_name, null),
    last_name: v.optional(fields.last_name, null),
    code: v.optional(fields.code),
    campaign: v.optional(fields.campaign, null),
    subscription: v.optional(fields.subscription, null),
    email_opt_out: v.optional(fields.email_opt_out, false),
    payout_email: v.optional(fields.payout_email, null),
  },
  REQUIRED,
);

export const updateMemberBody = v.partial(v.object(fields, REQUIRED));

export type CreateMemberInput = v.InferOutput<typeof createMemberBody>;
export type UpdateMemberInput = v.InferOutput<typeof updateMemberBody>;
