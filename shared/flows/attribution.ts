// Automatic conversion from a provider alert: a subscription the service holds that is not yet tied
// to a referral, whose alert names one of the account's referrals, converts that referral exactly as
// POST /referrals/{id}/conversion/ would (same transaction, same idempotency), without a call from the app.
//
// Sources, tried in order until one names a referral:
// - passthrough: a `subscription_created` whose `passthrough` (or `custom_data`) is a JSON object with
//   `refloop_referral_id` (what the browser script's `refloop.passthrough()` returns).
// Further sources (a coupon code, for example) are one function each, added to SOURCES.
//
// A referral id that is malformed, unknown to the account, already converted with another subscription,
// a subscription already tied elsewhere, or the referring member's own subscription (self-referral: the
// one attached to the member, or one with the member's email): logged and ignored, nothing rewarded. The alert itself is still acknowledged
// (retrying a signed alert cannot change what it says). DynamoDB or SQS failures propagate, so the record
// is retried; the conversion is idempotent, so a retry after a partial run converts once.
import { isEntityId } from '../domain/ids';
import type { Subscription } from '../domain/models';
import { ValidationError } from '../domain/errors';
import { SelfReferralError } from '../store/referrals';
import { convertToSubscription } from './conversion';
import { couponSource } from './coupon-attribution';
import type { ParsedAlert } from '../providers/paddle-classic/alerts';
import type { AlertFields } from '../providers/paddle-classic/signature';
import { log } from '../log';

export type SubscriptionAlert = Extract<ParsedAlert, { kind: 'subscription' }>;

/** Names the referral an alert attributes its subscription to, and how. */
export interface Attribution {
  referralId: string;
  source: string;
}

export type AttributionSource = (accountId: string, alert: SubscriptionAlert, fields: AlertFields) => Promise<Attribution | null> | Attribution | null;

/** The key the browser script puts in Paddle's `passthrough`; apps may merge it with their own keys. */
export const PASSTHROUGH_KEY = 'refloop_referral_id';

/** `refloop_referral_id` of a JSON object string, or null (not JSON, not an object, no such key). */
export function referralIdFromJson(raw: string | undefined): string | null {
  if (!raw) return null;
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  const id = (value as Record<string, unknown>)[PASSTHROUGH_KEY];
  return typeof id === 'string' && id !== '' ? id : null;
}

export const passthroughSource: AttributionSource = (_accountId, alert, fields) => {
  if (alert.alert_name !== 'subscription_created') return null;
  const referralId = referralIdFromJson(fields.passthrough) ?? referralIdFromJson(fields.custom_data);
  return referralId === null ? null : { referralId, source: 'passthrough' };
};

const SOURCES: AttributionSource[] = [passthroughSource, couponSource];


export type AttributionOutcome = 'converted' | 'unchanged' | 'ignored' | 'none';

/** The first source that names a referral for this alert, or null. */
async function namedReferral(accountId: string, alert: SubscriptionAlert, fields: AlertFields): Promise<Attribution | null> {
  for (const source of SOURCES) {
    const found = await source(accountId, alert, fields);
    if (found) return found;
  }
  return null;
}

/**
 * Converts the referral the alert names, if any, to `subscription`. Called by the subscription-sync
 * worker after the alert was applied (also for a duplicate delivery: the first may have died before this).
 */
export async function attributeFromAlert(
  accountId: string,
  alert: SubscriptionAlert,
  fields: AlertFields,
  subscription: Subscription,
): Promise<AttributionOutcome> {
  if (subscription.referral_id) return 'none';
  const found = await namedReferral(accountId, alert, fields);
  if (found) {
    const context = { account_id: accountId, alert_id: alert.alert_id, subscription_id: subscription.id, referral_id: found.referralId.slice(0, 64), source: found.source };
    if (!isEntityId(found.referralId)) {
      log('warn', 'attribution ignored: not a referral id', context);
      return 'ignored';
    }
    try {
      const outcome = await convertToSubscription(accountId, found.referralId, subscription);
      if (outcome === 'not_found') {
        log('warn', 'attribution ignored: no such referral in this account', context);
        return 'ignored';
      }
      log('info', outcome === 'converted' ? 'referral converted from alert' : 'referral already converted with this subscription', context);
      return outcome;
    } catch (err) {
      // The conversion's own 4xx rules (converted with another subscription, subscription taken):
      // the alert cannot change them, so it is acknowledged and the refusal logged.
      if (err instanceof SelfReferralError) {
        log('warn', 'attribution refused: self-referral, not converted and not rewarded', { ...context, reason: err.reason });
        return 'ignored';
      }
      if (err instanceof ValidationError) {
        log('warn', 'attribution ignored: conversion refused', { ...context, reason: JSON.stringify(err.fields) });
        return 'ignored';
      }
      throw err;
    }
  }
  return 'none';
}
