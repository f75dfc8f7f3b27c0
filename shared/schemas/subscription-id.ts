// A provider subscription id from input, shared by the member and conversion bodies and the subscription
// route. A module without schemas: a function that reads an id does not carry the member body's schemas.
import type { ProviderId } from '../domain/models';

/**
 * A provider id from input: Paddle Classic's integers (a string of digits is accepted too, as always), or
 * Paddle Billing's and Stripe's string ids (`sub_01h…`, `sub_1Mo…`: a lower-case prefix, `_`, letters and
 * digits), or Chargebee's (`AzZTZgVlCqZ3S1Ab`: no prefix). Anything else is null (the caller answers 400 or
 * 404 as before).
 */
export function parseSubscriptionId(id: unknown): ProviderId | null {
  if (typeof id === 'string' && (PROVIDER_STRING_ID.test(id.trim()) || UNPREFIXED_STRING_ID.test(id.trim()))) return id.trim();
  const n = typeof id === 'string' && /^\s*\d{1,15}\s*$/.test(id) ? Number(id) : id;
  return typeof n === 'number' && Number.isSafeInteger(n) && n > 0 ? n : null;
}

/** A string provider id (Paddle Billing `sub_…`/`txn_…`/`pri_…`, Stripe `sub_…`/`in_…`/`price_…`). */
export const PROVIDER_STRING_ID = /^[a-z]{2,12}_[A-Za-z0-9]{1,120}$/;

/**
 * A string id without a prefix (Chargebee's: 16 or so letters and digits, `-` inside a merchant's own): 8 to
 * 50 characters, at least one letter (a string of digits stays a Classic integer).
 */
export const UNPREFIXED_STRING_ID = /^(?=[A-Za-z0-9-]*[A-Za-z])[A-Za-z0-9][A-Za-z0-9-]{7,49}$/;
