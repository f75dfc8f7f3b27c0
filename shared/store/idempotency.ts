// Idempotency-Key records. One item per (account, key): the request's fingerprint, who is executing it
// (an owner token and a lock deadline), whether its effect has committed (`effect_by`), and once done
// the response to replay for 24 hours.
//
// Atomicity: while a request holds a key, every transaction it commits (shared/store/ops.ts transact())
// carries one more item, an update of this record that sets `effect_by` to the owner, conditioned on the
// owner still holding the key and no other owner having committed an effect. So the "effect happened"
// marker is written atomically with the effect, and an executor that lost its lock can never commit.
import { AsyncLocalStorage } from 'node:async_hooks';
import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { db, tableName } from './client';
import { IDEMPOTENCY_HOURS, TTL_ATTRIBUTE, type Key } from './table';

/** How long a claim holds the key: longer than any route's Lambda timeout (25 s) and API Gateway's (30 s). */
export const LOCK_MS = 35_000;

export interface StoredResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

export type ClaimResult =
  | { kind: 'claimed'; owner: string }
  /** The key was used before with another method, path, parameters or body. */
  | { kind: 'mismatch' }
  /** Another request with this key is executing (its lock has not expired). */
  | { kind: 'in_progress' }
  | { kind: 'completed'; response: StoredResponse }
  /** A previous executor committed its effect and died before storing its response. */
  | { kind: 'effect_lost'; owner: string };

interface Context {
  key: Key;
  owner: string;
}

const storage = new AsyncLocalStorage<Context>();

/** Runs `fn` with the key held by `owner`: its transactions then carry the effect marker. */
export function runWithIdempotency<T>(key: Key, owner: string, fn: () => Promise<T>): Promise<T> {
  return storage.run({ key, owner }, fn);
}

/** The effect marker to append to a transaction of the current request (undefined outside one). */
export function effectMarkerItem(): { Update: Record<string, unknown> } | undefined {
  const ctx = storage.getStore();
  if (!ctx) return undefined;
  return {
    Update: {
      TableName: tableName(),
      Key: ctx.key,
      UpdateExpression: 'SET #effect = :owner',
      ConditionExpression: '#owner = :owner AND (attribute_not_exists(#effect) OR #effect = :owner)',
      ExpressionAttributeNames: { '#effect': 'effect_by', '#owner': 'owner' },
      ExpressionAttributeValues: { ':owner': ctx.owner },
    },
  };
}

/** A transaction of a request whose key was taken over (or whose effect another executor committed). */
export class IdempotencyLockLostError extends Error {
  override readonly name = 'IdempotencyLockLostError';
}

const nowSeconds = (ms: number) => Math.floor(ms / 1000);

/**
 * Takes the key for a new execution, or says why not. One conditional PutItem; when the condition
 * fails the old item comes back with it (no second read). An expired record (TTL deletion is lazy)
 * counts as absent.
 */
export async function claimKey(
  key: Key,
  fingerprint: string,
  owner: string,
  meta: { method: string; path: string },
  now = Date.now(),
): Promise<ClaimResult> {
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...key,
          type: 'Idempotency',
          fingerprint,
          state: 'in_progress',
          owner,
          locked_until: now + LOCK_MS,
          method: meta.method,
          path: meta.path,
          created_at: nowSeconds(now),
          [TTL_ATTRIBUTE]: nowSeconds(now) + IDEMPOTENCY_HOURS * 3600,
        },
        ConditionExpression: 'attribute_not_exists(pk) OR #exp <= :now',
        ExpressionAttributeNames: { '#exp': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':now': nowSeconds(now) },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      }),
    );
    return { kind: 'claimed', owner };
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
    const old = (err as { Item?: Record<string, unknown> }).Item;
    if (!old) return { kind: 'in_progress' }; // vanished meanwhile: the client retries
    return judge(key, unmarshallShallow(old), fingerprint, owner, now);
  }
}

async function judge(key: Key, old: Record<string, unknown>, fingerprint: string, owner: string, now: number): Promise<ClaimResult> {
  if (old.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (old.state === 'completed') {
    return {
      kind: 'completed',
      response: {
        status: Number(old.response_status),
        headers: (old.response_headers as Record<string, string>) ?? {},
        body: String(old.response_body ?? ''),
      },
    };
  }
  if (Number(old.locked_until ?? 0) > now) return { kind: 'in_progress' };
  // The previous executor's lock lapsed (it died, or released the key after a 5xx): take it over.
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET #owner = :me, locked_until = :lock',
        ConditionExpression: '#owner = :old AND #state = :progress AND locked_until <= :now',
        ExpressionAttributeNames: { '#owner': 'owner', '#state': 'state' },
        ExpressionAttributeValues: { ':me': owner, ':old': old.owner, ':progress': 'in_progress', ':lock': now + LOCK_MS, ':now': now },
      }),
    );
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return { kind: 'in_progress' };
    throw err;
  }
  return old.effect_by !== undefined ? { kind: 'effect_lost', owner } : { kind: 'claimed', owner };
}

/** Stores the response of a finished execution (a no-op if the key was taken over meanwhile). */
export async function completeKey(key: Key, owner: string, response: StoredResponse): Promise<void> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET #state = :done, response_status = :s, response_headers = :h, response_body = :b REMOVE locked_until',
        ConditionExpression: '#owner = :me',
        ExpressionAttributeNames: { '#state': 'state', '#owner': 'owner' },
        ExpressionAttributeValues: {
          ':done': 'completed',
          ':s': response.status,
          ':h': response.headers,
          ':b': response.body,
          ':me': owner,
        },
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}

/**
 * Gives the key back after a failure that is worth retrying (5xx, 409, 429): deleted when no effect
 * committed, so a retry starts afresh; otherwise only unlocked, so a retry takes over at once.
 */
export async function releaseKey(key: Key, owner: string): Promise<void> {
  try {
    await db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: key,
        ConditionExpression: '#owner = :me AND attribute_not_exists(effect_by)',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':me': owner },
      }),
    );
    return;
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: key,
        UpdateExpression: 'SET locked_until = :zero',
        ConditionExpression: '#owner = :me',
        ExpressionAttributeNames: { '#owner': 'owner' },
        ExpressionAttributeValues: { ':zero': 0, ':me': owner },
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}

/** ALL_OLD on a failed condition comes back in the low-level attribute-value shape. */
function unmarshallShallow(item: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(item)) out[name] = fromAttributeValue(value);
  return out;
}

function fromAttributeValue(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  const v = value as Record<string, unknown>;
  if ('S' in v) return v.S;
  if ('N' in v) return Number(v.N);
  if ('BOOL' in v) return v.BOOL;
  if ('NULL' in v) return null;
  if ('M' in v) return unmarshallShallow(v.M as Record<string, unknown>);
  if ('L' in v) return (v.L as unknown[]).map(fromAttributeValue);
  return value;
}
