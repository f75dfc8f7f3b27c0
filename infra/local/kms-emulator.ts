// A tiny AWS KMS for the tests: an HTTP server on loopback speaking KMS's JSON protocol (awsJson1_1,
// `X-Amz-Target: TrentService.<Operation>`) for the two operations the service calls, so the real
// `@aws-sdk/client-kms` client (shared/secrets/kms.ts) is tested end to end, without SDK mocks:
// - TrentService.Encrypt {KeyId, Plaintext, EncryptionContext} -> {CiphertextBlob, KeyId, EncryptionAlgorithm}
// - TrentService.Decrypt {CiphertextBlob, EncryptionContext, KeyId?} -> {Plaintext, KeyId, EncryptionAlgorithm}
// Like KMS, the ciphertext blob names its key and is authenticated together with the encryption context:
// a Decrypt whose context differs in any key or value (or whose blob was altered) answers
// InvalidCiphertextException, one naming another key IncorrectKeyException, an unknown key NotFoundException,
// all in AWS's error shape (HTTP 400, `{"__type": "...", "message": "..."}`). Requests must carry a SigV4
// Authorization header (the signature itself is not checked). Everything is in memory.
// Deliberate simplifications: one symmetric key per emulator (more with createKey), no aliases, grants,
// policies, rotation or other operations (UnknownOperationException).
import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type KmsOperation = 'Encrypt' | 'Decrypt';

export interface KmsCall {
  operation: KmsOperation | string;
  keyId: string | null;
  encryptionContext: Record<string, string> | null;
  /** The HTTP status the emulator answered. */
  status: number;
  /** The error's `__type` when it failed. */
  error: string | null;
}

export interface KmsEmulator {
  url: string;
  /** The ARN of the emulator's first key (what SECRETS_KMS_KEY_ID names in a test). */
  keyArn: string;
  /** Every request answered, in order. */
  calls: KmsCall[];
  /** How many calls of an operation were answered (successful or not). */
  count(operation: KmsOperation): number;
  /** Another symmetric key; its ARN. */
  createKey(): string;
  stop(): Promise<void>;
}

export interface KmsEmulatorOptions {
  /** 0 (default) for a free port. */
  port?: number;
  region?: string;
  /** The AWS account id in the key ARNs. */
  awsAccountId?: string;
}

class KmsError extends Error {
  constructor(
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

const BLOB_VERSION = 1;
const MAX_PLAINTEXT = 4096;

/** The context as authenticated data: its pairs sorted by key, so the order they are sent in does not matter. */
function contextAad(ctx: Record<string, string> | null): Buffer {
  const pairs = Object.entries(ctx ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Buffer.from(JSON.stringify(pairs), 'utf8');
}

function contextOf(value: unknown): Record<string, string> | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'object' || Array.isArray(value) || !Object.values(value).every((v) => typeof v === 'string')) {
    throw new KmsError('ValidationException', 'EncryptionContext must be a map of strings');
  }
  return value as Record<string, string>;
}

function base64Field(body: Record<string, unknown>, name: string): Buffer {
  const value = body[name];
  if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value))
    throw new KmsError('ValidationException', `${name} must be base64-encoded binary`);
  return Buffer.from(value, 'base64');
}

export async function startKmsEmulator(options: KmsEmulatorOptions = {}): Promise<KmsEmulator> {
  const region = options.region ?? 'us-east-1';
  const awsAccountId = options.awsAccountId ?? '000000000000';
  /** Key id (UUID) -> its AES-256 key. */
  const keys = new Map<string, Buffer>();
  const arnOf = (id: string) => `arn:aws:kms:${region}:${awsAccountId}:key/${id}`;
  const createKey = (): string => {
    const id = randomUUID();
    keys.set(id, randomBytes(32));
    return arnOf(id);
  };
  const keyArn = createKey();
  const calls: KmsCall[] = [];

  /** A KeyId as a key ARN or a bare key id; aliases are not emulated. */
  const resolveKey = (keyId: unknown): string => {
    if (typeof keyId !== 'string' || keyId === '') throw new KmsError('ValidationException', 'KeyId is required');
    const id = keyId.startsWith('arn:')
      ? keyId.startsWith(`arn:aws:kms:${region}:${awsAccountId}:key/`)
        ? keyId.slice(keyId.lastIndexOf('/') + 1)
        : ''
      : keyId;
    if (!keys.has(id)) throw new KmsError('NotFoundException', `Key '${keyId}' does not exist`);
    return id;
  };

  // Blob: version (1 byte) | key id (36 ASCII bytes) | IV (12) | tag (16) | ciphertext.
  const encrypt = (body: Record<string, unknown>) => {
    const id = resolveKey(body.KeyId);
    const plaintext = base64Field(body, 'Plaintext');
    if (plaintext.length < 1 || plaintext.length > MAX_PLAINTEXT)
      throw new KmsError('ValidationException', `Plaintext must be 1 to ${MAX_PLAINTEXT} bytes`);
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', keys.get(id) as Buffer, iv);
    cipher.setAAD(contextAad(contextOf(body.EncryptionContext)));
    const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
    const blob = Buffer.concat([Buffer.from([BLOB_VERSION]), Buffer.from(id, 'ascii'), iv, cipher.getAuthTag(), ciphertext]);
    return { CiphertextBlob: blob.toString('base64'), KeyId: arnOf(id), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
  };

  const decrypt = (body: Record<string, unknown>) => {
    const blob = base64Field(body, 'CiphertextBlob');
    const invalid = () => new KmsError('InvalidCiphertextException', '');
    if (blob.length < 1 + 36 + 12 + 16 || blob[0] !== BLOB_VERSION) throw invalid();
    const id = blob.subarray(1, 37).toString('ascii');
    const key = keys.get(id);
    if (!key) throw invalid();
    if (body.KeyId !== undefined && resolveKey(body.KeyId) !== id) {
      throw new KmsError('IncorrectKeyException', 'The key ID in the request does not identify a KMS key that can perform this operation.');
    }
    const decipher = createDecipheriv('aes-256-gcm', key, blob.subarray(37, 49));
    decipher.setAAD(contextAad(contextOf(body.EncryptionContext)));
    decipher.setAuthTag(blob.subarray(49, 65));
    let plaintext: Buffer;
    try {
      plaintext = Buffer.concat([decipher.update(blob.subarray(65)), decipher.final()]);
    } catch {
      // KMS answers a wrong encryption context or an altered blob the same way, with an empty message.
      throw invalid();
    }
    return { Plaintext: plaintext.toString('base64'), KeyId: arnOf(id), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
  };

  const answer = (res: ServerResponse, status: number, payload: unknown) => {
    const text = JSON.stringify(payload);
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.1',
      'content-length': Buffer.byteLength(text),
      'x-amzn-requestid': randomUUID(),
    });
    res.end(text);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const target = String(req.headers['x-amz-target'] ?? '');
    const operation = target.startsWith('TrentService.') ? target.slice('TrentService.'.length) : target;
    const call: KmsCall = { operation, keyId: null, encryptionContext: null, status: 200, error: null };
    calls.push(call);
    try {
      if (req.method !== 'POST' || req.url !== '/') throw new KmsError('UnknownOperationException', `${req.method} ${req.url}`);
      if (!/^AWS4-HMAC-SHA256 /.test(String(req.headers.authorization ?? '')))
        throw new KmsError('MissingAuthenticationTokenException', 'Missing Authentication Token');
      let body: Record<string, unknown>;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      } catch {
        throw new KmsError('SerializationException', 'Start of structure or map found where not expected.');
      }
      call.keyId = typeof body.KeyId === 'string' ? body.KeyId : null;
      call.encryptionContext = (body.EncryptionContext as Record<string, string> | undefined) ?? null;
      if (operation === 'Encrypt') return answer(res, 200, encrypt(body));
      if (operation === 'Decrypt') return answer(res, 200, decrypt(body));
      throw new KmsError('UnknownOperationException', `The emulator does not implement ${target || 'this operation'}`);
    } catch (err) {
      const type = err instanceof KmsError ? err.type : 'KMSInternalException';
      call.status = err instanceof KmsError ? 400 : 500;
      call.error = type;
      answer(res, call.status, { __type: type, message: err instanceof Error ? err.message : String(err) });
    }
  };

  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((ok, fail) => {
    server.once('error', fail);
    server.listen(options.port ?? 0, '127.0.0.1', () => ok());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    keyArn,
    calls,
    count: (operation) => calls.filter((c) => c.operation === operation).length,
    createKey,
    stop: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections();
        server.close(() => ok());
      }),
  };
}
