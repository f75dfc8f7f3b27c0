// Polling with a deadline for asynchronous effects (no DynamoDB Local needed: unit tests use it too).

/**
 * Calls `fn` until it returns a truthy value (which is returned) or the deadline passes. A throw counts
 * as "not yet", so `fn` may hold expect() calls; the last error is reported at the deadline.
 */
export async function pollUntil<T>(
  fn: () => T | Promise<T>,
  { timeoutMs = 10_000, intervalMs = 100 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (value) return value as NonNullable<T>;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= deadline) {
      const why = last instanceof Error ? last.message : `last value ${JSON.stringify(last)}`;
      throw new Error(`pollUntil: condition not met within ${timeoutMs} ms (${why})`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
