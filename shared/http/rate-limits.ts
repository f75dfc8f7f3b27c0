// The rate limits the HTTP edge enforces, on fixed windows counted in the table (shared/store/rate-limits.ts):
// - /v1/: per API key, the plan's requests per second over 10-second windows (a burst of up to ten times the
//   rate fits in one window);
// - /js/v1/: per publishable key and per client IP, per minute.
// Over a limit: 429 with Retry-After (ThrottledError). A limit of 0 is off.
import { config } from '../config';
import { ThrottledError } from '../domain/errors';
import type { Principal } from '../store/accounts';
import { consumeRateLimit, type RateDecision } from '../store/rate-limits';

export const API_WINDOW_SECONDS = 10;

/**
 * Runs a request's work under its rate limit (counted in memory, an UpdateItem once per batch or near the
 * limit). A write waits for the count, so a refused write changes nothing; a read runs beside it and its
 * answer is dropped when the limit refuses: no extra depth.
 */
export async function underLimit<T>(method: string | undefined, limit: () => Promise<void>, run: () => Promise<T>): Promise<T> {
  if (method !== 'GET') {
    await limit();
    return run();
  }
  const [limited, answered] = await Promise.allSettled([limit(), run()]);
  if (limited.status === 'rejected') throw limited.reason;
  if (answered.status === 'rejected') throw answered.reason;
  return answered.value;
}

function refuseIfAny(decisions: RateDecision[]): void {
  const waits = decisions.flatMap((d) => (d.allowed ? [] : [d.retryAfterSeconds]));
  if (waits.length > 0) throw new ThrottledError(Math.max(...waits));
}

/** Counts one /v1/ request against its API key's window; resolves when allowed, throws 429 when not. */
export async function limitApiKey(principal: Principal): Promise<void> {
  const rate = config().apiRates[principal.plan];
  if (!rate || !principal.keyId) return;
  refuseIfAny([
    await consumeRateLimit(principal.accountId, `api-key#${principal.keyId}`, {
      limit: rate * API_WINDOW_SECONDS,
      windowSeconds: API_WINDOW_SECONDS,
    }),
  ]);
}

/** Counts one public request against the publishable key's and the IP's windows, in parallel. */
export async function limitPublic(accountId: string, clientIp: string): Promise<void> {
  const { perIpPerMinute, perKeyPerMinute } = config().jsRateLimits;
  const checks: Promise<RateDecision>[] = [];
  if (perKeyPerMinute > 0) checks.push(consumeRateLimit(accountId, 'js-key', { limit: perKeyPerMinute, windowSeconds: 60 }));
  if (perIpPerMinute > 0) checks.push(consumeRateLimit(accountId, `js-ip#${clientIp}`, { limit: perIpPerMinute, windowSeconds: 60 }));
  refuseIfAny(await Promise.all(checks));
}
