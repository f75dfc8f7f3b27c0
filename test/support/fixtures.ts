// Test fixtures: fresh accounts in DynamoDB Local, and polling with a deadline for asynchronous effects.
import './local-guard';
import { randomBytes } from 'node:crypto';
import type { Plan } from '../../shared/domain/plans';
import { createAccount } from '../../shared/store/accounts';

export async function newAccount(plan: Plan = 'regular'): Promise<{ accountId: string; apiKey: string; publishableKey: string }> {
  const { account, apiKey } = await createAccount({ name: `test-${randomBytes(4).toString('hex')}`, plan });
  return { accountId: account.accountId, apiKey, publishableKey: account.publishableKey as string };
}

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
