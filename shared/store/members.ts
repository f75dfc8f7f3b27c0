// Member repository. Code, email and identifier are unique per account through claim items written
// in the same transaction as the member; the code claim also carries the member's campaign id so a
// referral can be created in three round trips (claim -> member + campaign -> transaction). A
// subscription is attached by writing `member_id` on it under a condition, so it is attached to one
// member at a time.
import { NotFoundError, ValidationError, type FieldErrors } from '../domain/errors';
import { isCampaignId, isEntityId, isMemberCode, newEntityId, newMemberCode } from '../domain/ids';
import type { Campaign, Member, ProviderId, Subscription } from '../domain/models';
import type { CreateMemberInput, UpdateMemberInput } from '../schemas/member';
import { memberView } from '../domain/views';
import { isPayoutMethod } from '../domain/payout-methods';
import { toCampaign } from './campaigns';
import { tableName } from './client';
import {
  batchGet,
  ConditionsFailedError,
  counterUpdate,
  getItem,
  lookup,
  readCounter,
  transact,
  withRetries,
  type TransactItem,
} from './ops';
import { RaceLostError } from './ops';
import { eventItem } from './outbox';
import { arrayPage, emptyPage, queryPage, type PageRequest } from './pagination';
import { subscriptionPayerIds, toSubscription } from './subscriptions';
import { storedPayerIds } from '../domain/payer-ids';
import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db } from './client';
import { uniqueKeys, GSI1, keys, listKeys, type Key } from './table';

export interface MemberWithRelations {
  member: Member;
  campaign: Campaign | null;
  subscription: Subscription | null;
}

export function toMember(item: Record<string, unknown> | undefined): Member | null {
  if (item?.type !== 'Member') return null;
  return {
    id: String(item.id),
    identifier: String(item.identifier),
    email: String(item.email),
    first_name: (item.first_name as string | null) ?? null,
    last_name: (item.last_name as string | null) ?? null,
    code: String(item.code),
    campaign_id: typeof item.campaign_id === 'string' ? item.campaign_id : null,
    subscription_id: typeof item.subscription_id === 'number' || typeof item.subscription_id === 'string' ? item.subscription_id : null,
    link_clicks: Number(item.link_clicks ?? 0),
    email_opt_out: item.email_opt_out === true,
    referrals: Math.max(0, Number(item.referrals ?? 0)),
    conversions: Math.max(0, Number(item.conversions ?? 0)),
    credit_earned: Number(item.credit_earned ?? 0),
    commission_earned: Number(item.commission_earned ?? 0),
    commission_pending: Number(item.commission_pending ?? 0),
    commission_approved: Number(item.commission_approved ?? 0),
    commission_held: Number(item.commission_held ?? 0),
    commission_paid: Number(item.commission_paid ?? 0),
    payout_email: typeof item.payout_email === 'string' && item.payout_email !== '' ? item.payout_email : null,
    payout_method: isPayoutMethod(item.payout_method) ? item.payout_method : null,
    stripe_account_id: typeof item.stripe_account_id === 'string' && item.stripe_account_id !== '' ? item.stripe_account_id : null,
    stripe_ready: item.stripe_ready === true,
    source: item.source === 'signup' ? 'signup' : 'app',
    created_at: Number(item.created_at),
    version: Number(item.version ?? 0),
    // What the fraud rules found about the member (docs/fraud.md "Flags"), in words.
    ...(Array.isArray(item.fraud_flags) ? { fraud_flags: item.fraud_flags as NonNullable<Member['fraud_flags']> } : {}),
  };
}

const inUse = (what: string, value: string) => `The ${what} ${value} is already in use; choose another`;
const campaignNotFound = (id: string) => `Campaign ${id} could not be found`;
const subscriptionNotFound = (id: ProviderId) => `Subscription ${id} could not be found`;
const subscriptionTaken = (id: ProviderId) => `Subscription ${id} is already attached to another member`;

/** Resolves the campaign and subscription of many members in one BatchGet. */
export async function withRelations(accountId: string, members: Member[], known: Campaign[] = []): Promise<MemberWithRelations[]> {
  const wanted: Key[] = [];
  for (const m of members) {
    if (m.campaign_id && !known.some((c) => c.id === m.campaign_id)) wanted.push(keys.campaign(accountId, m.campaign_id));
    if (m.subscription_id !== null) wanted.push(keys.subscription(accountId, m.subscription_id));
  }
  const found = wanted.length > 0 ? await batchGet(wanted) : new Map();
  return members.map((member) => ({
    member,
    campaign: member.campaign_id
      ? (known.find((c) => c.id === member.campaign_id) ?? toCampaign(lookup(found, keys.campaign(accountId, member.campaign_id))))
      : null,
    subscription:
      member.subscription_id !== null ? toSubscription(lookup(found, keys.subscription(accountId, member.subscription_id))) : null,
  }));
}

export async function getMemberOrThrow(accountId: string, id: string): Promise<Member> {
  if (!isEntityId(id)) throw new NotFoundError(); // never a key DynamoDB would refuse
  const member = toMember(await getItem(keys.member(accountId, id)));
  if (!member) throw new NotFoundError();
  return member;
}

export async function getMemberWithRelations(accountId: string, id: string): Promise<MemberWithRelations> {
  const [result] = await withRelations(accountId, [await getMemberOrThrow(accountId, id)]);
  return result as MemberWithRelations;
}

export async function listMembers(accountId: string, page: PageRequest, campaignId?: string) {
  if (campaignId === undefined) {
    const [result, count] = await Promise.all([
      queryPage({ partitionValue: listKeys.memberCollection(accountId), scope: `${accountId}|members` }, page),
      readCounter(accountId, 'members'),
    ]);
    const members = result.items.map((i) => toMember(i)).filter((m): m is Member => m !== null);
    return { ...result, items: await withRelations(accountId, members), count };
  }
  if (!isCampaignId(campaignId)) return emptyPage();
  const [result, campaignItem] = await Promise.all([
    queryPage(
      { index: GSI1, partitionValue: listKeys.membersByCampaign(accountId, campaignId), scope: `${accountId}|members|${campaignId}` },
      page,
    ),
    getItem(keys.campaign(accountId, campaignId)),
  ]);
  const campaign = toCampaign(campaignItem);
  // An unknown or deleted campaign lists nothing, whatever stale index entries remain.
  if (!campaign) return emptyPage();
  const members = result.items.map((i) => toMember(i)).filter((m): m is Member => m !== null && m.campaign_id === campaignId);
  return { ...result, items: await withRelations(accountId, members, [campaign]), count: campaign.member_count };
}

/**
 * `?search=`: the members whose email or code equals `term` (either case), or whose identifier equals it as
 * typed or in lower case, found through the claim items that keep those unique (never a Scan): one
 * BatchGet of the claims, one of the members, one of their campaigns and subscriptions. At most four
 * matches; `count` is their number, exact. With `campaignId`, only those in that (live) campaign.
 */
export async function searchMembers(accountId: string, term: string, page: PageRequest, campaignId?: string) {
  if (campaignId !== undefined && !isCampaignId(campaignId)) return emptyPage();
  const claimKeys = [uniqueKeys.memberEmailClaim(accountId, term), uniqueKeys.memberIdentifierClaim(accountId, term)];
  if (term.toLowerCase() !== term) claimKeys.push(uniqueKeys.memberIdentifierClaim(accountId, term.toLowerCase()));
  if (isMemberCode(term)) claimKeys.push(uniqueKeys.memberCodeClaim(accountId, term));
  const claims = await batchGet(claimKeys);
  const ids = [
    ...new Set(claimKeys.map((k) => lookup(claims, k)?.member_id).filter((id): id is string => typeof id === 'string' && isEntityId(id))),
  ];
  if (ids.length === 0) return emptyPage();
  const found = await batchGet(ids.map((id) => keys.member(accountId, id)));
  const members = ids
    .map((id) => toMember(lookup(found, keys.member(accountId, id))))
    .filter((m): m is Member => m !== null && (campaignId === undefined || m.campaign_id === campaignId))
    .sort((a, b) => (a.id < b.id ? 1 : -1));
  const withCampaigns = await withRelations(accountId, members);
  // A member still pointing at a deleted campaign is in no campaign.
  const matches = campaignId === undefined ? withCampaigns : withCampaigns.filter((m) => m.campaign !== null);
  const result = arrayPage(matches, (m) => m.member.id, `${accountId}|members|${campaignId ?? ''}|search|${term}`, page);
  return { ...result, count: matches.length };
}

// ---- writes -------------------------------------------------------------------------------------

type Labelled = { label: string; item: TransactItem };

const put = (key: Key, item: Record<string, unknown>, label: string): Labelled => ({
  label,
  item: { Put: { TableName: tableName(), Item: { ...key, ...item }, ConditionExpression: 'attribute_not_exists(pk)' } },
});

const releaseClaim = (key: Key, memberId: string, label: string): Labelled => ({
  label,
  item: {
    Delete: { TableName: tableName(), Key: key, ConditionExpression: 'member_id = :m', ExpressionAttributeValues: { ':m': memberId } },
  },
});

const campaignCount = (accountId: string, campaignId: string, delta: number, label: string): Labelled => ({
  label,
  item: {
    Update: {
      TableName: tableName(),
      Key: keys.campaign(accountId, campaignId),
      UpdateExpression: 'ADD member_count :d',
      ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deleted_at)',
      ExpressionAttributeValues: { ':d': delta },
    },
  },
});

/**
 * Attaches a subscription to a member. `payers`: its payer ids as read, which the member item copies in the
 * same transaction (`payer_ids`, docs/fraud.md "Self-referral beyond email"): the set must still be that one
 * (it only grows, so its size says), else the attachment starts over with the new ones.
 */
const attachSubscription = (
  accountId: string,
  subscriptionId: ProviderId,
  memberId: string,
  label: string,
  payers: readonly string[] = [],
): Labelled => ({
  label,
  item: {
    Update: {
      TableName: tableName(),
      Key: keys.subscription(accountId, subscriptionId),
      UpdateExpression: 'SET member_id = :m',
      ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(member_id) OR member_id = :m) AND ${
        payers.length > 0 ? 'size(payer_ids) = :np' : 'attribute_not_exists(payer_ids)'
      }`,
      ExpressionAttributeValues: { ':m': memberId, ...(payers.length > 0 ? { ':np': payers.length } : {}) },
    },
  },
});

/** The payer ids on a member item (its own subscription's, domain/payer-ids.ts). */
export const memberPayerIds = (item: Record<string, unknown> | undefined): string[] => storedPayerIds(item?.payer_ids);

/**
 * Adds payer ids a provider told later about the member's own subscription (flows/subscription-sync.ts):
 * only while that subscription is still attached to the member. Whether the member carries them now.
 */
export async function addMemberPayerIds(
  accountId: string,
  memberId: string,
  subscriptionId: ProviderId,
  payerIds: readonly string[],
): Promise<boolean> {
  if (payerIds.length === 0) return true;
  try {
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.member(accountId, memberId),
        UpdateExpression: 'ADD payer_ids :p',
        ConditionExpression: 'attribute_exists(pk) AND subscription_id = :sid',
        ExpressionAttributeValues: { ':p': new Set(payerIds), ':sid': subscriptionId },
      }),
    );
    return true;
  } catch (err) {
    if (err instanceof ConditionalCheckFailedException) return false;
    throw err;
  }
}

const detachSubscription = (accountId: string, subscriptionId: ProviderId, memberId: string, label: string): Labelled => ({
  label,
  item: {
    Update: {
      TableName: tableName(),
      Key: keys.subscription(accountId, subscriptionId),
      UpdateExpression: 'REMOVE member_id',
      ConditionExpression: 'member_id = :m',
      ExpressionAttributeValues: { ':m': memberId },
    },
  },
});

/** Runs a labelled transaction; returns the labels of the items whose conditions failed. */
async function run(items: Labelled[]): Promise<string[]> {
  try {
    await transact(items.map((i) => i.item));
    return [];
  } catch (err) {
    if (err instanceof ConditionsFailedError) return items.filter((_, i) => err.failed(i)).map((i) => i.label);
    throw err;
  }
}

class StaleMemberError extends RaceLostError {}
const retryStale = (err: unknown) => err instanceof StaleMemberError;

interface Lookups {
  campaigns: Map<string, Campaign | null>;
  subscriptions: Map<ProviderId, Subscription | null>;
  claims: Map<string, Record<string, unknown> | undefined>;
}

/** One BatchGet for everything a write must check first, so all errors are reported at once. */
async function prefetch(accountId: string, campaignIds: string[], subscriptionIds: ProviderId[], claims: Key[]): Promise<Lookups> {
  const wanted = [
    ...campaignIds.filter(isCampaignId).map((id) => keys.campaign(accountId, id)),
    ...subscriptionIds.map((id) => keys.subscription(accountId, id)),
    ...claims,
  ];
  const found = wanted.length > 0 ? await batchGet(wanted) : new Map();
  return {
    campaigns: new Map(campaignIds.map((id) => [id, isCampaignId(id) ? toCampaign(lookup(found, keys.campaign(accountId, id))) : null])),
    subscriptions: new Map(subscriptionIds.map((id) => [id, toSubscription(lookup(found, keys.subscription(accountId, id)))])),
    claims: new Map(claims.map((k) => [k.pk, lookup(found, k)])),
  };
}

function claimedByOther(l: Lookups, key: Key, memberId: string | null): boolean {
  const claim = l.claims.get(key.pk);
  return claim !== undefined && claim.member_id !== memberId;
}

interface NewMember {
  identifier: string;
  email: string;
  first_name: string | null;
  last_name: string | null;
  code: string;
  campaign: Campaign | null;
  subscription: Subscription | null;
  email_opt_out: boolean;
  payout_email: string | null;
  source: Member['source'];
}

/** A new member's record and the labelled items that create it (its claims, the counters, its event). */
function creationItems(accountId: string, p: NewMember): { member: Member; labelled: Labelled[] } {
  const createdMs = Date.now();
  const campaignId = p.campaign?.id ?? null;
  const subscriptionId = p.subscription?.id ?? null;
  const member: Member = {
    id: newEntityId(),
    identifier: p.identifier,
    email: p.email,
    first_name: p.first_name,
    last_name: p.last_name,
    code: p.code,
    campaign_id: campaignId,
    subscription_id: subscriptionId,
    link_clicks: 0,
    email_opt_out: p.email_opt_out,
    referrals: 0,
    conversions: 0,
    credit_earned: 0,
    commission_earned: 0,
    commission_pending: 0,
    commission_approved: 0,
    commission_held: 0,
    commission_paid: 0,
    payout_email: p.payout_email,
    source: p.source,
    created_at: Math.floor(createdMs / 1000),
    version: 1,
  };
  const payers = p.subscription ? subscriptionPayerIds(p.subscription) : [];
  const labelled: Labelled[] = [
    put(
      keys.member(accountId, member.id),
      { type: 'Member', ...memberAttributes(accountId, member), ...(payers.length > 0 ? { payer_ids: new Set(payers) } : {}) },
      'member',
    ),
    put(
      uniqueKeys.memberCodeClaim(accountId, p.code),
      { type: 'Claim', member_id: member.id, ...(campaignId ? { campaign_id: campaignId } : {}) },
      'code',
    ),
    put(uniqueKeys.memberEmailClaim(accountId, p.email), { type: 'Claim', member_id: member.id }, 'email'),
    put(uniqueKeys.memberIdentifierClaim(accountId, p.identifier), { type: 'Claim', member_id: member.id }, 'identifier'),
    { label: 'counter', item: counterUpdate(accountId, 'members', 1) },
  ];
  if (campaignId) labelled.push(campaignCount(accountId, campaignId, 1, 'campaign'));
  if (subscriptionId) labelled.push(attachSubscription(accountId, subscriptionId, member.id, 'subscription', payers));
  labelled.push({
    label: 'event',
    item: eventItem(accountId, 'member.created', member.id, memberView(member, p.campaign, p.subscription), createdMs),
  });
  return { member, labelled };
}

/**
 * The transaction items that create a member signed up through an application (docs/affiliates.md), for
 * the approval's own transaction: the member, its code, email and identifier claims (each conditioned on
 * being free), the members and campaign counters and the `member.created` event. `labels[i]` names item i
 * (`member`, `code`, `email`, `identifier`, `counter`, `campaign`, `event`), so a caller can tell which
 * condition failed. The code is generated.
 */
export function memberCreationItems(
  accountId: string,
  p: {
    identifier: string;
    email: string;
    first_name: string | null;
    last_name: string | null;
    campaign: Campaign | null;
    payout_email: string | null;
  },
): { member: Member; items: TransactItem[]; labels: string[] } {
  const { member, labelled } = creationItems(accountId, {
    ...p,
    code: newMemberCode(),
    subscription: null,
    email_opt_out: false,
    source: 'signup',
  });
  return { member, items: labelled.map((l) => l.item), labels: labelled.map((l) => l.label) };
}

export async function createMember(
  accountId: string,
  input: Omit<CreateMemberInput, 'email_opt_out' | 'payout_email'> & { email_opt_out?: boolean; payout_email?: string | null },
): Promise<MemberWithRelations> {
  const generated = input.code === undefined;
  return withRetries(
    async () => {
      const code = input.code ?? newMemberCode();
      const codeKey = uniqueKeys.memberCodeClaim(accountId, code);
      const emailKey = uniqueKeys.memberEmailClaim(accountId, input.email);
      const identifierKey = uniqueKeys.memberIdentifierClaim(accountId, input.identifier);
      const campaignId = input.campaign?.id ?? null;
      const subscriptionId = input.subscription?.id ?? null;

      const l = await prefetch(accountId, campaignId ? [campaignId] : [], subscriptionId ? [subscriptionId] : [], [
        codeKey,
        emailKey,
        identifierKey,
      ]);
      const errors: FieldErrors = {};
      if (claimedByOther(l, identifierKey, null)) errors.identifier = [inUse('identifier', input.identifier)];
      if (claimedByOther(l, emailKey, null)) errors.email = [inUse('email address', input.email)];
      if (claimedByOther(l, codeKey, null) && !generated) errors.code = [inUse('code', code)];
      const campaign = campaignId ? (l.campaigns.get(campaignId) ?? null) : null;
      if (campaignId && !campaign) errors.campaign = [campaignNotFound(campaignId)];
      const subscription = subscriptionId ? (l.subscriptions.get(subscriptionId) ?? null) : null;
      if (subscriptionId && !subscription) errors.subscription = [subscriptionNotFound(subscriptionId)];
      else if (subscriptionId && subscription?.member_id) errors.subscription = [subscriptionTaken(subscriptionId)];
      if (Object.keys(errors).length > 0) throw new ValidationError(errors);
      if (generated && claimedByOther(l, codeKey, null)) throw new StaleMemberError(); // draw another code

      const { member, labelled: items } = creationItems(accountId, {
        identifier: input.identifier,
        email: input.email,
        first_name: input.first_name,
        last_name: input.last_name,
        code,
        campaign,
        subscription,
        email_opt_out: input.email_opt_out ?? false,
        payout_email: input.payout_email ?? null,
        source: 'app',
      });

      const failed = await run(items);
      if (failed.length > 0) {
        // Lost a race with a concurrent write: report it like the prefetch would have.
        if (failed.includes('code') && generated) throw new StaleMemberError();
        // The subscription taken meanwhile, or told a new payer: read again (the prefetch tells which).
        if (failed.includes('subscription') && subscriptionId) throw new StaleMemberError();
        throw raceErrors(failed, { identifier: input.identifier, email: input.email, code, campaignId, subscriptionId });
      }
      return { member, campaign, subscription };
    },
    retryStale,
    8,
  );
}

function raceErrors(
  failed: string[],
  v: { identifier?: string; email?: string; code?: string; campaignId?: string | null; subscriptionId?: ProviderId | null },
): Error {
  const errors: FieldErrors = {};
  if (failed.includes('identifier') && v.identifier) errors.identifier = [inUse('identifier', v.identifier)];
  if (failed.includes('email') && v.email) errors.email = [inUse('email address', v.email)];
  if (failed.includes('code') && v.code) errors.code = [inUse('code', v.code)];
  if (failed.includes('campaign') && v.campaignId) errors.campaign = [campaignNotFound(v.campaignId)];
  if (failed.includes('subscription') && v.subscriptionId) errors.subscription = [subscriptionTaken(v.subscriptionId)];
  return Object.keys(errors).length > 0 ? new ValidationError(errors) : new StaleMemberError();
}

function memberAttributes(accountId: string, m: Member): Record<string, unknown> {
  return {
    ...m,
    campaign_id: m.campaign_id ?? undefined,
    subscription_id: m.subscription_id ?? undefined,
    payout_email: m.payout_email ?? undefined,
    payout_method: m.payout_method ?? undefined,
    // Written only by the portal's "Set up payouts" and Stripe's account updates (shared/store/stripe-accounts.ts).
    stripe_account_id: m.stripe_account_id ?? undefined,
    stripe_ready: m.stripe_ready === true ? true : undefined,
    ...(m.campaign_id ? { gsi1pk: listKeys.membersByCampaign(accountId, m.campaign_id), gsi1sk: m.id } : {}),
  };
}

/**
 * `guard`: a check run beside the reads (e.g. that a payout method's rail is connected), awaited before the
 * write: its rejection is the answer and nothing is written. It costs no round trip of its own.
 */
export async function updateMember(
  accountId: string,
  id: string,
  patch: UpdateMemberInput,
  guard?: Promise<unknown>,
): Promise<MemberWithRelations> {
  // Handled here too, so a guard that fails while a read fails first is not an unhandled rejection.
  guard?.catch(() => undefined);
  return withRetries(async () => {
    const current = await getMemberOrThrow(accountId, id);
    const next: Member = { ...current, version: current.version + 1 };
    if (patch.identifier !== undefined) next.identifier = patch.identifier;
    if (patch.email !== undefined) next.email = patch.email;
    if (patch.first_name !== undefined) next.first_name = patch.first_name;
    if (patch.last_name !== undefined) next.last_name = patch.last_name;
    if (patch.code !== undefined) next.code = patch.code;
    if (patch.campaign !== undefined) next.campaign_id = patch.campaign?.id ?? null;
    if (patch.subscription !== undefined) next.subscription_id = patch.subscription?.id ?? null;
    if (patch.email_opt_out !== undefined) next.email_opt_out = patch.email_opt_out;
    if (patch.payout_email !== undefined) next.payout_email = patch.payout_email;
    if (patch.payout_method !== undefined) next.payout_method = patch.payout_method;

    const changed = {
      identifier: next.identifier !== current.identifier,
      email: next.email.toLowerCase() !== current.email.toLowerCase(),
      code: next.code.toLowerCase() !== current.code.toLowerCase(),
      campaign: next.campaign_id !== current.campaign_id,
      subscription: next.subscription_id !== current.subscription_id,
    };
    const claimKeys = [
      ...(changed.identifier ? [uniqueKeys.memberIdentifierClaim(accountId, next.identifier)] : []),
      ...(changed.email ? [uniqueKeys.memberEmailClaim(accountId, next.email)] : []),
      ...(changed.code ? [uniqueKeys.memberCodeClaim(accountId, next.code)] : []),
    ];
    const campaignIds = [current.campaign_id, next.campaign_id].filter((c): c is string => c !== null);
    const subscriptionIds = [current.subscription_id, next.subscription_id].filter((s): s is ProviderId => s !== null);
    const l = await prefetch(accountId, [...new Set(campaignIds)], [...new Set(subscriptionIds)], claimKeys);

    const errors: FieldErrors = {};
    if (changed.identifier && claimedByOther(l, uniqueKeys.memberIdentifierClaim(accountId, next.identifier), id))
      errors.identifier = [inUse('identifier', next.identifier)];
    if (changed.email && claimedByOther(l, uniqueKeys.memberEmailClaim(accountId, next.email), id))
      errors.email = [inUse('email address', next.email)];
    if (changed.code && claimedByOther(l, uniqueKeys.memberCodeClaim(accountId, next.code), id)) errors.code = [inUse('code', next.code)];
    const oldCampaign = current.campaign_id ? (l.campaigns.get(current.campaign_id) ?? null) : null;
    const newCampaign = next.campaign_id ? (l.campaigns.get(next.campaign_id) ?? null) : null;
    if (changed.campaign && next.campaign_id && !newCampaign) errors.campaign = [campaignNotFound(next.campaign_id)];
    const newSubscription = next.subscription_id ? (l.subscriptions.get(next.subscription_id) ?? null) : null;
    if (changed.subscription && next.subscription_id) {
      if (!newSubscription) errors.subscription = [subscriptionNotFound(next.subscription_id)];
      else if (newSubscription.member_id && newSubscription.member_id !== id)
        errors.subscription = [subscriptionTaken(next.subscription_id)];
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    await guard;
    // A pointer to a deleted campaign is dropped on the member's next write.
    if (!changed.campaign && current.campaign_id && !oldCampaign) next.campaign_id = null;

    const names: Record<string, string> = {};
    const values: Record<string, unknown> = { ':expected': current.version };
    const sets: string[] = [];
    const removes: string[] = [];
    const attrs = memberAttributes(accountId, next);
    for (const name of [
      'identifier',
      'email',
      'first_name',
      'last_name',
      'code',
      'campaign_id',
      'subscription_id',
      'email_opt_out',
      'payout_email',
      'payout_method',
      'version',
      'gsi1pk',
      'gsi1sk',
    ]) {
      names[`#${name}`] = name;
      if (attrs[name] === undefined) removes.push(`#${name}`);
      else {
        values[`:${name}`] = attrs[name];
        sets.push(`#${name} = :${name}`);
      }
    }
    // The member's payer ids are those of its own subscription (docs/fraud.md): replaced with it.
    const payers = changed.subscription && newSubscription ? subscriptionPayerIds(newSubscription) : [];
    if (changed.subscription) {
      names['#payer_ids'] = 'payer_ids';
      if (payers.length > 0) {
        values[':payer_ids'] = new Set(payers);
        sets.push('#payer_ids = :payer_ids');
      } else removes.push('#payer_ids');
    }
    const items: Labelled[] = [
      {
        label: 'member',
        item: {
          Update: {
            TableName: tableName(),
            Key: keys.member(accountId, id),
            UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
            ConditionExpression: '#version = :expected',
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          },
        },
      },
    ];
    if (changed.identifier) {
      items.push(put(uniqueKeys.memberIdentifierClaim(accountId, next.identifier), { type: 'Claim', member_id: id }, 'identifier'));
      items.push(releaseClaim(uniqueKeys.memberIdentifierClaim(accountId, current.identifier), id, 'old-identifier'));
    }
    if (changed.email) {
      items.push(put(uniqueKeys.memberEmailClaim(accountId, next.email), { type: 'Claim', member_id: id }, 'email'));
      items.push(releaseClaim(uniqueKeys.memberEmailClaim(accountId, current.email), id, 'old-email'));
    }
    const codeClaim = { type: 'Claim', member_id: id, ...(next.campaign_id ? { campaign_id: next.campaign_id } : {}) };
    if (changed.code) {
      items.push(put(uniqueKeys.memberCodeClaim(accountId, next.code), codeClaim, 'code'));
      items.push(releaseClaim(uniqueKeys.memberCodeClaim(accountId, current.code), id, 'old-code'));
    } else if (next.campaign_id !== current.campaign_id) {
      items.push({
        label: 'old-code',
        item: {
          Put: {
            TableName: tableName(),
            Item: { ...uniqueKeys.memberCodeClaim(accountId, current.code), ...codeClaim },
            ConditionExpression: 'member_id = :m',
            ExpressionAttributeValues: { ':m': id },
          },
        },
      });
    }
    if (next.campaign_id !== current.campaign_id) {
      if (oldCampaign) items.push(campaignCount(accountId, oldCampaign.id, -1, 'old-campaign'));
      if (next.campaign_id) items.push(campaignCount(accountId, next.campaign_id, 1, 'campaign'));
    }
    if (changed.subscription) {
      if (current.subscription_id !== null) items.push(detachSubscription(accountId, current.subscription_id, id, 'old-subscription'));
      if (next.subscription_id !== null) items.push(attachSubscription(accountId, next.subscription_id, id, 'subscription', payers));
    }

    const failed = await run(items);
    if (failed.length > 0) {
      const userFacing = failed.filter((f) => ['identifier', 'email', 'code', 'campaign', 'subscription'].includes(f));
      // The subscription taken meanwhile, or told a new payer: read again (the prefetch tells which).
      if (failed.includes('subscription')) throw new StaleMemberError();
      if (userFacing.length > 0 && !failed.includes('member')) {
        throw raceErrors(userFacing, { ...next, campaignId: next.campaign_id, subscriptionId: next.subscription_id });
      }
      throw new StaleMemberError();
    }
    return { member: next, campaign: newCampaign, subscription: next.subscription_id ? newSubscription : null };
  }, retryStale);
}

export async function deleteMember(accountId: string, id: string): Promise<void> {
  await withRetries(async () => {
    const current = await getMemberOrThrow(accountId, id);
    const items: Labelled[] = [
      {
        label: 'member',
        item: {
          Delete: {
            TableName: tableName(),
            Key: keys.member(accountId, id),
            ConditionExpression: '#version = :version',
            ExpressionAttributeNames: { '#version': 'version' },
            ExpressionAttributeValues: { ':version': current.version },
          },
        },
      },
      releaseClaim(uniqueKeys.memberCodeClaim(accountId, current.code), id, 'code'),
      releaseClaim(uniqueKeys.memberEmailClaim(accountId, current.email), id, 'email'),
      releaseClaim(uniqueKeys.memberIdentifierClaim(accountId, current.identifier), id, 'identifier'),
      { label: 'counter', item: counterUpdate(accountId, 'members', -1) },
    ];
    if (current.campaign_id) {
      const campaign = toCampaign(await getItem(keys.campaign(accountId, current.campaign_id)));
      if (campaign) items.push(campaignCount(accountId, campaign.id, -1, 'campaign'));
    }
    if (current.subscription_id !== null) items.push(detachSubscription(accountId, current.subscription_id, id, 'subscription'));
    const failed = await run(items);
    if (failed.length > 0) throw new StaleMemberError();
  }, retryStale);
}
