// The retry policy every provider client shares (Paddle Billing, Stripe): a timeout per HTTP attempt, a
// time budget per call (retries and waits included), a cap on attempts, `Retry-After` when the provider
// gives one, else exponential backoff with jitter. Each client keeps its own request loop, because what is
// retryable differs (Stripe's `Stripe-Should-Retry`, Paddle's error envelope, Chargebee's `api_error_code`),
// and because a loop shared by the adapters would be bundled into every function's index.js, not into the
// adapter files loaded on first use (tried: it took reward-fanout over its 300 KB budget).
//
// `providerCall` wraps one call of any provider's client (Paddle Classic's included), retries inside, for
// the metric contract (shared/metrics.ts) and the trace: ProviderCalls once per call, and when the call
// fails for good with ProviderUnavailableError (unreachable, timed out, 429/5xx past the retry budget, an
// answer that is not the documented JSON) ProviderErrors and ProviderErrorsByCall once. A refusal the
// provider words (an API error: not found, duplicate code, bad credentials) is an answer, not an outage:
// it counts as a call only, and the flow that gets it decides what it means (and logs it).
import { ProviderUnavailableError, type ProviderKind } from '../billing/port';
import { countMetric } from '../metrics';
import { tracedRemote } from '../tracing';

export interface RetryOptions {
  /** Per HTTP attempt. Default 4000 ms (config.providerTimeoutMs). */
  timeoutMs?: number;
  /** Total time one call may take, retries and waits included. Default 20 s. */
  budgetMs?: number;
  /** Attempts per call, the first included. Default 5. */
  maxAttempts?: number;
  /** First backoff step for 5xx/network errors; doubles per attempt (with jitter), capped at 4 s. Default 250 ms. */
  backoffMs?: number;
  /** Injected in tests. */
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

export type RetryPolicy = Required<RetryOptions>;

const sleepFor = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function retryPolicy(options: RetryOptions): RetryPolicy {
  return {
    timeoutMs: options.timeoutMs ?? 4_000,
    budgetMs: options.budgetMs ?? 20_000,
    maxAttempts: options.maxAttempts ?? 5,
    backoffMs: options.backoffMs ?? 250,
    sleep: options.sleep ?? sleepFor,
    now: options.now ?? Date.now,
  };
}

/** `Retry-After` in ms: delta-seconds or an HTTP date; null when absent or unreadable. */
export function retryAfterMs(header: string | null, nowMs: number): number | null {
  if (header === null || header.trim() === '') return null;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const date = Date.parse(text);
  return Number.isNaN(date) ? null : Math.max(0, date - nowMs);
}

/**
 * After a failed attempt: waits `waitMs` (the provider's Retry-After) or the backoff, and answers true; or
 * answers false at once when the attempts are used up or the wait would end past the call's budget.
 */
export async function waitToRetry(policy: RetryPolicy, startedMs: number, attempt: number, waitMs: number | null): Promise<boolean> {
  const wait = waitMs ?? Math.min(4_000, policy.backoffMs * 2 ** (attempt - 1)) * (0.5 + Math.random() / 2);
  if (attempt >= policy.maxAttempts || policy.now() - startedMs + wait > policy.budgetMs) return false;
  await policy.sleep(wait);
  return true;
}

/** `get subscription` -> `get-subscription`: the Call dimension's form (lower case, words joined by `-`). */
export function callDimension(call: string): string {
  return (
    call
      .trim()
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'unknown'
  );
}

/** Runs one provider call (its retries inside), counted and traced as one; see the top of this file. */
export async function providerCall<T>(provider: ProviderKind, call: string, run: () => Promise<T>): Promise<T> {
  const Call = callDimension(call);
  let failed = false;
  try {
    return await tracedRemote(provider, { provider, call: Call }, run, (err) =>
      err instanceof ProviderUnavailableError ? { fault: true } : { error: true },
    );
  } catch (err) {
    failed = err instanceof ProviderUnavailableError;
    throw err;
  } finally {
    countMetric('ProviderCalls', { Provider: provider });
    if (failed) {
      countMetric('ProviderErrors', { Provider: provider });
      countMetric('ProviderErrorsByCall', { Provider: provider, Call });
    }
  }
}
