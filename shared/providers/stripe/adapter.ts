// Stripe as a BillingProvider (shared/billing/port.ts), bound to one account's settings.
//
// Credits (docs/design/providers.md "Credits for the referrer"): a NEGATIVE customer balance transaction
// on the subscription's customer, in the subscription's currency; Stripe applies the balance to the next
// finalized invoice in that currency. Credits stack (several rewards are several transactions), so
// CreditRequest.combined is ignored. Exactly once per reward:
// - the customer's balance transactions are searched for the reward id (metadata refloop_reward_id) before
//   anything is written, and
// - the write carries `Idempotency-Key: refloop-credit-<reward id>`, so a retry of a write whose answer was
//   lost (within Stripe's 24 h key retention) returns the first transaction instead of making a second.
// Reversal after a refund: a POSITIVE balance transaction of the same amount (`Idempotency-Key:
// refloop-credit-<reward id>-reverse`, metadata refloop_kind reversal), made only while the credit has not
// been consumed. The rule: the customer's credit left in that currency (invoice_credit_balance) still
// covers the whole credit, so the reversal can never turn into an amount the referrer owes. Once an invoice
// has used it (even partly: Stripe's balance is one pool, so what is left may be someone else's credit),
// the outcome is 'consumed' and the credit stays, noted on the clawback. (An invoice finalized between the
// read and the write can still consume it; the window is one round trip.)
// Coupons (double-sided campaigns): one coupon per set of campaign discount terms, its id derived from the
// terms (`refloop-pct-1000-once`, `refloop-flat-500-usd-forever`), and one promotion code per referral
// (the given code, max_redemptions 1, first-time customers only); an existing code is 'existed'.
import { createHash } from 'node:crypto';
import type {
  AppliedCredit,
  BillingEvent,
  BillingProvider,
  CheckoutResolution,
  CouponRequest,
  CreditRequest,
  CreditReversalOutcome,
  PaymentFacts,
  ProviderId,
  RawWebhook,
  SubscriptionFacts,
  SubscriptionPage,
} from '../../billing/port';
import { StripeApiError, StripeClient, isStripeError } from './client';
import type { RetryOptions } from '../retry';
import {
  invoiceSubscriptionId,
  batchLookupsOf,
  lookupsFor,
  parseEnvelope,
  paymentFacts,
  subscriptionFacts,
  toBillingEvents,
  type PaidInvoiceRef,
} from './events';
import type { StripeSettings } from './settings';
import { toStripeAmount, type Customer, type CustomerBalanceTransaction, type Invoice, type Subscription } from './wire';

/** The client's retry settings (injected in tests). */
export type StripeProviderOptions = Pick<RetryOptions, 'timeoutMs' | 'budgetMs' | 'now' | 'sleep'>;

/** metadata.refloop on Refloop's balance transactions, coupons and promotion codes. */
export const CREDIT_KIND = 'credit';
export const REVERSAL_KIND = 'credit_reversal';
/** A customer with more balance transactions than this is not searched further (the Idempotency-Key still holds). */
const MAX_BALANCE_PAGES = 20;
const MAX_DESCRIPTION = 350;

type Json = Record<string, unknown>;

/** Idempotency keys are at most 255 characters: long ids are hashed. */
export function idempotencyKey(prefix: string, id: string): string {
  const key = `${prefix}-${id}`;
  return key.length <= 255 && /^[\x21-\x7e]+$/.test(key) ? key : `${prefix}-sha256-${createHash('sha256').update(id).digest('hex')}`;
}

/** The coupon id for a set of campaign discount terms (deterministic: one coupon per set of terms). */
export function couponIdFor(discount: CouponRequest['discount']): string {
  const duration = discount.recurring ? 'forever' : 'once';
  if (discount.type === 'percentage') return `refloop-pct-${discount.amount}-${duration}`;
  return `refloop-flat-${discount.amount}-${(discount.currency ?? '').toLowerCase()}-${duration}`;
}

const subscriptionIdOf = (id: ProviderId): string | null => (typeof id === 'string' && /^sub_[A-Za-z0-9]{1,250}$/.test(id) ? id : null);
const customerIdOf = (customer: Subscription['customer']): string => (typeof customer === 'string' ? customer : customer.id);

function notFound(call: string, what: string): StripeApiError {
  return new StripeApiError(404, 'invalid_request_error', 'resource_missing', `No such ${what}`, 'id', call);
}

/** The credit left to spend in `currency` (Stripe units, positive = credit), from the customer object. */
export function creditLeft(customer: Customer, currency: string): number {
  const c = currency.toLowerCase();
  const perCurrency = customer.invoice_credit_balance?.[c];
  if (typeof perCurrency === 'number') return perCurrency;
  if ((customer.currency ?? '').toLowerCase() === c) return -customer.balance;
  return 0;
}

export interface StripeProvider extends BillingProvider {
  readonly kind: 'stripe';
  readonly client: StripeClient;
}

export function stripeProvider(
  settings: Pick<StripeSettings, 'secretKey' | 'apiUrl'>,
  options: StripeProviderOptions = {},
): StripeProvider {
  const client = new StripeClient({
    secretKey: settings.secretKey,
    apiUrl: settings.apiUrl,
    timeoutMs: options.timeoutMs,
    budgetMs: options.budgetMs,
    now: options.now,
    sleep: options.sleep,
  });
  // For the provider's lifetime (one worker batch): a burst of events about one customer or product costs
  // one lookup, even when the batch parses them concurrently (the lookup in flight is shared). Emails can
  // change; a batch is short. What the batch's own events tell (see parseWebhook) needs no lookup at all.
  const emails = new Map<string, Promise<string | undefined>>();
  const productNames = new Map<string, Promise<string | undefined>>();
  const checkoutSessions = new Map<string, string>();

  /** The lookup, shared while in flight and kept once answered; a failed one is not kept. */
  const once = (cache: Map<string, Promise<string | undefined>>, id: string, look: () => Promise<string | undefined>) => {
    let found = cache.get(id);
    if (!found) {
      found = look();
      cache.set(id, found);
      found.catch(() => cache.delete(id));
    }
    return found;
  };
  const emailOf = (customerId: string): Promise<string | undefined> =>
    once(emails, customerId, async () => (await client.getCustomer(customerId))?.email ?? undefined);
  const productNameOf = (productId: string): Promise<string | undefined> =>
    once(productNames, productId, async () => (await client.getProduct(productId))?.name ?? undefined);

  /** The subscription invoice a payment intent paid (Basil: through the invoice payments API). */
  const paidInvoiceOf = async (paymentIntentId: string): Promise<PaidInvoiceRef | null> => {
    for (const payment of await client.listInvoicePaymentsByPaymentIntent(paymentIntentId)) {
      if (payment.status !== 'paid') continue;
      const invoice = typeof payment.invoice === 'string' ? null : (payment.invoice as Invoice);
      const subscriptionId = invoice ? invoiceSubscriptionId(invoice as unknown as Json) : null;
      if (invoice && subscriptionId) return { invoiceId: invoice.id, subscriptionId };
    }
    return null;
  };

  /** Refloop's balance transactions for a reward on a customer (newest first, bounded search). */
  const findRewardTransactions = async (
    customerId: string,
    rewardId: string,
  ): Promise<{ credit?: CustomerBalanceTransaction; reversal?: CustomerBalanceTransaction }> => {
    const found: { credit?: CustomerBalanceTransaction; reversal?: CustomerBalanceTransaction } = {};
    let after: string | null = null;
    for (let page = 0; page < MAX_BALANCE_PAGES; page++) {
      const result = await client.listBalanceTransactions(customerId, after);
      for (const t of result.data) {
        if (t.metadata?.refloop_reward_id !== rewardId) continue;
        if (t.metadata.refloop === CREDIT_KIND) found.credit ??= t;
        if (t.metadata.refloop === REVERSAL_KIND) found.reversal ??= t;
      }
      if (found.credit || !result.next) break;
      after = result.next;
    }
    return found;
  };

  const requireSubscription = async (call: string, id: ProviderId): Promise<Subscription> => {
    const subId = subscriptionIdOf(id);
    const sub = subId ? await client.getSubscription(subId) : null;
    if (!sub) throw notFound(call, `subscription: '${String(id)}'`);
    return sub;
  };

  const provider: StripeProvider = {
    kind: 'stripe',
    client,

    async parseWebhook(raw: RawWebhook): Promise<BillingEvent[]> {
      const parsed = parseEnvelope(raw.rawBody);
      if (!parsed.ok) return [parsed.event];
      // What this event tells the others (an email, the session that created a subscription) is noted
      // first, then one macrotask passes before any lookup: the parses a worker batch starts together
      // (shared/flows/provider-batch.ts) have all noted theirs by then, so an event whose invoice or
      // checkout is in the same batch looks nothing up.
      const known = batchLookupsOf(parsed.envelope);
      for (const [customerId, email] of known.emails) if (!emails.has(customerId)) emails.set(customerId, Promise.resolve(email));
      for (const [subscriptionId, sessionId] of known.checkouts) checkoutSessions.set(subscriptionId, sessionId);
      await new Promise((next) => setImmediate(next));
      const needs = lookupsFor(parsed.envelope);
      const foundEmails = new Map<string, string>();
      for (const id of needs.customerIds) {
        const email = await emailOf(id);
        if (email) foundEmails.set(id, email);
      }
      const names = new Map<string, string>();
      for (const id of needs.productIds) {
        const name = await productNameOf(id);
        if (name) names.set(id, name);
      }
      const promotionCodes = new Map<string, string>();
      for (const id of needs.promotionCodeIds) {
        const promo = await client.getPromotionCode(id);
        if (promo) promotionCodes.set(id, promo.code);
      }
      const charges = new Map<string, Json>();
      const paymentIntents = new Set(needs.paymentIntentIds);
      for (const id of needs.chargeIds) {
        const charge = await client.getCharge(id);
        if (!charge) continue;
        if (charge.refunds?.has_more) charge.refunds = { ...charge.refunds, data: await client.listRefunds(id), has_more: false };
        charges.set(id, charge as unknown as Json);
        if (charge.payment_intent) paymentIntents.add(charge.payment_intent);
      }
      const invoicesByPaymentIntent = new Map<string, PaidInvoiceRef>();
      for (const pi of paymentIntents) {
        const paid = await paidInvoiceOf(pi);
        if (paid) invoicesByPaymentIntent.set(pi, paid);
      }
      const checkoutBySubscription = new Map<string, string>();
      for (const sub of needs.checkoutForSubscriptions) {
        const known = checkoutSessions.get(sub);
        const session = known ? { id: known } : await client.findCheckoutSessionBySubscription(sub);
        if (session) checkoutBySubscription.set(sub, session.id);
      }
      return toBillingEvents(parsed.envelope, {
        emails: foundEmails,
        productNames: names,
        promotionCodes,
        charges,
        invoicesByPaymentIntent,
        checkoutBySubscription,
      });
    },

    async getSubscription(id: ProviderId): Promise<SubscriptionFacts | null> {
      const subId = subscriptionIdOf(id);
      if (!subId) return null;
      const sub = await client.getSubscription(subId);
      if (!sub) return null;
      return subscriptionFacts(sub as unknown as Json);
    },

    async resolveCheckout(checkoutId: string): Promise<CheckoutResolution> {
      if (!/^cs_[A-Za-z0-9_]{1,250}$/.test(checkoutId)) return { state: 'not_found' };
      const session = await client.getCheckoutSession(checkoutId);
      if (!session) return { state: 'not_found' };
      if (session.subscription) return { state: 'subscription', subscriptionId: session.subscription };
      // Still open (the customer is paying): the subscription may come. Complete or expired without one:
      // a one-time payment or setup, or an abandoned checkout; it never will.
      if (session.status === 'open') return { state: 'processing' };
      return { state: 'no_subscription' };
    },

    async listSubscriptions(cursor: string | null): Promise<SubscriptionPage> {
      const page = await client.listSubscriptions(cursor);
      const names = new Map<string, string>();
      for (const s of page.data) {
        const product = s.items?.data?.[0]?.price?.product;
        if (typeof product !== 'string' || names.has(product)) continue;
        const name = await productNameOf(product);
        if (name) names.set(product, name);
      }
      const subscriptions = page.data
        .map((s) => subscriptionFacts(s as unknown as Json, { productNames: names }))
        .filter((s): s is SubscriptionFacts => s !== null);
      return { subscriptions, next: page.next };
    },

    async listPayments(subscriptionId: ProviderId): Promise<PaymentFacts[]> {
      const subId = subscriptionIdOf(subscriptionId);
      if (!subId) return [];
      const out: PaymentFacts[] = [];
      let after: string | null = null;
      do {
        const page = await client.listPaidInvoices(subId, after);
        for (const invoice of page.data) {
          const payment = paymentFacts(invoice as unknown as Json);
          if (payment) out.push(payment);
        }
        after = page.next;
      } while (after);
      return out;
    },

    async applyCredit(credit: CreditRequest): Promise<AppliedCredit> {
      if (!Number.isSafeInteger(credit.amount) || credit.amount <= 0)
        throw new Error(`a credit must be a positive amount, got ${credit.amount}`);
      const sub = await requireSubscription('apply credit', credit.subscriptionId);
      if (sub.currency.toUpperCase() !== credit.currency.toUpperCase()) {
        throw new Error(`credit in ${credit.currency} for a subscription billed in ${sub.currency.toUpperCase()}`);
      }
      const customerId = customerIdOf(sub.customer);
      const { credit: existing } = await findRewardTransactions(customerId, credit.rewardId);
      if (existing) return { providerRef: existing.id, reused: true };
      const txn = await client.createBalanceTransaction(
        customerId,
        {
          amount: -toStripeAmount(credit.amount, sub.currency),
          currency: sub.currency.toLowerCase(),
          description: `Refloop referral credit: reward ${credit.rewardId}`.slice(0, MAX_DESCRIPTION),
          metadata: { refloop: CREDIT_KIND, refloop_reward_id: credit.rewardId, refloop_subscription_id: sub.id },
        },
        idempotencyKey('refloop-credit', credit.rewardId),
      );
      return { providerRef: txn.id, reused: false };
    },

    async reverseCredit(credit: CreditRequest & { providerRef: string | null }): Promise<CreditReversalOutcome> {
      const subId = subscriptionIdOf(credit.subscriptionId);
      const sub = subId ? await client.getSubscription(subId) : null;
      // Without the subscription there is no customer to look at: nothing is taken back (noted).
      if (!sub) return 'consumed';
      const customerId = customerIdOf(sub.customer);
      const { credit: applied, reversal } = await findRewardTransactions(customerId, credit.rewardId);
      if (reversal) return 'reversed';
      // Never applied (or the search limit passed it): nothing to take back.
      if (!applied) return 'reversed';
      const amount = -applied.amount;
      const customer = await client.getCustomer(customerId);
      if (!customer || creditLeft(customer, applied.currency) < amount) {
        // Less credit left than this one: spent by an invoice, or taken back by a concurrent reversal of this
        // same credit (whose transaction was not listed yet when we looked). Only the first is "consumed".
        return (await findRewardTransactions(customerId, credit.rewardId)).reversal ? 'reversed' : 'consumed';
      }
      await client.createBalanceTransaction(
        customerId,
        {
          amount,
          currency: applied.currency,
          description: `Refloop referral credit reversed (refund): reward ${credit.rewardId}`.slice(0, MAX_DESCRIPTION),
          metadata: { refloop: REVERSAL_KIND, refloop_reward_id: credit.rewardId, refloop_credit: applied.id },
        },
        idempotencyKey('refloop-credit-reverse', credit.rewardId),
      );
      return 'reversed';
    },

    async createCoupon(coupon: CouponRequest): Promise<'created' | 'existed'> {
      const { discount } = coupon;
      if (discount.type === 'flat' && !discount.currency) throw new Error('a flat coupon needs a currency');
      if (!/^[A-Za-z0-9-]{1,500}$/.test(coupon.code)) throw new Error(`promotion code ${coupon.code} must be letters, digits and -`);
      const couponId = couponIdFor(discount);
      if (!(await client.getCoupon(couponId))) {
        try {
          await client.createCoupon(
            {
              id: couponId,
              name:
                discount.type === 'percentage'
                  ? `Referral ${discount.amount / 100} % off`
                  : `Referral ${discount.amount} ${(discount.currency as string).toUpperCase()} off`,
              duration: discount.recurring ? 'forever' : 'once',
              // Percentage: hundredths of a percent -> 10, 12.5; flat: the port's minor units -> Stripe's.
              ...(discount.type === 'percentage'
                ? { percent_off: discount.amount / 100 }
                : {
                    amount_off: toStripeAmount(discount.amount, discount.currency as string),
                    currency: (discount.currency as string).toLowerCase(),
                  }),
              metadata: { refloop: 'coupon' },
            },
            idempotencyKey('refloop-coupon', couponId),
          );
        } catch (err) {
          // Created by a concurrent attempt: the same terms, so the same coupon.
          if (!isStripeError(err, 'resource_already_exists')) throw err;
        }
      }
      const existing = await client.listPromotionCodesByCode(coupon.code);
      if (existing.some((p) => p.code.toUpperCase() === coupon.code.toUpperCase())) return 'existed';
      try {
        await client.createPromotionCode(
          {
            coupon: couponId,
            code: coupon.code,
            max_redemptions: 1,
            first_time_transaction: true,
            metadata: { refloop: 'coupon', refloop_referral_id: coupon.referralId },
          },
          idempotencyKey('refloop-promo', coupon.referralId),
        );
        return 'created';
      } catch (err) {
        if (isStripeError(err, 'resource_already_exists') || (err instanceof StripeApiError && /already exists/i.test(err.detail)))
          return 'existed';
        throw err;
      }
    },
  };
  return provider;
}
