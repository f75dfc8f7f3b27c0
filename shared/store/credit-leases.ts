// One provider-side credit change at a time on one subscription, for providers whose credits on a
// subscription combine into one object (Paddle Billing: one discount per subscription, rewritten to add or
// remove a credit). Two workers that both read the discount and both wrote their own combination would
// lose one credit; the lease makes the second wait (its record fails and SQS retries it).
//
// One item per subscription, `A#<acct>#CREDIT_LEASE#<subscription>`, held for LEASE_SECONDS at most
// (an expired lease is taken over, so a crashed holder never blocks for long) and deleted on release.
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { randomUUID } from 'node:crypto';
import type { ProviderId } from '../domain/models';
import { db, tableName } from './client';
import { moneyKeys, TTL_ATTRIBUTE } from './table';

/** Longer than a credit's provider calls (a few, each with its timeout and retries within its budget). */
export const LEASE_SECONDS = 60;

/** The lease's token, or null when another worker holds it. */
export async function acquireCreditLease(accountId: string, subscriptionId: ProviderId, nowMs = Date.now()): Promise<string | null> {
  const token = randomUUID();
  const now = Math.floor(nowMs / 1000);
  try {
    await db().send(
      new PutCommand({
        TableName: tableName(),
        Item: {
          ...moneyKeys.creditLease(accountId, subscriptionId),
          type: 'Claim',
          token,
          held_until: now + LEASE_SECONDS,
          [TTL_ATTRIBUTE]: now + LEASE_SECONDS + 3600,
        },
        ConditionExpression: 'attribute_not_exists(pk) OR held_until < :now',
        ExpressionAttributeValues: { ':now': now },
      }),
    );
    return token;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return null;
    throw err;
  }
}

export async function releaseCreditLease(accountId: string, subscriptionId: ProviderId, token: string): Promise<void> {
  try {
    await db().send(
      new DeleteCommand({
        TableName: tableName(),
        Key: moneyKeys.creditLease(accountId, subscriptionId),
        ConditionExpression: '#t = :t',
        ExpressionAttributeNames: { '#t': 'token' },
        ExpressionAttributeValues: { ':t': token },
      }),
    );
  } catch (err) {
    // Expired and taken over by another worker: theirs now.
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}
