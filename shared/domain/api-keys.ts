// API keys.
// - Secret keys: 256 random bits behind `rfl_live_`, shown once, stored only as SHA-256. They work on
//   /v1/ only.
// - Publishable keys: 192 random bits behind `rfl_pub_`, one per account, meant to sit in web pages (the
//   browser script's `data-key`). They only open the public /js/v1/ endpoints (record a click, create a
//   `js` referral) and never /v1/; the lookup item is keyed by the SHA-256 like a secret key, and the
//   account item keeps the key itself so the operator can print it again (it is public by design).
import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'rfl_live_';
export const PUBLISHABLE_KEY_PREFIX = 'rfl_pub_';

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function generatePublishableKey(): string {
  return PUBLISHABLE_KEY_PREFIX + randomBytes(24).toString('base64url');
}

/** Hex SHA-256 of the key: the only form in which a key is ever stored as a lookup key. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

const KEY_CHARS = /^[A-Za-z0-9_-]+$/;

/** Cheap shape check before any lookup; a key outside it can never be valid. */
export function looksLikeApiKey(key: string): boolean {
  return key.startsWith(API_KEY_PREFIX) && key.length <= 128 && KEY_CHARS.test(key);
}

export function looksLikePublishableKey(key: string): boolean {
  return key.startsWith(PUBLISHABLE_KEY_PREFIX) && key.length <= 128 && KEY_CHARS.test(key);
}
