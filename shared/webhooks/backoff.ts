// Retry schedule of webhook deliveries: exponential backoff from the base delay, doubling per attempt up
// to a ceiling, for at most `giveUpSeconds` (3 days) after the event. Pure: the delivery worker asks it
// what to do after a failed attempt.

export interface BackoffConfig {
  retryBaseSeconds: number;
  maxRetrySeconds: number;
  giveUpSeconds: number;
}

/** Seconds to wait after failed attempt `attempt` (1-based): base, 2 x base, 4 x base, ... capped. */
export function retryDelaySeconds(attempt: number, cfg: BackoffConfig): number {
  const exp = Math.min(Math.max(0, attempt - 1), 30);
  return Math.min(cfg.maxRetrySeconds, cfg.retryBaseSeconds * 2 ** exp);
}

/** After failed attempt `attempt` of a delivery created at `createdMs`: retry at a time, or give up. */
export function afterFailure(
  attempt: number,
  createdMs: number,
  nowMs: number,
  cfg: BackoffConfig,
): { retryAtMs: number } | { giveUp: true } {
  const retryAtMs = nowMs + retryDelaySeconds(attempt, cfg) * 1000;
  if (retryAtMs > createdMs + cfg.giveUpSeconds * 1000) return { giveUp: true };
  return { retryAtMs };
}

/** Whether an endpoint that has failed without a success since `failingSinceMs` is to be disabled. */
export function shouldDisable(failingSinceMs: number | null, nowMs: number, cfg: BackoffConfig): boolean {
  return failingSinceMs !== null && nowMs - failingSinceMs >= cfg.giveUpSeconds * 1000;
}
