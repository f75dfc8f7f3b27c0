// Paddle Billing API client (API version 1): JSON over HTTPS, `Authorization: Bearer <key>`, and
// `Paddle-Version: 1` on every call (the official Node SDK sends none; an account's default could change).
// Global fetch, no SDK. The API key is sent only in the Authorization header and never appears in an error.
//
// Failures:
// - 429 `too_many_requests`: retried after its `Retry-After` (seconds or an HTTP date);
// - 5xx, network errors, per-call timeouts and bodies that are not JSON: retried with exponential backoff
//   and jitter;
//   both within one time budget per call (a wait that would end past the budget is not started), then
//   the port's ProviderUnavailableError: the worker fails its record and SQS redelivers it later.
// - other 4xx: PaddleBillingApiError with Paddle's {error:{type, code, detail}}; a `not_found` on a get
//   is `null`.
// Writes are retried too: PATCH is idempotent, and every POST /discounts carries a code derived from
// what it is for, so a repeated create answers 409 `discount_code_conflict` instead of making a second.
import { ProviderUnavailableError } from '../../billing/port';
import type { ApiErrorBody, CreateDiscountBody, Customer, Discount, Envelope, Pagination, Subscription, Transaction } from './wire';
import { providerCall, retryAfterMs as retryAfterMsOf, retryPolicy, waitToRetry, type RetryOptions, type RetryPolicy } from '../retry';

// Re-exported: callers and tests read Retry-After through the client they use.
export { retryAfterMs } from '../retry';

import { DEFAULT_API_URL, SANDBOX_API_URL } from './settings';
export { DEFAULT_API_URL, SANDBOX_API_URL };
export const PADDLE_VERSION = '1';
/** GET /subscriptions: the maximum page size (the default is 50). */
export const SUBSCRIPTIONS_PAGE_SIZE = 200;
/** GET /transactions: the maximum page size. */
export const TRANSACTIONS_PAGE_SIZE = 30;
export const CUSTOMERS_PAGE_SIZE = 200;

export interface PaddleBillingClientOptions extends RetryOptions {
  apiKey: string;
  /** Default https://api.paddle.com; sandbox https://sandbox-api.paddle.com; the emulator's URL locally. */
  apiUrl?: string;
}

/** Paddle refused the call (4xx other than 429): not retryable as such. */
export class PaddleBillingApiError extends Error {
  override readonly name = 'PaddleBillingApiError';
  constructor(
    readonly status: number,
    readonly code: string,
    readonly type: string,
    readonly detail: string,
    readonly call: string,
  ) {
    super(`Paddle Billing ${call}: HTTP ${status} ${code}: ${detail}`);
  }
}

export const isPaddleError = (err: unknown, code: string): err is PaddleBillingApiError =>
  err instanceof PaddleBillingApiError && err.code === code;

export interface Page<T> {
  data: T[];
  /** The `after` cursor of the next page; null on the last page. */
  next: string | null;
  estimatedTotal: number | null;
}

type Query = Record<string, string | number | undefined>;

/** The `after` cursor in meta.pagination.next (an absolute URL), when there is a next page. */
function nextCursor(pagination: Pagination | undefined): string | null {
  if (!pagination?.has_more || !pagination.next) return null;
  try {
    return new URL(pagination.next).searchParams.get('after');
  } catch {
    return null;
  }
}

export class PaddleBillingClient {
  private readonly base: string;
  private readonly retry: RetryPolicy;

  constructor(private readonly options: PaddleBillingClientOptions) {
    this.base = (options.apiUrl ?? DEFAULT_API_URL).replace(/\/+$/, '');
    this.retry = retryPolicy(options);
  }

  /**
   * One API call with retries; returns the parsed `{data, meta}` envelope. `call` names it in errors, in the
   * ProviderCalls/ProviderErrors metrics and in the trace (../retry.ts providerCall).
   */
  request<T>(call: string, method: 'GET' | 'POST' | 'PATCH', path: string, query?: Query, body?: unknown): Promise<Envelope<T>> {
    return providerCall('paddle-billing', call, () => this.send<T>(call, method, path, query, body));
  }

  private async send<T>(call: string, method: 'GET' | 'POST' | 'PATCH', path: string, query?: Query, body?: unknown): Promise<Envelope<T>> {
    const url = new URL(this.base + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const started = this.retry.now();
    let last = '';
    for (let attempt = 1; ; attempt++) {
      let waitMs: number | null;
      let res: Response | null = null;
      try {
        res = await fetch(url, {
          method,
          headers: {
            Authorization: `Bearer ${this.options.apiKey}`,
            'Paddle-Version': PADDLE_VERSION,
            Accept: 'application/json',
            ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}),
          },
          body: body !== undefined ? JSON.stringify(body) : undefined,
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
        if (res.status === 429) {
          last = 'HTTP 429 too_many_requests';
        } else if (res.status >= 500) {
          last = `HTTP ${res.status}`;
        } else if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
          last = `HTTP ${res.status}, body is not JSON`;
        } else if (res.ok) {
          return parsed as Envelope<T>;
        } else {
          const e = (parsed as Partial<ApiErrorBody>).error;
          throw new PaddleBillingApiError(
            res.status,
            String(e?.code ?? 'unknown'),
            String(e?.type ?? 'request_error'),
            String(e?.detail ?? ''),
            call,
          );
        }
        waitMs = res.status === 429 ? retryAfterMsOf(res.headers.get('retry-after'), this.retry.now()) : null;
      } else {
        waitMs = null;
      }
      // 429 without a usable Retry-After, 5xx, network: exponential backoff with jitter, within the budget.
      if (!(await waitToRetry(this.retry, started, attempt, waitMs))) {
        throw new ProviderUnavailableError(`Paddle Billing ${call}: ${last} after ${attempt} attempt(s)`, 'paddle-billing', call);
      }
    }
  }

  private async get<T>(call: string, path: string, query?: Query): Promise<T | null> {
    try {
      return (await this.request<T>(call, 'GET', path, query)).data;
    } catch (err) {
      if (isPaddleError(err, 'not_found')) return null;
      throw err;
    }
  }

  private async list<T>(call: string, path: string, query: Query): Promise<Page<T>> {
    const env = await this.request<T[]>(call, 'GET', path, query);
    return {
      data: Array.isArray(env.data) ? env.data : [],
      next: nextCursor(env.meta?.pagination),
      estimatedTotal: env.meta?.pagination?.estimated_total ?? null,
    };
  }

  getSubscription(id: string): Promise<Subscription | null> {
    return this.get('get subscription', `/subscriptions/${encodeURIComponent(id)}`);
  }

  /** All statuses, oldest first, 200 per page; `after` is the previous page's cursor. */
  listSubscriptions(after: string | null, filter: { status?: string; customerId?: string } = {}): Promise<Page<Subscription>> {
    return this.list('list subscriptions', '/subscriptions', {
      per_page: SUBSCRIPTIONS_PAGE_SIZE,
      after: after ?? undefined,
      status: filter.status,
      customer_id: filter.customerId,
    });
  }

  /** With the customer and the discount included (`?include=customer,discount`). */
  getTransaction(id: string): Promise<Transaction | null> {
    return this.get('get transaction', `/transactions/${encodeURIComponent(id)}`, { include: 'customer,discount' });
  }

  /** Completed transactions of a subscription, 30 per page (Paddle's maximum). */
  listTransactions(subscriptionId: string, after: string | null): Promise<Page<Transaction>> {
    return this.list('list transactions', '/transactions', {
      subscription_id: subscriptionId,
      status: 'completed',
      per_page: TRANSACTIONS_PAGE_SIZE,
      after: after ?? undefined,
    });
  }

  getCustomer(id: string): Promise<Customer | null> {
    return this.get('get customer', `/customers/${encodeURIComponent(id)}`);
  }

  /** Customers by id (at most 200 per call): one call for a whole page of subscriptions. */
  async listCustomers(ids: string[]): Promise<Customer[]> {
    if (ids.length === 0) return [];
    const page = await this.list<Customer>('list customers', '/customers', { id: ids.join(','), per_page: CUSTOMERS_PAGE_SIZE });
    return page.data;
  }

  getDiscount(id: string): Promise<Discount | null> {
    return this.get('get discount', `/discounts/${encodeURIComponent(id)}`);
  }

  async createDiscount(body: CreateDiscountBody): Promise<Discount> {
    return (await this.request<Discount>('create discount', 'POST', '/discounts', undefined, body)).data;
  }

  /** Codes are case-insensitive at Paddle; `code` matches exactly one discount or none. */
  async findDiscountByCode(code: string): Promise<Discount | null> {
    const page = await this.list<Discount>('list discounts', '/discounts', { code });
    return page.data.find((d) => (d.code ?? '').toUpperCase() === code.toUpperCase()) ?? null;
  }

  /** Sets (from the next billing period) or removes (`null`) the subscription's single discount. */
  async setSubscriptionDiscount(subscriptionId: string, discountId: string | null): Promise<Subscription> {
    const discount = discountId === null ? null : { id: discountId, effective_from: 'next_billing_period' };
    return (
      await this.request<Subscription>('update subscription', 'PATCH', `/subscriptions/${encodeURIComponent(subscriptionId)}`, undefined, {
        discount,
      })
    ).data;
  }
}
