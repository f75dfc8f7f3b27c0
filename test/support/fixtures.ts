// Test fixtures: fresh accounts in DynamoDB Local, and polling with a deadline for asynchronous effects.
import './local-guard';
import { randomBytes } from 'node:crypto';
import type { Plan } from '../../shared/domain/plans';
import { createAccount } from '../../shared/store/accounts';

export async function newAccount(plan: Plan = 'regular'): Promise<{ accountId: string; apiKey: string; publishableKey: string }> {
  const { account, apiKey } = await createAccount({ name: `test-${randomBytes(4).toString('hex')}`, plan });
  return { accountId: account.accountId, apiKey, publishableKey: account.publishableKey as string };
}

// Polling with a deadline lives in ./poll.ts, free of the DynamoDB Local guard, so unit tests can use it too.
export { pollUntil } from './poll';
