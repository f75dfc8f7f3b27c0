// Paddle Billing as a BillingProvider (shared/billing/port.ts), bound to one account's settings.
//
// Credits (docs/design/providers.md "Credits for the referrer"): Paddle Billing cannot credit a card
// subscription directly, so a credit is a Refloop discount: flat, in the subscription's currency,
// `recur: true`, `maximum_recurring_intervals: 1`, set on the referrer's subscription from the next
// billing period. A Refloop discount is recognised by its custom_data {refloop: "credit",
// refloop_rewards: {<reward id>: <amount>}}; its description names the rewards for people reading the
// dashboard, and its code (not usable at checkout: enabled_for_checkout false) is derived from the reward
// ids, so a repeated create answers 409 discount_code_conflict and the retry finds the first one.
// - A subscription holds ONE discount. A credit arriving while a Refloop discount is still pending (not
//   yet billed) is combined with it into one new discount covering both (nothing pending is ever dropped).
//   The flow may also pass several rewards at once (CreditRequest.combined). Concurrent applyCredit calls
//   for the same subscription must be serialised by the caller (read, then replace: the last write wins).
// - A discount Refloop did not create is never replaced: CreditMustWaitError (the flow waits a period).
// - Exactly once per reward: the subscription's current Refloop discount, then the derived code (a
//   discount already applied once, `times_used > 0`, is never applied again) are checked before any write.
// Reversal: a Refloop discount not yet billed is removed, or reduced to the other rewards it covers;
// once its period has started (or a completed transaction used it) it is 'consumed'.
// Coupons (double-sided campaigns): one discount per referral with the derived code, usage_limit 1,
// enabled_for_checkout; 409 discount_code_conflict = an earlier attempt created it ('existed').
import { createHash } from 'node:crypto';
import {
  CreditMustWaitError,
  type AppliedCredit,
  type BillingEvent,
  type BillingProvider,
  type CheckoutResolution,
  type CouponRequest,
  type CreditRequest,
  type CreditReversalOutcome,
  type PaymentFacts,
  type ProviderId,
  type RawWebhook,
  type SubscriptionFacts,
  type SubscriptionPage,
} from '../../billing/port';
import { PaddleBillingApiError, PaddleBillingClient, isPaddleError } from './client';
import type { RetryOptions } from '../retry';
import { instantMs, lookupsFor, parseEnvelope, paymentFacts, subscriptionFacts, toBillingEvents } from './events';
import type { PaddleBillingSettings } from './settings';
import type { Discount, Subscription } from './wire';

/** The client's retry settings; `now` also drives the "not yet billed" checks (injected in tests). */
export type PaddleBillingProviderOptions = Pick<RetryOptions, 'timeoutMs' | 'budgetMs' | 'now' | 'sleep'>;

/** The discount's custom_data marker for a referrer credit. */
export const CREDIT_MARK = 'credit';
export const COUPON_MARK = 'coupon';
/** Paddle: 500 characters at most for a description (kept well below). */
const MAX_DESCRIPTION = 250;
/** A subscription with more completed transactions than this is not searched further for a discount's use. */
const MAX_TRANSACTION_PAGES = 40;

const ALL_STATUSES = 'active,canceled,past_due,paused,trialing';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** `RC` + 16 Crockford characters of SHA-256(sorted reward ids): letters and digits, as Paddle requires. */
export function creditCodeFor(rewardIds: readonly string[]): string {
  const digest = createHash('sha256')
    .update(`refloop-credit:${[...new Set(rewardIds)].sort().join(',')}`)
    .digest();
  let code = 'RC';
  for (let i = 0; i < 16; i++) code += CROCKFORD[(digest[i] as number) & 31];
  return code;
}

type Rewards = Record<string, number>;

/** The rewards a Refloop credit discount covers; null when the discount is not a Refloop credit. */
export function creditRewards(discount: Pick<Discount, 'custom_data'> | null | undefined): Rewards | null {
  const data = discount?.custom_data;
  if (!data || data.refloop !== CREDIT_MARK) return null;
  const rewards = data.refloop_rewards;
  if (typeof rewards !== 'object' || rewards === null || Array.isArray(rewards)) return null;
  const out: Rewards = {};
  for (const [id, amount] of Object.entries(rewards as Record<string, unknown>)) {
    if (typeof amount === 'number' && Number.isSafeInteger(amount)) out[id] = amount;
  }
  return out;
}

const sum = (rewards: Rewards) => Object.values(rewards).reduce((a, b) => a + b, 0);

function requestedRewards(credit: CreditRequest): Rewards {
  if (!credit.combined || credit.combined.length === 0) return { [credit.rewardId]: credit.amount };
  const out: Rewards = {};
  for (const c of credit.combined) out[c.rewardId] = c.amount;
  if (!(credit.rewardId in out)) throw new Error(`combined credits must include reward ${credit.rewardId}`);
  if (sum(out) !== credit.amount) throw new Error(`combined credits sum to ${sum(out)}, not ${credit.amount}`);
  return out;
}

const subscriptionIdOf = (id: ProviderId): string | null => (typeof id === 'string' && /^sub_[A-Za-z0-9]{1,60}$/.test(id) ? id : null);

function notFound(call: string, what: string): PaddleBillingApiError {
  return new PaddleBillingApiError(404, 'not_found', 'request_error', `${what} not found.`, call);
}

export interface PaddleBillingProvider extends BillingProvider {
  readonly kind: 'paddle-billing';
  readonly client: PaddleBillingClient;
}

export function paddleBillingProvider(
  settings: Pick<PaddleBillingSettings, 'apiKey' | 'apiUrl'>,
  options: PaddleBillingProviderOptions = {},
): PaddleBillingProvider {
  const now = options.now ?? Date.now;
  const client = new PaddleBillingClient({
    apiKey: settings.apiKey,
    apiUrl: settings.apiUrl,
    timeoutMs: options.timeoutMs,
    budgetMs: options.budgetMs,
    now,
    sleep: options.sleep,
  });
  // Emails by customer id, for the provider's lifetime (one worker batch): a burst of events about one
  // customer costs one lookup.
  const emails = new Map<string, string>();

  const emailOf = async (customerId: string | null | undefined): Promise<string | undefined> => {
    if (!customerId) return undefined;
    const cached = emails.get(customerId);
    if (cached !== undefined) return cached;
    const customer = await client.getCustomer(customerId);
    if (customer?.email) emails.set(customerId, customer.email);
    return customer?.email ?? undefined;
  };

  /** Before its period starts a discount set `next_billing_period` has not been billed. */
  const notYetBilled = (sub: Subscription): boolean => {
    const starts = instantMs(sub.discount?.starts_at);
    return starts === null || starts > now();
  };

  const ended = (sub: Subscription): boolean => {
    const ends = instantMs(sub.discount?.ends_at);
    return ends !== null && ends <= now();
  };

  /** Creates the credit discount for exactly these rewards, or finds the one an earlier attempt created. */
  const creditDiscount = async (rewards: Rewards, currency: string): Promise<{ discount: Discount; created: boolean }> => {
    const ids = Object.keys(rewards).sort();
    const code = creditCodeFor(ids);
    try {
      const discount = await client.createDiscount({
        description: `Refloop referral credit: reward ${ids.join(', ')}`.slice(0, MAX_DESCRIPTION),
        type: 'flat',
        amount: String(sum(rewards)),
        currency_code: currency,
        code,
        enabled_for_checkout: false,
        recur: true,
        maximum_recurring_intervals: 1,
        custom_data: { refloop: CREDIT_MARK, refloop_rewards: rewards },
      });
      return { discount, created: true };
    } catch (err) {
      if (!isPaddleError(err, 'discount_code_conflict')) throw err;
      const existing = await client.findDiscountByCode(code);
      if (!existing) throw err;
      return { discount: existing, created: false };
    }
  };

  /** Whether a completed transaction of the subscription was billed with this discount. */
  const billedWith = async (subscriptionId: string, discountId: string): Promise<boolean> => {
    let after: string | null = null;
    for (let page = 0; page < MAX_TRANSACTION_PAGES; page++) {
      const result = await client.listTransactions(subscriptionId, after);
      if (result.data.some((t) => t.discount_id === discountId)) return true;
      if (!result.next) return false;
      after = result.next;
    }
    return true; // Past the search limit: assume it was used (the credit stays, noted), never reverse blindly.
  };

  const provider: PaddleBillingProvider = {
    kind: 'paddle-billing',
    combinesCredits: true,
    client,

    async parseWebhook(raw: RawWebhook): Promise<BillingEvent[]> {
      const parsed = parseEnvelope(raw.rawBody);
      if (!parsed.ok) return [parsed.event];
      const needs = lookupsFor(parsed.envelope);
      const found = new Map<string, string>();
      for (const id of needs.customerIds) {
        const email = await emailOf(id);
        if (email) found.set(id, email);
      }
      const codes = new Map<string, string | null>();
      for (const id of needs.discountIds) codes.set(id, (await client.getDiscount(id))?.code ?? null);
      return toBillingEvents(parsed.envelope, { emails: found, discountCodes: codes });
    },

    async getSubscription(id: ProviderId): Promise<SubscriptionFacts | null> {
      const subId = subscriptionIdOf(id);
      if (!subId) return null;
      const sub = await client.getSubscription(subId);
      if (!sub) return null;
      return subscriptionFacts(sub as unknown as Record<string, unknown>, await emailOf(sub.customer_id));
    },

    async resolveCheckout(checkoutId: string): Promise<CheckoutResolution> {
      if (!/^txn_[A-Za-z0-9]{1,60}$/.test(checkoutId)) return { state: 'not_found' };
      const txn = await client.getTransaction(checkoutId);
      if (!txn) return { state: 'not_found' };
      if (txn.subscription_id) return { state: 'subscription', subscriptionId: txn.subscription_id };
      // Completed (or canceled: it will never complete) without a subscription: a one-time purchase.
      if (txn.status === 'completed' || txn.status === 'canceled') return { state: 'no_subscription' };
      return { state: 'processing' };
    },

    async listSubscriptions(cursor: string | null): Promise<SubscriptionPage> {
      // Every status, explicitly: whether Paddle's default filter includes canceled ones is not documented.
      const page = await client.listSubscriptions(cursor, { status: ALL_STATUSES });
      // One customers call per page for the emails (ids not cached yet).
      const missing = [...new Set(page.data.map((s) => s.customer_id).filter((c) => c && !emails.has(c)))];
      for (let i = 0; i < missing.length; i += 200) {
        for (const c of await client.listCustomers(missing.slice(i, i + 200))) if (c.email) emails.set(c.id, c.email);
      }
      const subscriptions = page.data
        .map((s) => subscriptionFacts(s as unknown as Record<string, unknown>, emails.get(s.customer_id)))
        .filter((s): s is SubscriptionFacts => s !== null);
      return { subscriptions, next: page.next };
    },

    async listPayments(subscriptionId: ProviderId): Promise<PaymentFacts[]> {
      const subId = subscriptionIdOf(subscriptionId);
      if (!subId) return [];
      const out: PaymentFacts[] = [];
      let after: string | null = null;
      do {
        const page = await client.listTransactions(subId, after);
        for (const t of page.data) {
          const payment = paymentFacts(t as unknown as Record<string, unknown>);
          if (payment) out.push(payment);
        }
        after = page.next;
      } while (after);
      return out;
    },

    async applyCredit(credit: CreditRequest): Promise<AppliedCredit> {
      const subId = subscriptionIdOf(credit.subscriptionId);
      if (!subId) throw notFound('apply credit', `Subscription ${String(credit.subscriptionId)}`);
      const requested = requestedRewards(credit);
      const sub = await client.getSubscription(subId);
      if (!sub) throw notFound('apply credit', `Subscription ${subId}`);
      if (sub.currency_code.toUpperCase() !== credit.currency.toUpperCase()) {
        throw new Error(`credit in ${credit.currency} for a subscription billed in ${sub.currency_code}`);
      }

      let rewards: Rewards = requested;
      if (sub.discount) {
        const current = await client.getDiscount(sub.discount.id);
        const covered = creditRewards(current);
        if (current && covered) {
          if (Object.keys(requested).every((id) => id in covered)) {
            return { providerRef: current.id, reused: true, rewardIds: Object.keys(covered).sort() };
          }
          // Still pending: combine, so that applying this credit does not take the earlier one away.
          if (notYetBilled(sub)) rewards = { ...covered, ...requested };
        } else if (current && !ended(sub)) {
          throw new CreditMustWaitError(
            `subscription ${subId} carries discount ${current.id}, which Refloop did not create`,
            'paddle-billing',
            instantMs(sub.discount.ends_at),
          );
        }
      }

      const { discount, created } = await creditDiscount(rewards, sub.currency_code);
      const rewardIds = Object.keys(rewards).sort();
      // Found from an earlier attempt and already applied once: never apply it a second time.
      if (!created && discount.times_used > 0) return { providerRef: discount.id, reused: true, rewardIds };
      await client.setSubscriptionDiscount(subId, discount.id);
      return { providerRef: discount.id, reused: !created, rewardIds };
    },

    async reverseCredit(credit: CreditRequest & { providerRef: string | null }): Promise<CreditReversalOutcome> {
      const subId = subscriptionIdOf(credit.subscriptionId);
      const removed = Object.keys(requestedRewards(credit));
      const sub = subId ? await client.getSubscription(subId) : null;
      if (sub?.discount) {
        const current = await client.getDiscount(sub.discount.id);
        const covered = creditRewards(current);
        if (current && covered && removed.some((id) => id in covered)) {
          if (!notYetBilled(sub)) return 'consumed';
          const rest: Rewards = Object.fromEntries(Object.entries(covered).filter(([id]) => !removed.includes(id)));
          if (Object.keys(rest).length === 0) {
            await client.setSubscriptionDiscount(sub.id, null);
          } else {
            const { discount } = await creditDiscount(rest, sub.currency_code);
            await client.setSubscriptionDiscount(sub.id, discount.id);
          }
          return 'reversed';
        }
      }
      // Not on the subscription (any more): consumed if a payment was billed with it, else never used.
      if (!credit.providerRef || !sub) return 'reversed';
      const discount = await client.getDiscount(credit.providerRef);
      if (!discount || discount.times_used === 0) return 'reversed';
      return (await billedWith(sub.id, discount.id)) ? 'consumed' : 'reversed';
    },

    async createCoupon(coupon: CouponRequest): Promise<'created' | 'existed'> {
      const { discount } = coupon;
      if (discount.type === 'flat' && !discount.currency) throw new Error('a flat coupon needs a currency');
      try {
        await client.createDiscount({
          description: `Refloop referral ${coupon.referralId}`,
          type: discount.type,
          // Flat: minor units; percentage: hundredths of a percent -> "10", "12.5".
          amount: discount.type === 'flat' ? String(discount.amount) : String(discount.amount / 100),
          ...(discount.type === 'flat' ? { currency_code: (discount.currency as string).toUpperCase() } : {}),
          code: coupon.code,
          enabled_for_checkout: true,
          usage_limit: 1,
          recur: discount.recurring,
          custom_data: { refloop: COUPON_MARK, refloop_referral_id: coupon.referralId },
        });
        return 'created';
      } catch (err) {
        if (isPaddleError(err, 'discount_code_conflict')) return 'existed';
        throw err;
      }
    },
  };
  return provider;
}
