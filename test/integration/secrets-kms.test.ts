// shared/secrets' AWS KMS implementation with the real @aws-sdk/client-kms client against the KMS emulator
// (infra/local/kms-emulator.ts, KMS's JSON protocol on loopback; no SDK mock): round trips with the
// account id as encryption context, refusals (another account's context, an altered blob, another key),
// one Decrypt per cold read and none while cached, and the store's provider and webhook secrets written as
// kms:v1: values and read back through it (legacy plaintext items read as they are, encrypted when rewritten).
import { DecryptCommand, EncryptCommand, KMSClient } from '@aws-sdk/client-kms';
import { startKmsEmulator, type KmsEmulator } from '../../infra/local/kms-emulator';
import { resetConfig } from '../../shared/config';
import {
  clearSecretCache,
  decryptSecret,
  encryptSecret,
  KMS_PREFIX,
  resetSecrets,
  SecretDecryptionError,
  SecretsConfigError,
} from '../../shared/secrets';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from '../../shared/store/client';
import { getItem } from '../../shared/store/ops';
import { clearProviderCache, getProviderConnection, getWebhookSettings, saveProviderConnection } from '../../shared/store/provider';
import { providerSecretKey, providerWebhookSecretKey, webhookKeys } from '../../shared/store/table';
import { createEndpoint, loadDelivery } from '../../shared/store/webhooks';
import { newAccount } from '../support/fixtures';

let kms: KmsEmulator;
const saved = { ...process.env };

function useEnv(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetConfig();
  resetSecrets();
}

beforeAll(async () => {
  kms = await startKmsEmulator();
});

beforeEach(() => {
  // As in AWS: the function's key ARN, no local key file.
  useEnv({ SECRETS_KMS_KEY_ID: kms.keyArn, KMS_ENDPOINT: kms.url, SECRETS_KEY_FILE: undefined, AWS_LAMBDA_FUNCTION_NAME: undefined });
  clearProviderCache();
});

afterAll(async () => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
  resetConfig();
  resetSecrets();
  await kms?.stop();
});

const ACCOUNT = '0123456789abcdef';
const OTHER = 'fedcba9876543210';
const SECRET = 'sk_live_51KmsIntegrationTestSecret000001';

describe('the KMS implementation, real client, emulated KMS', () => {
  it('round trips a secret as kms:v1:<base64 blob>, sending the account id as encryption context', async () => {
    const before = kms.calls.length;
    const stored = await encryptSecret(ACCOUNT, SECRET);
    expect(stored.startsWith(KMS_PREFIX)).toBe(true);
    expect(stored.slice(KMS_PREFIX.length)).toMatch(/^[A-Za-z0-9+/]+={0,2}$/);
    expect(stored).not.toContain(SECRET);
    expect(Buffer.from(stored.slice(KMS_PREFIX.length), 'base64').includes(Buffer.from(SECRET))).toBe(false);
    expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
    expect(kms.calls.slice(before)).toEqual([
      { operation: 'Encrypt', keyId: kms.keyArn, encryptionContext: { account_id: ACCOUNT }, status: 200, error: null },
      { operation: 'Decrypt', keyId: kms.keyArn, encryptionContext: { account_id: ACCOUNT }, status: 200, error: null },
    ]);
    for (const text of ['clé ✓', 'x'.repeat(4000)]) expect(await decryptSecret(ACCOUNT, await encryptSecret(ACCOUNT, text))).toBe(text);
  });

  it("refuses another account's context (InvalidCiphertextException from KMS) and an altered blob", async () => {
    const stored = await encryptSecret(ACCOUNT, SECRET);
    const before = kms.calls.length;
    await expect(decryptSecret(OTHER, stored)).rejects.toThrow(SecretDecryptionError);
    expect(kms.calls.slice(before)).toEqual([
      {
        operation: 'Decrypt',
        keyId: kms.keyArn,
        encryptionContext: { account_id: OTHER },
        status: 400,
        error: 'InvalidCiphertextException',
      },
    ]);
    const blob = Buffer.from(stored.slice(KMS_PREFIX.length), 'base64');
    blob.writeUInt8(blob.readUInt8(blob.length - 1) ^ 1, blob.length - 1);
    await expect(decryptSecret(ACCOUNT, `${KMS_PREFIX}${blob.toString('base64')}`)).rejects.toThrow(SecretDecryptionError);
    await expect(decryptSecret(ACCOUNT, `${KMS_PREFIX}not base64!`)).rejects.toThrow(SecretDecryptionError);
    await expect(decryptSecret(ACCOUNT, 'kms:v9:AAAA')).rejects.toThrow(SecretDecryptionError);
    // The right account still reads it.
    expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
  });

  it('the emulator speaks KMS: the real client gets the AWS error shapes (context mismatch, other key, unknown key)', async () => {
    const client = new KMSClient({
      region: 'us-east-1',
      endpoint: kms.url,
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    try {
      const { CiphertextBlob } = await client.send(
        new EncryptCommand({ KeyId: kms.keyArn, Plaintext: Buffer.from('x'), EncryptionContext: { account_id: ACCOUNT, a: '1' } }),
      );
      // The context's order does not matter; its keys and values do.
      const same = await client.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: { a: '1', account_id: ACCOUNT } }));
      expect(Buffer.from(same.Plaintext as Uint8Array).toString()).toBe('x');
      expect(same.KeyId).toBe(kms.keyArn);
      await expect(client.send(new DecryptCommand({ CiphertextBlob, EncryptionContext: { account_id: ACCOUNT } }))).rejects.toMatchObject({
        name: 'InvalidCiphertextException',
        $metadata: { httpStatusCode: 400 },
      });
      await expect(
        client.send(new DecryptCommand({ CiphertextBlob, KeyId: kms.createKey(), EncryptionContext: { account_id: ACCOUNT, a: '1' } })),
      ).rejects.toMatchObject({ name: 'IncorrectKeyException' });
      await expect(
        client.send(
          new EncryptCommand({
            KeyId: 'arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555',
            Plaintext: Buffer.from('x'),
          }),
        ),
      ).rejects.toMatchObject({ name: 'NotFoundException' });
    } finally {
      client.destroy();
    }
  });

  it('a value encrypted under another key is refused when SECRETS_KMS_KEY_ID names this one', async () => {
    const otherKey = kms.createKey();
    useEnv({ SECRETS_KMS_KEY_ID: otherKey });
    const stored = await encryptSecret(ACCOUNT, SECRET);
    useEnv({ SECRETS_KMS_KEY_ID: kms.keyArn });
    await expect(decryptSecret(ACCOUNT, stored)).rejects.toThrow(SecretDecryptionError);
  });

  it('one Decrypt per cold read, then none while cached (per account and stored value)', async () => {
    const stored = await encryptSecret(ACCOUNT, SECRET);
    const decrypts = kms.count('Decrypt');
    expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
    expect(kms.count('Decrypt')).toBe(decrypts + 1);
    for (let i = 0; i < 5; i++) expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
    expect(kms.count('Decrypt')).toBe(decrypts + 1);
    // A rotated secret is a new stored value: read from KMS, never answered from the old entry.
    const rotated = await encryptSecret(ACCOUNT, `${SECRET}-rotated`);
    expect(await decryptSecret(ACCOUNT, rotated)).toBe(`${SECRET}-rotated`);
    expect(kms.count('Decrypt')).toBe(decrypts + 2);
    // A new container (empty cache) decrypts again.
    clearSecretCache();
    expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
    expect(kms.count('Decrypt')).toBe(decrypts + 3);
    // Legacy plaintext costs no KMS call.
    expect(await decryptSecret(ACCOUNT, 'whsec_legacyPlaintext0000000000')).toBe('whsec_legacyPlaintext0000000000');
    expect(kms.count('Decrypt')).toBe(decrypts + 3);
  });

  it('in Lambda without SECRETS_KMS_KEY_ID nothing is encrypted or decrypted, and KMS is never called', async () => {
    useEnv({ AWS_LAMBDA_FUNCTION_NAME: 'RefloopApi-SecretsTest' });
    const stored = await encryptSecret(ACCOUNT, SECRET);
    expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
    useEnv({ SECRETS_KMS_KEY_ID: undefined });
    const calls = kms.calls.length;
    await expect(encryptSecret(ACCOUNT, SECRET)).rejects.toThrow(SecretsConfigError);
    await expect(decryptSecret(ACCOUNT, stored)).rejects.toThrow(SecretsConfigError);
    expect(kms.calls.length).toBe(calls);
  });
});

describe('the store through KMS', () => {
  it('provider secrets: both secret items hold kms:v1: values; the readers decrypt them once per cold container', async () => {
    const { accountId } = await newAccount();
    const apiKey = 'sk_test_51KmsStoreTest00000000000001';
    const webhookSecret = 'whsec_kmsStoreTest00000000000001';
    const encrypts = kms.count('Encrypt');
    await saveProviderConnection(accountId, { kind: 'stripe', secretKey: apiKey, webhookSecret, apiUrl: 'https://api.stripe.com' });
    expect(kms.count('Encrypt')).toBe(encrypts + 2);
    const secretItem = await getItem(providerSecretKey(accountId));
    const webhookItem = await getItem(providerWebhookSecretKey(accountId));
    expect(secretItem?.secret_key).toMatch(/^kms:v1:/);
    expect(webhookItem?.webhook_secret).toMatch(/^kms:v1:/);
    expect(JSON.stringify([secretItem, webhookItem])).not.toContain(apiKey);
    expect(JSON.stringify([secretItem, webhookItem])).not.toContain(webhookSecret);
    // Each was encrypted with its own account as context.
    expect(kms.calls.slice(-2).map((c) => c.encryptionContext)).toEqual([{ account_id: accountId }, { account_id: accountId }]);

    const decrypts = kms.count('Decrypt');
    expect(await getProviderConnection(accountId)).toEqual({ kind: 'stripe', secretKey: apiKey, apiUrl: 'https://api.stripe.com' });
    expect(await getWebhookSettings(accountId)).toEqual({ kind: 'stripe', webhookSecret });
    expect(kms.count('Decrypt')).toBe(decrypts + 2);
    // Warm: the connection is read from DynamoDB again, its secret from the cache; the intake's settings from theirs.
    expect(await getProviderConnection(accountId)).toEqual({ kind: 'stripe', secretKey: apiKey, apiUrl: 'https://api.stripe.com' });
    expect(await getWebhookSettings(accountId)).toEqual({ kind: 'stripe', webhookSecret });
    expect(kms.count('Decrypt')).toBe(decrypts + 2);
  });

  it('legacy plaintext items (written before encryption) are read as they are, and come back encrypted on the next write', async () => {
    const { accountId } = await newAccount();
    await saveProviderConnection(accountId, {
      kind: 'stripe',
      secretKey: 'sk_test_51KmsLegacyNew000000000001',
      webhookSecret: 'whsec_kmsLegacyNew0000001',
      apiUrl: 'https://api.stripe.com',
    });
    // What the table held before this change: the same items with the secrets in plain text.
    const legacyKey = 'sk_test_51KmsLegacyOld000000000001';
    const legacyWhsec = 'whsec_kmsLegacyOld0000001';
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...providerSecretKey(accountId), type: 'ProviderSecret', secret_key: legacyKey, updated_at: 1 },
      }),
    );
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { ...providerWebhookSecretKey(accountId), type: 'ProviderSecret', webhook_secret: legacyWhsec, updated_at: 1 },
      }),
    );
    clearProviderCache();
    const decrypts = kms.count('Decrypt');
    expect(await getProviderConnection(accountId)).toEqual({ kind: 'stripe', secretKey: legacyKey, apiUrl: 'https://api.stripe.com' });
    expect(await getWebhookSettings(accountId)).toEqual({ kind: 'stripe', webhookSecret: legacyWhsec });
    expect(kms.count('Decrypt')).toBe(decrypts);
    // The next write of the connection (the dashboard's form, the CLI's set-stripe) encrypts both again.
    await saveProviderConnection(accountId, {
      kind: 'stripe',
      secretKey: legacyKey,
      webhookSecret: legacyWhsec,
      apiUrl: 'https://api.stripe.com',
    });
    expect((await getItem(providerSecretKey(accountId)))?.secret_key).toMatch(/^kms:v1:/);
    expect((await getItem(providerWebhookSecretKey(accountId)))?.webhook_secret).toMatch(/^kms:v1:/);
    clearProviderCache();
    expect(await getProviderConnection(accountId)).toEqual({ kind: 'stripe', secretKey: legacyKey, apiUrl: 'https://api.stripe.com' });
  });

  it("an item copied into another account's partition does not decrypt there", async () => {
    const a = await newAccount();
    const b = await newAccount();
    await saveProviderConnection(a.accountId, {
      kind: 'paddle-billing',
      apiKey: 'pdl_live_apikey_kmsCopyTest0001',
      webhookSecret: 'pdl_ntfset_kmsCopyTest0001',
      apiUrl: 'https://api.paddle.com',
    });
    await saveProviderConnection(b.accountId, {
      kind: 'paddle-billing',
      apiKey: 'pdl_live_apikey_kmsCopyTest0002',
      webhookSecret: 'pdl_ntfset_kmsCopyTest0002',
      apiUrl: 'https://api.paddle.com',
    });
    const stolen = String((await getItem(providerSecretKey(a.accountId)))?.api_key);
    await expect(decryptSecret(b.accountId, stolen)).rejects.toThrow(SecretDecryptionError);
  });

  it('webhook signing secrets: the WEBHOOK_SECRET item holds a kms:v1: value; the delivery worker reads the secret', async () => {
    const { accountId } = await newAccount();
    const secret = 'whsec_kmsWebhookSigningSecret000000000000001';
    const endpoint = await createEndpoint(
      accountId,
      { url: 'https://hooks.example.com/refloop', events: ['member.created'], enabled: true, description: null },
      secret,
    );
    const item = await getItem(webhookKeys.webhookSecret(accountId, endpoint.id));
    expect(item?.secret).toMatch(/^kms:v1:/);
    expect(JSON.stringify(item)).not.toContain(secret);
    const decrypts = kms.count('Decrypt');
    expect((await loadDelivery(accountId, endpoint.id, 'no-delivery', 'no-event')).secret).toBe(secret);
    expect((await loadDelivery(accountId, endpoint.id, 'no-delivery', 'no-event')).secret).toBe(secret);
    expect(kms.count('Decrypt')).toBe(decrypts + 1);
  });
});
