// shared/secrets with the local key file (what `npm start` and every test use): AES-256-GCM bound to the
// account id, the key file created once with mode 0600, legacy plaintext passed through, and the refusals
// (Lambda without the KMS key, a table in AWS without it). The KMS implementation runs against the KMS
// emulator in test/integration/secrets-kms.test.ts.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resetConfig } from '../../shared/config';
import {
  decryptSecret,
  encryptSecret,
  LOCAL_PREFIX,
  resetSecrets,
  SecretDecryptionError,
  secretForm,
  SecretsConfigError,
} from '../../shared/secrets';

const ACCOUNT = '0123456789abcdef';
const OTHER = 'fedcba9876543210';
const SECRET = 'sk_test_51UnitTestSecretKey0000000001';

const saved = { ...process.env };
let dir: string;
let keyFile: string;

function useEnv(env: Record<string, string | undefined>): void {
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  resetConfig();
  resetSecrets();
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'refloop-secrets-unit-'));
  keyFile = join(dir, 'nested', 'secrets.key');
  useEnv({
    SECRETS_KEY_FILE: keyFile,
    SECRETS_KMS_KEY_ID: undefined,
    AWS_LAMBDA_FUNCTION_NAME: undefined,
    DYNAMODB_ENDPOINT: 'http://127.0.0.1:8000',
    DATA_DIR: undefined,
  });
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

afterAll(() => {
  for (const name of Object.keys(process.env)) if (!(name in saved)) delete process.env[name];
  Object.assign(process.env, saved);
  resetConfig();
  resetSecrets();
});

/** The stored value with one character of one part (0 IV, 1 tag, 2 ciphertext) changed. */
function alter(stored: string, part: 0 | 1 | 2): string {
  const parts = stored.slice(LOCAL_PREFIX.length).split('.');
  const p = parts[part] as string;
  const at = Math.floor(p.length / 2);
  parts[part] = `${p.slice(0, at)}${p[at] === 'A' ? 'B' : 'A'}${p.slice(at + 1)}`;
  return `${LOCAL_PREFIX}${parts.join('.')}`;
}

describe('the local key file implementation', () => {
  it('round trips a secret as local:v1:<iv>.<tag>.<ciphertext>, a fresh IV each time', async () => {
    const stored = await encryptSecret(ACCOUNT, SECRET);
    expect(stored).toMatch(/^local:v1:[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(stored).not.toContain(SECRET);
    expect(secretForm(stored)).toBe('local');
    expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
    const again = await encryptSecret(ACCOUNT, SECRET);
    expect(again).not.toBe(stored);
    expect(await decryptSecret(ACCOUNT, again)).toBe(SECRET);
    // Any text: non-ASCII, long (a PEM-sized value), and the empty string.
    for (const text of ['clé secrète ✓', 'x'.repeat(3000), ''])
      expect(await decryptSecret(ACCOUNT, await encryptSecret(ACCOUNT, text))).toBe(text);
  });

  it('creates the key file on first use (32 random bytes, mode 0600, its folder too) and keeps it', async () => {
    const stored = await encryptSecret(ACCOUNT, SECRET);
    const key = readFileSync(keyFile);
    expect(key).toHaveLength(32);
    expect(statSync(keyFile).mode & 0o777).toBe(0o600);
    // A new container (nothing remembered) reads the same file: the value still decrypts, the key is unchanged.
    resetSecrets();
    await encryptSecret(ACCOUNT, 'another');
    expect(readFileSync(keyFile).equals(key)).toBe(true);
    expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
  });

  it("refuses another account's value: the account id is authenticated with it", async () => {
    const stored = await encryptSecret(ACCOUNT, SECRET);
    await expect(decryptSecret(OTHER, stored)).rejects.toThrow(SecretDecryptionError);
    // Not even after the right account's read put it in the cache.
    expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
    await expect(decryptSecret(OTHER, stored)).rejects.toThrow(SecretDecryptionError);
  });

  it('refuses an altered IV, tag or ciphertext, a truncated or malformed value, and an unknown version', async () => {
    const stored = await encryptSecret(ACCOUNT, SECRET);
    const bad = [
      alter(stored, 0),
      alter(stored, 1),
      alter(stored, 2),
      stored.slice(0, -2),
      stored.split('.').slice(0, 2).join('.'),
      `${stored}.x`,
      'local:v1:',
      'local:v1:!!!.???.***',
      stored.replace('local:v1:', 'local:v2:'),
    ];
    for (const value of bad) await expect(decryptSecret(ACCOUNT, value)).rejects.toThrow(SecretDecryptionError);
    // The error never quotes the value.
    const err = await decryptSecret(ACCOUNT, alter(stored, 2)).catch((e: Error) => e);
    expect(String((err as Error).message)).not.toContain(stored.slice(LOCAL_PREFIX.length, LOCAL_PREFIX.length + 16));
  });

  it('refuses a value made with another key file, and says so when the key file is gone', async () => {
    const stored = await encryptSecret(ACCOUNT, SECRET);
    writeFileSync(keyFile, Buffer.alloc(32, 7));
    resetSecrets();
    await expect(decryptSecret(ACCOUNT, stored)).rejects.toThrow(SecretDecryptionError);
    rmSync(keyFile);
    resetSecrets();
    await expect(decryptSecret(ACCOUNT, stored)).rejects.toThrow(/no secrets key file/);
    // A key file of the wrong size is a configuration error, never a silently short key.
    writeFileSync(keyFile, 'not a key\n');
    resetSecrets();
    await expect(encryptSecret(ACCOUNT, SECRET)).rejects.toThrow(SecretsConfigError);
  });

  it('passes a legacy plaintext value (written before encryption) through as it is', async () => {
    for (const legacy of [
      SECRET,
      'whsec_legacyPlaintextSecret000000000000000',
      'pdl_ntfset_01legacy',
      '0123abcdef0123abcdef',
      'kms',
      'localhost:v1',
    ]) {
      expect(secretForm(legacy)).toBe('legacy');
      expect(await decryptSecret(ACCOUNT, legacy)).toBe(legacy);
    }
  });

  it('finds the key file at <DATA_DIR>/secrets.key when SECRETS_KEY_FILE is not set', async () => {
    useEnv({ SECRETS_KEY_FILE: undefined, DATA_DIR: join(dir, 'data') });
    const stored = await encryptSecret(ACCOUNT, SECRET);
    expect(readFileSync(join(dir, 'data', 'secrets.key'))).toHaveLength(32);
    expect(await decryptSecret(ACCOUNT, stored)).toBe(SECRET);
  });
});

describe('refusals', () => {
  it('in Lambda without SECRETS_KMS_KEY_ID, encrypting and decrypting fail with a configuration error (never a file in /tmp)', async () => {
    const stored = await encryptSecret(ACCOUNT, SECRET);
    useEnv({ AWS_LAMBDA_FUNCTION_NAME: 'RefloopApi-ConvertReferral' });
    await expect(encryptSecret(ACCOUNT, SECRET)).rejects.toThrow(SecretsConfigError);
    await expect(encryptSecret(ACCOUNT, SECRET)).rejects.toThrow(/SECRETS_KMS_KEY_ID is not set on this Lambda function/);
    await expect(decryptSecret(ACCOUNT, stored)).rejects.toThrow(SecretsConfigError);
    await expect(decryptSecret(ACCOUNT, SECRET)).rejects.toThrow(SecretsConfigError);
  });

  it('in Lambda with the KMS key, a local:v1 value is refused (it was never meant for AWS)', async () => {
    const stored = await encryptSecret(ACCOUNT, SECRET);
    useEnv({
      AWS_LAMBDA_FUNCTION_NAME: 'RefloopApi-ConvertReferral',
      SECRETS_KMS_KEY_ID: 'arn:aws:kms:us-east-1:000000000000:key/00000000-0000-0000-0000-000000000000',
    });
    await expect(decryptSecret(ACCOUNT, stored)).rejects.toThrow(SecretsConfigError);
  });

  it('outside Lambda, a table in AWS without SECRETS_KMS_KEY_ID is refused unless SECRETS_KEY_FILE is set on purpose', async () => {
    useEnv({ DYNAMODB_ENDPOINT: undefined, SECRETS_KEY_FILE: undefined, DATA_DIR: join(dir, 'data') });
    await expect(encryptSecret(ACCOUNT, SECRET)).rejects.toThrow(/the table is in AWS/);
    useEnv({ SECRETS_KEY_FILE: keyFile });
    expect(secretForm(await encryptSecret(ACCOUNT, SECRET))).toBe('local');
  });
});
