// Paddle Classic's public key (the one that verifies alerts), as the operator pastes or uploads it: a PEM
// RSA public key. A private key is refused outright (createPublicKey would derive the public half from it,
// and a secret the service must never hold would land in its table).
import { createPublicKey } from 'node:crypto';

export type PublicKeyResult = { ok: true; pem: string } | { ok: false; message: string };

export function parsePaddlePublicKey(pem: string): PublicKeyResult {
  if (/-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----/.test(pem)) {
    return {
      ok: false,
      message:
        'This is a PRIVATE key; give Paddle\'s public key (Developer Tools -> Public Key, "-----BEGIN PUBLIC KEY-----") and keep private keys out of Refloop.',
    };
  }
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'rsa') throw new Error(`a ${key.asymmetricKeyType ?? 'non-RSA'} key`);
    return { ok: true, pem: key.export({ type: 'spki', format: 'pem' }).toString() };
  } catch (err) {
    return {
      ok: false,
      message: `Not an RSA public key in PEM form (${err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err)}).`,
    };
  }
}
