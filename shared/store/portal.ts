// The member portal's links and sessions (docs/portal.md).
//
// Items (tokens are stored only as SHA-256 digests, like API keys and dashboard sessions):
// - portal link    `PORTAL_LINK#<sha256(token)>` / `PORTAL_LINK`: account, member, session id, return URL;
//   opens a session once (deleted under a condition), within PORTAL_LINK_SECONDS (`expires_at`, also the TTL);
// - portal session `PORTAL_SESSION#<sha256(token)>` / `PORTAL_SESSION`: the same, with the account's plan
//   copied in, so authenticating a portal request is one GetItem; `expires_at` is checked on every read
//   (TTL deletion is lazy) and is the TTL;
// - ref            `A#<acct>#PORTAL#<member_id>` / `LINK#<digest>` or `SESSION#<digest>`: the member's open
//   links and sessions, so `DELETE /v1/members/{id}/portal-sessions/` can end them all. A ref outlives
//   what it names by a minute (its own TTL).
// The lookup items are keyed by digest alone (a request knows only its token), as API keys are; every
// item that is listed per account starts with the account id.
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { NotFoundError } from '../domain/errors';
import { isEntityId } from '../domain/ids';
import { isPlan, type Plan } from '../domain/plans';
import {
  LINK_PREFIX,
  linkRefused,
  newPortalSessionId,
  newPortalToken,
  LOGIN_LINK_SECONDS,
  PORTAL_LINK_SECONDS,
  PORTAL_SESSION_SECONDS,
  SESSION_PREFIX,
} from '../domain/portal';
import { tokenHash } from '../domain/team';
import { db, tableName } from './client';
import { ConditionsFailedError, getItem, nowSeconds, queryAll, transact, type TransactItem } from './ops';
import { keys, type Key } from './table';

/**
 * How a portal link opens and its session travels: `bearer` (the embedded widget's link, 10 minutes, a
 * session token the page sends as `Authorization: Bearer`) or `cookie` (an affiliate's emailed login link,
 * 15 minutes, a session in the `refloop_portal` cookie that slides 12 hours from its last use). A link
 * opens only a session of its own mode.
 */
export type PortalMode = 'bearer' | 'cookie';

export interface PortalSession {
  /** `ps_…`: the id POST /v1/members/{id}/portal-sessions/ answered (its link and its session share it). */
  id: string;
  accountId: string;
  memberId: string;
  plan: Plan;
  returnUrl: string | null;
  expiresAt: number;
  /** The digest of the session token. */
  hash: string;
}

export const portalKeys = {
  link: (hash: string): Key => ({ pk: `PORTAL_LINK#${hash}`, sk: 'PORTAL_LINK' }),
  session: (hash: string): Key => ({ pk: `PORTAL_SESSION#${hash}`, sk: 'PORTAL_SESSION' }),
  refs: (acct: string, memberId: string) => `A#${acct}#PORTAL#${memberId}`,
  ref: (acct: string, memberId: string, kind: 'LINK' | 'SESSION', hash: string): Key => ({
    pk: `A#${acct}#PORTAL#${memberId}`,
    sk: `${kind}#${hash}`,
  }),
};

const REF_GRACE_SECONDS = 60;

/**
 * A single-use portal link for one member of the account (404 when the account has no such member): the
 * token, to put in the URL's fragment, and when it stops opening.
 */
export async function createPortalLink(
  accountId: string,
  memberId: string,
  returnUrl: string | null,
  mode: PortalMode = 'bearer',
): Promise<{ id: string; token: string; expiresAt: number }> {
  // Not a member id's shape: no key is built from it (a long one would be an invalid DynamoDB key).
  if (!isEntityId(memberId)) throw new NotFoundError();
  const id = newPortalSessionId();
  const token = newPortalToken(LINK_PREFIX);
  const hash = tokenHash(token);
  const expiresAt = nowSeconds() + (mode === 'cookie' ? LOGIN_LINK_SECONDS : PORTAL_LINK_SECONDS);
  try {
    await transact([
      { ConditionCheck: { TableName: tableName(), Key: keys.member(accountId, memberId), ConditionExpression: 'attribute_exists(pk)' } },
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...portalKeys.link(hash),
            type: 'PortalLink',
            id,
            account_id: accountId,
            member_id: memberId,
            return_url: returnUrl,
            ...(mode === 'cookie' ? { mode } : {}),
            expires_at: expiresAt,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: { ...portalKeys.ref(accountId, memberId, 'LINK', hash), type: 'PortalRef', id, expires_at: expiresAt + REF_GRACE_SECONDS },
        },
      },
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError && err.failed(0)) throw new NotFoundError();
    throw err;
  }
  return { id, token, expiresAt };
}

/**
 * Trades a link token for a session: the link is deleted under the condition that it has not expired (a
 * second attempt finds nothing), the session and its ref are written and the link's ref goes, all in one
 * transaction; a member deleted since gets nothing. 401 for an unknown, used or expired link.
 */
export async function openPortalSession(linkToken: string): Promise<{ token: string; session: PortalSession }> {
  const now = nowSeconds();
  const linkHash = tokenHash(linkToken);
  const link = await getItem(portalKeys.link(linkHash));
  if (!link || typeof link.account_id !== 'string' || typeof link.member_id !== 'string' || Number(link.expires_at) <= now)
    throw linkRefused();
  // An affiliate's login link opens only a cookie session (POST /portal/v1/login-sessions/).
  if ((link.mode ?? 'bearer') !== 'bearer') throw linkRefused();
  const accountId = link.account_id;
  const memberId = link.member_id;
  const account = await getItem(keys.account(accountId));
  if (!account || !isPlan(account.plan)) throw linkRefused();
  const token = newPortalToken(SESSION_PREFIX);
  const hash = tokenHash(token);
  const session: PortalSession = {
    id: String(link.id),
    accountId,
    memberId,
    plan: account.plan,
    returnUrl: typeof link.return_url === 'string' ? link.return_url : null,
    expiresAt: now + PORTAL_SESSION_SECONDS,
    hash,
  };
  const items: TransactItem[] = [
    {
      Delete: {
        TableName: tableName(),
        Key: portalKeys.link(linkHash),
        ConditionExpression: 'attribute_exists(pk) AND expires_at > :now',
        ExpressionAttributeValues: { ':now': now },
      },
    },
    { ConditionCheck: { TableName: tableName(), Key: keys.member(accountId, memberId), ConditionExpression: 'attribute_exists(pk)' } },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...portalKeys.session(hash),
          type: 'PortalSession',
          id: session.id,
          account_id: accountId,
          member_id: memberId,
          plan: session.plan,
          return_url: session.returnUrl,
          created_at: now,
          expires_at: session.expiresAt,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...portalKeys.ref(accountId, memberId, 'SESSION', hash),
          type: 'PortalRef',
          id: session.id,
          expires_at: session.expiresAt + REF_GRACE_SECONDS,
        },
      },
    },
    { Delete: { TableName: tableName(), Key: portalKeys.ref(accountId, memberId, 'LINK', linkHash) } },
  ];
  try {
    await transact(items);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw linkRefused();
    throw err;
  }
  return { token, session };
}

/**
 * The session of a portal token, or null (unknown, revoked or expired). One strongly consistent GetItem,
 * never cached: a revocation stops the very next request.
 */
export async function findPortalSession(token: string): Promise<PortalSession | null> {
  const hash = tokenHash(token);
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: portalKeys.session(hash), ConsistentRead: true }));
  if (Item?.type !== 'PortalSession' || typeof Item.account_id !== 'string' || typeof Item.member_id !== 'string' || !isPlan(Item.plan))
    return null;
  if (Number(Item.expires_at) <= nowSeconds()) return null;
  return {
    id: String(Item.id),
    accountId: Item.account_id,
    memberId: Item.member_id,
    plan: Item.plan,
    returnUrl: typeof Item.return_url === 'string' ? Item.return_url : null,
    expiresAt: Number(Item.expires_at),
    hash,
  };
}

/**
 * Ends every portal link and session of a member (404 when the account has no such member). Answers how
 * many it ended. Each link or session is deleted with its ref in one transaction.
 */
export async function revokePortalSessions(accountId: string, memberId: string): Promise<number> {
  if (!isEntityId(memberId)) throw new NotFoundError();
  const [member, refs] = await Promise.all([
    getItem(keys.member(accountId, memberId)),
    queryAll({ partitionValue: portalKeys.refs(accountId, memberId), consistent: true }),
  ]);
  if (!member && refs.length === 0) throw new NotFoundError();
  // In parallel: a member holds few at once (each lives at most 70 minutes).
  await Promise.all(
    refs.map((ref) => {
      const sk = String(ref.sk);
      const [kind, hash] = sk.split('#') as ['LINK' | 'SESSION', string];
      const target = kind === 'LINK' ? portalKeys.link(hash) : portalKeys.session(hash);
      return transact([
        { Delete: { TableName: tableName(), Key: target } },
        { Delete: { TableName: tableName(), Key: { pk: String(ref.pk), sk } } },
      ]);
    }),
  );
  if (!member) throw new NotFoundError();
  return refs.filter((ref) => Number(ref.expires_at) > nowSeconds()).length;
}
