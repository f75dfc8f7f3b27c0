// "Why did this referral not convert?": the referral, plus the provider subscriptions (and their
// checkouts) seen for the referred user's email, or naming this referral, that did not attribute, each
// with why (shared/store/unattributed.ts records them from the subscription-sync worker's attribution).
//
// The referred user's email: the `email` the caller gives, else the referral's user_identifier when it is an
// email address; compared trimmed and without case. Without either, only the sightings whose checkout named
// this referral are found.
//
// Round trips: GetItem referral ‖ Query GSI1 (sightings naming the referral) [‖ Query by the given email],
// then [Query by the user_identifier's email], then one BatchGet of the sightings' subscriptions (their
// current referral, at most 100 keys) = 2 to 3. No Scan.
import { NotFoundError } from '../domain/errors';
import { isEntityId } from '../domain/ids';
import type { ProviderId } from '../domain/models';
import { identifierEmail } from '../schemas/diagnosis';
import { batchGet, getItem, lookup } from '../store/ops';
import { toReferral } from '../store/referrals';
import { keys } from '../store/table';
import { unattributedByEmail, unattributedByReferral, type UnattributedItem, type UnattributedReason } from '../store/unattributed';

export interface DiagnosisEntry {
  subscription_id: ProviderId;
  checkout_id: string | null;
  email: string;
  status: string | null;
  plan_name: string | null;
  reason: UnattributedReason;
  detail: string;
  /** The referral id the checkout named (the passthrough / custom data / metadata, or a coupon's referral). */
  referral_named: string | null;
  coupon_code: string | null;
  /** The referral the subscription is assigned to now (another one, converted since), or null. */
  assigned_referral_id: string | null;
  event_id: string;
  first_seen_at: number;
  last_seen_at: number;
}

export interface Diagnosis {
  referral_id: string;
  user_identifier: string;
  is_converted: boolean;
  subscription_id: ProviderId | null;
  email: string | null;
  email_source: 'query' | 'user_identifier' | null;
  unattributed: DiagnosisEntry[];
}

export async function diagnoseReferral(accountId: string, referralId: string, givenEmail?: string): Promise<Diagnosis> {
  if (!isEntityId(referralId)) throw new NotFoundError();
  const [raw, named, byGiven] = await Promise.all([
    getItem(keys.referral(accountId, referralId)),
    unattributedByReferral(accountId, referralId),
    givenEmail ? unattributedByEmail(accountId, givenEmail) : Promise.resolve([] as UnattributedItem[]),
  ]);
  const referral = toReferral(raw);
  if (!referral) throw new NotFoundError();
  const derived = givenEmail ? null : identifierEmail(referral.user_identifier);
  const byEmail = givenEmail ? byGiven : derived ? await unattributedByEmail(accountId, derived) : [];

  // One entry per subscription (a sighting can be in both partitions).
  const bySubscription = new Map<string, UnattributedItem>();
  for (const item of [...named, ...byEmail]) bySubscription.set(String(item.subscription_id), item);
  const ownSubscription = referral.subscription?.id ?? null;
  const items = [...bySubscription.values()].filter(
    (i) => ownSubscription === null || String(i.subscription_id) !== String(ownSubscription),
  );

  // The subscriptions' current referral: a sighting may have converted another referral since.
  const subscriptionKeys = items.slice(0, 100).map((i) => keys.subscription(accountId, i.subscription_id));
  const subs = subscriptionKeys.length > 0 ? await batchGet(subscriptionKeys) : new Map<string, Record<string, unknown>>();
  const entries = items
    .map((i): DiagnosisEntry | null => {
      const sub = lookup(subs, keys.subscription(accountId, i.subscription_id));
      const assigned = typeof sub?.referral_id === 'string' ? sub.referral_id : null;
      // Converted with this referral since (by the conversion endpoint): not a reason any more.
      if (assigned === referral.id) return null;
      return {
        subscription_id: i.subscription_id,
        checkout_id: i.checkout_id,
        email: i.email,
        status: typeof sub?.status === 'string' ? sub.status : i.status,
        plan_name: i.plan_name,
        reason: assigned !== null && i.reason === 'no_referral_hint' ? 'subscription_assigned' : i.reason,
        detail:
          assigned !== null && i.reason === 'no_referral_hint'
            ? `The checkout carried no referral; the subscription has since been assigned to referral ${assigned}.`
            : i.detail,
        referral_named: i.referral_named,
        coupon_code: i.coupon_code,
        assigned_referral_id: assigned,
        event_id: i.event_id,
        first_seen_at: Math.floor(i.first_seen_at / 1000),
        last_seen_at: Math.floor(i.last_seen_at / 1000),
      };
    })
    .filter((e): e is DiagnosisEntry => e !== null)
    .sort((a, b) => b.last_seen_at - a.last_seen_at || String(a.subscription_id).localeCompare(String(b.subscription_id)));

  return {
    referral_id: referral.id,
    user_identifier: referral.user_identifier,
    is_converted: referral.converted_at !== null,
    subscription_id: ownSubscription,
    email: givenEmail ?? derived,
    email_source: givenEmail ? 'query' : derived ? 'user_identifier' : null,
    unattributed: entries,
  };
}
