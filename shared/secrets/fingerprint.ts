// Which key the table's secrets are under: one item per form of encryption, pk `SECRETS_KEY`, sk `local`
// or `kms`, holding a fingerprint of the key (never the key):
// - local key file: `local:<16 hex>`, an HMAC of a fixed label under the file's key (./local.ts);
// - KMS: `kms:<key id>`, the key's id (the last part of SECRETS_KMS_KEY_ID when it is a key ARN).
// It is written once, by whoever first checks (`npm start` at every start, the admin CLI before it writes
// a secret), with a conditional put, and compared afterwards. The admin CLI run with another key file
// (without the DATA_DIR or SECRETS_KEY_FILE of `npm start`) used to encrypt with it silently: the secrets it
// wrote then failed to decrypt in the service. Now it is refused before anything is written
// (SecretsKeyMismatchError), naming the file and the variables that choose it. `npm start` is the service:
// its key is the one that reads, so at start it records its own fingerprint over a different one (a key
// file deleted or replaced beside its table) and says so; the secrets written under the old key must then
// be set again (they answer 503 until they are).
// Not on a request path: the service's requests never read this item.
import { config } from '../config';
import { db, tableName } from '../store/client';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { SecretsKeyMismatchError } from './errors';
import { localKeyFingerprint } from './local';

export const FINGERPRINT_PK = 'SECRETS_KEY';

type Form = 'local' | 'kms';

/** The key id of a KMS key id or ARN (`arn:aws:kms:<region>:<account>:key/<id>` -> `<id>`); aliases as they are. */
export function kmsKeyName(keyId: string): string {
  const match = /^arn:aws[a-z-]*:kms:[^:]*:[^:]*:key\/(.+)$/.exec(keyId);
  return match ? (match[1] as string) : keyId;
}

/** This process's key: its form, fingerprint (null: no key file yet, and `create` false) and how to name it. */
function ownKey(create: boolean): { form: Form; fingerprint: string | null; name: string } {
  const { secrets } = config();
  if (secrets.kmsKeyId)
    return {
      form: 'kms',
      fingerprint: `kms:${kmsKeyName(secrets.kmsKeyId)}`,
      name: `the KMS key ${secrets.kmsKeyId} (SECRETS_KMS_KEY_ID)`,
    };
  const local = localKeyFingerprint(secrets.keyFile, create);
  return { form: 'local', fingerprint: local === null ? null : `local:${local}`, name: `the key file ${secrets.keyFile}` };
}

async function recorded(form: Form): Promise<string | null> {
  const out = await db().send(new GetCommand({ TableName: tableName(), Key: { pk: FINGERPRINT_PK, sk: form }, ConsistentRead: true }));
  return typeof out.Item?.fingerprint === 'string' ? out.Item.fingerprint : null;
}

async function record(form: Form, fingerprint: string, onlyIfAbsent: boolean): Promise<boolean> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: { pk: FINGERPRINT_PK, sk: form, type: 'SecretsKey', fingerprint, recorded_at: Date.now() },
        ...(onlyIfAbsent ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
      }),
    );
    return true;
  } catch (err) {
    if ((err as { name?: string }).name === 'ConditionalCheckFailedException') return false;
    throw err;
  }
}

const WHERE =
  "Run it with the DATA_DIR of `npm start` (its key file is <DATA_DIR>/secrets.key), or SECRETS_KEY_FILE naming the file the service uses; in AWS, SECRETS_KMS_KEY_ID set to the stack's SecretsKeyArn output.";

/**
 * Refuses (SecretsKeyMismatchError) when this process's key is not the one the table records; records it
 * when the table records none. Call it before writing a secret from outside the service (the admin CLI).
 * Creates no key file when the table already records a key.
 */
export async function ensureSecretsKey(): Promise<{ fingerprint: string; recordedNow: boolean }> {
  const { form } = ownKey(false);
  const existing = await recorded(form);
  const own = ownKey(existing === null);
  if (existing === null && own.fingerprint !== null) {
    if (await record(form, own.fingerprint, true)) return { fingerprint: own.fingerprint, recordedNow: true };
    return ensureSecretsKey(); // another writer recorded first: compare with theirs
  }
  if (own.fingerprint === existing && existing !== null) return { fingerprint: existing, recordedNow: false };
  throw new SecretsKeyMismatchError(
    `refusing to write a secret the service could not read: this process would encrypt with ${own.name}${own.fingerprint === null ? ', which does not exist' : ` (fingerprint ${own.fingerprint})`}, but the secrets of table ${tableName()} are under the key with fingerprint ${existing}. ${WHERE}`,
  );
}

/**
 * `npm start`: the service's own key is the one that reads, so it is recorded (over a different one, which
 * is returned so the caller can say that secrets written under it must be set again).
 */
export async function recordServiceSecretsKey(): Promise<{ fingerprint: string; replaced: string | null }> {
  const own = ownKey(true);
  const fingerprint = own.fingerprint as string;
  const existing = await recorded(own.form);
  if (existing === fingerprint) return { fingerprint, replaced: null };
  if (existing === null && (await record(own.form, fingerprint, true))) return { fingerprint, replaced: null };
  await record(own.form, fingerprint, false);
  return { fingerprint, replaced: existing };
}

/** The fingerprint the table records for this process's form of encryption, for messages (null: none yet). */
export async function recordedSecretsKey(): Promise<string | null> {
  return recorded(ownKey(false).form);
}
