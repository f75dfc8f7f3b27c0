// Paddle Classic API client: the vendor API (POST, form-encoded, vendor_id + vendor_auth_code in the
// body, `{success, response | error}` envelope even on errors) and the public checkout order lookup.
// Global fetch with a timeout; no SDK. The auth code is sent only in request bodies, never logged.
//
// Failures are split in two: ProviderUnavailableError (network, timeout, HTTP 429/5xx, a body that
// is not the documented JSON, Paddle's "internal error" 120) is retryable and answers 503; a
// ProviderApiError is Paddle refusing the call (bad credentials, unknown subscription...).
import { PROVIDER_UNAVAILABLE, ProviderUnavailableError } from '../../billing/port';
import type { ClassicCredentials as ProviderCredentials } from './settings';
import { providerCall } from '../retry';

// One error for every provider (shared/billing/port.ts): retryable, and a 503 at the API.
export { PROVIDER_UNAVAILABLE, ProviderUnavailableError };
const unavailable = (reason: string, call: string) => new ProviderUnavailableError(reason, 'paddle-classic', call);

/**
 * The name of a vendor API call (its path, e.g. `/2.0/subscription/users`), as errors, the ProviderCalls /
 * ProviderErrorsByCall metrics (`Call=list-users`) and the trace name it; an unknown path names itself.
 */
const VENDOR_CALLS: Readonly<Record<string, string>> = {
  '/2.0/subscription/users': 'list users',
  '/2.0/subscription/payments': 'list payments',
  '/2.0/subscription/plans': 'list plans',
  '/2.0/subscription/modifiers': 'list modifiers',
  '/2.0/subscription/modifiers/create': 'create modifier',
  '/2.0/subscription/modifiers/delete': 'delete modifier',
  '/2.1/product/create_coupon': 'create coupon',
};
export const vendorCallName = (path: string): string => VENDOR_CALLS[path] ?? path.replace(/^\/\d+\.\d+\//, '');

export class ProviderApiError extends Error {
  override readonly name = 'ProviderApiError';
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(`Paddle error ${code}: ${message}`);
  }
}

export interface PaddleAmount {
  amount: number;
  currency: string;
  date: string;
}

export interface PaddleUser {
  subscription_id: number;
  plan_id: number;
  user_id: number;
  user_email: string;
  state: string;
  signup_date: string;
  last_payment?: PaddleAmount;
  next_payment?: PaddleAmount;
  quantity?: number;
}

export interface PaddlePayment {
  id: number;
  subscription_id: number;
  amount: number;
  currency: string;
  payout_date: string;
  is_paid: number | boolean;
}

export interface PaddlePlan {
  id: number;
  name: string;
  billing_type: string;
  billing_period: number;
  trial_days: number;
  initial_price: Record<string, string>;
  recurring_price: Record<string, string>;
}

export interface PaddleModifier {
  modifier_id: number;
  subscription_id: number;
  amount: string;
  currency: string;
  is_recurring: boolean | number;
  description: string;
}

export type OrderLookup = { state: 'processed'; subscriptionId: number | null } | { state: 'processing' } | { state: 'not_found' };

/** Paddle's "internal error": worth a retry, like an HTTP 5xx. */
const RETRYABLE_CODES = new Set([120]);
export const SUBSCRIPTION_NOT_FOUND = 119;
export const MODIFIER_NOT_FOUND = 123;
/** Deleting a modifier that a payment has already billed. */
export const MODIFIER_ALREADY_BILLED = 124;
/** create_coupon with a code that exists (Paddle's codes 127-133 are the coupon validations; docs/design/providers.md "Paddle Classic"). */
export const DUPLICATE_COUPON_CODE = 132;

export interface CouponRequest {
  couponCode: string;
  discountType: 'flat' | 'percentage';
  /** "10.00" (flat) or "10" (percent). */
  discountAmount: string;
  /** Flat coupons only. */
  currency?: string;
  allowedUses: number;
  recurring: boolean;
  description: string;
}

export interface PaddleClientOptions {
  timeoutMs: number;
}

export class PaddleClient {
  constructor(
    private readonly creds: ProviderCredentials,
    private readonly options: PaddleClientOptions,
  ) {}

  private async fetchJson(call: string, url: string, init: RequestInit): Promise<unknown> {
    let res: Response;
    try {
      res = await fetch(url, { ...init, signal: AbortSignal.timeout(this.options.timeoutMs) });
    } catch (err) {
      throw unavailable(err instanceof Error ? `${err.name}: ${err.message}` : String(err), call);
    }
    const text = await res.text().catch(() => '');
    if (res.status === 429 || res.status >= 500) throw unavailable(`HTTP ${res.status}`, call);
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw unavailable(`HTTP ${res.status}, body is not JSON`, call);
    }
  }

  /**
   * POSTs to a vendor API path (e.g. `/2.0/subscription/users`) and unwraps `response`. One call, counted
   * and traced as one (../retry.ts providerCall; Classic's calls are not retried here: SQS retries the record).
   */
  vendor<T>(path: string, params: Record<string, string | number | boolean | undefined>): Promise<T> {
    const call = vendorCallName(path);
    return providerCall('paddle-classic', call, async () => {
      const form = new URLSearchParams({ vendor_id: String(this.creds.vendorId), vendor_auth_code: this.creds.authCode });
      for (const [k, v] of Object.entries(params)) if (v !== undefined) form.set(k, String(v));
      const body = (await this.fetchJson(call, `${this.creds.vendorsApiUrl.replace(/\/+$/, '')}${path}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
        body: form.toString(),
      })) as { success?: unknown; response?: unknown; error?: { code?: unknown; message?: unknown } };
      if (body && body.success === true) return body.response as T;
      const code = Number(body?.error?.code);
      if (!Number.isInteger(code)) throw unavailable('unexpected vendor API response', call);
      if (RETRYABLE_CODES.has(code)) throw unavailable(`Paddle error ${code}`, call);
      throw new ProviderApiError(code, String(body.error?.message ?? ''));
    });
  }

  /** The checkout's order: processed (with its subscription id), still processing, or unknown. */
  getOrder(checkoutId: string): Promise<OrderLookup> {
    return providerCall('paddle-classic', 'get order', () => this.lookupOrder(checkoutId));
  }

  private async lookupOrder(checkoutId: string): Promise<OrderLookup> {
    const call = 'get order';
    const url = `${this.creds.checkoutApiUrl.replace(/\/+$/, '')}/1.0/order?checkout_id=${encodeURIComponent(checkoutId)}`;
    const body = (await this.fetchJson(call, url, { method: 'GET', headers: { Accept: 'application/json' } })) as {
      state?: unknown;
      order?: { subscription_id?: unknown };
      error?: { code?: unknown };
    };
    if (body?.error) {
      if (Number(body.error.code) === 101) return { state: 'not_found' };
      throw unavailable(`order lookup error ${String(body.error.code)}`, call);
    }
    if (body?.state === 'processed' && body.order) {
      const id = Number(body.order.subscription_id);
      return { state: 'processed', subscriptionId: Number.isSafeInteger(id) && id > 0 ? id : null };
    }
    // Any other state ("processing", or values Paddle does not document) means: not ready yet.
    return { state: 'processing' };
  }

  listUsers(p: {
    subscriptionId?: number;
    planId?: number;
    state?: string;
    page?: number;
    resultsPerPage?: number;
  }): Promise<PaddleUser[]> {
    return this.vendor<PaddleUser[]>('/2.0/subscription/users', {
      subscription_id: p.subscriptionId,
      plan_id: p.planId,
      state: p.state,
      page: p.page,
      results_per_page: p.resultsPerPage,
    });
  }

  /** One subscription by id, whatever its state (Paddle omits deleted ones unless asked). */
  async getUser(subscriptionId: number): Promise<PaddleUser | null> {
    const live = await this.listUsers({ subscriptionId });
    if (live[0]) return live[0];
    const deleted = await this.listUsers({ subscriptionId, state: 'deleted' });
    return deleted[0] ?? null;
  }

  listPayments(p: { subscriptionId: number; isPaid?: boolean }): Promise<PaddlePayment[]> {
    return this.vendor<PaddlePayment[]>('/2.0/subscription/payments', {
      subscription_id: p.subscriptionId,
      is_paid: p.isPaid === undefined ? undefined : p.isPaid ? 1 : 0,
    });
  }

  async getPlan(planId: number): Promise<PaddlePlan | null> {
    const plans = await this.vendor<PaddlePlan[]>('/2.0/subscription/plans', { plan: planId });
    return plans.find((p) => Number(p.id) === planId) ?? null;
  }

  createModifier(p: {
    subscriptionId: number;
    amount: string;
    recurring: boolean;
    description: string;
  }): Promise<{ subscription_id: number; modifier_id: number }> {
    return this.vendor('/2.0/subscription/modifiers/create', {
      subscription_id: p.subscriptionId,
      modifier_amount: p.amount,
      modifier_recurring: p.recurring,
      modifier_description: p.description,
    });
  }

  deleteModifier(modifierId: number): Promise<unknown> {
    return this.vendor('/2.0/subscription/modifiers/delete', { modifier_id: modifierId });
  }

  /** A checkout coupon (any product) with one code; the vendors host, API 2.1. */
  createCoupon(c: CouponRequest): Promise<{ coupon_codes: string[] }> {
    return this.vendor('/2.1/product/create_coupon', {
      coupon_type: 'checkout',
      coupon_code: c.couponCode,
      discount_type: c.discountType,
      discount_amount: c.discountAmount,
      currency: c.currency,
      allowed_uses: c.allowedUses,
      recurring: c.recurring ? 1 : 0,
      description: c.description,
    });
  }

  listModifiers(subscriptionId: number): Promise<PaddleModifier[]> {
    return this.vendor<PaddleModifier[]>('/2.0/subscription/modifiers', { subscription_id: subscriptionId });
  }
}
