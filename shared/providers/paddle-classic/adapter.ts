// Paddle Classic behind the payment-provider port (shared/billing/port.ts).
//
// The flows move onto the port one at a time (docs/design/providers.md "The port"); this adapter grows with
// them. `ClassicProvider` is the part of `BillingProvider` Classic implements today: the referred-user coupon,
// the referrer's credits (one-off negative modifiers), checkout resolution (the order lookup) and one
// subscription's lookup (the user, its plan through the cached plan list). The rest (the background sync's
// users and payments, alert parsing) is still called
// directly by the flows listed in test/unit/import-graph.test.ts, and moves here as each of them does.
import type {
  AppliedCredit,
  BillingEvent,
  BillingProvider,
  PaymentFacts,
  CheckoutResolution,
  CouponRequest,
  CreditRequest,
  CreditReversalOutcome,
  ProviderId,
  RawWebhook,
  SubscriptionFacts,
  SubscriptionStatus,
} from '../../billing/port';
import { parseAlert, type ParsedAlert } from './alerts';
import { alertHints } from './hints';
import type { AlertFields } from './signature';
import { decimalToCents } from '../../domain/billing';
import { centsToMinor, minorToCents } from '../../domain/currency';
import { formatCents } from '../../domain/money';
import type { ClassicCredentials as ProviderCredentials } from './settings';
import {
  DUPLICATE_COUPON_CODE,
  MODIFIER_ALREADY_BILLED,
  MODIFIER_NOT_FOUND,
  PaddleClient,
  ProviderApiError,
  type PaddlePayment,
  type PaddleUser,
} from './client';
import { resolvePlan } from './plans';

export type ClassicProvider = Pick<
  BillingProvider,
  | 'kind'
  | 'createCoupon'
  | 'applyCredit'
  | 'reverseCredit'
  | 'resolveCheckout'
  | 'getSubscription'
  | 'listSubscriptions'
  | 'listsDeletedApart'
  | 'listPayments'
  | 'describePlan'
>;

/** Users per page of the background sync (Paddle's maximum). */
export const SYNC_PAGE_SIZE = 200;

/**
 * Paddle Classic's user id (its customer: one per email address, across that user's subscriptions) as the
 * port's customer id, for the self-referral rule (docs/fraud.md); null unless a positive integer.
 */
export function userIdOf(value: unknown): string | null {
  const s = typeof value === 'number' ? String(value) : typeof value === 'string' ? value.trim() : '';
  return /^[1-9]\d{0,17}$/.test(s) ? s : null;
}

/** A user of the subscription users list as the port's facts (the plan by id: the flow describes it). */
export function userFacts(user: PaddleUser): SubscriptionFacts | null {
  const id = Number(user.subscription_id);
  if (!Number.isSafeInteger(id) || id <= 0) return null;
  const facts: SubscriptionFacts = {
    id,
    status: (user.state === 'trialing' ? 'trialling' : user.state) as SubscriptionStatus,
    email: user.user_email,
  };
  const customer = userIdOf(user.user_id);
  if (customer) facts.customerId = customer;
  const currency = user.next_payment?.currency ?? user.last_payment?.currency;
  if (currency) facts.currency = currency;
  facts.nextBillDate = user.state === 'deleted' ? null : (user.next_payment?.date ?? null);
  if (user.last_payment?.date) facts.lastBillDate = user.last_payment.date;
  if (Number.isSafeInteger(Number(user.plan_id))) facts.planId = Number(user.plan_id);
  return facts;
}

/** A paid payment of the payments list as the port's facts; null when it is not well formed. */
export function paymentFacts(p: PaddlePayment): PaymentFacts | null {
  const paidAt = Date.parse(`${p.payout_date}T00:00:00Z`);
  if (!Number.isFinite(paidAt) || !Number.isSafeInteger(Number(p.id))) return null;
  return {
    id: Number(p.id),
    subscriptionId: Number(p.subscription_id),
    amount: centsToMinor(Math.round(Number(p.amount) * 100), String(p.currency)),
    currency: String(p.currency),
    paidAtSeconds: Math.floor(paidAt / 1000),
  };
}

/** The description that identifies a credit's modifier at Paddle (at most 255 characters). */
export const creditDescription = (rewardId: string) => `Referral credit ${rewardId}`;

/** Percent without trailing zeros ("10", "12.5") from hundredths of a percent; flat amounts with two decimals. */
export function couponAmount(type: 'flat' | 'percentage', amount: number): string {
  return type === 'flat' ? formatCents(amount) : String(amount / 100);
}

/** `accountId` keys the account's cached plan list (Classic's users name only a plan id). */
export function paddleClassicProvider(creds: ProviderCredentials, options: { timeoutMs: number; accountId: string }): ClassicProvider {
  const client = new PaddleClient(creds, options);
  /** The modifier an earlier attempt created for this reward (it may have died before recording it). */
  const modifierOf = async (subscriptionId: number, rewardId: string) =>
    (await client.listModifiers(subscriptionId)).find((m) => String(m.description).includes(rewardId));

  return {
    kind: 'paddle-classic',
    listsDeletedApart: true,

    /** The subscription users, `live` (Paddle's default listing) or `deleted`; the cursor is the page number. */
    async listSubscriptions(cursor: string | null, part: 'live' | 'deleted' = 'live') {
      const page = cursor === null ? 1 : Number(cursor);
      const users = await client.listUsers({ ...(part === 'deleted' ? { state: 'deleted' } : {}), page, resultsPerPage: SYNC_PAGE_SIZE });
      return {
        subscriptions: users.map(userFacts).filter((f): f is SubscriptionFacts => f !== null),
        next: users.length >= SYNC_PAGE_SIZE ? String(page + 1) : null,
      };
    },

    async listPayments(subscriptionId: ProviderId) {
      return (await client.listPayments({ subscriptionId: Number(subscriptionId), isPaid: true }))
        .map(paymentFacts)
        .filter((p): p is PaymentFacts => p !== null);
    },

    async describePlan(planId, context) {
      return resolvePlan(client, {
        accountId: options.accountId,
        planId: Number(planId),
        currency: context.currency,
        unitPrice: context.unitPrice,
        planName: context.planName,
        current: context.current,
      });
    },

    /** The public order lookup: a checkout id becomes its subscription once Paddle has processed it. */
    async resolveCheckout(checkoutId: string): Promise<CheckoutResolution> {
      const order = await client.getOrder(checkoutId);
      if (order.state !== 'processed') return { state: order.state };
      return order.subscriptionId === null ? { state: 'no_subscription' } : { state: 'subscription', subscriptionId: order.subscriptionId };
    },

    /** The subscription's user, with its plan (a user carries no currency before its first payment: USD). */
    async getSubscription(id: ProviderId): Promise<SubscriptionFacts | null> {
      const user = await client.getUser(Number(id));
      if (!user) return null;
      const currency = user.next_payment?.currency ?? user.last_payment?.currency ?? 'USD';
      const plan = await resolvePlan(client, { accountId: options.accountId, planId: Number(user.plan_id), currency, unitPrice: null });
      const cents = decimalToCents(plan.amount);
      const amount = cents === null ? null : centsToMinor(cents, currency);
      return {
        id: Number(id),
        status: (user.state === 'trialing' ? 'trialling' : user.state) as SubscriptionStatus,
        email: user.user_email,
        currency,
        ...(amount === null ? {} : { unitPrice: amount }),
        plan: { id: plan.id, name: plan.name, amount, currency, interval: plan.interval, frequency: plan.frequency },
        nextBillDate: user.state === 'deleted' ? null : (user.next_payment?.date ?? null),
        ...(user.last_payment?.date ? { lastBillDate: user.last_payment.date } : {}),
        ...(userIdOf(user.user_id) ? { customerId: userIdOf(user.user_id) as string } : {}),
      };
    },

    /** A one-off negative modifier on the subscription, found again by the reward id in its description. */
    async applyCredit(credit: CreditRequest): Promise<AppliedCredit> {
      const subscriptionId = Number(credit.subscriptionId);
      const existing = await modifierOf(subscriptionId, credit.rewardId);
      if (existing) return { providerRef: String(existing.modifier_id), reused: true };
      const created = await client.createModifier({
        subscriptionId,
        amount: `-${formatCents(minorToCents(credit.amount, credit.currency))}`,
        recurring: false,
        description: creditDescription(credit.rewardId),
      });
      return { providerRef: String(created.modifier_id), reused: false };
    },

    /**
     * Deletes the credit's modifier (looked up by the reward id when none was recorded): 123 "not found"
     * means an earlier attempt deleted it; 124 "already billed" means the credit was consumed and stays.
     */
    async reverseCredit(credit: CreditRequest & { providerRef: string | null }): Promise<CreditReversalOutcome> {
      const ref = credit.providerRef ?? (await modifierOf(Number(credit.subscriptionId), credit.rewardId))?.modifier_id;
      if (ref === undefined || ref === null) return 'reversed'; // never applied: nothing to remove
      try {
        await client.deleteModifier(Number(ref));
        return 'reversed';
      } catch (err) {
        if (err instanceof ProviderApiError && err.code === MODIFIER_NOT_FOUND) return 'reversed';
        if (err instanceof ProviderApiError && err.code === MODIFIER_ALREADY_BILLED) return 'consumed';
        throw err;
      }
    },

    /** A single-use checkout coupon; Paddle's "duplicate code" (132) means an earlier attempt created it. */
    async createCoupon(coupon: CouponRequest): Promise<'created' | 'existed'> {
      const { discount } = coupon;
      try {
        await client.createCoupon({
          couponCode: coupon.code,
          discountType: discount.type,
          discountAmount: couponAmount(
            discount.type,
            discount.type === 'flat' && discount.currency ? minorToCents(discount.amount, discount.currency) : discount.amount,
          ),
          ...(discount.type === 'flat' && discount.currency ? { currency: discount.currency } : {}),
          allowedUses: 1,
          recurring: discount.recurring,
          description: `Refloop referral ${coupon.referralId}`,
        });
        return 'created';
      } catch (err) {
        if (err instanceof ProviderApiError && err.code === DUPLICATE_COUPON_CODE) return 'existed';
        throw err;
      }
    },
  };
}

/**
 * Paddle Classic's alerts behind the port: a verified alert (its form fields, URL-encoded as `rawBody`)
 * becomes one normalized event, and a plan id becomes its plan. Credentials are read only when a plan must
 * be looked up at Paddle (the alert itself needs none), so most alerts cost no credentials read.
 */
export function paddleClassicWebhooks(
  accountId: string,
  loadCredentials: () => Promise<ProviderCredentials | null>,
  options: { timeoutMs: number },
): Pick<BillingProvider, 'kind' | 'parseWebhook' | 'describePlan'> {
  let client: Promise<PaddleClient | null> | undefined;
  const clientOnce = () => (client ??= loadCredentials().then((creds) => (creds ? new PaddleClient(creds, options) : null)));
  return {
    kind: 'paddle-classic',
    async parseWebhook(raw: RawWebhook): Promise<BillingEvent[]> {
      const fields: AlertFields = {};
      for (const [key, value] of new URLSearchParams(raw.rawBody)) if (!(key in fields)) fields[key] = value;
      return [alertEvent(parseAlert(fields), fields)];
    },
    async describePlan(planId, context) {
      return resolvePlan(await clientOnce(), {
        accountId,
        planId: Number(planId),
        currency: context.currency,
        unitPrice: context.unitPrice,
        planName: context.planName,
        current: context.current,
      });
    },
  };
}

/** One parsed alert as the port's event (pure). */
export function alertEvent(parsed: ParsedAlert, fields: AlertFields): BillingEvent {
  if (parsed.kind === 'ignored')
    return { kind: 'ignored', eventId: parsed.alert_id ?? '', type: parsed.alert_name ?? '', reason: parsed.reason };
  const patch = parsed.subscription;
  const subscription: SubscriptionFacts = { id: patch.id };
  const customer = userIdOf(fields.user_id);
  if (customer) subscription.customerId = customer;
  if (patch.status !== undefined) subscription.status = patch.status;
  if (patch.currency !== undefined) subscription.currency = patch.currency;
  if (patch.email !== undefined) subscription.email = patch.email;
  if (patch.unit_price !== undefined) {
    const cents = decimalToCents(patch.unit_price);
    if (cents !== null) subscription.unitPrice = patch.currency ? centsToMinor(cents, patch.currency) : cents;
  }
  if (patch.next_bill_date !== undefined) subscription.nextBillDate = patch.next_bill_date;
  if (patch.last_bill_date !== undefined) subscription.lastBillDate = patch.last_bill_date;
  if (patch.plan_id !== undefined) {
    subscription.planId = patch.plan_id;
    subscription.planName = parsed.plan_name;
  }
  const event: BillingEvent = {
    kind: 'subscription',
    eventId: parsed.alert_id,
    occurredAtMs: parsed.event_time,
    subscription,
    hints: alertHints(parsed, fields),
  };
  const p = parsed.payment;
  if (p) {
    event.payment = {
      id: p.id,
      subscriptionId: p.subscription_id,
      amount: centsToMinor(p.amount, p.currency),
      currency: p.currency,
      paidAtSeconds: p.paid_at,
      status: p.status,
      ...(p.tax !== undefined ? { amountExcludingTax: centsToMinor(p.amount - p.tax, p.currency) } : {}),
      ...(p.order_id !== null ? { orderId: p.order_id } : {}),
      ...(p.refund_amount !== undefined ? { refundAmount: centsToMinor(p.refund_amount, p.currency) } : {}),
      ...(p.refund_type !== undefined ? { refundType: p.refund_type } : {}),
    };
    // A refund alert is also a refund of its own (partial refunds come one alert each), named by the alert.
    if (p.status === 'refunded') {
      event.refund = {
        id: parsed.alert_id,
        paymentId: p.id,
        subscriptionId: p.subscription_id,
        amount: centsToMinor(p.refund_amount ?? p.amount, p.currency),
        currency: p.currency,
        refundedAtSeconds: p.paid_at,
        kind: 'refund',
        ...(p.refund_type !== undefined ? { refundType: p.refund_type } : {}),
      };
    }
  }
  return event;
}
