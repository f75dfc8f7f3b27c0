// Chargebee API v2 client: `<apiUrl>/api/v2/…`, `Authorization: Basic base64(<api key>:)` (the key is the
// username, the password empty), form bodies and queries with Chargebee's bracket keys (wire.ts
// encodeForm), and a `chargebee-idempotency-key` on every write (the caller derives it from what the write
// is for; every retry reuses it, so a retried write whose answer was lost is replayed, not applied twice,
// within Chargebee's 30-minute window; past it the adapter finds the write again by its reference). Global
// fetch, no SDK. The key is sent only in the Authorization header and never appears in an error.
//
// Failures:
// - 429, 5xx, network errors, per-attempt timeouts and answers that are not JSON: retried after
//   `Retry-After` when Chargebee sends one, else with exponential backoff and jitter, within one time budget
//   per call (../retry.ts), then the port's ProviderUnavailableError (the worker fails its record; SQS
//   redelivers it).
// - other 4xx: ChargebeeApiError with Chargebee's {message, type, api_error_code, param}; a 404 on a get
//   is `null`.
import { randomUUID } from 'node:crypto';
import { ProviderUnavailableError } from '../../billing/port';
import { providerCall, retryAfterMs as retryAfterMsOf, retryPolicy, waitToRetry, type RetryOptions, type RetryPolicy } from '../retry';
import {
  encodeForm,
  type ApiErrorBody,
  type Coupon,
  type CouponCode,
  type Customer,
  type EventEnvelope,
  type FormValue,
  type HostedPage,
  type Invoice,
  type ItemPrice,
  type List,
  type PromotionalCredit,
  type Subscription,
} from './wire';

export { retryAfterMs } from '../retry';

/** Chargebee's largest page. */
export const PAGE_SIZE = 100;
export const IDEMPOTENCY_HEADER = 'chargebee-idempotency-key';

export interface ChargebeeClientOptions extends RetryOptions {
  apiKey: string;
  /** `https://<site>.chargebee.com`, or an emulator. */
  apiUrl: string;
}

/** Chargebee refused the call (4xx other than 429): not retryable as such. */
export class ChargebeeApiError extends Error {
  override readonly name = 'ChargebeeApiError';
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    readonly detail: string,
    readonly param: string | null,
    readonly call: string,
  ) {
    super(`Chargebee ${call}: HTTP ${status} ${type}${code ? `/${code}` : ''}: ${detail}`);
  }
}

export const isChargebeeError = (err: unknown, code: string): err is ChargebeeApiError =>
  err instanceof ChargebeeApiError && err.code === code;

export interface Page<T> {
  rows: T[];
  /** Chargebee's `next_offset`; null on the last page. */
  next: string | null;
}

export interface SubscriptionRow {
  subscription: Subscription;
  customer?: Customer;
}

const seg = (id: string) => encodeURIComponent(id);

export class ChargebeeClient {
  private readonly base: string;
  private readonly auth: string;
  private readonly retry: RetryPolicy;

  constructor(options: ChargebeeClientOptions) {
    this.base = `${options.apiUrl.replace(/\/+$/, '')}/api/v2`;
    this.auth = `Basic ${Buffer.from(`${options.apiKey}:`, 'utf8').toString('base64')}`;
    this.retry = retryPolicy(options);
  }

  /**
   * One API call with retries. GET params go in the query, POST params in the form body. A POST without
   * `idempotencyKey` gets a random one, shared by its retries. Counted and traced as one call.
   */
  request<T>(
    call: string,
    method: 'GET' | 'POST',
    path: string,
    params: Record<string, FormValue> = {},
    idempotencyKey?: string,
  ): Promise<T> {
    return providerCall('chargebee', call, () => this.send<T>(call, method, path, params, idempotencyKey));
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
    const headers: Record<string, string> = { Authorization: this.auth, Accept: 'application/json' };
    if (method === 'POST') {
      headers['Content-Type'] = 'application/x-www-form-urlencoded; charset=utf-8';
      headers[IDEMPOTENCY_HEADER] = idempotencyKey ?? randomUUID();
    }
    const started = this.retry.now();
    let last = '';
    for (let attempt = 1; ; attempt++) {
      let waitMs: number | null = null;
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
        const e = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Partial<ApiErrorBody>;
        if (res.status === 429 || res.status >= 500) {
          last = `HTTP ${res.status}${e.api_error_code ? ` ${e.api_error_code}` : ''}`;
          waitMs = retryAfterMsOf(res.headers.get('retry-after'), this.retry.now());
        } else if (parsed === undefined || typeof parsed !== 'object' || parsed === null) {
          last = `HTTP ${res.status}, body is not JSON`;
        } else if (res.ok) {
          return parsed as T;
        } else {
          throw new ChargebeeApiError(
            res.status,
            String(e.type ?? 'invalid_request'),
            String(e.api_error_code ?? ''),
            String(e.message ?? ''),
            typeof e.param === 'string' ? e.param : null,
            call,
          );
        }
      }
      if (!(await waitToRetry(this.retry, started, attempt, waitMs))) {
        throw new ProviderUnavailableError(`Chargebee ${call}: ${last} after ${attempt} attempt(s)`, 'chargebee', call);
      }
    }
  }

  private async get<T>(call: string, path: string, params?: Record<string, FormValue>): Promise<T | null> {
    try {
      return await this.request<T>(call, 'GET', path, params);
    } catch (err) {
      if (err instanceof ChargebeeApiError && err.status === 404) return null;
      throw err;
    }
  }

  private async list<T>(call: string, path: string, params: Record<string, FormValue>, offset: string | null): Promise<Page<T>> {
    const answer = await this.request<List<T>>(call, 'GET', path, { limit: PAGE_SIZE, ...params, offset: offset ?? undefined });
    const rows = Array.isArray(answer.list) ? answer.list : [];
    const next = typeof answer.next_offset === 'string' && answer.next_offset !== '' ? answer.next_offset : null;
    return { rows, next };
  }

  /** The stored event (the worker applies only this, never the delivered body); null when Chargebee has none. */
  async getEvent(id: string): Promise<EventEnvelope | null> {
    return (await this.get<{ event: EventEnvelope }>('retrieve event', `/events/${seg(id)}`))?.event ?? null;
  }

  getSubscription(id: string): Promise<SubscriptionRow | null> {
    return this.get<SubscriptionRow>('retrieve subscription', `/subscriptions/${seg(id)}`);
  }

  /** Every subscription, deleted ones included, oldest change first (the background sync). */
  /** The background sync's listing, oldest change first; `updatedAfter` (unix seconds) for an incremental run. */
  listSubscriptions(offset: string | null, updatedAfter?: number): Promise<Page<SubscriptionRow>> {
    return this.list(
      'list subscriptions',
      '/subscriptions',
      {
        sort_by: { asc: 'updated_at' },
        include_deleted: true,
        ...(updatedAfter !== undefined ? { updated_at: { after: updatedAfter } } : {}),
      },
      offset,
    );
  }

  async getCustomer(id: string): Promise<Customer | null> {
    return (await this.get<{ customer: Customer }>('retrieve customer', `/customers/${seg(id)}`))?.customer ?? null;
  }

  async getItemPrice(id: string): Promise<ItemPrice | null> {
    return (await this.get<{ item_price: ItemPrice }>('retrieve item price', `/item_prices/${seg(id)}`))?.item_price ?? null;
  }

  async getHostedPage(id: string): Promise<HostedPage | null> {
    return (await this.get<{ hosted_page: HostedPage }>('retrieve hosted page', `/hosted_pages/${seg(id)}`))?.hosted_page ?? null;
  }

  /** Paid invoices of a subscription. */
  listPaidInvoices(subscriptionId: string, offset: string | null): Promise<Page<{ invoice: Invoice }>> {
    return this.list('list invoices', '/invoices', { subscription_id: { is: subscriptionId }, status: { is: 'paid' } }, offset);
  }

  /** A customer's promotional credit additions (`type[is]=increment`), newest first. */
  listCreditIncrements(customerId: string, offset: string | null): Promise<Page<{ promotional_credit: PromotionalCredit }>> {
    return this.list(
      'list promotional credits',
      '/promotional_credits',
      { customer_id: { is: customerId }, type: { is: 'increment' } },
      offset,
    );
  }

  /** Every promotional credit entry of a customer (additions and deductions), newest first. */
  listCredits(customerId: string, offset: string | null): Promise<Page<{ promotional_credit: PromotionalCredit }>> {
    return this.list('list promotional credits', '/promotional_credits', { customer_id: { is: customerId } }, offset);
  }

  addPromotionalCredits(
    params: Record<string, FormValue>,
    idempotencyKey: string,
  ): Promise<{ customer: Customer; promotional_credit: PromotionalCredit }> {
    return this.request('add promotional credits', 'POST', '/promotional_credits/add', params, idempotencyKey);
  }

  deductPromotionalCredits(
    params: Record<string, FormValue>,
    idempotencyKey: string,
  ): Promise<{ customer: Customer; promotional_credit: PromotionalCredit }> {
    return this.request('deduct promotional credits', 'POST', '/promotional_credits/deduct', params, idempotencyKey);
  }

  async getCoupon(id: string): Promise<Coupon | null> {
    return (await this.get<{ coupon: Coupon }>('retrieve coupon', `/coupons/${seg(id)}`))?.coupon ?? null;
  }

  createCoupon(params: Record<string, FormValue>, idempotencyKey: string): Promise<{ coupon: Coupon }> {
    return this.request('create coupon', 'POST', '/coupons/create_for_items', params, idempotencyKey);
  }

  async getCouponCode(code: string): Promise<CouponCode | null> {
    return (await this.get<{ coupon_code: CouponCode }>('retrieve coupon code', `/coupon_codes/${seg(code)}`))?.coupon_code ?? null;
  }

  createCouponCode(params: Record<string, FormValue>, idempotencyKey: string): Promise<{ coupon_code: CouponCode }> {
    return this.request('create coupon code', 'POST', '/coupon_codes', params, idempotencyKey);
  }
}
