// Recording a conversion: resolve the provider subscription (by checkout through the port's
// resolveCheckout, or by id), then mark the referral converted in one transaction and queue its reward evaluation.
//
// Round trips, usual case: 1 BatchGet (referral + provider credentials [+ subscription]), at most one
// provider call (resolveCheckout, for checkout_id; Classic: the order lookup), 1 GetItem (the
// subscription, checkout_id only), 1 TransactWriteItems, 1 SQS send. Only when the subscription's webhook
// has not arrived yet is it fetched from the provider (getSubscription; Classic: user + plan) and stored first.
// A replay (same referral, same subscription or checkout) changes nothing, answers 200 with the
// referral, and queues the evaluation again: a first attempt that committed but failed to send is healed.
// Self-referral (the referring member's attached subscription, or one with the member's email address,
// without case) is refused with a 400 by conditions of the same transaction (store/referrals.ts), so it
// costs no extra read and cannot be raced. A subscription paid by the member's own payer (the same card
// fingerprint or provider customer id, docs/fraud.md "Self-referral beyond email"): an automatic conversion
// (convertToSubscription) tells it apart by a condition of the same transaction and records the rule's
// action there (flows/self-referral-payer.ts decidePayerMatch); this endpoint's conversion leaves it to the
// fraud screening of its referral.converted event, moments later (screenPayer), which keeps the writes of
// a flag out of the endpoint's bundle (300 KB budget).
import { NotFoundError, ValidationError } from '../domain/errors';
import { isEntityId } from '../domain/ids';
import type { Plan, ProviderId, Referral, Subscription } from '../domain/models';
import { DetailError } from '../domain/errors';
import { publish } from '../queue/publish';
import type { ConversionTarget } from '../schemas/conversion';
import { batchGet, getItem, lookup } from '../store/ops';
import { connectionFrom, credentialKeys } from '../store/provider';
import { alreadyConverted, assertSubscriptionFree, convertedWith, markReferralConverted, toReferral } from '../store/referrals';
import { payerIdsOf } from '../domain/payer-ids';
import { decidePayerMatch } from './self-referral-payer';
import { applyProviderUpdate, getSubscription, toSubscription } from '../store/subscriptions';
import { keys } from '../store/table';
import { forgetUnattributedItem } from '../store/unattributed';
import { providerFromConnection, type AccountBillingProvider } from '../billing/adapters';
import type { PlanFacts } from '../billing/port';
import { planDescriptor } from '../domain/billing';
import { formatCents } from '../domain/money';
import { minorToCents } from '../domain/currency';
import { countMetric } from '../metrics';

const notConfigured = () => new ValidationError({ non_field_errors: ['No payment provider is configured for this account.'] });
const subscriptionNotFound = (id: ProviderId) => new ValidationError({ subscription_id: [`Subscription ${id} could not be found`] });
const checkoutNotFound = (id: string) => new ValidationError({ checkout_id: [`Checkout ${id} could not be found`] });

export async function convertReferral(accountId: string, referralId: string, target: ConversionTarget): Promise<Referral> {
  if (!isEntityId(referralId)) throw new NotFoundError();
  const referralKey = keys.referral(accountId, referralId);
  const subscriptionKey = 'subscriptionId' in target ? keys.subscription(accountId, target.subscriptionId) : null;
  const found = await batchGet([referralKey, ...credentialKeys(accountId), ...(subscriptionKey ? [subscriptionKey] : [])]);
  const referral = toReferral(lookup(found, referralKey));
  if (!referral) throw new NotFoundError();

  const conn = await connectionFrom(found, accountId);
  // The account's provider adapter (no I/O until a call): null when the account has no provider settings.
  const account = providerFromConnection(accountId, conn);
  if (referral.converted_at !== null) {
    if (!convertedWith(referral, target) && !(await sameCheckoutAsAutomatic(referral, target, account)))
      throw alreadyConverted(referral.id);
    await queueEvaluation(accountId, referral.id);
    return referral;
  }

  const provider = (): AccountBillingProvider => {
    if (!account) throw notConfigured();
    return account;
  };

  let subscriptionId: ProviderId;
  let subscription: Subscription | null;
  if ('subscriptionId' in target) {
    subscriptionId = target.subscriptionId;
    subscription = toSubscription(lookup(found, subscriptionKey as NonNullable<typeof subscriptionKey>));
  } else {
    const checkout = await provider().resolveCheckout(target.checkoutId);
    if (checkout.state === 'not_found') throw checkoutNotFound(target.checkoutId);
    if (checkout.state === 'processing')
      throw new DetailError(409, `Checkout ${target.checkoutId} is still being processed; retry shortly.`);
    if (checkout.state === 'no_subscription') {
      throw new ValidationError({ checkout_id: [`Checkout ${target.checkoutId} did not start a subscription`] });
    }
    // The store's ids are still Paddle Classic's integers (issue 12: provider ids through the store).
    subscriptionId = checkout.subscriptionId;
    subscription = await getSubscription(accountId, subscriptionId);
  }

  subscription ??= await fetchSubscription(accountId, subscriptionId, provider, account, target);
  await assertSubscriptionFree(accountId, subscription, referral.id);

  const { referral: converted, changed } = await markReferralConverted(
    accountId,
    referral,
    subscription,
    'checkoutId' in target ? target.checkoutId : null,
  );
  // Once per conversion committed (a concurrent replay that found it converted already is not one).
  if (changed) countMetric('Conversions');
  await queueEvaluation(accountId, converted.id);
  return converted;
}

/**
 * Converts a referral to a subscription the service already holds (automatic attribution from an
 * alert): the conversion endpoint's rules and transaction without the provider lookup. 'unchanged' when
 * it was already converted with this subscription; a 400 (ValidationError) when converted with another
 * or when the subscription is tied to another referral; 'not_found' for an unknown referral.
 */
export async function convertToSubscription(
  accountId: string,
  referralId: string,
  subscription: Subscription,
): Promise<'converted' | 'unchanged' | 'not_found'> {
  const referral = toReferral(await getItem(keys.referral(accountId, referralId)));
  if (!referral) return 'not_found';
  if (referral.converted_at !== null) {
    if (!convertedWith(referral, { subscriptionId: subscription.id })) throw alreadyConverted(referral.id);
    await queueEvaluation(accountId, referral.id);
    return 'unchanged';
  }
  await assertSubscriptionFree(accountId, subscription, referral.id);
  // The subscription's sighting (if any: an earlier event named no referral) is forgotten in the same transaction.
  const { changed } = await markReferralConverted(accountId, referral, subscription, null, true, decidePayerMatch(accountId), [
    forgetUnattributedItem(accountId, subscription.email, subscription.id),
  ]);
  if (changed) countMetric('Conversions');
  await queueEvaluation(accountId, referral.id);
  return changed ? 'converted' : 'unchanged';
}

/**
 * A referral converted automatically from an alert (a coupon payment, a passthrough) has no checkout id
 * recorded: the app reporting that checkout afterwards is the same conversion (200, unchanged), which
 * the order lookup confirms. Only this replay costs the provider call. (A referral the app converted by
 * subscription_id keeps the contract's rule: another input, 400.)
 */
async function sameCheckoutAsAutomatic(
  referral: Referral & { converted_automatically?: unknown },
  target: ConversionTarget,
  account: AccountBillingProvider | null,
): Promise<boolean> {
  if (!('checkoutId' in target) || referral.converted_automatically !== true || !referral.subscription || !account) return false;
  const checkout = await account.resolveCheckout(target.checkoutId);
  return checkout.state === 'subscription' && checkout.subscriptionId === referral.subscription.id;
}

/** The port's plan facts as the subscription's `plan` (amounts as two-decimal strings, the descriptor). */
export function planFromFacts(facts: PlanFacts): Plan {
  const amount = facts.amount === null ? '0.00' : formatCents(minorToCents(facts.amount, facts.currency));
  return {
    id: facts.id,
    name: facts.name ?? '',
    amount,
    currency: facts.currency,
    interval: facts.interval,
    frequency: facts.frequency,
    descriptor: planDescriptor(amount, facts.currency, facts.interval, facts.frequency),
  };
}

/** The subscription is not in our copy yet (its webhook is late): ask the provider and store it. */
async function fetchSubscription(
  accountId: string,
  subscriptionId: ProviderId,
  provider: () => AccountBillingProvider,
  account: AccountBillingProvider | null,
  target: ConversionTarget,
): Promise<Subscription> {
  if (!account && 'subscriptionId' in target) throw subscriptionNotFound(subscriptionId);
  const facts = await provider().getSubscription(subscriptionId);
  if (!facts?.plan || facts.currency === undefined) {
    if ('checkoutId' in target) throw checkoutNotFound(target.checkoutId);
    throw subscriptionNotFound(subscriptionId);
  }
  const plan = planFromFacts(facts.plan);
  const result = await applyProviderUpdate(accountId, {
    subscriptionId,
    asOfMs: Date.now(),
    payerIds: payerIdsOf(provider().kind, facts),
    fields: {
      ...(facts.status !== undefined ? { status: facts.status } : {}),
      ...(facts.email !== undefined ? { email: facts.email } : {}),
      currency: facts.currency,
      unit_price: facts.unitPrice === undefined ? plan.amount : formatCents(minorToCents(facts.unitPrice, facts.currency)),
      plan,
      next_bill_date: facts.nextBillDate ?? null,
      ...(facts.lastBillDate ? { last_bill_date: facts.lastBillDate } : {}),
    },
  });
  if (!result.subscription) throw subscriptionNotFound(subscriptionId);
  return result.subscription;
}

async function queueEvaluation(accountId: string, referralId: string): Promise<void> {
  await publish('rewards', { kind: 'evaluate-referral', account_id: accountId, referral_id: referralId });
}
