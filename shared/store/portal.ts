// The member portal's links and sessions (docs/portal.md).
//
// Items (tokens are stored only as SHA-256 digests, like API keys and dashboard sessions):
// - portal link    `PORTAL_LINK#<sha256(token)>` / `PORTAL_LINK`: account, member, session id, return URL;
//   opens a session once (deleted under a condition), within PORTAL_LINK_SECONDS (`expires_at`, also the TTL);
//   an affiliate's emailed login link is the same item with `mode: 'cookie'`, 15 minutes, and opens only a
//   cookie session (which slides: `slid_at`, 12 hours from its last use, 7 days at most);
// - portal session `PORTAL_SESSION#<sha256(token)>` / `PORTAL_SESSION`: the same, with the account's plan
//   copied in, so authenticating a portal request is one GetItem; `expires_at` is checked on every read
//   (TTL deletion is lazy) and is the TTL;
// - ref            `A#<acct>#PORTAL#<member_id>` / `LINK#<digest>` or `SESSION#<digest>`: the member's open
//   links and sessions, so `DELETE /v1/members/{id}/portal-sessions/` can end them all. A ref outlives
//   what it names by a minute (its own TTL).
// The lookup items are keyed by digest alone (a request knows only its token), as API keys are; every
// item that is listed per account starts with the account id.
import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { NotFoundError } from '../domain/errors';
import { isEntityId } from '../domain/ids';
import { isPlan, type Plan } from '../domain/plans';
import {
  COOKIE_SESSION_MAX_SECONDS,
  COOKIE_SESSION_SECONDS,
  COOKIE_SESSION_SLIDE_SECONDS,
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
import { errorFields, log } from '../log';
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
  /** How its token travels: `Authorization: Bearer` (embedded) or the `refloop_portal` cookie (affiliates). */
  mode: PortalMode;
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
export async function openPortalSession(
  linkToken: string,
  mode: PortalMode = 'bearer',
  refused: () => Error = linkRefused,
): Promise<{ token: string; session: PortalSession; account: Record<string, unknown> }> {
  const now = nowSeconds();
  const linkHash = tokenHash(linkToken);
  const link = await getItem(portalKeys.link(linkHash));
  if (!link || typeof link.account_id !== 'string' || typeof link.member_id !== 'string' || Number(link.expires_at) <= now) throw refused();
  // A link opens only a session of its own mode: an affiliate's login link is traded at
  // POST /portal/v1/login-sessions/ for a cookie, the app's portal link at POST /portal/v1/sessions/.
  if ((link.mode ?? 'bearer') !== mode) throw refused();
  const accountId = link.account_id;
  const memberId = link.member_id;
  const account = await getItem(keys.account(accountId));
  if (!account || !isPlan(account.plan)) throw refused();
  const token = newPortalToken(SESSION_PREFIX);
  const hash = tokenHash(token);
  const session: PortalSession = {
    id: String(link.id),
    accountId,
    memberId,
    plan: account.plan,
    returnUrl: typeof link.return_url === 'string' ? link.return_url : null,
    expiresAt: now + (mode === 'cookie' ? COOKIE_SESSION_SECONDS : PORTAL_SESSION_SECONDS),
    hash,
    mode,
  };
  // A cookie session slides: its ref lives as long as the session could (its maximum lifetime).
  const refExpires = mode === 'cookie' ? now + COOKIE_SESSION_MAX_SECONDS : session.expiresAt;
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
          ...(mode === 'cookie' ? { mode, slid_at: now } : {}),
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
          expires_at: refExpires + REF_GRACE_SECONDS,
        },
      },
    },
    { Delete: { TableName: tableName(), Key: portalKeys.ref(accountId, memberId, 'LINK', linkHash) } },
  ];
  try {
    await transact(items);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw refused();
    throw err;
  }
  return { token, session, account };
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
  const now = nowSeconds();
  if (Number(Item.expires_at) <= now) return null;
  const session: PortalSession = {
    id: String(Item.id),
    accountId: Item.account_id,
    memberId: Item.member_id,
    plan: Item.plan,
    returnUrl: typeof Item.return_url === 'string' ? Item.return_url : null,
    expiresAt: Number(Item.expires_at),
    hash,
    mode: Item.mode === 'cookie' ? 'cookie' : 'bearer',
  };
  if (session.mode === 'cookie') await slide(session, Number(Item.created_at), Number(Item.slid_at ?? Item.created_at), now);
  return session;
}

/**
 * A cookie session's expiry slides to 12 hours after its use, written at most once per
 * COOKIE_SESSION_SLIDE_SECONDS and never past COOKIE_SESSION_MAX_SECONDS after its login. A failed write
 * (the session ended meanwhile, a throttle) leaves the request as it is: the old expiry still holds.
 */
async function slide(session: PortalSession, createdAt: number, slidAt: number, now: number): Promise<void> {
  if (now - slidAt < COOKIE_SESSION_SLIDE_SECONDS) return;
  const expiresAt = Math.min(now + COOKIE_SESSION_SECONDS, (Number.isFinite(createdAt) ? createdAt : now) + COOKIE_SESSION_MAX_SECONDS);
  if (expiresAt <= session.expiresAt) return;
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: portalKeys.session(session.hash),
        UpdateExpression: 'SET expires_at = :e, slid_at = :now',
        ConditionExpression: 'attribute_exists(pk) AND expires_at > :now',
        ExpressionAttributeValues: { ':e': expiresAt, ':now': now },
      }),
    );
    session.expiresAt = expiresAt;
  } catch (err) {
    if ((err as { name?: string }).name !== 'ConditionalCheckFailedException') log('warn', 'portal session not slid', errorFields(err));
  }
}

/** Logs out: the session and its ref go together. Nothing to do when it already ended. */
export async function endPortalSession(session: PortalSession): Promise<void> {
  await transact([
    { Delete: { TableName: tableName(), Key: portalKeys.session(session.hash) } },
    { Delete: { TableName: tableName(), Key: portalKeys.ref(session.accountId, session.memberId, 'SESSION', session.hash) } },
  ]);
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
