// Members' Stripe Express accounts (docs/payouts.md "Members' methods"). A member's connected account
// `acct_…` is stored on the member (`stripe_account_id`, `stripe_ready`) and named by a lookup item
// `A#<acct>#STRIPE_ACCOUNT` / `acct_…` -> `member_id`, so Connect's account.updated (which names only the
// connected account) finds its member in one GetItem. Both are written in one transaction, conditioned on
// the member having no account yet: a retry or a race of two "Set up payouts" stores one account.
import { ACCOUNT_RAIL } from '../rails/member-accounts';
import { tableName } from './client';
import { ConditionsFailedError, getItem, transact } from './ops';
import { keys, type Key } from './table';

/**
 * The lookup's key, apart from `keys` (see linkKeys in ./table.ts): a bundle carries an object literal
 * whole, and only the portal's Stripe link and the Connect webhook's worker need this one.
 */
export const stripeAccountKeys = {
  /** A member's Stripe connected account -> the member, per Refloop account. */
  account: (acct: string, stripeAccountId: string): Key => ({ pk: `A#${acct}#STRIPE_ACCOUNT`, sk: stripeAccountId }),
};

/** `acct_` and letters or digits: never a key DynamoDB would refuse. */
export const isStripeAccountId = (v: unknown): v is string => typeof v === 'string' && /^acct_[A-Za-z0-9]{1,100}$/.test(v);

/**
 * Stores `stripeAccountId` as the member's connected account and makes Stripe their payout method (the
 * member, its version bumped, and the lookup item, in one transaction). False when the member already had
 * an account (or no longer exists): nothing is written then.
 */
export async function attachStripeAccount(accountId: string, memberId: string, stripeAccountId: string): Promise<boolean> {
  try {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.member(accountId, memberId),
          UpdateExpression: 'SET stripe_account_id = :sa, payout_method = :stripe, #version = #version + :one',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(stripe_account_id)',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':sa': stripeAccountId, ':stripe': ACCOUNT_RAIL, ':one': 1 },
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: { ...stripeAccountKeys.account(accountId, stripeAccountId), type: 'StripeAccount', member_id: memberId },
          ConditionExpression: 'attribute_not_exists(pk) OR member_id = :m',
          ExpressionAttributeValues: { ':m': memberId },
        },
      },
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionsFailedError) return false;
    throw err;
  }
}

/** Makes Stripe the member's payout method (a member who already has an account); false when it already was. */
export async function chooseStripe(accountId: string, memberId: string): Promise<boolean> {
  try {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.member(accountId, memberId),
          UpdateExpression: 'SET payout_method = :stripe, #version = #version + :one',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(payout_method) OR payout_method <> :stripe)',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':stripe': ACCOUNT_RAIL, ':one': 1 },
        },
      },
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionsFailedError) return false;
    throw err;
  }
}

/** The member whose connected account `stripeAccountId` is, or null. */
export async function memberOfStripeAccount(accountId: string, stripeAccountId: string): Promise<string | null> {
  if (!isStripeAccountId(stripeAccountId)) return null;
  const item = await getItem(stripeAccountKeys.account(accountId, stripeAccountId));
  return typeof item?.member_id === 'string' ? item.member_id : null;
}

/**
 * Records Stripe's word on the member's account: `stripe_ready`, only on the member whose account it still
 * is and only when it changes (a redelivered or stale event writes nothing). True when it changed.
 */
export async function setStripeReady(accountId: string, memberId: string, stripeAccountId: string, ready: boolean): Promise<boolean> {
  try {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.member(accountId, memberId),
          UpdateExpression: 'SET stripe_ready = :ready, #version = #version + :one',
          ConditionExpression: 'stripe_account_id = :sa AND (attribute_not_exists(stripe_ready) OR stripe_ready <> :ready)',
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':sa': stripeAccountId, ':ready': ready, ':one': 1 },
        },
      },
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionsFailedError) return false;
    throw err;
  }
}
