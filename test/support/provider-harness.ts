// One harness per payment provider, so the pipeline tests that state business rules run once per provider
// (test/integration/provider-rules.test.ts) against that provider's emulator, through the real intake,
// queues, workers and adapter. A harness builds signed webhooks without delivering them, so a test decides
// the order and the number of deliveries.
import { startPaddleEmulator, type PaddleEmulator } from '../../infra/local/emulators/paddle-classic';
import type { ProviderKind } from '../../shared/billing/port';
import { startPaddleBillingEmulator, type PaddleBillingEmulator } from '../../infra/local/emulators/paddle-billing';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { startChargebeeEmulator, type ChargebeeEmulator, type Delivery as ChargebeeDelivery } from '../../infra/local/emulators/chargebee';
import { saveProviderConnection } from '../../shared/store/provider';
import { api, type ApiResponse } from './api';

/** A signed webhook as the provider would POST it to the account's intake. */
export interface Delivery {
  path: (accountId: string) => string;
  rawBody: string;
  headers: Record<string, string>;
}

export interface Checkout {
  subscriptionId: string | number;
  /** The first payment's id as Refloop shows it (`reward.payment_id`). */
  paymentId: string | number;
  /** What `refund` takes to refund that payment. */
  refundable: string | number;
  deliveries: Delivery[];
}

export interface ProviderHarness {
  kind: ProviderKind;
  start(): Promise<void>;
  stop(): Promise<void>;
  /** Connects the account to the emulator, or to `apiUrl` (a fault proxy in front of it). */
  connect(accountId: string, apiUrl?: string): Promise<void>;
  /** The emulator's API base URL. */
  apiUrl(): string;
  /** The API calls the emulator answered so far, by route. */
  apiCalls(): Record<string, number>;
  /** The next `count` API calls answer `status` (429 with Retry-After: 1). */
  failNext(count: number, status: 429 | 503): void;
  /** Provider-side credit objects created so far (modifiers, discounts, balance transactions, promotional credits). */
  creditObjects(): number;
  /**
   * A checkout of the default monthly plan at 10.00 USD; `referralId` goes where the browser script puts it,
   * `couponCode` is a referred user's code typed at checkout (Classic coupon, Billing discount code, Stripe
   * promotion code, Chargebee coupon code).
   */
  checkout(email: string, referralId?: string, couponCode?: string): Promise<Checkout>;
  renew(subscriptionId: string | number): Promise<{ paymentId: string | number; deliveries: Delivery[] }>;
  /** A full refund, approved where the provider asks for approval (Paddle Billing). */
  refund(refundable: string | number): Promise<Delivery[]>;
  /** Credit applied at the provider on a subscription and not yet billed, in cents. */
  creditOn(subscriptionId: string | number): number;
}

export function deliver(accountId: string, d: Delivery): Promise<ApiResponse> {
  return api('POST', d.path(accountId), { rawBody: d.rawBody, headers: d.headers });
}

function classic(): ProviderHarness {
  let paddle: PaddleEmulator;
  const path = (a: string) => `/webhooks/paddle/${a}/`;
  const form = (fields: Record<string, string>): Delivery => ({
    path,
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  return {
    kind: 'paddle-classic',
    async start() {
      paddle = await startPaddleEmulator({ webhookUrl: null });
    },
    stop: () => paddle?.stop(),
    connect: (accountId, apiUrl) =>
      saveProviderConnection(accountId, {
        kind: 'paddle-classic',
        vendorId: paddle.vendorId,
        authCode: paddle.authCode,
        publicKey: paddle.publicKeyPem,
        vendorsApiUrl: apiUrl ? `${apiUrl}/vendors/api` : paddle.vendorsApiUrl,
        checkoutApiUrl: apiUrl ? `${apiUrl}/checkout/api` : paddle.checkoutApiUrl,
      }),
    apiUrl: () => paddle.url,
    apiCalls: () => paddle.callCounts(),
    failNext() {
      throw new Error('the Classic emulator has setMode, not failNext: see fault-injection.test.ts');
    },
    creditObjects: () => paddle.modifiers().length,
    async checkout(email, referralId, couponCode) {
      const out = await paddle.checkout({
        plan_id: 9001,
        email,
        deliver: false,
        ...(referralId ? { passthrough: JSON.stringify({ refloop_referral_id: referralId }) } : {}),
        ...(couponCode ? { coupon: couponCode } : {}),
      });
      if (!out.payment) throw new Error('the Classic emulator made no first payment');
      return {
        subscriptionId: out.subscription.subscription_id,
        paymentId: out.payment.id,
        refundable: out.payment.id,
        deliveries: out.alerts.map((a) => form(a.fields)),
      };
    },
    async renew(subscriptionId) {
      const out = await paddle.renew(Number(subscriptionId), { deliver: false });
      return { paymentId: out.payment.id, deliveries: out.alerts.map((a) => form(a.fields)) };
    },
    async refund(refundable) {
      return (await paddle.refund(Number(refundable), { deliver: false })).alerts.map((a) => form(a.fields));
    },
    creditOn: (subscriptionId) =>
      paddle
        .modifiers(Number(subscriptionId))
        .filter((m) => m.billed_payment_id === undefined)
        .reduce((sum, m) => sum - Math.round(Number(m.amount) * 100), 0),
  };
}

function paddleBilling(): ProviderHarness {
  let paddle: PaddleBillingEmulator;
  const path = (a: string) => `/webhooks/paddle-billing/${a}/`;
  const json = (n: { rawBody: string; signature: string }): Delivery => ({
    path,
    rawBody: n.rawBody,
    headers: { 'content-type': 'application/json', 'paddle-signature': n.signature },
  });
  return {
    kind: 'paddle-billing',
    async start() {
      paddle = await startPaddleBillingEmulator({ webhookUrl: null });
    },
    stop: () => paddle?.stop(),
    connect: (accountId, apiUrl) =>
      saveProviderConnection(accountId, {
        kind: 'paddle-billing',
        apiKey: paddle.apiKey,
        apiUrl: apiUrl ?? paddle.url,
        webhookSecret: paddle.webhookSecret,
      }),
    apiUrl: () => paddle.url,
    apiCalls: () => paddle.callCounts(),
    failNext: (count, status) => paddle.failNext(count, status, 1),
    creditObjects: () =>
      [...paddle.ledger.discounts.values()].filter((d) => (d.custom_data as { refloop?: unknown } | null)?.refloop === 'credit').length,
    async checkout(email, referralId, couponCode) {
      const out = await paddle.checkout({
        email,
        deliver: false,
        ...(referralId ? { customData: { refloop_referral_id: referralId } } : {}),
        ...(couponCode ? { discountCode: couponCode } : {}),
      });
      return {
        subscriptionId: out.result.subscription.id,
        paymentId: out.result.transaction.id,
        refundable: out.result.transaction.id,
        deliveries: out.delivered.map(json),
      };
    },
    async renew(subscriptionId) {
      const out = await paddle.renew(String(subscriptionId), { deliver: false });
      return { paymentId: out.result.transaction.id, deliveries: out.delivered.map(json) };
    },
    async refund(refundable) {
      const refund = await paddle.refund(String(refundable), { deliver: false });
      const approved = await paddle.approve(refund.result.adjustment.id, { deliver: false });
      return [...refund.delivered, ...approved.delivered].map(json);
    },
    creditOn(subscriptionId) {
      const discountId = paddle.ledger.subscriptions.get(String(subscriptionId))?.discount?.id;
      const discount = discountId ? paddle.ledger.discounts.get(discountId) : undefined;
      return discount ? Number(discount.amount) : 0;
    },
  };
}

function stripe(): ProviderHarness {
  let em: StripeEmulator;
  const path = (a: string) => `/webhooks/stripe/${a}/`;
  const json = (e: { rawBody: string; signature: string }): Delivery => ({
    path,
    rawBody: e.rawBody,
    headers: { 'content-type': 'application/json', 'stripe-signature': e.signature },
  });
  return {
    kind: 'stripe',
    async start() {
      em = await startStripeEmulator({ webhookUrl: null });
    },
    stop: () => em?.stop(),
    connect: (accountId, apiUrl) =>
      saveProviderConnection(accountId, {
        kind: 'stripe',
        secretKey: em.secretKey,
        apiUrl: apiUrl ?? em.url,
        webhookSecret: em.webhookSecret,
      }),
    apiUrl: () => em.url,
    apiCalls: () => em.callCounts(),
    failNext: (count, status) => em.failNext(count, status, 1),
    creditObjects: () => [...em.ledger.balanceTransactions.values()].flat().filter((t) => t.metadata?.refloop === 'credit').length,
    async checkout(email, referralId, couponCode) {
      const out = await em.checkout({
        email,
        deliver: false,
        ...(referralId ? { clientReferenceId: referralId } : {}),
        ...(couponCode ? { promotionCode: couponCode } : {}),
      });
      if (!out.result.charge) throw new Error('the Stripe emulator made no first charge');
      return {
        subscriptionId: out.result.subscription.id,
        paymentId: out.result.invoice.id,
        refundable: out.result.charge.id,
        deliveries: out.delivered.map(json),
      };
    },
    async renew(subscriptionId) {
      const out = await em.renew(String(subscriptionId), { deliver: false });
      return { paymentId: out.result.invoice.id, deliveries: out.delivered.map(json) };
    },
    async refund(refundable) {
      return (await em.refund(String(refundable), { deliver: false })).delivered.map(json);
    },
    creditOn(subscriptionId) {
      const sub = em.ledger.subscriptions.get(String(subscriptionId));
      return sub ? em.ledger.creditLeft(sub.customer as string, 'usd') : 0;
    },
  };
}

/**
 * Chargebee: webhooks carry `Authorization: Basic …` (the account's username and password), and the worker
 * re-fetches every event it applies from the emulator (GET /api/v2/events/{id}), which records every event it
 * builds, delivered or not. Credits are promotional credits on the subscription's customer, per currency.
 */
export function chargebee(): ProviderHarness & { emulator(): ChargebeeEmulator } {
  let em: ChargebeeEmulator;
  // An app names its customer at checkout (customer[id]): one email checking out again is the same customer.
  const customers = new Map<string, string>();
  const path = (a: string) => `/webhooks/chargebee/${a}/`;
  const json = (d: ChargebeeDelivery): Delivery => ({ path, rawBody: d.rawBody, headers: { ...d.headers } });
  return {
    kind: 'chargebee',
    emulator: () => em,
    async start() {
      em = await startChargebeeEmulator({ webhookUrl: null });
    },
    stop: () => em?.stop(),
    connect: (accountId, apiUrl) =>
      saveProviderConnection(accountId, {
        kind: 'chargebee',
        site: em.site,
        apiKey: em.apiKey,
        apiUrl: apiUrl ?? em.url,
        webhookUsername: em.webhookUsername,
        webhookPassword: em.webhookPassword,
      }),
    apiUrl: () => em.url,
    apiCalls: () => em.callCounts(),
    failNext: (count, status) => em.failNext(count, status, 1),
    creditObjects: () =>
      em.promotionalCredits().filter((pc) => pc.type === 'increment' && pc.reference?.startsWith('refloop:reward:')).length,
    async checkout(email, referralId, couponCode) {
      const known = customers.get(email);
      const out = await em.checkout({
        email,
        deliver: false,
        ...(known ? { customerId: known } : {}),
        ...(referralId ? { referralId, referralOn: 'customer-cf' as const } : {}),
        ...(couponCode ? { couponCode } : {}),
      });
      if (!out.invoice) throw new Error('the Chargebee emulator made no first invoice');
      customers.set(email, out.customer.id);
      return {
        subscriptionId: out.subscription.id,
        paymentId: out.invoice.id,
        refundable: out.invoice.id,
        deliveries: out.deliveries.map(json),
      };
    },
    async renew(subscriptionId) {
      const out = await em.renew(String(subscriptionId), { deliver: false });
      if (!out.invoice) throw new Error('the Chargebee emulator made no renewal invoice');
      return { paymentId: out.invoice.id, deliveries: out.deliveries.map(json) };
    },
    async refund(refundable) {
      return (await em.refund(String(refundable), { deliver: false })).deliveries.map(json);
    },
    creditOn(subscriptionId) {
      const sub = em.ledger.subscriptions.get(String(subscriptionId));
      return sub ? em.balanceOf(sub.customer_id, 'USD') : 0;
    },
  };
}

/** Every provider, for `describe.each`. */
export const PROVIDER_HARNESSES: readonly ProviderHarness[] = [classic(), paddleBilling(), stripe(), chargebee()];
