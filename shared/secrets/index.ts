// Secrets at rest: provider secrets (Paddle Classic auth code, Paddle Billing API key and webhook secret,
// Stripe secret key and webhook secret) and outgoing webhook signing secrets are encrypted by the
// application before they are written, so a table export or a backup holds none of them in plain text.
//
//   encryptSecret(accountId, plaintext) -> stored string     decryptSecret(accountId, stored) -> plaintext
//
// The account id is bound to every value (KMS encryption context / AES-GCM additional data): a value
// copied into another account's item does not decrypt. Two implementations, by configuration:
// - SECRETS_KMS_KEY_ID set (the stack sets it, a key ARN, only on the functions allowed the key):
//   AWS KMS, stored as `kms:v1:<base64 ciphertext blob>` (./kms.ts);
// - otherwise a local key file (`npm start`, tests, the CLI against DynamoDB Local): AES-256-GCM,
//   stored as `local:v1:<iv>.<tag>.<ciphertext>` (./local.ts). The file is SECRETS_KEY_FILE, else
//   `<DATA_DIR or .data>/secrets.key`, created on first encryption (32 random bytes, mode 0600).
// Refused, loudly (SecretsConfigError), instead of quietly using a local file:
// - any encryption or decryption in Lambda (AWS_LAMBDA_FUNCTION_NAME) without SECRETS_KMS_KEY_ID;
// - encrypting with a local key file for a table in AWS (no local DYNAMODB_ENDPOINT) unless
//   SECRETS_KEY_FILE names the file on purpose: the CLI run with operator credentials would otherwise
//   write values no function could read (it needs SECRETS_KMS_KEY_ID there).
//
// Legacy values: a stored value in neither form (it does not start with `kms:` or `local:`) is a secret
// written in plain text before encryption existed. decryptSecret returns it as it is; the store module
// that read it encrypts it the next time it writes that item (every write goes through encryptSecret),
// so legacy values disappear as secrets are written again. A value that starts with `kms:` or `local:`
// but does not decrypt (another account's, altered, truncated, another key) throws SecretDecryptionError.
//
// A value that does not decrypt is a SecretDecryptionError: a 503 naming the account to an API caller (the
// contract's shape), an ERROR line and the SecretDecryptionFailures metric (alarmed). Which key the table's
// secrets are under is recorded in the table (./fingerprint.ts), so the admin CLI refuses to write a secret
// under another key than the service's (run without its DATA_DIR, say) instead of writing one it cannot read.
//
// Decrypted values are cached in the container for PROVIDER_CACHE_TTL_SECONDS (60 s), like the provider
// settings, keyed by the account and the stored value itself: a warm request makes no KMS call, and a
// rotated secret (a new stored value) is never answered from the cache.
import { config } from '../config';
import { isLocalEndpoint } from '../store/client';
import { errorFields, log } from '../log';
import { countMetric } from '../metrics';
import { SecretDecryptionError, SecretsConfigError } from './errors';
import { KMS_PREFIX, kmsDecrypt, kmsEncrypt, resetKmsClient } from './kms';
import { forgetLocalKeys, LOCAL_PREFIX, localDecrypt, localEncrypt } from './local';

export { SecretDecryptionError, SecretsConfigError, SecretsKeyMismatchError } from './errors';
export { KMS_PREFIX } from './kms';
export { LOCAL_PREFIX } from './local';

export type SecretForm = 'kms' | 'local' | 'legacy';

/** Which form a stored value is in (legacy: plaintext written before encryption existed). */
export function secretForm(stored: string): SecretForm {
  if (stored.startsWith('kms:')) return 'kms';
  if (stored.startsWith('local:')) return 'local';
  return 'legacy';
}

function lambdaGuard(): void {
  const { secrets } = config();
  if (secrets.inLambda && !secrets.kmsKeyId) {
    throw new SecretsConfigError(
      'SECRETS_KMS_KEY_ID is not set on this Lambda function: it may not encrypt or decrypt provider or webhook secrets (the stack sets the key ARN only on the functions allowed it)',
    );
  }
}

export async function encryptSecret(accountId: string, plaintext: string): Promise<string> {
  lambdaGuard();
  const { secrets, dynamodbEndpoint } = config();
  if (secrets.kmsKeyId) return kmsEncrypt(secrets.kmsKeyId, accountId, plaintext);
  const localTable = dynamodbEndpoint !== undefined && isLocalEndpoint(dynamodbEndpoint);
  if (!localTable && !secrets.keyFileExplicit) {
    throw new SecretsConfigError(
      "SECRETS_KMS_KEY_ID is not set and the table is in AWS: refusing to encrypt with a local key file that the service could not read (set SECRETS_KMS_KEY_ID to the stack's secrets key ARN; SECRETS_KEY_FILE to use a local key file on purpose)",
    );
  }
  // A Lambda bundle (infra/cloud/bundling.ts LAMBDA_DEFINE) leaves ./local.ts out: a function never uses a
  // local key file (lambdaGuard). Tested in if/else at each use so that esbuild drops the dead branch.
  if (!process.env.REFLOOP_LAMBDA_BUNDLE) return localEncrypt(secrets.keyFile, accountId, plaintext);
  throw new SecretsConfigError('a Lambda bundle has no local key file (infra/cloud/bundling.ts): set SECRETS_KMS_KEY_ID');
}

const cache = new Map<string, { plaintext: string; until: number }>();

export async function decryptSecret(accountId: string, stored: string): Promise<string> {
  lambdaGuard();
  const form = secretForm(stored);
  if (form === 'legacy') return stored;
  const cacheKey = `${accountId}\u0000${stored}`;
  const hit = cache.get(cacheKey);
  if (hit && hit.until > Date.now()) return hit.plaintext;
  const { secrets, providerCacheTtlSeconds } = config();
  let plaintext: string;
  try {
    if (form === 'kms') {
      if (!stored.startsWith(KMS_PREFIX)) throw new SecretDecryptionError('unknown version of a KMS secret');
      if (!secrets.kmsKeyId) throw new SecretsConfigError('SECRETS_KMS_KEY_ID is not set: cannot decrypt a KMS-encrypted secret');
      plaintext = await kmsDecrypt(secrets.kmsKeyId, accountId, stored);
    } else {
      if (!stored.startsWith(LOCAL_PREFIX)) throw new SecretDecryptionError('unknown version of a local secret');
      // Never in Lambda, and left out of a Lambda bundle (see encryptSecret).
      if (!process.env.REFLOOP_LAMBDA_BUNDLE && !secrets.inLambda) plaintext = localDecrypt(secrets.keyFile, accountId, stored);
      else
        throw new SecretsConfigError('a secret encrypted with a local key file cannot be read in Lambda: write it again with the KMS key');
    }
  } catch (err) {
    if (!(err instanceof SecretDecryptionError)) throw err;
    // The account's secret is unreadable until an operator sets it again: a 503 naming the account to the
    // caller, an ERROR line and the SecretDecryptionFailures metric (its alarm pages the operator).
    const key = form === 'kms' ? `KMS key ${secrets.kmsKeyId ?? '(unset)'}` : `key file ${secrets.keyFile}`;
    log('error', 'stored secret does not decrypt', { account_id: accountId, form, key, ...errorFields(err) });
    countMetric('SecretDecryptionFailures');
    throw new SecretDecryptionError(err.reason, accountId);
  }
  if (providerCacheTtlSeconds > 0) {
    if (cache.size > 1000) cache.clear();
    cache.set(cacheKey, { plaintext, until: Date.now() + providerCacheTtlSeconds * 1000 });
  }
  return plaintext;
}

/** Empties the container's cache of decrypted values (tests; clearProviderCache calls it). */
export function clearSecretCache(): void {
  cache.clear();
}

/** Forget everything (tests and the local runtime after changing the environment): cache, keys, client. */
export function resetSecrets(): void {
  cache.clear();
  if (!process.env.REFLOOP_LAMBDA_BUNDLE) forgetLocalKeys();
  resetKmsClient();
}
