// Automatic conversion from a provider event: a subscription the service holds that is not yet tied to a
// referral, whose event names one of the account's referrals, converts that referral exactly as
// POST /referrals/{id}/conversion/ would (same transaction, same idempotency), without a call from the app.
//
// What an event says about its referral arrives as provider-agnostic hints (shared/billing/port.ts
// AttributionHints); each adapter reads them from its own fields (Classic `passthrough`/`coupon`, Billing
// `custom_data` and discount, Stripe `client_reference_id`/`metadata` and promotion code). Tried in order:
// - couponCode: a referred user's coupon code (double-sided campaigns), looked up through its claim item:
//   a member's coupon wins over a cookie (docs/attribution.md);
// - referralId: the id the browser script put into the checkout (`refloop_referral_id`, from its cookie).
//
// A referral id that is malformed, unknown to the account, already converted with another subscription,
// a subscription already tied elsewhere, or the referring member's own subscription (self-referral: the
// one attached to the member, or one with the member's email): logged and ignored, nothing rewarded. The
// event itself is still acknowledged (retrying a signed event cannot change what it says). DynamoDB or SQS
// failures propagate, so the record is retried; the conversion is idempotent, so a retry converts once.
// Every event that leaves its subscription unattributed (no hint, or a refused one) is recorded with its
// reason for the referral diagnosis (shared/store/unattributed.ts, docs/referrals-diagnosis.md).
import type { AttributionHints } from '../billing/port';
import { isEntityId } from '../domain/ids';
import type { Subscription } from '../domain/models';
import { ValidationError } from '../domain/errors';
import { referralIdByCoupon } from '../store/coupons';
import { SelfReferralError, SubscriptionAssignedError } from '../store/referrals';
import { forgetUnattributed, recordUnattributed, type UnattributedReason } from '../store/unattributed';
import { convertToSubscription } from './conversion';
import { log } from '../log';

/** Names the referral an event attributes its subscription to, and how. */
export interface Attribution {
  referralId: string;
  source: string;
}

export type AttributionSource = (accountId: string, hints: AttributionHints) => Promise<Attribution | null> | Attribution | null;

export const passthroughSource: AttributionSource = (_accountId, hints) =>
  hints.referralId ? { referralId: hints.referralId, source: 'passthrough' } : null;

/**
 * Attribution by coupon: an event whose checkout used a referral's coupon code (double-sided campaigns)
 * names that referral. Looked up through the coupon claim item (one GetItem, no Scan); codes compare
 * without case.
 */
export const couponSource: AttributionSource = async (accountId, hints) => {
  const code = hints.couponCode?.trim();
  if (!code) return null;
  const referralId = await referralIdByCoupon(accountId, code);
  return referralId === null ? null : { referralId, source: 'coupon' };
};

const SOURCES: AttributionSource[] = [couponSource, passthroughSource];

/** Why a subscription whose event named no referral and no coupon did not attribute (its sighting's detail). */
export const NO_HINT_DETAIL =
  'The checkout carried no referral: no refloop_referral_id (Paddle passthrough or custom_data, Stripe client_reference_id or metadata) and no referral coupon.';

export type AttributionOutcome = 'converted' | 'unchanged' | 'ignored' | 'none';

/** The first source that names a referral for this event, or null. */
async function namedReferral(accountId: string, hints: AttributionHints): Promise<Attribution | null> {
  for (const source of SOURCES) {
    const found = await source(accountId, hints);
    if (found) return found;
  }
  return null;
}

/**
 * Converts the referral the event names, if any, to `subscription`. Called by the subscription-sync
 * worker after the event was applied (also for a duplicate delivery: the first may have died before this).
 * A subscription that does not attribute is recorded, with why, for the referral diagnosis
 * (shared/store/unattributed.ts); one that converts forgets its earlier sighting.
 */
export async function attributeFromHints(
  accountId: string,
  eventId: string,
  hints: AttributionHints,
  subscription: Subscription,
): Promise<AttributionOutcome> {
  if (subscription.referral_id) return 'none';
  const found = await namedReferral(accountId, hints);
  const sighting = (reason: UnattributedReason, detail: string, referralNamed?: string) =>
    noteUnattributed(accountId, eventId, hints, subscription, reason, detail, referralNamed);
  if (found) {
    const context = {
      account_id: accountId,
      event_id: eventId,
      subscription_id: subscription.id,
      referral_id: found.referralId.slice(0, 64),
      source: found.source,
    };
    const named = found.referralId.slice(0, 64);
    const via =
      found.source === 'coupon' ? `the coupon ${hints.couponCode ?? ''} of referral ${named}` : `referral ${named} (named by the checkout)`;
    if (!isEntityId(found.referralId)) {
      log('warn', 'attribution ignored: not a referral id', context);
      await sighting('malformed_referral_id', `The checkout named "${named}" as its referral, which is not a referral id.`, named);
      return 'ignored';
    }
    try {
      const outcome = await convertToSubscription(accountId, found.referralId, subscription);
      if (outcome === 'not_found') {
        log('warn', 'attribution ignored: no such referral in this account', context);
        await sighting(
          'referral_not_found',
          `The checkout named referral ${named}, which does not exist in this account (deleted, or another account's).`,
          named,
        );
        return 'ignored';
      }
      log(
        'info',
        outcome === 'converted' ? 'referral converted from a provider event' : 'referral already converted with this subscription',
        context,
      );
      // A conversion forgot the sighting in its own transaction; one found already made did not write.
      if (outcome !== 'converted') await forgetUnattributed(accountId, subscription.email, subscription.id);
      return outcome;
    } catch (err) {
      // The conversion's own 4xx rules (converted with another subscription, subscription taken):
      // the event cannot change them, so it is acknowledged and the refusal logged.
      if (err instanceof SelfReferralError) {
        log('warn', 'attribution refused: self-referral, not converted and not rewarded', { ...context, reason: err.reason });
        await sighting(
          'self_referral',
          `Not converted through ${via}: the subscription belongs to the referring member (${err.reason === 'attached' ? 'attached to them' : 'their email address'}); a member cannot refer themselves.`,
          found.referralId,
        );
        return 'ignored';
      }
      if (err instanceof SubscriptionAssignedError) {
        log('warn', 'attribution ignored: conversion refused', { ...context, reason: JSON.stringify(err.fields) });
        await sighting(
          'subscription_assigned',
          `Not converted through ${via}: the subscription is already assigned to another referral.`,
          found.referralId,
        );
        return 'ignored';
      }
      if (err instanceof ValidationError) {
        log('warn', 'attribution ignored: conversion refused', { ...context, reason: JSON.stringify(err.fields) });
        const text = Object.values(err.fields).flat().join(' ');
        const elsewhere = /already converted/.test(text);
        await sighting(
          elsewhere ? 'referral_converted_elsewhere' : 'conversion_refused',
          elsewhere
            ? `Not converted through ${via}: that referral is already converted with another subscription.`
            : `Not converted through ${via}: ${text}`,
          found.referralId,
        );
        return 'ignored';
      }
      throw err;
    }
  }
  const coupon = hints.couponCode?.trim();
  if (coupon)
    await sighting(
      'unknown_coupon',
      `The checkout used the code ${coupon.slice(0, 64)}, which is not a referral's coupon in this account, and named no referral.`,
    );
  else await sighting('no_referral_hint', NO_HINT_DETAIL);
  return 'none';
}

/**
 * Records why a subscription did not attribute. Never fails the event: the sighting is a diagnosis aid,
 * so a write that fails is logged and the event acknowledged as before.
 */
async function noteUnattributed(
  accountId: string,
  eventId: string,
  hints: AttributionHints,
  subscription: Subscription,
  reason: UnattributedReason,
  detail: string,
  referralNamed?: string,
): Promise<void> {
  try {
    await recordUnattributed(accountId, {
      subscriptionId: subscription.id,
      email: subscription.email ?? '',
      reason,
      detail,
      eventId,
      checkoutId: hints.checkoutId,
      referralNamed,
      couponCode: hints.couponCode?.trim(),
      status: subscription.status,
      planName: subscription.plan?.name,
    });
  } catch (err) {
    log('warn', 'unattributed sighting not recorded', {
      account_id: accountId,
      event_id: eventId,
      subscription_id: subscription.id,
      error: err instanceof Error ? err.name : 'unknown',
    });
  }
}
