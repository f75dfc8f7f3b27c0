// Applications to an affiliate programme (docs/affiliates.md "Applications"): the public form's join
// requests, their confirmation links, and the applications with their decisions.
//
// - A join request (`A#<acct>#JOIN_REQUEST`, its id the future application's) holds the form's fields for
//   24 hours (TTL); nothing else is written before the email is confirmed.
// - A confirmation link's token is stored only as its SHA-256, on a lookup item `JOIN_CONFIRM#<digest>`
//   that names the account and the join request (24 hours, TTL). Once used it also names the application,
//   so a replay of the confirmation finds what it created.
// - An application (`A#<acct>#APPLICATION`, newest first by its time-ordered id) is listed through GSI1 by
//   campaign and GSI2 by status; exact counts come from counters changed in the same transactions
//   (`applications`, `applications#s#<status>`, `applications#c#<campaign>`, `applications#c#<campaign>#s#<status>`).
// - While it is pending, `A#<acct>#APPLICATION_EMAIL#<email>` names it: one pending application per address.
// - The confirmation that creates it, and a decision, are each one transaction with the counters and the
//   `application.*` events; an approval's transaction also creates the member (store/members.ts
//   memberCreationItems). Every write is conditioned on the state it read, so a replay or a race changes
//   nothing twice.
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import {
  type Application,
  type ApplicationStatus,
  applicationView,
  type FraudFlag,
  isApplicationId,
  JOIN_REQUEST_SECONDS,
  signupIdentifier,
  splitName,
} from '../domain/applications';
import { isCampaignId } from '../domain/ids';
import type { Campaign, Member } from '../domain/models';
import { db, tableName } from './client';
import { memberCreationItems } from './members';
import { batchGet, ConditionsFailedError, counterUpdate, getItem, lookup, readCounter, transact, type TransactItem } from './ops';
import { eventItem } from './outbox';
import { emptyPage, queryPage, type PageQuery, type PageRequest } from './pagination';
import { uniqueKeys, applicationKeys, GSI1, GSI2, keys, type CounterName, TTL_ATTRIBUTE } from './table';

// ---- join requests and their confirmation links ----

export interface JoinRequest {
  id: string;
  accountId: string;
  campaignId: string;
  email: string;
  name: string;
  country: string;
  payoutEmail: string | null;
  answers: Record<string, string>;
  /** The client address's digest (domain/visitors.ts ipHash), for the fraud rules; never the address. */
  ipHash: string;
  /** Unix seconds. */
  createdAt: number;
  expiresAt: number;
}

export async function putJoinRequest(r: JoinRequest): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...applicationKeys.joinRequest(r.accountId, r.id),
        type: 'JoinRequest',
        id: r.id,
        account_id: r.accountId,
        campaign_id: r.campaignId,
        email: r.email,
        name: r.name,
        country: r.country,
        payout_email: r.payoutEmail ?? undefined,
        answers: r.answers,
        ip_hash: r.ipHash,
        created_at: r.createdAt,
        [TTL_ATTRIBUTE]: r.expiresAt,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

export function toJoinRequest(item: Record<string, unknown> | undefined, nowSeconds: number): JoinRequest | null {
  if (item?.type !== 'JoinRequest') return null;
  const expiresAt = Number(item[TTL_ATTRIBUTE]);
  // TTL deletes late: an expired request is gone whether or not DynamoDB removed it yet.
  if (!(expiresAt > nowSeconds)) return null;
  return {
    id: String(item.id),
    accountId: String(item.account_id),
    campaignId: String(item.campaign_id),
    email: String(item.email),
    name: String(item.name),
    country: String(item.country),
    payoutEmail: typeof item.payout_email === 'string' ? item.payout_email : null,
    answers: (item.answers ?? {}) as Record<string, string>,
    ipHash: String(item.ip_hash ?? ''),
    createdAt: Number(item.created_at),
    expiresAt,
  };
}

export async function getJoinRequest(accountId: string, id: string, nowSeconds: number): Promise<JoinRequest | null> {
  if (!isApplicationId(id)) return null;
  return toJoinRequest(await getItem(applicationKeys.joinRequest(accountId, id)), nowSeconds);
}

/** What stands in the way of a new application for this address: a member with it, or a pending application. */
export async function existingFor(accountId: string, email: string): Promise<{ memberId: string | null; applicationId: string | null }> {
  const memberKey = uniqueKeys.memberEmailClaim(accountId, email);
  const pendingKey = applicationKeys.applicationEmailClaim(accountId, email);
  const found = await batchGet([memberKey, pendingKey]);
  const memberId = lookup(found, memberKey)?.member_id;
  const applicationId = lookup(found, pendingKey)?.application_id;
  return {
    memberId: typeof memberId === 'string' ? memberId : null,
    applicationId: typeof applicationId === 'string' ? applicationId : null,
  };
}

export interface JoinConfirm {
  accountId: string;
  joinRequestId: string;
  campaignId: string;
  expiresAt: number;
  /** Set once the confirmation created its application. */
  applicationId: string | null;
}

export async function putJoinConfirm(tokenHash: string, c: Omit<JoinConfirm, 'applicationId'>): Promise<void> {
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: {
        ...applicationKeys.joinConfirm(tokenHash),
        type: 'JoinConfirm',
        account_id: c.accountId,
        join_request_id: c.joinRequestId,
        campaign_id: c.campaignId,
        [TTL_ATTRIBUTE]: c.expiresAt,
      },
      ConditionExpression: 'attribute_not_exists(pk)',
    }),
  );
}

export async function getJoinConfirm(tokenHash: string, nowSeconds: number): Promise<JoinConfirm | null> {
  const item = await getItem(applicationKeys.joinConfirm(tokenHash));
  if (item?.type !== 'JoinConfirm') return null;
  const expiresAt = Number(item[TTL_ATTRIBUTE]);
  if (!(expiresAt > nowSeconds)) return null;
  return {
    accountId: String(item.account_id),
    joinRequestId: String(item.join_request_id),
    campaignId: String(item.campaign_id),
    expiresAt,
    applicationId: typeof item.application_id === 'string' ? item.application_id : null,
  };
}

// ---- applications ----

export function toApplication(item: Record<string, unknown> | undefined): Application | null {
  if (item?.type !== 'Application') return null;
  const status = item.status as ApplicationStatus;
  return {
    id: String(item.id),
    campaign_id: String(item.campaign_id),
    email: String(item.email),
    name: String(item.name),
    country: String(item.country),
    payout_email: typeof item.payout_email === 'string' ? item.payout_email : null,
    answers: (item.answers ?? {}) as Record<string, string>,
    status,
    member_id: typeof item.member_id === 'string' ? item.member_id : null,
    created_at: Number(item.created_at),
    decided_at: item.decided_at === undefined ? null : Number(item.decided_at),
    reason: typeof item.reason === 'string' ? item.reason : null,
    fraud_flags: Array.isArray(item.fraud_flags) ? (item.fraud_flags as FraudFlag[]) : [],
  };
}

export async function getApplication(accountId: string, id: string): Promise<Application | null> {
  if (!isApplicationId(id)) return null; // never a key DynamoDB would refuse
  return toApplication(await getItem(applicationKeys.application(accountId, id)));
}

/** The counters an application in `status` and `campaignId` is counted in, each changed by `delta`. */
function counted(accountId: string, campaignId: string, status: ApplicationStatus, delta: number, all: boolean): TransactItem[] {
  const names: CounterName[] = [`applications#s#${status}`, `applications#c#${campaignId}#s#${status}`];
  if (all) names.push('applications', `applications#c#${campaignId}`);
  return names.map((name) => counterUpdate(accountId, name, delta));
}

type Labelled = { label: string; item: TransactItem };

async function run(items: Labelled[]): Promise<string[]> {
  try {
    await transact(items.map((i) => i.item));
    return [];
  } catch (err) {
    if (err instanceof ConditionsFailedError) return items.filter((_, i) => err.failed(i)).map((i) => i.label);
    throw err;
  }
}

/** The member items of an approval, labelled `member:<label>` (store/members.ts memberCreationItems). */
function newMemberItems(accountId: string, a: Application, campaign: Campaign): { member: Member; items: Labelled[] } {
  const { first_name, last_name } = splitName(a.name);
  const { member, items, labels } = memberCreationItems(accountId, {
    identifier: signupIdentifier(a.id),
    email: a.email,
    // Members' names hold 50 characters each.
    first_name: first_name?.slice(0, 50) ?? null,
    last_name: last_name?.slice(0, 50) ?? null,
    campaign,
    payout_email: a.payout_email,
  });
  return { member, items: items.map((item, i) => ({ label: `member:${labels[i]}`, item })) };
}

function applicationItem(accountId: string, a: Application, ipHash: string): Record<string, unknown> {
  return {
    ...applicationKeys.application(accountId, a.id),
    type: 'Application',
    ...a,
    payout_email: a.payout_email ?? undefined,
    member_id: a.member_id ?? undefined,
    decided_at: a.decided_at ?? undefined,
    reason: a.reason ?? undefined,
    ip_hash: ipHash || undefined,
    gsi1pk: applicationKeys.applicationsByCampaign(accountId, a.campaign_id),
    gsi1sk: a.id,
    gsi2pk: applicationKeys.applicationsByStatus(accountId, a.status),
    gsi2sk: a.id,
  };
}

export type ConfirmOutcome =
  | { kind: 'created'; application: Application; member: Member | null }
  /** The link was used already (a replay, or a concurrent confirmation won): nothing was written. */
  | { kind: 'used' }
  | { kind: 'already-pending' }
  | { kind: 'already-member' }
  /** The campaign was deleted meanwhile. */
  | { kind: 'closed' }
  /** A generated member code was taken meanwhile: try again. */
  | { kind: 'retry' };

/**
 * Creates the application of a confirmed join request, once: pending, or approved with its member when
 * `approve` (auto-approval with no fraud flag). In one transaction: the application, its pending-email
 * claim (or the member), the counters, the link marked used, the join request deleted, and the events.
 */
export async function createApplication(
  r: JoinRequest,
  tokenHash: string,
  campaign: Campaign,
  o: { approve: boolean; flags: FraudFlag[]; nowMs: number },
): Promise<ConfirmOutcome> {
  const accountId = r.accountId;
  const now = Math.floor(o.nowMs / 1000);
  const base: Application = {
    id: r.id,
    campaign_id: campaign.id,
    email: r.email,
    name: r.name,
    country: r.country,
    payout_email: r.payoutEmail,
    answers: r.answers,
    status: 'pending',
    member_id: null,
    created_at: now,
    decided_at: null,
    reason: null,
    fraud_flags: o.flags,
  };
  const made = o.approve ? newMemberItems(accountId, base, campaign) : null;
  const application: Application = made ? { ...base, status: 'approved', member_id: made.member.id, decided_at: now } : base;
  const items: Labelled[] = [
    {
      label: 'application',
      item: {
        Put: {
          TableName: tableName(),
          Item: applicationItem(accountId, application, r.ipHash),
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
    },
    {
      label: 'token',
      item: {
        Update: {
          TableName: tableName(),
          Key: applicationKeys.joinConfirm(tokenHash),
          UpdateExpression: 'SET application_id = :id',
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(application_id)',
          ExpressionAttributeValues: { ':id': application.id },
        },
      },
    },
    {
      label: 'join',
      item: {
        Delete: { TableName: tableName(), Key: applicationKeys.joinRequest(accountId, r.id), ConditionExpression: 'attribute_exists(pk)' },
      },
    },
    ...counted(accountId, campaign.id, application.status, 1, true).map((item) => ({ label: 'counter', item })),
  ];
  if (made) items.push(...made.items);
  else {
    items.push(
      {
        label: 'pending-email',
        item: {
          Put: {
            TableName: tableName(),
            Item: { ...applicationKeys.applicationEmailClaim(accountId, r.email), type: 'Claim', application_id: application.id },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      },
      {
        label: 'member-email',
        item: {
          ConditionCheck: {
            TableName: tableName(),
            Key: uniqueKeys.memberEmailClaim(accountId, r.email),
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
      },
      {
        label: 'campaign',
        item: {
          ConditionCheck: {
            TableName: tableName(),
            Key: keys.campaign(accountId, campaign.id),
            ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleted_at)',
          },
        },
      },
    );
  }
  const view = applicationView(application);
  items.push({ label: 'event', item: eventItem(accountId, 'application.created', application.id, view, o.nowMs) });
  if (made) items.push({ label: 'event', item: eventItem(accountId, 'application.approved', application.id, view, o.nowMs) });

  const failed = await run(items);
  if (failed.length === 0) return { kind: 'created', application, member: made?.member ?? null };
  if (failed.some((f) => f === 'token' || f === 'application' || f === 'join' || f === 'member:identifier')) return { kind: 'used' };
  if (failed.includes('member-email') || failed.includes('member:email')) return { kind: 'already-member' };
  if (failed.includes('pending-email')) return { kind: 'already-pending' };
  if (failed.includes('campaign') || failed.includes('member:campaign')) return { kind: 'closed' };
  if (failed.includes('member:code')) return { kind: 'retry' };
  return { kind: 'used' };
}

export type DecisionOutcome =
  | { kind: 'decided'; application: Application; member: Member | null }
  /** The application's status was no longer pending (a concurrent decision): re-read it. */
  | { kind: 'changed' }
  | { kind: 'member-exists' }
  | { kind: 'campaign-gone' }
  | { kind: 'retry' };

/**
 * Decides a pending application: approved (creating its member in the campaign, in the same transaction)
 * or rejected (with the operator's reason). Conditioned on the status still being pending, so of two
 * concurrent decisions exactly one commits.
 */
export async function decideApplication(
  accountId: string,
  current: Application,
  decision: { to: 'approved'; campaign: Campaign } | { to: 'rejected'; reason: string | null },
  nowMs: number,
): Promise<DecisionOutcome> {
  const now = Math.floor(nowMs / 1000);
  const made = decision.to === 'approved' ? newMemberItems(accountId, current, decision.campaign) : null;
  const next: Application = {
    ...current,
    status: decision.to,
    decided_at: now,
    member_id: made?.member.id ?? null,
    reason: decision.to === 'rejected' ? decision.reason : null,
  };
  const sets = ['#status = :to', 'decided_at = :now', 'gsi2pk = :byStatus'];
  const values: Record<string, unknown> = {
    ':to': next.status,
    ':now': now,
    ':byStatus': applicationKeys.applicationsByStatus(accountId, next.status),
    ':pending': 'pending',
  };
  if (next.member_id) {
    sets.push('member_id = :member');
    values[':member'] = next.member_id;
  }
  if (next.reason) {
    sets.push('reason = :reason');
    values[':reason'] = next.reason;
  }
  const items: Labelled[] = [
    {
      label: 'application',
      item: {
        Update: {
          TableName: tableName(),
          Key: applicationKeys.application(accountId, current.id),
          UpdateExpression: `SET ${sets.join(', ')}`,
          ConditionExpression: '#status = :pending',
          ExpressionAttributeNames: { '#status': 'status' },
          ExpressionAttributeValues: values,
        },
      },
    },
    {
      label: 'pending-email',
      item: {
        Delete: {
          TableName: tableName(),
          Key: applicationKeys.applicationEmailClaim(accountId, current.email),
          ConditionExpression: 'attribute_not_exists(pk) OR application_id = :id',
          ExpressionAttributeValues: { ':id': current.id },
        },
      },
    },
    ...counted(accountId, current.campaign_id, 'pending', -1, false).map((item) => ({ label: 'counter', item })),
    ...counted(accountId, current.campaign_id, next.status, 1, false).map((item) => ({ label: 'counter', item })),
    ...(made?.items ?? []),
    {
      label: 'event',
      item: eventItem(
        accountId,
        next.status === 'approved' ? 'application.approved' : 'application.rejected',
        current.id,
        applicationView(next),
        nowMs,
      ),
    },
  ];
  const failed = await run(items);
  if (failed.length === 0) return { kind: 'decided', application: next, member: made?.member ?? null };
  if (failed.includes('application') || failed.includes('member:identifier')) return { kind: 'changed' };
  if (failed.includes('member:email')) return { kind: 'member-exists' };
  if (failed.includes('member:campaign')) return { kind: 'campaign-gone' };
  if (failed.includes('member:code')) return { kind: 'retry' };
  return { kind: 'changed' };
}

// ---- the list ----

export interface ApplicationFilters {
  status?: ApplicationStatus | undefined;
  campaign?: string | undefined;
}

/**
 * GET /v1/applications/: newest first; one Query (the account's partition, the status's GSI2 partition or
 * the campaign's GSI1 partition, filtered by status when both are given) beside the filter's counter.
 */
export async function listApplications(accountId: string, page: PageRequest, f: ApplicationFilters) {
  if (f.campaign !== undefined && !isCampaignId(f.campaign)) return emptyPage();
  let source: Omit<PageQuery, 'scope'>;
  if (f.campaign !== undefined) {
    source = {
      index: GSI1,
      partitionValue: applicationKeys.applicationsByCampaign(accountId, f.campaign),
      ...(f.status ? { filter: { expression: '#st = :st', names: { '#st': 'status' }, values: { ':st': f.status } } } : {}),
    };
  } else if (f.status) source = { index: GSI2, partitionValue: applicationKeys.applicationsByStatus(accountId, f.status) };
  else source = { partitionValue: applicationKeys.applicationCollection(accountId) };
  const prefix = f.campaign ? `applications#c#${f.campaign}` : 'applications';
  const counter = (f.status ? `${prefix}#s#${f.status}` : prefix) as CounterName;
  const scope = `${accountId}|applications|${f.status ?? ''}|${f.campaign ?? ''}`;
  const [result, count] = await Promise.all([queryPage({ ...source, scope }, page), readCounter(accountId, counter)]);
  // A status index entry may lag its item (GSIs are eventually consistent): the item's own status decides.
  const items = result.items
    .map((i) => toApplication(i))
    .filter((a): a is Application => a !== null && (f.status === undefined || a.status === f.status));
  return { ...result, items, count };
}

/** The join request's lifetime from `nowSeconds`. */
export const joinRequestExpiry = (nowSeconds: number) => nowSeconds + JOIN_REQUEST_SECONDS;
