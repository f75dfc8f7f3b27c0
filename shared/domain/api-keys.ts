// Secret API keys: 256 random bits behind a recognisable prefix, shown once, stored only as SHA-256.
import { createHash, randomBytes } from 'node:crypto';

export const API_KEY_PREFIX = 'rfl_live_';

export function generateApiKey(): string {
  return API_KEY_PREFIX + randomBytes(32).toString('base64url');
}

/** Hex SHA-256 of the key: the only form in which a key is ever stored. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key, 'utf8').digest('hex');
}

/** Cheap shape check before any lookup; a key outside it can never be valid. */
export function looksLikeApiKey(key: string): boolean {
  return key.startsWith(API_KEY_PREFIX) && key.length <= 128 && /^[A-Za-z0-9_-]+$/.test(key);
}
