// Identifiers. Referral, member and reward ids are UUIDv7 without dashes (32 lowercase hex chars,
// time-ordered, monotonic within a container), so sort keys list newest first with no extra
// attribute. Campaign and account ids are random hex; generated member codes are 8 chars of digits
// and capital letters.
import { randomBytes, randomInt } from 'node:crypto';
import { v7 } from 'uuid';

export function newEntityId(): string {
  return v7().replace(/-/g, '');
}

/** Creation time (ms) encoded in a UUIDv7 hex id. */
export function entityIdTime(id: string): number {
  return parseInt(id.slice(0, 12), 16);
}

export function isEntityId(value: string): boolean {
  return /^[0-9a-f]{32}$/.test(value);
}

export function newCampaignId(): string {
  return randomBytes(4).toString('hex');
}

export function isCampaignId(value: string): boolean {
  return /^[0-9a-f]{8}$/.test(value);
}

export function newAccountId(): string {
  return randomBytes(8).toString('hex');
}

export function isAccountId(value: string): boolean {
  return /^[0-9a-f]{16}$/.test(value);
}

/**
 * What a member code can be: ASCII letters, digits, "-" and "_", at most 30 characters. Codes compare
 * without case, so anything else must be refused BEFORE a code is lower-cased into a key: Unicode case
 * mapping folds some non-ASCII letters onto ASCII ones (the Kelvin sign U+212A lower-cases to "k"), and
 * "KELVIN" spelled with it would otherwise find the member whose code is KELVIN.
 */
export const MEMBER_CODE_PATTERN = /^[A-Za-z0-9_-]+$/;
export const MEMBER_CODE_MAX = 30;

export function isMemberCode(value: string): boolean {
  return value.length <= MEMBER_CODE_MAX && MEMBER_CODE_PATTERN.test(value);
}

const CODE_ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ';

export function newMemberCode(): string {
  let code = '';
  for (let i = 0; i < 8; i++) code += CODE_ALPHABET[randomInt(CODE_ALPHABET.length)];
  return code;
}
