// The dashboard's people, login links, sessions and the account's API key records (docs/dashboard.md).
//
// Items:
// - team member   `A#<acct>#TEAM` / `<tm_id>`: email, role, created_at, last_login_at;
// - email lookup  `OPERATOR_EMAIL#<sha256(email)>` / `A#<acct>`: which accounts an address may log in to
//   (a lookup by digest like an API key's; the login-link worker reads it, never a request path);
// - login link    `LOGIN#<sha256(token)>` / `LOGIN`: single use (deleted under a condition), 15 minutes;
// - session       `SESSION#<sha256(token)>` / `SESSION`: role and plan copied in, so auth is one GetItem;
//   `expires_at` is both the sliding expiry (checked on every read) and the TTL that deletes it later; it
//   never passes `created_at` + 7 days (SESSION_MAX_SECONDS);
// - session ref   `A#<acct>#TEAM_SESSIONS#<tm_id>` / `<sha256(token)>`: a member's sessions, so a removal
//   ends them and a role change reaches them;
// - owners        the counter `owners`: the last owner can be neither removed nor demoted;
// - API key record `A#<acct>#APIKEYS` / `<key_id>`: name, prefix and the lookup item's digest (the key's
//   plaintext is shown once and never stored).
import { randomBytes } from 'node:crypto';
import { DeleteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { hashApiKey } from '../domain/api-keys';
import { DetailError, NotFoundError, ValidationError } from '../domain/errors';
import { isPlan, type Plan } from '../domain/plans';
import {
  emailHash,
  isRole,
  LOGIN_LINK_SECONDS,
  MAX_TEAM,
  newToken,
  normalEmail,
  SESSION_MAX_SECONDS,
  SESSION_SECONDS,
  SESSION_SLIDE_SECONDS,
  tokenHash,
  type Role,
} from '../domain/team';
import { db, tableName } from './client';
import { ConditionsFailedError, getItem, nowSeconds, queryAll, transact, type TransactItem } from './ops';
import { accessKeys, keys, type Key } from './table';
import { counterKey } from './shards';

export interface TeamMember {
  id: string;
  email: string;
  role: Role;
  created_at: number;
  last_login_at: number | null;
}

export interface Session {
  accountId: string;
  operatorId: string;
  email: string;
  role: Role;
  plan: Plan;
  expiresAt: number;
  accountName: string;
  /** The digest of the token (what the session's items are keyed by). */
  hash: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  prefix: string;
  created_at: number;
  revoked_at: number | null;
}

export const TEAM_ID = /^tm_[0-9a-f]{24}$/;
export const KEY_ID = /^key_[0-9a-f]{24}$/;
const newTeamId = () => `tm_${randomBytes(12).toString('hex')}`;
export const newKeyId = () => `key_${randomBytes(12).toString('hex')}`;

const teamPk = (acct: string) => `A#${acct}#TEAM`;
export const teamKeys = {
  member: (acct: string, id: string): Key => ({ pk: teamPk(acct), sk: id }),
  email: (acct: string, email: string): Key => ({ pk: `OPERATOR_EMAIL#${emailHash(email)}`, sk: `A#${acct}` }),
  emailPartition: (email: string) => `OPERATOR_EMAIL#${emailHash(email)}`,
  login: (hash: string): Key => ({ pk: `LOGIN#${hash}`, sk: 'LOGIN' }),
  session: (hash: string): Key => ({ pk: `SESSION#${hash}`, sk: 'SESSION' }),
  sessionRefs: (acct: string, operatorId: string) => `A#${acct}#TEAM_SESSIONS#${operatorId}`,
  sessionRef: (acct: string, operatorId: string, hash: string): Key => ({ pk: `A#${acct}#TEAM_SESSIONS#${operatorId}`, sk: hash }),
  apiKeyRecords: (acct: string) => `A#${acct}#APIKEYS`,
  apiKeyRecord: (acct: string, id: string): Key => ({ pk: `A#${acct}#APIKEYS`, sk: id }),
};

function toMember(item: Record<string, unknown> | undefined): TeamMember | null {
  if (item?.type !== 'Operator' || !isRole(item.role)) return null;
  return {
    id: String(item.id),
    email: String(item.email),
    role: item.role,
    created_at: Number(item.created_at),
    last_login_at: typeof item.last_login_at === 'number' ? item.last_login_at : null,
  };
}

export async function listTeam(accountId: string): Promise<TeamMember[]> {
  const items = await queryAll({ partitionValue: teamPk(accountId), consistent: true });
  return items
    .map(toMember)
    .filter((m): m is TeamMember => m !== null)
    .sort((a, b) => a.created_at - b.created_at || a.email.localeCompare(b.email));
}

export async function getTeamMember(accountId: string, id: string): Promise<TeamMember | null> {
  if (!TEAM_ID.test(id)) return null;
  return toMember(await getItem(teamKeys.member(accountId, id)));
}

const ownersDelta = (accountId: string, delta: number, atLeast?: number): TransactItem => ({
  Update: {
    TableName: tableName(),
    Key: counterKey(accountId, 'owners', 0),
    UpdateExpression: 'ADD n :d SET #type = :type',
    ...(atLeast !== undefined ? { ConditionExpression: 'n >= :min' } : {}),
    ExpressionAttributeNames: { '#type': 'type' },
    ExpressionAttributeValues: { ':d': delta, ':type': 'Counter', ...(atLeast !== undefined ? { ':min': atLeast } : {}) },
  },
});

const LAST_OWNER = 'An account needs at least one owner: make someone else owner first.';

/**
 * Adds a person to the account's team (409 when the address is already in it). The email lookup item and
 * the member item are written together, so an address is in a team exactly once.
 */
export async function addTeamMember(accountId: string, email: string, role: Role): Promise<TeamMember> {
  const address = normalEmail(email);
  const team = await queryAll({ partitionValue: teamPk(accountId) });
  if (team.length >= MAX_TEAM) throw new DetailError(403, `A team has at most ${MAX_TEAM} people; remove someone first.`);
  const member: TeamMember = { id: newTeamId(), email: address, role, created_at: nowSeconds(), last_login_at: null };
  const items: TransactItem[] = [
    { ConditionCheck: { TableName: tableName(), Key: keys.account(accountId), ConditionExpression: 'attribute_exists(pk)' } },
    {
      Put: {
        TableName: tableName(),
        Item: { ...teamKeys.email(accountId, address), type: 'OperatorEmail', account_id: accountId, operator_id: member.id },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
    {
      Put: {
        TableName: tableName(),
        Item: { ...teamKeys.member(accountId, member.id), type: 'Operator', account_id: accountId, ...member },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ];
  if (role === 'owner') items.push(ownersDelta(accountId, 1));
  try {
    await transact(items);
  } catch (err) {
    if (err instanceof ConditionsFailedError && err.failed(0)) throw new NotFoundError();
    if (err instanceof ConditionsFailedError && err.failed(1)) throw ValidationError.field('email', 'This address is already in the team.');
    throw err;
  }
  return member;
}

/** The member's sessions (their refs), for a removal or a role change. */
async function sessionRefs(accountId: string, operatorId: string): Promise<string[]> {
  const refs = await queryAll({ partitionValue: teamKeys.sessionRefs(accountId, operatorId), consistent: true });
  return refs.map((r) => String(r.sk));
}

const CHANGED_MEANWHILE = 'This member changed meanwhile; reload and try again.';
/** Rounds of a role change or a removal that lost a race (re-read, decided again), before a 409. */
const TEAM_WRITE_ROUNDS = 4;

/** The member's role condition: the write happens only if the role is still the one the decision read. */
const roleIs = (was: Role) => ({
  ConditionExpression: '#role = :was',
  ExpressionAttributeNames: { '#role': 'role' },
  ExpressionAttributeValues: { ':was': was },
});

/**
 * Changes a member's role; their open sessions get the new role at once. One transaction decides it: the
 * member's role must still be the one read (else it is read again and decided again), and demoting an owner
 * needs the owners counter at 2 or more, so two racing changes can never leave the account without an owner
 * or its counter off (docs/dashboard.md "Roles").
 */
export async function setTeamRole(accountId: string, id: string, role: Role): Promise<TeamMember> {
  for (let round = 1; ; round++) {
    const member = await getTeamMember(accountId, id);
    if (!member) throw new NotFoundError();
    if (member.role === role) return member;
    const condition = roleIs(member.role);
    const items: TransactItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: teamKeys.member(accountId, id),
          UpdateExpression: 'SET #role = :role',
          ...condition,
          ExpressionAttributeValues: { ...condition.ExpressionAttributeValues, ':role': role },
        },
      },
    ];
    // Demoting an owner needs another owner left (n >= 2 before the change); promoting adds one.
    if (member.role === 'owner') items.push(ownersDelta(accountId, -1, 2));
    if (role === 'owner') items.push(ownersDelta(accountId, 1));
    try {
      await transact(items);
    } catch (err) {
      if (err instanceof ConditionsFailedError && err.failed(0)) {
        if (round < TEAM_WRITE_ROUNDS) continue; // removed or changed meanwhile: read again
        throw new DetailError(409, CHANGED_MEANWHILE);
      }
      if (err instanceof ConditionsFailedError) throw ValidationError.field('role', LAST_OWNER);
      throw err;
    }
    await syncSessionRoles(accountId, id, role);
    return { ...member, role };
  }
}

/**
 * The member's open sessions get `role`, each only while the member still has it (a ConditionCheck on the
 * member beside the session's update): of two role changes racing, the later one's sessions win, never a
 * stale copy.
 */
async function syncSessionRoles(accountId: string, id: string, role: Role): Promise<void> {
  for (const hash of await sessionRefs(accountId, id)) {
    try {
      await transact([
        { ConditionCheck: { TableName: tableName(), Key: teamKeys.member(accountId, id), ...roleIs(role) } },
        {
          Update: {
            TableName: tableName(),
            Key: teamKeys.session(hash),
            UpdateExpression: 'SET #role = :role',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#role': 'role' },
            ExpressionAttributeValues: { ':role': role },
          },
        },
      ]);
    } catch (err) {
      // The role changed again (that change updates the sessions), or the session ended.
      if (!(err instanceof ConditionsFailedError)) throw err;
    }
  }
}

/**
 * Removes a member from the team and ends their sessions. One transaction: the member is deleted only with
 * the role that was read (a promotion racing the removal makes it read again and decide again), and an
 * owner only while the owners counter is 2 or more, which it decrements: the last owner cannot be removed.
 */
export async function removeTeamMember(accountId: string, id: string): Promise<void> {
  for (let round = 1; ; round++) {
    const member = await getTeamMember(accountId, id);
    if (!member) throw new NotFoundError();
    const items: TransactItem[] = [
      { Delete: { TableName: tableName(), Key: teamKeys.member(accountId, id), ...roleIs(member.role) } },
      { Delete: { TableName: tableName(), Key: teamKeys.email(accountId, member.email) } },
    ];
    if (member.role === 'owner') items.push(ownersDelta(accountId, -1, 2));
    try {
      await transact(items);
    } catch (err) {
      if (err instanceof ConditionsFailedError && err.failed(0)) {
        if (round < TEAM_WRITE_ROUNDS) continue; // removed or changed meanwhile: read again
        throw new DetailError(409, CHANGED_MEANWHILE);
      }
      if (err instanceof ConditionsFailedError) throw new DetailError(409, LAST_OWNER);
      throw err;
    }
    for (const hash of await sessionRefs(accountId, id)) await endSessionByHash(accountId, id, hash);
    return;
  }
}

/** The accounts an address may log in to: [{accountId, operatorId}] (the login-link worker). */
export async function membershipsOf(email: string): Promise<{ accountId: string; operatorId: string }[]> {
  const items = await queryAll({ partitionValue: teamKeys.emailPartition(email), consistent: true });
  return items.map((i) => ({ accountId: String(i.account_id), operatorId: String(i.operator_id) }));
}

/** A single-use login link for one member: the token (to email) and when it expires. */
export async function issueLoginToken(accountId: string, operatorId: string): Promise<{ token: string; expiresAt: number }> {
  const token = newToken();
  const expiresAt = nowSeconds() + LOGIN_LINK_SECONDS;
  await transact([
    {
      ConditionCheck: { TableName: tableName(), Key: teamKeys.member(accountId, operatorId), ConditionExpression: 'attribute_exists(pk)' },
    },
    {
      Put: {
        TableName: tableName(),
        Item: {
          ...teamKeys.login(tokenHash(token)),
          type: 'LoginLink',
          account_id: accountId,
          operator_id: operatorId,
          expires_at: expiresAt,
        },
        ConditionExpression: 'attribute_not_exists(pk)',
      },
    },
  ]);
  return { token, expiresAt };
}

export const LINK_REFUSED = 'This login link has expired or was already used. Ask for a new one.';

/**
 * Opens a session with a login token: the token is deleted under the condition that it has not expired
 * (single use: a second attempt finds nothing), the session and its ref are written, all in one
 * transaction; a member removed since the link was sent gets nothing.
 */
export async function openSession(token: string): Promise<{ token: string; session: Session }> {
  const now = nowSeconds();
  const link = await getItem(teamKeys.login(tokenHash(token)));
  if (!link || typeof link.account_id !== 'string' || Number(link.expires_at) <= now) throw new DetailError(401, LINK_REFUSED);
  const accountId = link.account_id;
  const operatorId = String(link.operator_id);
  const [member, account] = await Promise.all([getItem(teamKeys.member(accountId, operatorId)), getItem(keys.account(accountId))]);
  const person = toMember(member);
  if (!person || !account || !isPlan(account.plan)) throw new DetailError(401, LINK_REFUSED);
  const sessionToken = newToken();
  const hash = tokenHash(sessionToken);
  const accountName = String(account.name);
  const session: Session = {
    accountId,
    operatorId,
    email: person.email,
    role: person.role,
    plan: account.plan,
    expiresAt: now + SESSION_SECONDS,
    accountName,
    hash,
  };
  try {
    await transact([
      {
        Delete: {
          TableName: tableName(),
          Key: teamKeys.login(tokenHash(token)),
          ConditionExpression: 'attribute_exists(pk) AND expires_at > :now',
          ExpressionAttributeValues: { ':now': now },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: teamKeys.member(accountId, operatorId),
          UpdateExpression: 'SET last_login_at = :now',
          ConditionExpression: 'attribute_exists(pk) AND #role = :role',
          ExpressionAttributeNames: { '#role': 'role' },
          ExpressionAttributeValues: { ':now': now, ':role': person.role },
        },
      },
      {
        Put: {
          TableName: tableName(),
          Item: {
            ...teamKeys.session(hash),
            type: 'Session',
            account_id: accountId,
            operator_id: operatorId,
            email: person.email,
            role: person.role,
            plan: account.plan,
            account_name: accountName,
            created_at: now,
            slid_at: now,
            expires_at: session.expiresAt,
          },
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      // The ref outlives its session (whose life is capped at SESSION_MAX_SECONDS) by a day.
      {
        Put: {
          TableName: tableName(),
          Item: { ...teamKeys.sessionRef(accountId, operatorId, hash), type: 'SessionRef', expires_at: now + SESSION_MAX_SECONDS + 86_400 },
        },
      },
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new DetailError(401, LINK_REFUSED);
    throw err;
  }
  return { token: sessionToken, session };
}

/**
 * The session of a cookie's token, or null (unknown, ended or expired: TTL deletion is lazy, so the
 * expiry is checked here). One GetItem; the sliding expiry is written at most every SESSION_SLIDE_SECONDS.
 */
export async function findSession(token: string): Promise<Session | null> {
  const hash = tokenHash(token);
  const { Item } = await db().send(new GetCommand({ TableName: tableName(), Key: teamKeys.session(hash) }));
  const now = nowSeconds();
  if (!Item || typeof Item.account_id !== 'string' || !isRole(Item.role) || !isPlan(Item.plan) || Number(Item.expires_at) <= now)
    return null;
  let expiresAt = Number(Item.expires_at);
  if (now - Number(Item.slid_at ?? 0) >= SESSION_SLIDE_SECONDS) {
    // Sliding, but never past the session's absolute end.
    expiresAt = Math.min(now + SESSION_SECONDS, Number(Item.created_at ?? now) + SESSION_MAX_SECONDS);
    await db()
      .send(
        new UpdateCommand({
          TableName: tableName(),
          Key: teamKeys.session(hash),
          UpdateExpression: 'SET expires_at = :e, slid_at = :now',
          ConditionExpression: 'attribute_exists(pk) AND expires_at > :now',
          ExpressionAttributeValues: { ':e': expiresAt, ':now': now },
        }),
      )
      .catch((err: unknown) => {
        if (!(err instanceof ConditionalCheckFailedException)) throw err;
        expiresAt = 0; // ended meanwhile
      });
    if (expiresAt === 0) return null;
  }
  return {
    accountId: Item.account_id,
    operatorId: String(Item.operator_id),
    email: String(Item.email),
    role: Item.role,
    plan: Item.plan,
    expiresAt,
    accountName: String(Item.account_name ?? ''),
    hash,
  };
}

async function endSessionByHash(accountId: string, operatorId: string, hash: string): Promise<void> {
  await db().send(new DeleteCommand({ TableName: tableName(), Key: teamKeys.session(hash) }));
  await db().send(new DeleteCommand({ TableName: tableName(), Key: teamKeys.sessionRef(accountId, operatorId, hash) }));
}

/** Ends one session (log out). */
export async function endSession(session: Session): Promise<void> {
  await endSessionByHash(session.accountId, session.operatorId, session.hash);
}

// ---- API key records (the dashboard's key list) ----

function toKeyRecord(item: Record<string, unknown>): ApiKeyRecord {
  return {
    id: String(item.sk),
    name: String(item.name ?? ''),
    prefix: String(item.prefix),
    created_at: Number(item.created_at),
    revoked_at: typeof item.revoked_at === 'number' ? item.revoked_at : null,
  };
}

/** The key's shown prefix: enough to recognise it, far too little to use it. */
export const keyPrefix = (key: string) => `${key.slice(0, 13)}…`;

/** The record item written beside a new secret key's lookup item (same transaction). */
export function apiKeyRecordItem(accountId: string, id: string, key: string, name: string, createdAt: number): Record<string, unknown> {
  return {
    ...teamKeys.apiKeyRecord(accountId, id),
    type: 'ApiKeyRecord',
    account_id: accountId,
    name,
    prefix: keyPrefix(key),
    key_hash: hashApiKey(key),
    created_at: createdAt,
  };
}

export async function listApiKeyRecords(accountId: string): Promise<ApiKeyRecord[]> {
  const items = await queryAll({ partitionValue: teamKeys.apiKeyRecords(accountId) });
  return items.map(toKeyRecord).sort((a, b) => b.created_at - a.created_at || b.id.localeCompare(a.id));
}

/** Revokes a key by its record's id: the lookup item and the record both get `revoked_at`. */
export async function revokeApiKeyById(accountId: string, id: string): Promise<void> {
  if (!KEY_ID.test(id)) throw new NotFoundError();
  const record = await getItem(teamKeys.apiKeyRecord(accountId, id));
  if (!record || typeof record.key_hash !== 'string') throw new NotFoundError();
  if (typeof record.revoked_at === 'number') return;
  const now = nowSeconds();
  await transact([
    {
      Update: {
        TableName: tableName(),
        Key: teamKeys.apiKeyRecord(accountId, id),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: { ':now': now },
      },
    },
    {
      Update: {
        TableName: tableName(),
        Key: accessKeys.apiKey(record.key_hash),
        UpdateExpression: 'SET revoked_at = if_not_exists(revoked_at, :now)',
        ConditionExpression: 'attribute_exists(pk) AND account_id = :acct',
        ExpressionAttributeValues: { ':now': now, ':acct': accountId },
      },
    },
  ]);
}
