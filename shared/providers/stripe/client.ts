// Stripe API client at the pinned API version: form-encoded bodies with bracket keys (wire.ts encodeForm),
// `Authorization: Bearer <secret or restricted key>`, `Stripe-Version: <STRIPE_API_VERSION>` on every call
// (an account's default version must never change what Refloop reads), and an `Idempotency-Key` on every
// write (the caller derives it from what the write is for; the same key is reused by every retry, so a
// retried write is never applied twice). Global fetch, no SDK. The key is sent only in the Authorization
// header and never appears in an error.
//
// Failures:
// - 429, 5xx, network errors, per-call timeouts, bodies that are not JSON, and 409 with
//   `Stripe-Should-Retry: true` (an idempotency-key lock): retried after `Retry-After` when Stripe sends
//   one, else with exponential backoff and jitter, within one time budget per call (a wait that would end
//   past the budget is not started), then the port's ProviderUnavailableError: the worker fails its record
//   and SQS redelivers it later. `Stripe-Should-Retry: false` stops the retries at once.
// - other 4xx: StripeApiError with Stripe's {error:{type, code, message, param}}; 404 `resource_missing`
//   on a get is `null`.
import { randomUUID } from 'node:crypto';
import { ProviderUnavailableError } from '../../billing/port';
import {
  STRIPE_API_VERSION,
  encodeForm,
  type ApiErrorBody,
  type Charge,
  type CheckoutSession,
  type Coupon,
  type Customer,
  type CustomerBalanceTransaction,
  type FormValue,
  type Invoice,
  type InvoicePayment,
  type List,
  type Metadata,
  type Product,
  type PromotionCode,
  type Refund,
  type Subscription,
} from './wire';
import { providerCall, retryAfterMs as retryAfterMsOf, retryPolicy, waitToRetry, type RetryOptions, type RetryPolicy } from '../retry';

// Re-exported: callers and tests read Retry-After through the client they use.
export { retryAfterMs } from '../retry';

import { DEFAULT_API_URL } from './settings';
export { DEFAULT_API_URL };
/** Stripe's maximum page size. */
export const PAGE_SIZE = 100;

export interface StripeClientOptions extends RetryOptions {
  /** `sk_…` or a restricted `rk_…` key. */
  secretKey: string;
  /** Default https://api.stripe.com; the emulator's URL locally. */
  apiUrl?: string;
}

/** Stripe refused the call (4xx other than 429): not retryable as such. */
export class StripeApiError extends Error {
  override readonly name = 'StripeApiError';
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    readonly detail: string,
    readonly param: string | null,
    readonly call: string,
  ) {
    super(`Stripe ${call}: HTTP ${status} ${type}${code ? `/${code}` : ''}: ${detail}`);
  }
}

export const isStripeError = (err: unknown, code: string): err is StripeApiError => err instanceof StripeApiError && err.code === code;

export interface Page<T> {
  data: T[];
  /** The `starting_after` cursor of the next page (the last id); null on the last page. */
  next: string | null;
}

const seg = (id: string) => encodeURIComponent(id);

export class StripeClient {
  private readonly base: string;
  private readonly retry: RetryPolicy;

  constructor(private readonly options: StripeClientOptions) {
    this.base = (options.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, '');
    this.retry = retryPolicy(options);
  }

  /**
   * One API call with retries. GET params go in the query, POST params in the form body. A POST without
   * `idempotencyKey` gets a random one, shared by its retries. Counted and traced as one call
   * (../retry.ts providerCall).
   */
  request<T>(
    call: string,
    method: 'GET' | 'POST',
    path: string,
    params: Record<string, FormValue> = {},
    idempotencyKey?: string,
  ): Promise<T> {
    return providerCall('stripe', call, () => this.send<T>(call, method, path, params, idempotencyKey));
  }

  private async send<T>(
    call: string,
    method: 'GET' | 'POST',
    path: string,
    params: Record<string, FormValue>,
    idempotencyKey?: string,
  ): Promise<T> {
    const form = encodeForm(params);
    const url = this.base + path + (method === 'GET' && form ? `?${form}` : '');
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.options.secretKey}`,
      'Stripe-Version': STRIPE_API_VERSION,
      Accept: 'application/json',
    };
    if (method === 'POST') {
      headers['Content-Type'] = 'application/x-www-form-urlencoded';
      headers['Idempotency-Key'] = idempotencyKey ?? randomUUID();
    }
    const started = this.retry.now();
    let last = '';
    for (let attempt = 1; ; attempt++) {
      let waitMs: number | null = null;
      let shouldRetry: string | null = null;
      let res: Response | null = null;
      try {
        res = await fetch(url, {
          method,
          headers,
          body: method === 'POST' ? form : undefined,
          signal: AbortSignal.timeout(this.retry.timeoutMs),
        });
      } catch (err) {
        last = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
      }
      if (res) {
        const text = await res.text().catch(() => '');
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        shouldRetry = res.headers.get('stripe-should-retry');
        const e = (parsed as Partial<ApiErrorBody> | undefined)?.error;
        if (res.status === 429 || res.status >= 500 || (res.status === 409 && shouldRetry === 'true')) {
          last = `HTTP ${res.status}${e?.code ? ` ${e.code}` : ''}`;
          waitMs = retryAfterMsOf(res.headers.get('retry-after'), this.retry.now());
        } else if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
          last = `HTTP ${res.status}, body is not JSON`;
        } else if (res.ok) {
          return parsed as T;
        } else {
          throw new StripeApiError(
            res.status,
            String(e?.type ?? 'invalid_request_error'),
            String(e?.code ?? ''),
            String(e?.message ?? ''),
            e?.param ?? null,
            call,
          );
        }
      }
      // 429 without a usable Retry-After, 5xx, network: exponential backoff with jitter, within the budget.
      if (shouldRetry === 'false' || !(await waitToRetry(this.retry, started, attempt, waitMs))) {
        throw new ProviderUnavailableError(`Stripe ${call}: ${last} after ${attempt} attempt(s)`, 'stripe', call);
      }
    }
  }

  private async get<T>(call: string, path: string, params?: Record<string, FormValue>): Promise<T | null> {
    try {
      return await this.request<T>(call, 'GET', path, params);
    } catch (err) {
      if (err instanceof StripeApiError && err.status === 404 && (err.code === 'resource_missing' || err.code === '')) return null;
      throw err;
    }
  }

  private async list<T extends { id: string }>(call: string, path: string, params: Record<string, FormValue>): Promise<Page<T>> {
    const list = await this.request<List<T>>(call, 'GET', path, { limit: PAGE_SIZE, ...params });
    const data = Array.isArray(list.data) ? list.data : [];
    const lastItem = data[data.length - 1];
    return { data, next: list.has_more && lastItem ? lastItem.id : null };
  }

  /**
   * With the customer, every item's product and the default payment method (its card fingerprint: who
   * pays, docs/fraud.md) expanded: one call for the whole state.
   */
  async getSubscription(id: string): Promise<Subscription | null> {
    try {
      return await this.get('retrieve subscription', `/v1/subscriptions/${seg(id)}`, {
        expand: ['customer', 'items.data.price.product', 'default_payment_method'],
      });
    } catch (err) {
      // A restricted key made before Refloop read payment methods lacks that permission: the subscription
      // is still read, without its card (no fingerprint is compared).
      if (!(err instanceof StripeApiError) || err.status !== 403) throw err;
      return this.get('retrieve subscription', `/v1/subscriptions/${seg(id)}`, { expand: ['customer', 'items.data.price.product'] });
    }
  }

  /**
   * Every subscription, canceled ones included (`status=all`: without it Stripe leaves canceled ones out),
   * newest first, 100 per page, customers and default payment methods expanded (products would be 5
   * levels deep; Stripe allows 4).
   */
  async listSubscriptions(startingAfter: string | null): Promise<Page<Subscription>> {
    const params = { status: 'all', starting_after: startingAfter ?? undefined };
    try {
      return await this.list('list subscriptions', '/v1/subscriptions', {
        ...params,
        expand: ['data.customer', 'data.default_payment_method'],
      });
    } catch (err) {
      // Without the PaymentMethods permission (an older restricted key): the list without cards.
      if (!(err instanceof StripeApiError) || err.status !== 403) throw err;
      return this.list('list subscriptions', '/v1/subscriptions', { ...params, expand: ['data.customer'] });
    }
  }

  getCheckoutSession(id: string): Promise<CheckoutSession | null> {
    return this.get('retrieve checkout session', `/v1/checkout/sessions/${seg(id)}`);
  }

  /** The Checkout Session that created a subscription (at most one). */
  async findCheckoutSessionBySubscription(subscriptionId: string): Promise<CheckoutSession | null> {
    const page = await this.request<List<CheckoutSession>>('list checkout sessions', 'GET', '/v1/checkout/sessions', {
      subscription: subscriptionId,
      limit: 1,
    });
    return page.data?.[0] ?? null;
  }

  /** Paid invoices of a subscription, newest first. */
  listPaidInvoices(subscriptionId: string, startingAfter: string | null): Promise<Page<Invoice>> {
    return this.list('list invoices', '/v1/invoices', {
      subscription: subscriptionId,
      status: 'paid',
      starting_after: startingAfter ?? undefined,
    });
  }

  /** The invoice payments of a payment intent, with their invoices (how Basil maps a charge to its invoice). */
  async listInvoicePaymentsByPaymentIntent(paymentIntentId: string): Promise<InvoicePayment[]> {
    const page = await this.list<InvoicePayment>('list invoice payments', '/v1/invoice_payments', {
      payment: { type: 'payment_intent', payment_intent: paymentIntentId },
      expand: ['data.invoice'],
    });
    return page.data;
  }

  /** With `invoice_credit_balance` (the credit left per currency). */
  getCustomer(id: string): Promise<Customer | null> {
    return this.get('retrieve customer', `/v1/customers/${seg(id)}`, { expand: ['invoice_credit_balance'] });
  }

  getProduct(id: string): Promise<Product | null> {
    return this.get('retrieve product', `/v1/products/${seg(id)}`);
  }

  createBalanceTransaction(
    customerId: string,
    body: { amount: number; currency: string; description: string; metadata: Metadata },
    idempotencyKey: string,
  ): Promise<CustomerBalanceTransaction> {
    return this.request(
      'create customer balance transaction',
      'POST',
      `/v1/customers/${seg(customerId)}/balance_transactions`,
      body,
      idempotencyKey,
    );
  }

  /** Newest first. */
  listBalanceTransactions(customerId: string, startingAfter: string | null): Promise<Page<CustomerBalanceTransaction>> {
    return this.list('list customer balance transactions', `/v1/customers/${seg(customerId)}/balance_transactions`, {
      starting_after: startingAfter ?? undefined,
    });
  }

  getCoupon(id: string): Promise<Coupon | null> {
    return this.get('retrieve coupon', `/v1/coupons/${seg(id)}`);
  }

  createCoupon(
    body: {
      id: string;
      name: string;
      duration: 'once' | 'forever';
      percent_off?: number;
      amount_off?: number;
      currency?: string;
      metadata: Metadata;
    },
    idempotencyKey: string,
  ): Promise<Coupon> {
    return this.request('create coupon', 'POST', '/v1/coupons', body, idempotencyKey);
  }

  /** Clover and later: `promotion[type]=coupon&promotion[coupon]=<id>`. */
  createPromotionCode(
    body: { coupon: string; code: string; max_redemptions: number; first_time_transaction: boolean; metadata: Metadata },
    idempotencyKey: string,
  ): Promise<PromotionCode> {
    return this.request(
      'create promotion code',
      'POST',
      '/v1/promotion_codes',
      {
        promotion: { type: 'coupon', coupon: body.coupon },
        code: body.code,
        max_redemptions: body.max_redemptions,
        restrictions: { first_time_transaction: body.first_time_transaction },
        metadata: body.metadata,
      },
      idempotencyKey,
    );
  }

  /** Promotion codes with exactly this code (Stripe matches case-insensitively), active or not. */
  async listPromotionCodesByCode(code: string): Promise<PromotionCode[]> {
    return (await this.list<PromotionCode>('list promotion codes', '/v1/promotion_codes', { code })).data;
  }

  getPromotionCode(id: string): Promise<PromotionCode | null> {
    return this.get('retrieve promotion code', `/v1/promotion_codes/${seg(id)}`);
  }

  /** Every refund of a charge (when the charge's own list says has_more), newest first. */
  async listRefunds(chargeId: string): Promise<Refund[]> {
    const out: Refund[] = [];
    let after: string | null = null;
    do {
      const page: Page<Refund> = await this.list<Refund>('list refunds', '/v1/refunds', {
        charge: chargeId,
        starting_after: after ?? undefined,
      });
      out.push(...page.data);
      after = page.next;
    } while (after);
    return out;
  }

  /** With its refunds (not sent by default since 2022-11-15; the first 10, `has_more` beyond). */
  getCharge(id: string): Promise<Charge | null> {
    return this.get('retrieve charge', `/v1/charges/${seg(id)}`, { expand: ['refunds'] });
  }
}
