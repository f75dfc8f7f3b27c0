// UUIDv5 (RFC 9562 section 5.5: SHA-1 of namespace bytes + name, version and variant bits set) with
// node:crypto alone. Wise's transfer idempotency key, `customerTransactionId`, must be a UUID; Refloop's
// payout id `po_…` is not one, so the key is the UUIDv5 of `po_…` in Refloop's own namespace: the same
// payout always gives the same key, and a retried transfer creation answers the transfer Wise already has
// (docs/payouts/wise.md "Ids").
import { createHash } from 'node:crypto';

/** Refloop's namespace for Wise `customerTransactionId`s. Never change it: every key sent so far hangs on it. */
export const WISE_TRANSACTION_NAMESPACE = '6f1d7c2e-5a4b-4e8f-9c3d-2b1a0f9e8d7c';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

/** The name-based (SHA-1) UUID of `name` (UTF-8) in `namespace`, lower case. */
export function uuidV5(name: string, namespace: string): string {
  if (!isUuid(namespace)) throw new Error(`uuidV5: the namespace ${namespace} is not a UUID`);
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex');
  const hash = createHash('sha1').update(ns).update(Buffer.from(name, 'utf8')).digest();
  const b = hash.subarray(0, 16);
  b[6] = ((b[6] as number) & 0x0f) | 0x50;
  b[8] = ((b[8] as number) & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The Wise `customerTransactionId` of a payout `po_…`. */
export function customerTransactionId(payoutId: string): string {
  return uuidV5(payoutId, WISE_TRANSACTION_NAMESPACE);
}
