// Rate-limit windows in the table. The item `A#<acct>#RATE#<scope>#<window start>` counts the requests of
// one scope in one fixed window and expires by TTL shortly after the window ends.
//
// Counting every request with its own conditional UpdateItem is exact but costs a write per request (and
// serialises every request of a key on one item). So each container counts locally and writes in batches:
// - far below the limit, a request is admitted at once and counted in memory; the container adds its count
//   to the item every `batchSize(limit)` requests (5% of the limit), learning the total of all containers;
// - near the limit (within one batch of it, by the last total seen), every request is counted in the item
//   under the condition `n < limit`, exactly: a refused request writes nothing.
// Limits up to 39 a window have a batch of 1: every request is counted under the condition, exactly.
// Above, each warm container can admit at most one batch (5% of the limit) beyond it per window before it
// sees the others' counts; a cold container starts from 0 and learns the total at its first write.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { secondsUntilNextWindow, windowStart, type RateLimit } from '../domain/rate-limits';
import { db, tableName } from './client';
import { edgeKeys, TTL_ATTRIBUTE } from './table';

/** Allowed, or refused with the seconds until the window ends. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Requests a container counts in memory before it writes them (5% of the limit, at least 1). */
export function batchSize(limit: number): number {
  return Math.max(1, Math.floor(limit / 20));
}

interface WindowCount {
  start: number;
  /** The item's count as last read (all containers, ours included). */
  seen: number;
  /** Admitted here, not written yet. */
  pending: number;
  /** Being written now. */
  writing: number;
}

const counts = new Map<string, WindowCount>();
const MAX_TRACKED = 10_000;

function isConditionFailure(err: unknown): boolean {
  return err instanceof ConditionalCheckFailedException || (err as { name?: string }).name === 'ConditionalCheckFailedException';
}

/** ADD `by` to the window's item (only while n < limit when `limit` is given); the new total. */
async function add(accountId: string, scope: string, rule: RateLimit, start: number, by: number, limit?: number): Promise<number> {
  const out = await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: edgeKeys.rateWindow(accountId, scope, start),
      UpdateExpression: 'ADD n :by SET #type = :type, #ttl = if_not_exists(#ttl, :ttl)',
      ...(limit !== undefined ? { ConditionExpression: 'attribute_not_exists(n) OR n < :limit' } : {}),
      ExpressionAttributeNames: { '#type': 'type', '#ttl': TTL_ATTRIBUTE },
      ExpressionAttributeValues: {
        ':by': by,
        ':type': 'RateWindow',
        ':ttl': start + rule.windowSeconds + 60,
        ...(limit !== undefined ? { ':limit': limit } : {}),
      },
      ReturnValues: 'UPDATED_NEW',
    }),
  );
  return Number(out.Attributes?.n ?? 0);
}

async function flush(accountId: string, scope: string, rule: RateLimit, w: WindowCount): Promise<void> {
  const by = w.pending;
  if (by === 0) return;
  w.pending = 0;
  w.writing += by;
  try {
    w.seen = Math.max(w.seen, await add(accountId, scope, rule, w.start, by));
  } catch (err) {
    w.pending += by; // counted again with the next write
    throw err;
  } finally {
    w.writing -= by;
  }
}

/** Counts one request of `scope` against `rule`; see the header for how exact that is. */
export async function consumeRateLimit(accountId: string, scope: string, rule: RateLimit, nowMs = Date.now()): Promise<RateDecision> {
  const start = windowStart(nowMs, rule.windowSeconds);
  const id = `${accountId}|${scope}`;
  let w = counts.get(id);
  if (!w || w.start !== start) {
    if (counts.size >= MAX_TRACKED) counts.clear();
    w = { start, seen: 0, pending: 0, writing: 0 };
    counts.set(id, w);
  }
  // Counts only grow within a window: once this container has seen it full, it is refused without a call.
  if (w.seen >= rule.limit && w.pending === 0)
    return { allowed: false, retryAfterSeconds: secondsUntilNextWindow(nowMs, rule.windowSeconds) };
  const batch = batchSize(rule.limit);
  // A batch of 1 is counted exactly (the condition decides), so small limits are never overshot.
  if (batch > 1 && w.seen + w.pending + w.writing + batch < rule.limit) {
    w.pending++;
    if (w.pending >= batch) await flush(accountId, scope, rule, w);
    return { allowed: true };
  }
  // Near the limit: what this container admitted goes in first, then this request, exactly.
  await flush(accountId, scope, rule, w);
  try {
    w.seen = Math.max(w.seen, await add(accountId, scope, rule, start, 1, rule.limit));
    return { allowed: true };
  } catch (err) {
    if (!isConditionFailure(err)) throw err;
    w.seen = Math.max(w.seen, rule.limit);
    return { allowed: false, retryAfterSeconds: secondsUntilNextWindow(nowMs, rule.windowSeconds) };
  }
}

/** Whether this container already knows the window of `scope` is full (no call; nothing counted). */
export function knownExhausted(accountId: string, scope: string, rule: RateLimit, nowMs = Date.now()): RateDecision {
  const w = counts.get(`${accountId}|${scope}`);
  if (w && w.start === windowStart(nowMs, rule.windowSeconds) && w.seen >= rule.limit) {
    return { allowed: false, retryAfterSeconds: secondsUntilNextWindow(nowMs, rule.windowSeconds) };
  }
  return { allowed: true };
}

/** Forgets the in-memory counts (tests that change the limits between requests). */
export function resetRateCounts(): void {
  counts.clear();
}
