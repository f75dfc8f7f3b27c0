// Chargebee as a BillingProvider (shared/billing/port.ts), bound to one account's site and API key.
//
// Webhooks: Chargebee signs nothing, so the intake checks only the webhook's Basic-auth pair
// (./signature.ts). Here, an event of a type the worker applies is fetched again by id
// (GET /api/v2/events/{id}) and ONLY the fetched event is parsed (./events.ts): a forged or altered body
// changes nothing. An id Chargebee does not know is acknowledged as ignored ("not found at Chargebee");
// Chargebee unreachable (5xx, timeout) throws ProviderUnavailableError, so the record is retried. Types
// the worker ignores are not fetched. Events are de-duplicated by their `ev_…` id in the pipeline.
//
// Credits (promotional credits, docs/providers/chargebee.md "Credits"): `POST /promotional_credits/add` on
// the subscription's customer, in the subscription's currency, `credit_type=referral_rewards`,
// `reference=refloop:reward:<reward id>`, `chargebee-idempotency-key: refloop-credit-<reward id>`. The
// idempotency window is 30 minutes, so before adding, the customer's increments are searched for that
// reference: found, it is reused (never a second credit, however late the retry). Credits stack in a
// per-currency balance that the next invoice consumes before tax; `combined` is ignored.
// Reversal: the customer's balance in that currency (`balances[]`) says what is unspent; `POST
// /promotional_credits/deduct` takes min(credit, balance) (reference `refloop:reversal:<reward id>`, found
// again the same way). 'reversed' when the whole credit was unspent, else 'consumed' (the balance is one
// pool: what is left may be another reward's, and a deduction never makes the referrer owe).
// Coupons: one coupon per discount terms (`refloop-pct2000-once`, `refloop-flat1000-usd-forever`) and one
// single-use code per referral (`POST /coupon_codes`); a code that exists already is 'existed'.
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
import type { RetryOptions } from '../retry';
import { ChargebeeApiError, ChargebeeClient, isChargebeeError, type SubscriptionRow } from './client';
import {
  envelopeOf,
  ignoredReason,
  isAppliedType,
  parseEnvelope,
  paymentFacts,
  planItemOf,
  planLookupsFor,
  subscriptionFacts,
  toBillingEvents,
} from './events';
import { isSupportedCurrency, UnsupportedCurrencyError, type Customer, type PromotionalCredit } from './wire';

export interface ChargebeeClientSettings {
  site: string;
  apiKey: string;
  /** `https://<site>.chargebee.com` or an emulator; calls go to `<apiUrl>/api/v2/…`. */
  apiUrl: string;
}

/** The client's retry settings (the tests inject a clock). */
export type ChargebeeProviderOptions = Pick<RetryOptions, 'timeoutMs' | 'budgetMs' | 'now' | 'sleep'>;

/** A customer with more promotional credit entries than this many pages is not searched further. */
const MAX_CREDIT_PAGES = 20;
const MAX_PAYMENT_PAGES = 50;
const MAX_DESCRIPTION = 250;
/** Chargebee's coupon codes are at most 50 characters. */
const CODE = /^[A-Za-z0-9_-]{1,50}$/;

export const creditReference = (rewardId: string) => `refloop:reward:${rewardId}`;
export const reversalReference = (rewardId: string) => `refloop:reversal:${rewardId}`;

/** Idempotency keys are at most 100 characters: long ids are hashed. */
export function idempotencyKey(prefix: string, id: string): string {
  const key = `${prefix}-${id}`;
  return key.length <= 100 && /^[\x21-\x7e]+$/.test(key) ? key : `${prefix}-${createHash('sha256').update(id).digest('hex')}`;
}

/** The coupon id for a set of discount terms (deterministic: one coupon per terms). */
export function couponIdFor(discount: CouponRequest['discount']): string {
  const duration = discount.recurring ? 'forever' : 'once';
  if (discount.type === 'percentage') return `refloop-pct${discount.amount}-${duration}`;
  return `refloop-flat${discount.amount}-${(discount.currency ?? '').toLowerCase()}-${duration}`;
}

/** The customer's unspent promotional credits in `currency` (`balances[]`; the top-level figure is the preferred currency's). */
export function creditBalance(customer: Customer, currency: string): number {
  const c = currency.toUpperCase();
  const balances = Array.isArray(customer.balances) ? customer.balances : null;
  if (balances) {
    const entry = balances.find((b) => String(b.currency_code).toUpperCase() === c);
    return entry && Number.isSafeInteger(entry.promotional_credits) ? Math.max(0, entry.promotional_credits) : 0;
  }
  if (String(customer.preferred_currency_code ?? '').toUpperCase() === c && Number.isSafeInteger(customer.promotional_credits))
    return Math.max(0, customer.promotional_credits);
  return 0;
}

// Item price names, per process (a warm Lambda serves many events and sync pages): bounded, refreshed.
const PLAN_NAME_TTL_MS = 10 * 60_000;
const PLAN_NAME_MAX = 1000;
const planNameCache = new Map<string, { name: string | null; until: number }>();

const subscriptionIdOf = (id: ProviderId): string | null =>
  typeof id === 'string' && id.length <= 100 && /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/.test(id) ? id : null;

function notFound(call: string, what: string): ChargebeeApiError {
  return new ChargebeeApiError(404, 'invalid_request', 'resource_not_found', `${what} not found`, 'id', call);
}

export interface ChargebeeProvider extends BillingProvider {
  readonly kind: 'chargebee';
  readonly client: ChargebeeClient;
}

export function chargebeeProvider(settings: ChargebeeClientSettings, options: ChargebeeProviderOptions = {}): ChargebeeProvider {
  const retry = { timeoutMs: options.timeoutMs, budgetMs: options.budgetMs, now: options.now, sleep: options.sleep };
  const client = new ChargebeeClient({ apiKey: settings.apiKey, apiUrl: settings.apiUrl, ...retry });
  // Plan names are a nicety: a short budget, and on failure the name is null (the sync fills it later).
  const namesClient = new ChargebeeClient({ apiKey: settings.apiKey, apiUrl: settings.apiUrl, ...retry, budgetMs: 3_000, maxAttempts: 2 });
  const now = options.now ?? Date.now;

  const planNameOf = async (itemPriceId: string): Promise<string | null> => {
    const key = `${settings.apiUrl}|${settings.site}|${itemPriceId}`;
    const hit = planNameCache.get(key);
    if (hit && hit.until > now()) return hit.name;
    try {
      const price = await namesClient.getItemPrice(itemPriceId);
      const name = price ? (typeof price.external_name === 'string' && price.external_name) || price.name || null : null;
      if (planNameCache.size >= PLAN_NAME_MAX) planNameCache.clear();
      planNameCache.set(key, { name, until: now() + PLAN_NAME_TTL_MS });
      return name;
    } catch {
      return null;
    }
  };

  const planNamesFor = async (ids: Iterable<string>): Promise<Map<string, string>> => {
    const names = new Map<string, string>();
    for (const id of new Set(ids)) {
      const name = await planNameOf(id);
      if (name) names.set(id, name);
    }
    return names;
  };

  const factsOf = async (rows: SubscriptionRow[]): Promise<SubscriptionFacts[]> => {
    const ids: string[] = [];
    for (const row of rows) {
      const id = row.subscription ? planItemOf(row.subscription)?.item_price_id : undefined;
      if (typeof id === 'string') ids.push(id);
    }
    const names = await planNamesFor(ids);
    return rows
      .map((row) => (row.subscription ? subscriptionFacts(row.subscription, row.customer ?? null, names) : null))
      .filter((s): s is SubscriptionFacts => s !== null);
  };

  const requireSubscription = async (call: string, id: ProviderId): Promise<SubscriptionRow> => {
    const subId = subscriptionIdOf(id);
    const row = subId ? await client.getSubscription(subId) : null;
    if (!row?.subscription) throw notFound(call, `subscription '${String(id)}'`);
    return row;
  };

  /** Refloop's promotional credit entries for a reward on a customer (bounded search over every entry). */
  const findRewardCredits = async (
    customerId: string,
    rewardId: string,
    onlyIncrements: boolean,
  ): Promise<{ credit?: PromotionalCredit; reversal?: PromotionalCredit }> => {
    const found: { credit?: PromotionalCredit; reversal?: PromotionalCredit } = {};
    const credit = creditReference(rewardId);
    const reversal = reversalReference(rewardId);
    let offset: string | null = null;
    for (let page = 0; page < MAX_CREDIT_PAGES; page++) {
      const result: Awaited<ReturnType<ChargebeeClient['listCredits']>> = onlyIncrements
        ? await client.listCreditIncrements(customerId, offset)
        : await client.listCredits(customerId, offset);
      for (const row of result.rows) {
        const pc = row.promotional_credit;
        if (!pc) continue;
        if (pc.reference === credit && pc.type === 'increment') found.credit ??= pc;
        if (pc.reference === reversal && pc.type === 'decrement') found.reversal ??= pc;
      }
      if ((found.credit && (onlyIncrements || found.reversal)) || !result.next) break;
      offset = result.next;
    }
    return found;
  };

  const provider: ChargebeeProvider = {
    kind: 'chargebee',
    client,
    combinesCredits: false,
    listsDeletedApart: false,

    async parseWebhook(raw: RawWebhook): Promise<BillingEvent[]> {
      const delivered = parseEnvelope(raw.rawBody);
      if (!delivered.ok) return [delivered.event];
      const { eventId, type } = delivered.envelope;
      if (!isAppliedType(type)) return [{ kind: 'ignored', eventId, type, reason: ignoredReason(type) }];
      // Only what Chargebee itself stores is applied.
      const stored = await client.getEvent(eventId);
      if (!stored) return [{ kind: 'ignored', eventId, type, reason: 'not found at Chargebee' }];
      const fetched = envelopeOf(stored);
      if (!fetched.ok) return [fetched.event];
      if (fetched.envelope.eventId !== eventId)
        return [{ kind: 'ignored', eventId, type, reason: `Chargebee answered another event (${fetched.envelope.eventId})` }];
      const planNames = await planNamesFor(planLookupsFor(fetched.envelope));
      return toBillingEvents(fetched.envelope, { planNames });
    },

    async getSubscription(id: ProviderId): Promise<SubscriptionFacts | null> {
      const subId = subscriptionIdOf(id);
      if (!subId) return null;
      const row = await client.getSubscription(subId);
      if (!row?.subscription) return null;
      return (await factsOf([row]))[0] ?? null;
    },

    async resolveCheckout(checkoutId: string): Promise<CheckoutResolution> {
      if (!/^[A-Za-z0-9_-]{1,100}$/.test(checkoutId)) return { state: 'not_found' };
      const page = await client.getHostedPage(checkoutId);
      if (!page) return { state: 'not_found' };
      if (page.state === 'succeeded' || page.state === 'acknowledged') {
        const id = page.content?.subscription?.id;
        return typeof id === 'string' && id !== '' ? { state: 'subscription', subscriptionId: id } : { state: 'no_subscription' };
      }
      // Open (the customer is paying): the subscription may come. Cancelled: it never will.
      if (page.state === 'created' || page.state === 'requested') return { state: 'processing' };
      return { state: 'no_subscription' };
    },

    async listSubscriptions(cursor: string | null, _part?: 'live' | 'deleted', updatedAfterSeconds?: number): Promise<SubscriptionPage> {
      const page = await client.listSubscriptions(cursor, updatedAfterSeconds);
      return { subscriptions: await factsOf(page.rows), next: page.next };
    },

    async listPayments(subscriptionId: ProviderId): Promise<PaymentFacts[]> {
      const subId = subscriptionIdOf(subscriptionId);
      if (!subId) return [];
      const out: PaymentFacts[] = [];
      let offset: string | null = null;
      for (let page = 0; page < MAX_PAYMENT_PAGES; page++) {
        const result = await client.listPaidInvoices(subId, offset);
        for (const row of result.rows) {
          const payment = row.invoice ? paymentFacts(row.invoice) : null;
          if (payment && payment.subscriptionId === subId) out.push(payment);
        }
        if (!result.next) break;
        offset = result.next;
      }
      return out;
    },

    async applyCredit(credit: CreditRequest): Promise<AppliedCredit> {
      if (!Number.isSafeInteger(credit.amount) || credit.amount <= 0)
        throw new Error(`a credit must be a positive amount, got ${credit.amount}`);
      if (!isSupportedCurrency(credit.currency)) throw new UnsupportedCurrencyError(credit.currency.toUpperCase());
      const { subscription } = await requireSubscription('apply credit', credit.subscriptionId);
      const currency = String(subscription.currency_code).toUpperCase();
      if (currency !== credit.currency.toUpperCase())
        throw new Error(`credit in ${credit.currency} for a subscription billed in ${currency}`);
      const customerId = subscription.customer_id;
      const { credit: existing } = await findRewardCredits(customerId, credit.rewardId, true);
      if (existing) return { providerRef: existing.id, reused: true };
      const added = await client.addPromotionalCredits(
        {
          customer_id: customerId,
          amount: credit.amount,
          currency_code: currency,
          description: `Referral reward ${credit.rewardId}`.slice(0, MAX_DESCRIPTION),
          credit_type: 'referral_rewards',
          reference: creditReference(credit.rewardId),
        },
        idempotencyKey('refloop-credit', credit.rewardId),
      );
      return { providerRef: added.promotional_credit.id, reused: false };
    },

    async reverseCredit(credit: CreditRequest & { providerRef: string | null }): Promise<CreditReversalOutcome> {
      const subId = subscriptionIdOf(credit.subscriptionId);
      const row = subId ? await client.getSubscription(subId) : null;
      // Without the subscription there is no customer to look at: nothing is taken back (noted).
      if (!row?.subscription) return 'consumed';
      const customerId = row.subscription.customer_id;
      const { credit: applied, reversal } = await findRewardCredits(customerId, credit.rewardId, false);
      // Already reversed by an earlier attempt: the same outcome as then.
      if (reversal) return applied && reversal.amount < applied.amount ? 'consumed' : 'reversed';
      // Never applied (or past the search bound): nothing to take back.
      if (!applied) return 'reversed';
      const customer = await client.getCustomer(customerId);
      const unspent = customer ? creditBalance(customer, applied.currency_code) : 0;
      const amount = Math.min(applied.amount, unspent);
      if (amount > 0) {
        await client.deductPromotionalCredits(
          {
            customer_id: customerId,
            amount,
            currency_code: applied.currency_code,
            description: `Referral reward ${credit.rewardId} reversed (refund)`.slice(0, MAX_DESCRIPTION),
            credit_type: 'referral_rewards',
            reference: reversalReference(credit.rewardId),
          },
          idempotencyKey('refloop-reversal', credit.rewardId),
        );
      }
      return amount === applied.amount ? 'reversed' : 'consumed';
    },

    async createCoupon(coupon: CouponRequest): Promise<'created' | 'existed'> {
      const { discount } = coupon;
      if (!CODE.test(coupon.code)) throw new Error(`coupon code ${coupon.code} must be 1 to 50 letters, digits, - or _`);
      if (!Number.isSafeInteger(discount.amount) || discount.amount <= 0)
        throw new Error(`a discount must be positive, got ${discount.amount}`);
      if (discount.type === 'flat') {
        if (!discount.currency) throw new Error('a flat coupon needs a currency');
        if (!isSupportedCurrency(discount.currency)) throw new UnsupportedCurrencyError(discount.currency.toUpperCase());
      } else if (discount.amount > 10_000) throw new Error(`a percentage coupon is at most 100 %, got ${discount.amount / 100} %`);
      const couponId = couponIdFor(discount);
      try {
        await client.createCoupon(
          {
            id: couponId,
            name:
              discount.type === 'percentage'
                ? `Referral ${discount.amount / 100}% off${discount.recurring ? '' : ' once'}`
                : `Referral ${discount.amount} ${(discount.currency as string).toUpperCase()} off${discount.recurring ? '' : ' once'}`,
            // Hundredths of a percent -> Chargebee's percent (2000 -> 20); flat amounts are already its unit.
            ...(discount.type === 'percentage'
              ? { discount_type: 'percentage', discount_percentage: discount.amount / 100 }
              : {
                  discount_type: 'fixed_amount',
                  discount_amount: discount.amount,
                  currency_code: (discount.currency as string).toUpperCase(),
                }),
            duration_type: discount.recurring ? 'forever' : 'one_time',
            apply_on: 'invoice_amount',
          },
          idempotencyKey('refloop-coupon', couponId),
        );
      } catch (err) {
        // Created earlier, for the same terms: the same coupon.
        if (!isChargebeeError(err, 'duplicate_entry')) throw err;
      }
      if (await client.getCouponCode(coupon.code)) return 'existed';
      try {
        await client.createCouponCode(
          { coupon_id: couponId, coupon_set_name: couponId, code: coupon.code },
          idempotencyKey('refloop-code', coupon.referralId),
        );
        return 'created';
      } catch (err) {
        if (isChargebeeError(err, 'duplicate_entry')) return 'existed';
        throw err;
      }
    },
  };
  return provider;
}
