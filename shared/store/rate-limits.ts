// Rate-limit windows in the table: one conditional UpdateItem per limit per request. The item counts the
// requests of one scope in one fixed window and expires by TTL shortly after the window ends. A request
// over the limit fails the condition and writes nothing, so refused requests do not extend a refusal.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { secondsUntilNextWindow, windowStart, type RateLimit } from '../domain/rate-limits';
import { db, tableName } from './client';
import { keys, TTL_ATTRIBUTE } from './table';

/** Allowed, or refused with the seconds until the window ends. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

export async function consumeRateLimit(accountId: string, scope: string, rule: RateLimit, nowMs = Date.now()): Promise<RateDecision> {
  const start = windowStart(nowMs, rule.windowSeconds);
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.rateWindow(accountId, scope, start),
        UpdateExpression: 'ADD n :one SET #type = :type, #ttl = if_not_exists(#ttl, :ttl)',
        ConditionExpression: 'attribute_not_exists(n) OR n < :limit',
        ExpressionAttributeNames: { '#type': 'type', '#ttl': TTL_ATTRIBUTE },
        ExpressionAttributeValues: { ':one': 1, ':type': 'RateWindow', ':ttl': start + rule.windowSeconds + 60, ':limit': rule.limit },
      }),
    );
    return { allowed: true };
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException || (err as { name?: string }).name === 'ConditionalCheckFailedException') return { allowed: false, retryAfterSeconds: secondsUntilNextWindow(nowMs, rule.windowSeconds) };
    throw err;
  }
}
