// Conversion body: `checkout_id` (string, max 100) or `subscription_id` (the provider's id: an integer or
// a string of digits for Paddle Classic, a string for the others: `sub_…` for Paddle Billing and Stripe,
// Chargebee's without a prefix; shared/schemas/subscription-id.ts).
// When both are given, subscription_id is used: it names the subscription directly (no order lookup).
import * as v from 'valibot';
import { ValidationError } from '../domain/errors';
import type { ProviderId } from '../domain/models';
import { field, text } from './fields';
import { parseSubscriptionId } from './subscription-id';

const checkoutText = text(100);

const checkoutId = field<string | null>(
  (value) => {
    if (value === null) return { ok: true, value: null };
    const r = v.safeParse(checkoutText, value, { abortPipeEarly: true });
    return r.success ? { ok: true, value: r.output } : { ok: false, message: r.issues[0]?.message ?? 'Not a valid string.' };
  },
  {
    type: ['string', 'null'],
    maxLength: 100,
    description:
      "The checkout id: Paddle Classic's checkout id or Paddle Billing's transaction id (`txn_…`) as Paddle.js reports it, Stripe's Checkout Session id (`cs_…`), or Chargebee's hosted page id.",
  },
);

const subscriptionId = field<ProviderId | null>(
  (value) => {
    if (value === null) return { ok: true, value: null };
    const id = parseSubscriptionId(value);
    return id === null ? { ok: false, message: 'A valid integer is required.' } : { ok: true, value: id };
  },
  {
    type: ['integer', 'string', 'null'],
    description:
      "The provider's subscription id: an integer for Paddle Classic (a string of digits is accepted too), a string for the others (`sub_…` for Paddle Billing and Stripe, Chargebee's without a prefix). Used when both are given.",
  },
);

export const conversionBody = v.object({
  checkout_id: v.optional(checkoutId),
  subscription_id: v.optional(subscriptionId),
});

export type ConversionTarget = { subscriptionId: ProviderId } | { checkoutId: string };

/** The one thing to convert with; 400 when neither is given. */
export function conversionTarget(body: v.InferOutput<typeof conversionBody>): ConversionTarget {
  if (body.subscription_id != null) return { subscriptionId: body.subscription_id };
  if (body.checkout_id != null) return { checkoutId: body.checkout_id };
  throw new ValidationError({ non_field_errors: ['Provide checkout_id or subscription_id.'] });
}
