// Issue 23 #34: the admin CLI run without `npm start`'s DATA_DIR encrypted provider secrets with another key
// file, and that account's webhooks then answered 500 to anyone. Now the table records which key its
// secrets are under (shared/secrets/fingerprint.ts) and the CLI refuses to write under another one, naming
// the key file and DATA_DIR / SECRETS_KEY_FILE; and a secret that does not decrypt is a 503 naming the
// account, in the contract's shape, logged and counted (SecretDecryptionFailures, alarmed in
// infra/cloud/monitoring.ts).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resetConfig } from '../../shared/config';
import * as metrics from '../../shared/metrics';
import { decryptSecret, resetSecrets, SecretDecryptionError, SecretsKeyMismatchError } from '../../shared/secrets';
import { ensureSecretsKey, kmsKeyName, recordedSecretsKey, recordServiceSecretsKey } from '../../shared/secrets/fingerprint';
import { clearProviderCache, getProviderConnection, saveProviderConnection } from '../../shared/store/provider';
import { api } from '../support/api';
import { cliProcess } from '../support/cli-in-process';
import { newAccount } from '../support/fixtures';

const saved = { ...process.env };
let dir: string;

function useEnv(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetConfig();
  resetSecrets();
  clearProviderCache();
}

/** The admin CLI as a program (test/support/cli-in-process.ts cliProcess). */
const cli = (args: string[], env: NodeJS.ProcessEnv) => cliProcess('infra/admin.ts', args, env);

const STRIPE = {
  kind: 'stripe' as const,
  secretKey: 'sk_test_secretskeytest00000001',
  webhookSecret: 'whsec_secretskeytest00000001',
  apiUrl: 'https://api.stripe.com',
};

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'refloop-secrets-key-'));
  // The service's key (the run's SECRETS_KEY_FILE) is the one the table records, as `npm start` does at start.
  await recordServiceSecretsKey();
});

afterEach(() => {
  useEnv(Object.fromEntries(['SECRETS_KEY_FILE', 'DATA_DIR', 'SECRETS_KMS_KEY_ID'].map((n) => [n, saved[n]])));
  jest.restoreAllMocks();
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('the key fingerprint the table records', () => {
  it("is the service's key; the same key passes, another key file or a missing one is refused (and no key file is created)", async () => {
    const recorded = await recordedSecretsKey();
    expect(recorded).toMatch(/^local:[0-9a-f]{16}$/);
    expect(await ensureSecretsKey()).toEqual({ fingerprint: recorded, recordedNow: false });

    const missing = join(dir, 'missing', 'secrets.key');
    useEnv({ SECRETS_KEY_FILE: missing });
    await expect(ensureSecretsKey()).rejects.toThrow(SecretsKeyMismatchError);
    await expect(ensureSecretsKey()).rejects.toThrow(`the key file ${missing}, which does not exist`);
    expect(existsSync(missing)).toBe(false);

    const other = join(dir, 'other.key');
    useEnv({ SECRETS_KEY_FILE: other });
    const { encryptSecret } = await import('../../shared/secrets');
    await encryptSecret('0123456789abcdef', 'x'); // creates the other key file
    await expect(ensureSecretsKey()).rejects.toThrow(
      /the key file .*other\.key \(fingerprint local:[0-9a-f]{16}\), but the secrets of table .* are under the key with fingerprint local:/,
    );
  });

  it('names a KMS key by its id, whether given as an ARN or as the id', () => {
    expect(kmsKeyName('arn:aws:kms:eu-west-1:123456789012:key/1234abcd-12ab-34cd-56ef-1234567890ab')).toBe(
      '1234abcd-12ab-34cd-56ef-1234567890ab',
    );
    expect(kmsKeyName('1234abcd-12ab-34cd-56ef-1234567890ab')).toBe('1234abcd-12ab-34cd-56ef-1234567890ab');
  });
});

describe('the admin CLI writing a provider secret', () => {
  it('without DATA_DIR (another key file): exit 1, one line naming the key file, DATA_DIR and SECRETS_KEY_FILE; nothing written, no key file made', async () => {
    const { accountId } = await newAccount();
    const dataDir = join(dir, 'elsewhere');
    const args = [
      'account',
      'set-stripe',
      '--account',
      accountId,
      '--secret-key',
      STRIPE.secretKey,
      '--webhook-secret',
      STRIPE.webhookSecret,
    ];
    const refused = await cli(args, { SECRETS_KEY_FILE: '', DATA_DIR: dataDir });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    const lines = refused.stderr.split('\n').filter((l) => l !== '');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain(
      `admin: refusing to write a secret the service could not read: this process would encrypt with the key file ${join(dataDir, 'secrets.key')}, which does not exist`,
    );
    expect(lines[0]).toContain('DATA_DIR');
    expect(lines[0]).toContain('SECRETS_KEY_FILE');
    expect(existsSync(join(dataDir, 'secrets.key'))).toBe(false);
    expect(await getProviderConnection(accountId)).toBeNull();

    // With the service's key file: written, and the service reads it.
    const done = await cli(args, {});
    expect(done).toMatchObject({ code: 0, stderr: '' });
    clearProviderCache();
    expect(await getProviderConnection(accountId)).toMatchObject({ kind: 'stripe', secretKey: STRIPE.secretKey });
  }, 60_000);
});

describe('a stored secret that does not decrypt', () => {
  it('answers the webhook intake 503 naming the account (contract shape), logs it and counts SecretDecryptionFailures', async () => {
    const { accountId } = await newAccount();
    // Written by a process with another key file (what the CLI without DATA_DIR did before the check).
    useEnv({ SECRETS_KEY_FILE: join(dir, 'writer.key') });
    await saveProviderConnection(accountId, STRIPE);
    useEnv({ SECRETS_KEY_FILE: saved.SECRETS_KEY_FILE });
    const counted = jest.spyOn(metrics, 'countMetric');

    const res = await api('POST', `/webhooks/stripe/${accountId}/`, {
      rawBody: '{"id":"evt_1","type":"invoice.paid"}',
      headers: { 'content-type': 'application/json', 'stripe-signature': 't=1,v1=00' },
    });
    expect(res.status).toBe(503);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toEqual({
      detail: `The stored provider or webhook secrets of account ${accountId} cannot be decrypted with this service's key: an operator must set them again (docs/operations.md, "Secrets at rest").`,
    });
    expect(counted).toHaveBeenCalledWith('SecretDecryptionFailures');

    // The error keeps its technical reason for the log, and its class for callers.
    clearProviderCache();
    await expect(getProviderConnection(accountId)).rejects.toThrow(SecretDecryptionError);
    await expect(decryptSecret(accountId, 'local:v1:AAAA.AAAA.AAAA')).rejects.toMatchObject({
      status: 503,
      accountId,
      message: 'malformed local secret',
    });
  });
});
