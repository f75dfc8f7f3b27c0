// The AWS KMS implementation: KMS Encrypt / Decrypt with the customer-managed key SECRETS_KMS_KEY_ID and
// the encryption context { account_id: <account> } (the key's IAM grants require that key in the context,
// so a function can only decrypt a secret for the account it names, and CloudTrail shows which account's
// secret was read). Secrets are small (under 4 KB), so they are encrypted directly, without data keys.
// Stored form: `kms:v1:<base64 CiphertextBlob>` (the blob names the key and its rotated material).
// One client per container, created on first use and traced like the DynamoDB and SQS clients
// (shared/store/client.ts). KMS_ENDPOINT points it at a local KMS (the tests' emulator,
// infra/local/kms-emulator.ts), which gets dummy credentials; in AWS the function's role signs.
//
// The KMS client is not bundled (infra/cloud/function.ts: `externalModules`): it is loaded on first use
// from the Lambda runtime's AWS SDK. Bundled, it cost the functions that decrypt about 31 KB (the
// conversion route went over the 400 KB budget: BENCHMARKS.md); loaded lazily, a container pays for it
// once, on its first cold read of a secret (then cached 60 s), and never at init. Encrypt and Decrypt are
// among KMS's oldest, most stable operations, so the runtime's SDK version is safe for them; locally and in
// the tests the pinned @aws-sdk/client-kms of package.json is the one loaded.
import type { KMSClient } from '@aws-sdk/client-kms';
import { config } from '../config';
import { isLocalEndpoint } from '../store/client';
import { traceClient } from '../tracing';
import { SecretDecryptionError } from './errors';

export const KMS_PREFIX = 'kms:v1:';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

let client: KMSClient | undefined;
let sdk: typeof import('@aws-sdk/client-kms') | undefined;

async function kmsSdk(): Promise<typeof import('@aws-sdk/client-kms')> {
  sdk ??= await import('@aws-sdk/client-kms');
  return sdk;
}

export async function kmsClient(): Promise<KMSClient> {
  const { KMSClient } = await kmsSdk();
  if (!client) {
    const { region, secrets } = config();
    const endpoint = secrets.kmsEndpoint;
    // Traced like the other clients (an X-Ray subsegment per call: operation and status, never the input).
    client = traceClient(
      new KMSClient({
        region,
        ...(endpoint ? { endpoint } : {}),
        ...(endpoint && isLocalEndpoint(endpoint) ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
        maxAttempts: 3,
      }),
    );
  }
  return client;
}

export function resetKmsClient(): void {
  client?.destroy();
  client = undefined;
}

const context = (accountId: string) => ({ account_id: accountId });

export async function kmsEncrypt(keyId: string, accountId: string, plaintext: string): Promise<string> {
  const { EncryptCommand } = await kmsSdk();
  const out = await (await kmsClient()).send(
    new EncryptCommand({ KeyId: keyId, Plaintext: Buffer.from(plaintext, 'utf8'), EncryptionContext: context(accountId) }),
  );
  if (!out.CiphertextBlob) throw new Error('KMS Encrypt answered without a CiphertextBlob');
  return `${KMS_PREFIX}${Buffer.from(out.CiphertextBlob).toString('base64')}`;
}

/** Errors KMS answers for a blob that is not ours to read this way: wrong context, altered blob, other key. */
const REFUSALS = new Set(['InvalidCiphertextException', 'IncorrectKeyException']);

export async function kmsDecrypt(keyId: string, accountId: string, stored: string): Promise<string> {
  const encoded = stored.slice(KMS_PREFIX.length);
  if (!BASE64.test(encoded)) throw new SecretDecryptionError('malformed KMS secret');
  try {
    // KeyId too (AWS's advice): KMS refuses a blob made under any other key.
    const { DecryptCommand } = await kmsSdk();
    const out = await (await kmsClient()).send(
      new DecryptCommand({ KeyId: keyId, CiphertextBlob: Buffer.from(encoded, 'base64'), EncryptionContext: context(accountId) }),
    );
    if (!out.Plaintext) throw new Error('KMS Decrypt answered without a Plaintext');
    return Buffer.from(out.Plaintext).toString('utf8');
  } catch (err) {
    const name = (err as { name?: string }).name ?? '';
    if (REFUSALS.has(name))
      throw new SecretDecryptionError(
        `KMS refused to decrypt the secret for this account (${name}: wrong account, altered value or another key)`,
      );
    throw err;
  }
}
