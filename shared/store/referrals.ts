// Referral repository. One referral per referred user per account, enforced by a claim item
// (`REFERRED_USER#<user_identifier>`) written in the same transaction as the referral, the member's
// stats and the referrals counter. Creating the same (user, code) pair again returns the existing
// referral, whatever the retries or concurrency. Rewards live inside the referral item, so a
// referral and its rewards read in one round trip.
import { NotFoundError, ValidationError } from '../domain/errors';
import { isEntityId, isMemberCode, newEntityId } from '../domain/ids';
import { referralTerms, type ProviderId, type Referral, type Subscription } from '../domain/models';
import { referralView } from '../domain/views';
import { toCampaign } from './campaigns';
import { tableName } from './client';
import {
  batchGet,
  ConditionsFailedError,
  counterUpdate,
  getItem,
  lookup,
  RaceLostError,
  readCounter,
  transact,
  withRetries,
  type TransactItem,
} from './ops';
import { eventItem } from './outbox';
import { arrayPage, emptyPage, queryPage, type PageRequest } from './pagination';
import { memberPayerIds, toMember } from './members';
import { releaseIfOrphaned, subscriptionPayerIds, subscriptionSnapshot, toSubscription } from './subscriptions';
import { payerMatch, type PayerMatchKind } from '../domain/payer-ids';
import type { FraudFlag } from '../domain/fraud';
import { uniqueKeys, GSI1, GSI2, keys, listKeys, moneyKeys, type CounterName } from './table';
import { isSub } from '../domain/links';
import { ledgerFromReferral, lifecycleOf, MoneyTxn, removeReward, takeStats } from './ledger';
import { ReportDeltas } from './reports';

/**
 * A credit's reference at the provider (the port's `providerRef`) is `provider_ref` in the code. Inside the
 * referral item it keeps the attribute's first name, Paddle Classic's `modifier_id` (a number on items
 * written before the provider port): this constant and fromStoredReward are the one mapping between the two
 * (docs/data-model.md "Referral").
 */
export const PROVIDER_REF_ATTRIBUTE = 'modifier_id';

/** A reward as read from the referral item, with its provider reference under its code name. */
function fromStoredReward(stored: Record<string, unknown>): Referral['rewards'][number] {
  if (stored[PROVIDER_REF_ATTRIBUTE] === undefined) return stored as unknown as Referral['rewards'][number];
  const { [PROVIDER_REF_ATTRIBUTE]: ref, ...rest } = stored;
  return { ...rest, provider_ref: String(ref) } as unknown as Referral['rewards'][number];
}

export function toReferral(item: Record<string, unknown> | undefined): Referral | null {
  if (item?.type !== 'Referral') return null;
  const { pk: _pk, sk: _sk, gsi1pk: _g1, gsi1sk: _g2, gsi2pk: _g3, gsi2sk: _g4, type: _t, ...rest } = item;
  return {
    ...(rest as unknown as Referral),
    coupon_code: (item.coupon_code as string | null) ?? null,
    converted_at: (item.converted_at as number | null) ?? null,
    campaign_id: (item.campaign_id as string | null) ?? null,
    reward_type: (item.reward_type as Referral['reward_type']) ?? null,
    currency: (item.currency as string | null) ?? null,
    sub: typeof item.sub === 'string' ? item.sub : null,
    commission_months: (item.commission_months as number | null) ?? null,
    rewards: ((item.rewards as Record<string, unknown>[] | undefined) ?? []).map(fromStoredReward),
    subscription: (item.subscription as Referral['subscription']) ?? null,
    referred_discount: (item.referred_discount as Referral['referred_discount']) ?? null,
  };
}

export async function getReferralOrThrow(accountId: string, id: string): Promise<Referral> {
  if (!isEntityId(id)) throw new NotFoundError(); // never a key DynamoDB would refuse
  const referral = toReferral(await getItem(keys.referral(accountId, id)));
  if (!referral) throw new NotFoundError();
  return referral;
}

export async function getReferralByUserOrThrow(accountId: string, userIdentifier: string): Promise<Referral> {
  if (userIdentifier.length === 0 || userIdentifier.length > 255) throw new NotFoundError();
  const claim = await getItem(uniqueKeys.referredUserClaim(accountId, userIdentifier));
  if (typeof claim?.referral_id !== 'string') throw new NotFoundError();
  return getReferralOrThrow(accountId, claim.referral_id);
}

/** The counter of a member's referrals made through one sub-id (the list's exact count with `sub`). */
export const subCounter = (memberId: string, sub: string): CounterName => `referrals#m#${memberId}#s#${sub}`;

export async function listReferrals(accountId: string, page: PageRequest, memberId?: string, sub?: string) {
  if (sub !== undefined) {
    // `sub` narrows a member's referrals: its own index partition and counter (GSI2, store/table.ts).
    if (memberId === undefined || !isEntityId(memberId) || !isSub(sub)) return emptyPage();
    const [result, count] = await Promise.all([
      queryPage(
        {
          index: GSI2,
          partitionValue: listKeys.referralsBySub(accountId, memberId, sub),
          scope: `${accountId}|referrals|${memberId}|${sub}`,
        },
        page,
      ),
      readCounter(accountId, subCounter(memberId, sub)),
    ]);
    return { ...result, items: result.items.map((i) => toReferral(i)).filter((r): r is Referral => r !== null), count };
  }
  if (memberId === undefined) {
    const [result, count] = await Promise.all([
      queryPage({ partitionValue: listKeys.referralCollection(accountId), scope: `${accountId}|referrals` }, page),
      readCounter(accountId, 'referrals'),
    ]);
    return { ...result, items: result.items.map((i) => toReferral(i)).filter((r): r is Referral => r !== null), count };
  }
  if (!isEntityId(memberId)) return emptyPage();
  const [result, memberItem] = await Promise.all([
    queryPage(
      { index: GSI1, partitionValue: keys.referralsByMember(accountId, memberId), scope: `${accountId}|referrals|${memberId}` },
      page,
    ),
    getItem(keys.member(accountId, memberId)),
  ]);
  const member = toMember(memberItem);
  // The member's live referral count is its stats.referrals: an O(1) exact count for the filter.
  if (!member) return emptyPage();
  return { ...result, items: result.items.map((i) => toReferral(i)).filter((r): r is Referral => r !== null), count: member.referrals };
}

/**
 * `?search=`: the referral of the referred user `userIdentifier` (exact), through its claim: GetItem claim,
 * then GetItem referral. With `memberId`, only when that member made it. `count` is 0 or 1.
 */
export async function searchReferrals(accountId: string, userIdentifier: string, page: PageRequest, memberId?: string, sub?: string) {
  if (userIdentifier.length > 255 || (memberId !== undefined && !isEntityId(memberId))) return emptyPage();
  const claim = await getItem(uniqueKeys.referredUserClaim(accountId, userIdentifier));
  if (typeof claim?.referral_id !== 'string' || !isEntityId(claim.referral_id)) return emptyPage();
  const referral = toReferral(await getItem(keys.referral(accountId, claim.referral_id)));
  const matches =
    referral && (memberId === undefined || referral.member_id === memberId) && (sub === undefined || referral.sub === sub)
      ? [referral]
      : [];
  const result = arrayPage(matches, (r) => r.id, `${accountId}|referrals|${memberId ?? ''}|${sub ?? ''}|search|${userIdentifier}`, page);
  return { ...result, count: matches.length };
}

const notFoundCode = (code: string) => ValidationError.field('member_code', `Member with code ${code} was not found`);
const alreadyReferred = (user: string) => ValidationError.field('user_identifier', `User ${user} has already been referred`);

class ReferralRaceError extends RaceLostError {}

export interface CreateReferralResult {
  referral: Referral;
  created: boolean;
  /** Created, and the account sends the member the optional new-referral email (docs/affiliate-emails.md). */
  notifyMember?: boolean;
}

/**
 * Round trips: 1 BatchGet (code claim + referred-user claim), 1 BatchGet (member + campaign),
 * 1 TransactWriteItems. A replay of an existing pair costs 1 BatchGet + 1 GetItem.
 */
export async function createReferral(
  accountId: string,
  input: { user_identifier: string; member_code: string; sub?: string | null | undefined },
  source: Referral['source'],
  /** The client address's digest (domain/visitors.ts ipHash): browser-script referrals only, for the fraud rules. */
  ipHash?: string,
): Promise<CreateReferralResult> {
  // A code outside the ASCII pattern is nobody's, and must not be case-folded into a lookup (isMemberCode).
  if (!isMemberCode(input.member_code)) throw notFoundCode(input.member_code);
  const codeKey = uniqueKeys.memberCodeClaim(accountId, input.member_code);
  const userKey = uniqueKeys.referredUserClaim(accountId, input.user_identifier);

  const existing = async (claim: Record<string, unknown>, memberId: string): Promise<CreateReferralResult> => {
    if (claim.member_id !== memberId) throw alreadyReferred(input.user_identifier);
    const referral = toReferral(await getItem(keys.referral(accountId, String(claim.referral_id))));
    if (!referral) throw new ReferralRaceError(); // deleted meanwhile: start over
    return { referral, created: false };
  };

  return withRetries(
    async () => {
      const claims = await batchGet([codeKey, userKey]);
      const codeClaim = lookup(claims, codeKey);
      if (typeof codeClaim?.member_id !== 'string') throw notFoundCode(input.member_code);
      const memberId = codeClaim.member_id;
      const userClaim = lookup(claims, userKey);
      if (userClaim) return existing(userClaim, memberId);

      const campaignId = typeof codeClaim.campaign_id === 'string' ? codeClaim.campaign_id : null;
      // The account rides along in the same BatchGet: whether it sends the optional new-referral email.
      const found = await batchGet([
        keys.member(accountId, memberId),
        keys.account(accountId),
        ...(campaignId ? [keys.campaign(accountId, campaignId)] : []),
      ]);
      const emails = lookup(found, keys.account(accountId))?.affiliate_emails as { new_referral?: unknown } | undefined;
      const member = toMember(lookup(found, keys.member(accountId, memberId)));
      if (!member) throw notFoundCode(input.member_code);
      if (member.identifier === input.user_identifier) {
        throw ValidationError.field('user_identifier', 'A member cannot refer themselves');
      }
      if (member.campaign_id !== campaignId) throw new ReferralRaceError(); // moved meanwhile
      // A deleted campaign (tombstone) reads as none: the referral earns nothing.
      const campaign = campaignId ? toCampaign(lookup(found, keys.campaign(accountId, campaignId))) : null;

      const createdMs = Date.now();
      const referral: Referral = {
        id: newEntityId(),
        member_id: memberId,
        user_identifier: input.user_identifier,
        created_at: Math.floor(createdMs / 1000),
        converted_at: null,
        coupon_code: null,
        source,
        campaign_id: campaign ? campaign.id : null,
        sub: input.sub ?? null,
        ...referralTerms(campaign),
        rewards: [],
        rewards_completed: false,
        subscription: null,
      };
      const items: TransactItem[] = [
        {
          Put: {
            TableName: tableName(),
            Item: {
              ...keys.referral(accountId, referral.id),
              type: 'Referral',
              ...referral,
              gsi1pk: keys.referralsByMember(accountId, memberId),
              gsi1sk: referral.id,
              ...(referral.sub ? { gsi2pk: listKeys.referralsBySub(accountId, memberId, referral.sub), gsi2sk: referral.id } : {}),
              ...(ipHash ? { ip_hash: ipHash } : {}),
            },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Put: {
            TableName: tableName(),
            Item: { ...userKey, type: 'Claim', referral_id: referral.id, member_id: memberId },
            ConditionExpression: 'attribute_not_exists(pk)',
          },
        },
        {
          Update: {
            TableName: tableName(),
            Key: keys.member(accountId, memberId),
            UpdateExpression: 'ADD referrals :one',
            // The member must still exist with the campaign whose terms were copied.
            ConditionExpression: campaignId
              ? 'attribute_exists(pk) AND campaign_id = :c'
              : 'attribute_exists(pk) AND attribute_not_exists(campaign_id)',
            ExpressionAttributeValues: { ':one': 1, ...(campaignId ? { ':c': campaignId } : {}) },
          },
        },
        counterUpdate(accountId, 'referrals', 1),
        eventItem(accountId, 'referral.created', referral.id, referralView(referral), createdMs),
        ...new ReportDeltas(accountId)
          .add(referral.created_at, { campaignId: referral.campaign_id, memberId: referral.member_id, sub: referral.sub }, 'referrals', 1)
          .items(),
        // Through a sub-id: one more item, its counter (the `sub` filter's exact count).
        ...(referral.sub ? [counterUpdate(accountId, subCounter(memberId, referral.sub), 1)] : []),
      ];
      try {
        await transact(items);
      } catch (err) {
        if (!(err instanceof ConditionsFailedError)) throw err;
        if (err.failed(1)) {
          // A concurrent request created this user's referral first: answer with it.
          const claim = await getItem(userKey);
          if (claim) return existing(claim, memberId);
        }
        throw new ReferralRaceError();
      }
      return { referral, created: true, notifyMember: emails?.new_referral === true };
    },
    (err) => err instanceof ReferralRaceError,
    8,
  );
}

/**
 * A referral whose commissions are in a payout (approved into one, paid, or being paid) is not deleted
 * here: shared/flows/referral-delete.ts voids what may be voided first, and refuses the rest.
 */
export class RewardsInPayoutError extends Error {
  constructor(readonly rewardIds: string[]) {
    super('rewards in a payout');
  }
}

export async function deleteReferral(accountId: string, id: string): Promise<void> {
  let keepSubscription = false;
  await withRetries(
    async () => {
      const referral = await getReferralOrThrow(accountId, id);
      const inPayout = referral.rewards.filter(
        (r) =>
          r.type === 'commission' &&
          lifecycleOf(r).status !== 'voided' &&
          (lifecycleOf(r).payout_id !== null || lifecycleOf(r).status === 'paid'),
      );
      if (inPayout.length > 0) throw new RewardsInPayoutError(inPayout.map((r) => r.id));
      const memberItem = await getItem(keys.member(accountId, referral.member_id));
      const converted = referral.converted_at !== null;
      // Its rewards leave the ledger with it (store/ledger.ts): counts, and every stat they count in.
      const ledger = new MoneyTxn(accountId);
      referral.rewards.forEach((r, i) => {
        if ((r as { status?: unknown }).status !== undefined) removeReward(ledger, ledgerFromReferral(referral, i));
        else ledger.stat(referral.member_id, r.type === 'credit' ? 'credit_earned' : 'commission_earned', -r.amount);
      });
      const stats = [...takeStats(ledger, referral.member_id)].filter(([, d]) => d !== 0);
      const items: TransactItem[] = [
        {
          // Conditional on the state read: the rewards read are the ones whose amounts leave the member's
          // stats, and the conversion read is the one undone (its subscription freed, its count taken off).
          // A reward or a conversion written meanwhile makes this fail and the delete start over, so a
          // concurrent conversion either wins whole (and is deleted with the referral) or loses whole.
          Delete: {
            TableName: tableName(),
            Key: keys.referral(accountId, id),
            ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(#rw) OR size(#rw) = :n) AND ${
              converted
                ? 'converted_at = :ca AND #s.#id = :sid'
                : '(attribute_not_exists(converted_at) OR attribute_type(converted_at, :null))'
            }`,
            ExpressionAttributeNames: { '#rw': 'rewards', ...(converted ? { '#s': 'subscription', '#id': 'id' } : {}) },
            ExpressionAttributeValues: {
              ':n': referral.rewards.length,
              ...(converted ? { ':ca': referral.converted_at, ':sid': referral.subscription?.id ?? null } : { ':null': 'NULL' }),
            },
          },
        },
        {
          Delete: {
            TableName: tableName(),
            Key: uniqueKeys.referredUserClaim(accountId, referral.user_identifier),
            ConditionExpression: 'referral_id = :r',
            ExpressionAttributeValues: { ':r': id },
          },
        },
        counterUpdate(accountId, 'referrals', -1),
        ...(referral.sub ? [counterUpdate(accountId, subCounter(referral.member_id, referral.sub), -1)] : []),
      ];
      // Its coupon no longer converts anything (the coupon itself stays at the provider).
      if (referral.coupon_code) {
        items.push({
          Delete: {
            TableName: tableName(),
            Key: moneyKeys.couponClaim(accountId, referral.coupon_code),
            ConditionExpression: 'attribute_not_exists(pk) OR referral_id = :r',
            ExpressionAttributeValues: { ':r': id },
          },
        });
      }
      // The referring member may be gone already: its stats then need no update.
      if (toMember(memberItem)) {
        items.push({
          Update: {
            TableName: tableName(),
            Key: keys.member(accountId, referral.member_id),
            // History goes with the referral: its conversion and the rewards it earned leave the stats.
            UpdateExpression: `ADD referrals :minus${converted ? ', conversions :minus' : ''}${stats.map(([f], i) => `, ${f} :s${i}`).join('')}`,
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeValues: {
              ':minus': -1,
              ...Object.fromEntries(stats.map(([, d], i) => [`:s${i}`, d])),
            },
          },
        });
      }
      let unlinkAt = -1;
      if (referral.subscription && converted && !keepSubscription) {
        // Frees the subscription for another referral (the conversion tied it to this one).
        unlinkAt = items.length;
        items.push({
          Update: {
            TableName: tableName(),
            Key: keys.subscription(accountId, referral.subscription.id),
            UpdateExpression: 'REMOVE referral_id',
            ConditionExpression: 'referral_id = :r',
            ExpressionAttributeValues: { ':r': id },
          },
        });
      }
      // The ledger's deletes and counts (after the items whose indexes the error handling reads).
      items.push(...ledger.build());
      try {
        await transact(items);
      } catch (err) {
        if (err instanceof ConditionsFailedError) {
          // Deleted by a concurrent request, or converted / rewarded meanwhile (then read again).
          if (err.failed(0)) {
            if (!(await getItem(keys.referral(accountId, id)))) throw new NotFoundError();
            throw new ReferralRaceError();
          }
          // Its subscription is not tied to it (data from before conversions and deletes agreed): leave it be.
          if (unlinkAt >= 0 && err.failed(unlinkAt)) keepSubscription = true;
          throw new ReferralRaceError();
        }
        throw err;
      }
    },
    (err) => err instanceof ReferralRaceError,
    8,
  );
}

export class SubscriptionAssignedError extends ValidationError {
  constructor(subscriptionId: ProviderId) {
    super({ subscription_id: [`Subscription ${subscriptionId} is already assigned to another referral`] });
  }
}

/** Longer addresses are not member addresses (nor valid keys): no claim item to check. */
const MAX_EMAIL_KEY = 320;

/**
 * A conversion of the referring member's own subscription: the one attached to the member, or one with
 * the member's email address (without case). A 400 on the field the conversion named.
 */
export class SelfReferralError extends ValidationError {
  constructor(
    subscriptionId: ProviderId,
    checkoutId: string | null,
    readonly reason: 'attached' | 'email',
  ) {
    const why = reason === 'attached' ? 'is attached to the referring member' : "has the referring member's email address";
    super({
      [checkoutId ? 'checkout_id' : 'subscription_id']: [`Subscription ${subscriptionId} ${why}; a member cannot refer themselves`],
    });
  }
}

/**
 * Refuses a subscription tied to another referral (400), unless that tie is stale data: a referral that
 * no longer exists (a delete that raced its conversion before deletes were conditional). Such a tie is
 * freed here. Costs one read, only when the subscription is tied to another referral.
 */
export async function assertSubscriptionFree(accountId: string, subscription: Subscription, referralId: string): Promise<void> {
  const holder = subscription.referral_id;
  if (!holder || holder === referralId) return;
  if (!(await releaseIfOrphaned(accountId, subscription.id, holder))) throw new SubscriptionAssignedError(subscription.id);
}

export const alreadyConverted = (id: string) => new ValidationError({ non_field_errors: [`Referral ${id} is already converted`] });

/** Whether a converted referral was converted with this subscription (or this checkout). */
export function convertedWith(
  referral: Referral & { conversion_checkout_id?: unknown },
  target: { subscriptionId: ProviderId } | { checkoutId: string },
): boolean {
  if ('subscriptionId' in target) return referral.subscription?.id === target.subscriptionId;
  return referral.conversion_checkout_id === target.checkoutId;
}

/** A conversion whose subscription's payer is the referring member's own (domain/payer-ids.ts). */
export interface PayerMatch {
  id: string;
  kind: PayerMatchKind;
  /** The provider's kind. */
  provider: string;
}

/**
 * What the conversion records about a payer match (the self_referral rule's action, decided by the flow):
 * `items` join its transaction (the flag's), `flag` is appended to the referral's `fraud_flags` and `hold`
 * becomes its `fraud_hold`. All empty for the action `off`: the conversion is then as any other.
 */
export interface PayerMatchDecision {
  items: TransactItem[];
  flag: FraudFlag | null;
  hold: string | null;
}

export type PayerMatchDecider = (match: PayerMatch, referral: Referral, nowSeconds: number) => Promise<PayerMatchDecision>;

/**
 * Marks a referral converted with `subscription` in ONE transaction: the referral (converted_at, the
 * subscription snapshot), the subscription's `referral_id` (one referral per subscription) and the
 * referring member's `conversions`. Converting again with the same subscription changes nothing.
 *
 * With `onPayerMatch`, the member's update also requires that none of the subscription's payer ids
 * (store/subscriptions.ts) is among the member's own (`payer_ids`), at no extra read. When that fails, the
 * member read that tells the `attached` case tells the match; the decider says what to record (the
 * self_referral rule's action) and the transaction runs again without the payer condition, with it.
 */
export async function markReferralConverted(
  accountId: string,
  referral: Referral,
  subscription: Subscription,
  checkoutId: string | null,
  /** Converted from a provider alert (coupon, passthrough) rather than by the app's conversion call. */
  automatic = false,
  onPayerMatch?: PayerMatchDecider,
  /** Unconditioned writes that commit with the conversion (the attribution's sighting Delete). */
  alsoWrite: TransactItem[] = [],
): Promise<{ referral: Referral; changed: boolean }> {
  const now = Math.floor(Date.now() / 1000);
  let snapshot = subscriptionSnapshot(subscription);
  let includeMember = true;
  // Whether the member's condition still compares payers (until a match was decided).
  let payerCheck = onPayerMatch !== undefined;
  let decision: PayerMatchDecision | null = null;
  for (let attempt = 1; ; attempt++) {
    const payers = onPayerMatch ? subscriptionPayerIds(subscription) : [];
    const flag = decision?.flag ?? null;
    const hold = flag ? (decision?.hold ?? null) : null;
    const items: TransactItem[] = [
      {
        Update: {
          TableName: tableName(),
          Key: keys.referral(accountId, referral.id),
          UpdateExpression: `SET converted_at = :now, #s = :snap${checkoutId ? ', conversion_checkout_id = :co' : ''}${automatic ? ', converted_automatically = :auto' : ''}${
            flag ? ', fraud_flags = list_append(if_not_exists(fraud_flags, :noflags), :flags)' : ''
          }${hold ? ', fraud_hold = :hold' : ''}`,
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(converted_at) OR attribute_type(converted_at, :null))',
          ExpressionAttributeNames: { '#s': 'subscription' },
          ExpressionAttributeValues: {
            ':now': now,
            ':snap': snapshot,
            ':null': 'NULL',
            ...(checkoutId ? { ':co': checkoutId } : {}),
            ...(automatic ? { ':auto': true } : {}),
            ...(flag ? { ':noflags': [], ':flags': [flag] } : {}),
            ...(hold ? { ':hold': hold } : {}),
          },
        },
      },
      {
        Update: {
          TableName: tableName(),
          Key: keys.subscription(accountId, subscription.id),
          // Who referred it, for the report buckets of its payments (revenue per campaign and member).
          UpdateExpression: `SET referral_id = :r, referrer_member_id = :rm${referral.campaign_id ? ', referrer_campaign_id = :rc' : ''}`,
          // The snapshot is of the version read: a provider update written meanwhile (a cancellation,
          // say) makes this read the subscription again, so the referral never keeps an older copy. So do
          // payer ids told meanwhile (they grow without a new version): the payers compared are all of them.
          ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(referral_id) OR referral_id = :r)${subscription.version ? ' AND #version = :v' : ''}${
            onPayerMatch ? (payers.length > 0 ? ' AND size(#pids) = :np' : ' AND attribute_not_exists(#pids)') : ''
          }`,
          ...(subscription.version || onPayerMatch
            ? {
                ExpressionAttributeNames: {
                  ...(subscription.version ? { '#version': 'version' } : {}),
                  ...(onPayerMatch ? { '#pids': 'payer_ids' } : {}),
                },
              }
            : {}),
          ExpressionAttributeValues: {
            ':r': referral.id,
            ':rm': referral.member_id,
            ...(referral.campaign_id ? { ':rc': referral.campaign_id } : {}),
            ...(subscription.version ? { ':v': subscription.version } : {}),
            ...(onPayerMatch && payers.length > 0 ? { ':np': payers.length } : {}),
          },
        },
      },
    ];
    if (includeMember) {
      // Self-referral by payer: none of the subscription's payer ids is the member's own (docs/fraud.md).
      const compared = payerCheck ? payers : [];
      items.push({
        Update: {
          TableName: tableName(),
          Key: keys.member(accountId, referral.member_id),
          UpdateExpression: 'ADD conversions :one',
          // Self-referral: never the member's own attached subscription.
          ConditionExpression: `attribute_exists(pk) AND (attribute_not_exists(subscription_id) OR subscription_id <> :sid)${compared
            .map((_, i) => ` AND NOT contains(#pids, :p${i})`)
            .join('')}`,
          ...(compared.length > 0 ? { ExpressionAttributeNames: { '#pids': 'payer_ids' } } : {}),
          ExpressionAttributeValues: { ':one': 1, ':sid': subscription.id, ...Object.fromEntries(compared.map((p, i) => [`:p${i}`, p])) },
        },
      });
    }
    // Self-referral: never a subscription with the member's email address (the email claim item is keyed
    // by the address in lower case, so this compares without case, in the same transaction, at no read).
    const email = subscription.email.trim();
    const emailCheck = email !== '' && email.length <= MAX_EMAIL_KEY ? items.length : -1;
    if (emailCheck >= 0) {
      items.push({
        ConditionCheck: {
          TableName: tableName(),
          Key: uniqueKeys.memberEmailClaim(accountId, email),
          ConditionExpression: 'attribute_not_exists(pk) OR member_id <> :m',
          ExpressionAttributeValues: { ':m': referral.member_id },
        },
      });
    }
    const converted: Referral = {
      ...referral,
      converted_at: now,
      subscription: snapshot,
      ...(flag ? { fraud_flags: [...(referral.fraud_flags ?? []), flag] } : {}),
      ...(hold ? { fraud_hold: hold } : {}),
    };
    items.push(eventItem(accountId, 'referral.converted', referral.id, referralView(converted)));
    if (includeMember)
      items.push(
        ...new ReportDeltas(accountId)
          .add(now, { campaignId: referral.campaign_id, memberId: referral.member_id, sub: referral.sub }, 'conversions', 1)
          .items(),
      );
    // The flag of a payer match (its review-queue item, dedupe claim, counters, event): last, so the
    // indexes above stay.
    const flagStart = items.length;
    if (flag) items.push(...(decision?.items ?? []));
    items.push(...alsoWrite);
    try {
      await transact(items);
      return { referral: converted, changed: true };
    } catch (err) {
      if (!(err instanceof ConditionsFailedError)) throw err;
      if (err.failed(0)) {
        // Converted (or deleted) concurrently: the same conversion is a replay, another is refused.
        const current = await getReferralOrThrow(accountId, referral.id);
        if (current.converted_at !== null && convertedWith(current, { subscriptionId: subscription.id }))
          return { referral: current, changed: false };
        throw alreadyConverted(referral.id);
      }
      if (emailCheck >= 0 && err.failed(emailCheck)) throw new SelfReferralError(subscription.id, checkoutId, 'email');
      if (includeMember && err.failed(2)) {
        const memberItem = await getItem(keys.member(accountId, referral.member_id));
        const member = toMember(memberItem);
        if (member?.subscription_id === subscription.id) throw new SelfReferralError(subscription.id, checkoutId, 'attached');
        const match = member && payerCheck && onPayerMatch ? payerMatch(memberPayerIds(memberItem), payers) : null;
        if (match && onPayerMatch) {
          // The referring member's own payer: converted all the same, with what the rule's action records.
          decision = await onPayerMatch(match, referral, now);
          payerCheck = false;
          continue;
        }
      }
      // The same finding recorded already (its dedupe claim): the conversion records it no second time.
      if (flag && items.slice(flagStart).some((_, i) => err.failed(flagStart + i))) {
        decision = null;
        continue;
      }
      if (err.failed(1) && attempt < 8) {
        // Tied to another referral meanwhile, or a newer version: read it again.
        const fresh = toSubscription(await getItem(keys.subscription(accountId, subscription.id)));
        if (!fresh) throw new ReferralRaceError();
        await assertSubscriptionFree(accountId, fresh, referral.id);
        subscription = fresh;
        snapshot = subscriptionSnapshot(fresh);
        continue;
      }
      if (err.failed(1)) throw new SubscriptionAssignedError(subscription.id);
      if (err.failed(2) && attempt < 3) {
        includeMember = false; // the referring member was deleted: nobody's stats to bump
        continue;
      }
      throw new ReferralRaceError();
    }
  }
}
