// What a Paddle Classic alert says about its referral, as the port's provider-agnostic hints
// (shared/billing/port.ts AttributionHints; the flows never read Classic's field names):
// - `subscription_created`: `passthrough` (or `custom_data`) is a JSON object with `refloop_referral_id`
//   (what the browser script's `refloop.passthrough()` returns; apps may merge their own keys into it);
// - `subscription_payment_succeeded`: `coupon`, a referred user's coupon code (double-sided campaigns).
import type { AttributionHints } from '../../billing/port';
import type { ParsedAlert } from './alerts';
import type { AlertFields } from './signature';

/** The key the browser script puts in Paddle's `passthrough`. */
export const PASSTHROUGH_KEY = 'refloop_referral_id';

/** `refloop_referral_id` of a JSON object string, or null (not JSON, not an object, no such key). */
export function referralIdFromJson(raw: string | undefined): string | null {
  if (!raw) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as Record<string, unknown>)[PASSTHROUGH_KEY];
  return typeof id === 'string' && id !== '' ? id : null;
}

export function alertHints(alert: Extract<ParsedAlert, { kind: 'subscription' }>, fields: AlertFields): AttributionHints {
  const hints: AttributionHints = {};
  if (alert.alert_name === 'subscription_created') {
    const referralId = referralIdFromJson(fields.passthrough) ?? referralIdFromJson(fields.custom_data);
    if (referralId !== null) hints.referralId = referralId;
  }
  if (alert.alert_name === 'subscription_payment_succeeded') {
    const code = fields.coupon?.trim();
    if (code) hints.couponCode = code;
  }
  return hints;
}
