// STUB (issue 27 seam; the flags helper implements, keeping these signatures): recording what a fraud rule
// found (docs/fraud.md "Flags"), and an operator's resolution of it.
import { newEntityId } from '../domain/ids';
import type { FraudFinding, FraudFlagRecord, FraudSettings } from '../domain/fraud';
import type { TransactItem } from '../store/ops';

export const newFraudFlagId = (): string => `ff_${newEntityId()}`;

/**
 * The items that record a finding as flag `flagId`, for a caller's own transaction (the conversion's
 * self-referral): the review-queue item, its dedupe claim (a condition: recorded once), its counters and
 * the `fraud.flagged` event. The `fraud_flags` entry on the subject and any `fraud_hold` are the caller's.
 */
export function flagItems(
  _accountId: string,
  _finding: FraudFinding,
  _action: 'flag' | 'hold',
  _flagId: string,
  _nowSeconds: number,
): TransactItem[] {
  return [];
}

/**
 * Records a finding with its rule's action (from `settings`, else the account's): nothing when `off` or
 * already recorded (its dedupe key); a flag on its subject and in the queue; for `hold`, the subject's unpaid
 * commissions held (flows/fraud-holds.ts). Answers the flag, or null.
 */
export async function recordFinding(
  _accountId: string,
  _finding: FraudFinding,
  _settings?: FraudSettings,
): Promise<FraudFlagRecord | null> {
  return null;
}
