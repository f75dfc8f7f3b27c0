// Fixed-window rate limits: pure arithmetic, no I/O. A window of `windowSeconds` starts at a multiple
// of its length (unix time), so every container agrees on which window a request falls in without
// coordination; the count of a window lives in one item (shared/store/rate-limits.ts).

export interface RateLimit {
  /** Requests allowed per window. */
  limit: number;
  windowSeconds: number;
}

export function windowStart(nowMs: number, windowSeconds: number): number {
  const now = Math.floor(nowMs / 1000);
  return now - (now % windowSeconds);
}

/** Seconds until the window holding `nowMs` ends (at least 1): the `Retry-After` of a refusal. */
export function secondsUntilNextWindow(nowMs: number, windowSeconds: number): number {
  const end = (windowStart(nowMs, windowSeconds) + windowSeconds) * 1000;
  return Math.max(1, Math.ceil((end - nowMs) / 1000));
}
