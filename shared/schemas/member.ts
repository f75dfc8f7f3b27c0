// Member bodies. `campaign` and `subscription` are `{id}` references or null.
import * as v from 'valibot';
import { REQUIRED, boolean, email, field, nullableText, pythonType, reference, text } from './fields';
import { nullablePayoutEmail } from './payout-email';
import { PAYOUT_METHODS, type PayoutMethod } from '../domain/payout-methods';

export { MEMBER_CODE_PATTERN as CODE_PATTERN } from '../domain/ids';
import { MEMBER_CODE_MAX, MEMBER_CODE_PATTERN } from '../domain/ids';

// A blank id is refused here: downstream an empty campaign id would read as "no campaign" on create and
// be stored as campaign_id "" on update (after which every referral by that member lost its race: 503).
const campaignRef = reference(
  (id) => (typeof id === 'string' ? id.trim() || null : typeof id === 'number' ? String(id) : null),
  (id) => (typeof id === 'string' ? 'This field may not be blank.' : 'Not a valid string.'),
  { type: 'string', description: 'Campaign id.' },
);

// parseSubscriptionId lives in ./subscription-id.ts (no schema in it: the conversion body reads it without
// carrying the member schemas); re-exported here for its other callers.
export { parseSubscriptionId, PROVIDER_STRING_ID } from './subscription-id';
import { parseSubscriptionId } from './subscription-id';

// Only a scalar id is quoted back: String() of a JSON object can throw ({"toString": 1}) or overflow the
// stack (deeply nested arrays), which made such a body a 500.
const subscriptionRef = reference(
  parseSubscriptionId,
  (id) =>
    id !== null && typeof id === 'object'
      ? `Incorrect type. Expected pk value, received ${pythonType(id)}.`
      : `Subscription ${String(id)} could not be found`,
  {
    type: ['integer', 'string'],
    description:
      "The payment provider's subscription id: an integer for Paddle Classic (a string of digits is accepted too), a string (`sub_…`) for Paddle Billing and Stripe.",
  },
);

/** A member's payout method: one of the rails, or null (the file rail); the rail must be connected (checked on write). */
export const nullablePayoutMethod = field<PayoutMethod | null>(
  (value) => {
    if (value === null) return { ok: true, value: null };
    if (typeof value === 'string' && (PAYOUT_METHODS as readonly string[]).includes(value))
      return { ok: true, value: value as PayoutMethod };
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean')
      return { ok: false, message: 'Not a valid string.' };
    return { ok: false, message: `"${String(value).slice(0, 40)}" is not a valid choice.` };
  },
  {
    type: ['string', 'null'],
    enum: [...PAYOUT_METHODS, null],
    description:
      "Where the member's payouts go: `paypal` or `wise` (to the payout email), `stripe` (the member's Stripe Express account, set up from the portal), or null (the payout file). Only a rail the account has connected.",
  },
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
  // Additive (docs/payouts.md "Members' methods"): update only; a create leaves it null.
  payout_method: nullablePayoutMethod,
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
