// Paddle Classic `p_signature`: RSA PKCS#1 v1.5 over SHA-1 of the PHP-serialized, key-sorted alert
// fields (every field except `p_signature`, values exactly as decoded from the form body).
// See docs/design/providers.md "Signatures". No dependency: node:crypto does RSA/SHA-1 and
// the serialization of a flat string map is a dozen lines.
import { createSign, createVerify, type KeyObject } from 'node:crypto';

export type AlertFields = Record<string, string>;

/**
 * PHP `serialize()` of a flat string map in key order: `a:<n>:{s:<bytes>:"<key>";s:<bytes>:"<value>";...}`.
 * Lengths are UTF-8 byte lengths; text is not escaped (the length delimits it).
 */
export function phpSerialize(fields: AlertFields): string {
  const entries = Object.keys(fields)
    .sort(byteOrder)
    .map((key) => `${phpString(key)}${phpString(fields[key] as string)}`);
  return `a:${entries.length}:{${entries.join('')}}`;
}

function phpString(text: string): string {
  return `s:${Buffer.byteLength(text, 'utf8')}:"${text}";`;
}

/** PHP `ksort` on string keys: byte order of the UTF-8 encoding. */
function byteOrder(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

/** The fields a signature covers: everything but `p_signature`. */
export function signedFields(fields: AlertFields): AlertFields {
  const { p_signature: _signature, ...rest } = fields;
  return rest;
}

/**
 * True only when `fields.p_signature` is a valid signature of the other fields under `publicKey`.
 * Never throws on bad input (missing or malformed signature, unusable key): that is simply `false`.
 */
export function verifyPaddleSignature(fields: AlertFields, publicKey: string | KeyObject): boolean {
  const signature = fields.p_signature;
  if (typeof signature !== 'string' || signature.length === 0) return false;
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(signature)) return false;
  try {
    const verifier = createVerify('sha1');
    verifier.update(phpSerialize(signedFields(fields)), 'utf8');
    return verifier.verify(publicKey, Buffer.from(signature, 'base64'));
  } catch {
    return false;
  }
}

/** Signs fields as Paddle does (the emulator and tests use it): returns the fields plus `p_signature`. */
export function signPaddleFields(fields: AlertFields, privateKey: string | KeyObject): AlertFields {
  const unsigned = signedFields(fields);
  const signer = createSign('sha1');
  signer.update(phpSerialize(unsigned), 'utf8');
  return { ...unsigned, p_signature: signer.sign(privateKey, 'base64') };
}
