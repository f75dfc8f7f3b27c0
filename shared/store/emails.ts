// Member-email state: the account's sender, the exactly-once marker of each message, a member's
// suppression after a bounce or complaint, and the "queued" flags on a referral and its rewards.
//
// The marker (`A#<acct>#EMAIL#<message key>`) moves `sending` (a lease) -> `sent` or `skipped`. A
// worker claims it before calling the sender, completes it after; a sender error releases it (nothing
// was sent, the record is retried). See shared/email/member-emails.ts for the crash window.
import { GetCommand, PutCommand, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException, TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Mailbox } from '../email/sender';
import { db, tableName } from './client';
import { lookup } from './ops';
import { batchGetVia, type Prefetched } from './prefetch';
import { uniqueKeys, keys, recordKeys, TTL_ATTRIBUTE, type Key } from './table';

/** Markers are kept a year: duplicates of a message come within days (SQS, a re-evaluation). */
const MARKER_DAYS = 365;

export type ClaimResult = { claimed: true } | { claimed: false; state: 'sent' | 'skipped' | 'sending' };

type PutParams = ConstructorParameters<typeof PutCommand>[0];

/** The conditional Put that claims an email's marker (a lease of `leaseSeconds`). */
function claimPut(accountId: string, messageKey: string, leaseSeconds: number) {
  const now = Math.floor(Date.now() / 1000);
  return {
    TableName: tableName(),
    Item: {
      ...recordKeys.emailMarker(accountId, messageKey),
      type: 'EmailMarker',
      state: 'sending',
      lease_until: now + leaseSeconds,
      claimed_at: now,
      [TTL_ATTRIBUTE]: now + MARKER_DAYS * 86400,
    },
    // A lease that ran out belongs to an attempt that died (or timed out) before completing.
    ConditionExpression: 'attribute_not_exists(pk) OR (#state = :sending AND lease_until < :now)',
    ExpressionAttributeNames: { '#state': 'state' },
    ExpressionAttributeValues: { ':sending': 'sending', ':now': now },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD' as const,
  };
}

/**
 * Claims an email's marker (a lease of `leaseSeconds`). `also`: a Put stored only with the claim, in the same
 * transaction (the email's unsubscribe token: one write for both, shared/email/member-emails.ts).
 */
export async function claimEmail(accountId: string, messageKey: string, leaseSeconds: number, also?: PutParams): Promise<ClaimResult> {
  const claim = claimPut(accountId, messageKey, leaseSeconds);
  try {
    // The token makes the SDK's own retry of a transaction whose answer was lost succeed, instead of finding its
    // own claim and waiting out the lease.
    if (also)
      await db().send(new TransactWriteCommand({ TransactItems: [{ Put: claim }, { Put: also }], ClientRequestToken: randomUUID() }));
    else await db().send(new PutCommand(claim));
    return { claimed: true };
  } catch (err) {
    // The old item comes back in the wire format ({S: ...}) on the error.
    let raw: unknown;
    if (err instanceof ConditionalCheckFailedException) raw = err.Item?.state;
    else if (err instanceof TransactionCanceledException && err.CancellationReasons?.[0]?.Code === 'ConditionalCheckFailed')
      raw = err.CancellationReasons[0].Item?.state;
    // Two claims at once (a transaction conflict): the other one holds it, as a live lease would.
    else if (err instanceof TransactionCanceledException || (err as { name?: string })?.name === 'TransactionConflictException')
      return { claimed: false, state: 'sending' };
    else throw err;
    const state = typeof raw === 'string' ? raw : (raw as { S?: string } | undefined)?.S;
    return { claimed: false, state: state === 'sent' || state === 'skipped' ? state : 'sending' };
  }
}

/**
 * Several claims (each with its `also`) in ONE transaction, each keeping its condition (a worker batch's,
 * shared/email/email-writes.ts). Resolves when every one is claimed; throws when any condition failed or
 * the transaction could not run, and then nothing of it was written (claimEmail tells each its own answer).
 */
export async function claimEmailsTogether(
  claims: { accountId: string; messageKey: string; leaseSeconds: number; also?: PutParams }[],
): Promise<void> {
  await db().send(
    new TransactWriteCommand({
      TransactItems: claims.flatMap((c) => [
        { Put: claimPut(c.accountId, c.messageKey, c.leaseSeconds) },
        ...(c.also ? [{ Put: c.also }] : []),
      ]),
      ClientRequestToken: randomUUID(),
    }),
  );
}

export type EmailCompletion = { state: 'sent'; messageId: string } | { state: 'skipped'; reason: string };

/** The Update that completes a claimed marker. */
function completeUpdate(accountId: string, messageKey: string, outcome: EmailCompletion) {
  return {
    TableName: tableName(),
    Key: recordKeys.emailMarker(accountId, messageKey),
    UpdateExpression: 'SET #state = :state, completed_at = :now, #detail = :detail REMOVE lease_until',
    ExpressionAttributeNames: { '#state': 'state', '#detail': outcome.state === 'sent' ? 'message_id' : 'reason' },
    ExpressionAttributeValues: {
      ':state': outcome.state,
      ':now': Math.floor(Date.now() / 1000),
      ':detail': outcome.state === 'sent' ? outcome.messageId : outcome.reason,
    },
  };
}

/** Completes a claimed marker: `sent` (with the sender's message id) or `skipped` (with the reason). */
export async function completeEmail(accountId: string, messageKey: string, outcome: EmailCompletion): Promise<void> {
  await db().send(new UpdateCommand(completeUpdate(accountId, messageKey, outcome)));
}

/** Several completions in ONE transaction (distinct markers; a failure wrote nothing: complete each on its own). */
export async function completeEmailsTogether(
  completions: { accountId: string; messageKey: string; outcome: EmailCompletion }[],
): Promise<void> {
  await db().send(
    new TransactWriteCommand({
      TransactItems: completions.map((c) => ({ Update: completeUpdate(c.accountId, c.messageKey, c.outcome) })),
      ClientRequestToken: randomUUID(),
    }),
  );
}

/** Gives a claim back after the sender refused the message (nothing was sent). */
export async function releaseEmail(accountId: string, messageKey: string): Promise<void> {
  await db()
    .send(
      new UpdateCommand({
        TableName: tableName(),
        Key: recordKeys.emailMarker(accountId, messageKey),
        UpdateExpression: 'SET lease_until = :zero',
        ConditionExpression: '#state = :sending',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':zero': 0, ':sending': 'sending' },
      }),
    )
    .catch((err: unknown) => {
      if (!(err instanceof ConditionalCheckFailedException)) throw err;
    });
}

export async function getEmailMarker(accountId: string, messageKey: string): Promise<Record<string, unknown> | undefined> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: recordKeys.emailMarker(accountId, messageKey), ConsistentRead: true }),
  );
  return Item;
}

/** The account's sender for member emails (operator CLI `account set-email`). */
export async function setAccountSender(accountId: string, sender: Mailbox): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.account(accountId),
        UpdateExpression: 'SET email_from = :a, email_from_name = :n',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':a': sender.address, ':n': sender.name },
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

export function senderOf(account: Record<string, unknown> | undefined): Mailbox | null {
  if (typeof account?.email_from !== 'string' || account.email_from === '') return null;
  return { address: account.email_from, name: typeof account.email_from_name === 'string' ? account.email_from_name : '' };
}

/** Account + referral + member in one BatchGet (what one member email needs). */
/** What emailContext reads: the account, the referral, the member. */
export const emailContextKeys = (accountId: string, referralId: string, memberId: string): Key[] => [
  keys.account(accountId),
  keys.referral(accountId, referralId),
  keys.member(accountId, memberId),
];

/** `pre`: the worker batch's prefetch (./prefetch.ts), which read these keys with the other records'. */
export async function emailContext(accountId: string, referralId: string, memberId: string, pre?: Prefetched) {
  const found = await batchGetVia(pre, emailContextKeys(accountId, referralId, memberId));
  return {
    account: lookup(found, keys.account(accountId)),
    referral: lookup(found, keys.referral(accountId, referralId)),
    member: lookup(found, keys.member(accountId, memberId)),
  };
}

/** The address a member's emails bounced or complained on; it stops applying once the member's email changes. */
export function suppressedAddress(member: Record<string, unknown> | undefined): string | null {
  const s = member?.email_suppressed as { address?: unknown } | undefined;
  return typeof s?.address === 'string' ? s.address : null;
}

/** Records a hard bounce or a complaint on the member's address; false when the member is gone. */
export async function suppressMemberEmail(
  accountId: string,
  memberId: string,
  address: string,
  reason: 'bounce' | 'complaint',
): Promise<boolean> {
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.member(accountId, memberId),
        UpdateExpression: 'SET email_suppressed = :s',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':s': { address: address.toLowerCase(), reason, at: Math.floor(Date.now() / 1000) } },
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

/** The member whose email claim holds this address (the admin CLI's bounce simulation). */
export async function memberIdByEmail(accountId: string, address: string): Promise<string | null> {
  const { Item } = await db().send(
    new GetCommand({ TableName: tableName(), Key: uniqueKeys.memberEmailClaim(accountId, address), ConsistentRead: true }),
  );
  return typeof Item?.member_id === 'string' ? Item.member_id : null;
}

/**
 * Notes on the referral that its notices are queued (so later evaluations do not queue them again).
 * Each reward is addressed by index and checked by id; a referral changed meanwhile is left alone (the
 * next evaluation queues again, and the worker's marker keeps it to one email).
 */
export async function markEmailsQueued(
  accountId: string,
  referralId: string,
  conversion: boolean,
  rewards: { index: number; id: string }[],
): Promise<void> {
  // A few dozen rewards per update: an expression may not exceed 4 KB, and one evaluation can earn hundreds.
  const PER_UPDATE = 40;
  for (let i = 0; i === 0 || i < rewards.length; i += PER_UPDATE)
    await markSome(accountId, referralId, conversion && i === 0, rewards.slice(i, i + PER_UPDATE));
}

async function markSome(
  accountId: string,
  referralId: string,
  conversion: boolean,
  rewards: { index: number; id: string }[],
): Promise<void> {
  const names: Record<string, string> = { '#rw': 'rewards', '#id': 'id' };
  const values: Record<string, unknown> = { ':t': true };
  const sets = conversion ? ['conversion_email_queued = :t'] : [];
  const conditions = ['attribute_exists(pk)'];
  rewards.forEach(({ index, id }, i) => {
    sets.push(`#rw[${index}].email_queued = :t`);
    conditions.push(`#rw[${index}].#id = :r${i}`);
    values[`:r${i}`] = id;
  });
  if (sets.length === 0) return;
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.referral(accountId, referralId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: conditions.join(' AND '),
        ExpressionAttributeNames: rewards.length > 0 ? names : undefined,
        ExpressionAttributeValues: values,
      }),
    );
  } catch (err) {
    if (!(err instanceof ConditionalCheckFailedException)) throw err;
  }
}
