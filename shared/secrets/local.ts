// The local key file implementation (`npm start`, the tests, the CLI against DynamoDB Local): AES-256-GCM
// with a random 96-bit IV and the account id as additional authenticated data, under a 32-byte key read
// from a file (created on first encryption, mode 0600). Stored form, base64url parts:
//   local:v1:<iv (12 bytes)>.<tag (16 bytes)>.<ciphertext>
// A value encrypted for one account does not decrypt for another (the AAD), and any change to the IV,
// the tag or the ciphertext fails the tag check.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { SecretDecryptionError, SecretsConfigError } from './errors';

export const LOCAL_PREFIX = 'local:v1:';
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const B64URL = /^[A-Za-z0-9_-]*$/;

const keys = new Map<string, Buffer>();

function readKey(file: string): Buffer | null {
  let key: Buffer;
  try {
    key = readFileSync(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new SecretsConfigError(`cannot read the secrets key file ${file}: ${(err as Error).message}`);
  }
  if (key.length !== KEY_BYTES)
    throw new SecretsConfigError(`the secrets key file ${file} must hold exactly ${KEY_BYTES} bytes (it holds ${key.length})`);
  return key;
}

/**
 * The key of `file`, created when missing (32 random bytes, mode 0600). Creation is atomic: the bytes are
 * written to a temporary file that is then hard-linked to the name, which fails if another process (a
 * second test worker, the CLI beside `npm start`) created it first; everyone then reads the one that won.
 */
function keyOf(file: string, create: boolean): Buffer {
  const known = keys.get(file);
  if (known) return known;
  let key = readKey(file);
  if (!key && create) {
    mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
    const tmp = `${file}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
    writeFileSync(tmp, randomBytes(KEY_BYTES), { mode: 0o600, flag: 'wx' });
    try {
      linkSync(tmp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    } finally {
      unlinkSync(tmp);
    }
    key = readKey(file);
  }
  if (!key) throw new SecretDecryptionError(`no secrets key file at ${file}: the secret was encrypted with a key file that is not here`);
  keys.set(file, key);
  return key;
}

export function localEncrypt(file: string, accountId: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', keyOf(file, true), iv);
  cipher.setAAD(Buffer.from(accountId, 'utf8'));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return `${LOCAL_PREFIX}${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${ciphertext.toString('base64url')}`;
}

export function localDecrypt(file: string, accountId: string, stored: string): string {
  const parts = stored.slice(LOCAL_PREFIX.length).split('.');
  if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) throw new SecretDecryptionError('malformed local secret');
  const [iv, tag, ciphertext] = parts.map((p) => Buffer.from(p, 'base64url')) as [Buffer, Buffer, Buffer];
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new SecretDecryptionError('malformed local secret');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(file, false), iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(Buffer.from(accountId, 'utf8'));
  decipher.setAuthTag(tag);
  try {
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString('utf8');
  } catch {
    // The tag does not match: another account's secret, a changed value, or another key file.
    throw new SecretDecryptionError(
      'the secret does not decrypt for this account with this key file (wrong account, altered value or another key)',
    );
  }
}

/**
 * A short public fingerprint of the key file's key (HMAC-SHA256 of a fixed label, 16 hex characters): the
 * same file gives the same value, another key another one, and it reveals nothing of the key. Null when
 * the file does not exist and `create` is false (nothing is created then).
 */
export function localKeyFingerprint(file: string, create: boolean): string | null {
  let key: Buffer;
  try {
    key = keyOf(file, create);
  } catch (err) {
    if (err instanceof SecretDecryptionError && !create) return null;
    throw err;
  }
  return createHmac('sha256', key).update('refloop secrets key fingerprint v1').digest('hex').slice(0, 16);
}

/** Forget the keys read (tests that change or remove the key file). */
export function forgetLocalKeys(): void {
  keys.clear();
}
