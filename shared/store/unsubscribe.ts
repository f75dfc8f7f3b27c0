// Unsubscribe links of member emails (docs/member-emails in docs/api-tour.md and docs/data-model.md):
// each conversion or reward email carries a random token in its unsubscribe link; only the token's SHA-256
// is stored, as `UNSUB#<sha256(token)>` / `UNSUB` with the account, the member and the programme's name.
// The link needs no login: the token alone names one member of one account, so nobody can reach another
// account's member with it, and the path carries no id to tamper with. Kept a year (TTL): a member may
// unsubscribe from an old email.
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { looksLikeToken, newToken, tokenHash } from '../domain/team';
import { db, tableName } from './client';
import { getItem } from './ops';
import { TTL_ATTRIBUTE, type Key } from './table';

export const UNSUBSCRIBE_DAYS = 365;

const unsubscribeKey = (hash: string): Key => ({ pk: `UNSUB#${hash}`, sk: 'UNSUB' });

export interface UnsubscribeTarget {
  accountId: string;
  /** '' for an applicant (no member yet): then `email` names the address that is opted out. */
  memberId: string;
  /** Whose emails these are (the sender's name), for the page. */
  programme: string;
  /** An applicant's address (an application's rejection, shared/email/affiliate-emails.ts). */
  email?: string;
}

/** An applicant's address that asked for no more emails of this account's programme (kept a year). */
const applicantOptOutKey = (accountId: string, email: string): Key => ({
  pk: `A#${accountId}#EMAIL_OPT_OUT#${email.trim().toLowerCase()}`,
  sk: 'OPT_OUT',
});

export async function optOutApplicant(accountId: string, email: string, now = Math.floor(Date.now() / 1000)): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...applicantOptOutKey(accountId, email),
        type: 'EmailOptOut',
        created_at: now,
        [TTL_ATTRIBUTE]: now + UNSUBSCRIBE_DAYS * 86400,
      },
    }),
  );
}

export async function applicantOptedOut(accountId: string, email: string): Promise<boolean> {
  return (await getItem(applicantOptOutKey(accountId, email))) !== undefined;
}

/** A new unsubscribe token's item (only its digest is the key), to store with a claim: the token and the Put's input. */
export function unsubscribeTokenPut(target: UnsubscribeTarget, now = Math.floor(Date.now() / 1000)) {
  const token = newToken();
  const put = {
    TableName: tableName(),
    Item: {
      ...unsubscribeKey(tokenHash(token)),
      type: 'UnsubscribeToken',
      account_id: target.accountId,
      member_id: target.memberId,
      programme: target.programme,
      ...(target.email ? { email: target.email.trim().toLowerCase() } : {}),
      created_at: now,
      [TTL_ATTRIBUTE]: now + UNSUBSCRIBE_DAYS * 86400,
    },
    ConditionExpression: 'attribute_not_exists(pk)',
  };
  return { token, put };
}

/** A new unsubscribe token for one member (stored as its digest); the caller puts it in the email's link. */
export async function issueUnsubscribeToken(target: UnsubscribeTarget, now = Math.floor(Date.now() / 1000)): Promise<string> {
  const { token, put } = unsubscribeTokenPut(target, now);
  await db().send(new PutCommand(put));
  return token;
}

/** The member a token names, or null (malformed, unknown or expired: TTL deletion is lazy). One GetItem at most. */
export async function findUnsubscribeTarget(token: string, now = Math.floor(Date.now() / 1000)): Promise<UnsubscribeTarget | null> {
  if (!looksLikeToken(token)) return null;
  const item = await getItem(unsubscribeKey(tokenHash(token)));
  if (!item || typeof item.account_id !== 'string' || typeof item.member_id !== 'string' || Number(item[TTL_ATTRIBUTE]) <= now) return null;
  return {
    accountId: item.account_id,
    memberId: item.member_id,
    programme: String(item.programme ?? ''),
    ...(typeof item.email === 'string' ? { email: item.email } : {}),
  };
}
