// STUB (issue 27 seam; the money helper implements, keeping these signatures): held rewards
// (docs/fraud.md "Holds"): a hold puts unpaid commissions in `held`, which approval and payouts skip; an
// operator releases them (back to pending, or approved when their hold period has passed) or voids them.
import type { LedgerReward } from '../domain/lifecycle';

/**
 * Puts every unpaid commission of the referral or of the member in `held`, tagged `held_by: flagId` (the flag
 * item must exist: its `held_reward_ids` and `held_count` change in the same transactions). A reward in a
 * payout being paid is left alone. Idempotent; answers the ids it held now.
 */
export async function holdRewards(
  _accountId: string,
  _scope: { referralId: string } | { memberId: string },
  _flagId: string,
  _opts: { now?: number } = {},
): Promise<string[]> {
  return [];
}

/** POST /v1/rewards/{id}/release/: a held reward back to pending (or approved when its hold period has passed); 409 when not held. */
export async function releaseReward(_accountId: string, _rewardId: string, _opts: { now?: number } = {}): Promise<LedgerReward> {
  throw new Error('not implemented');
}

/** Releases those of `rewardIds` still held (a flag's release); the others are left as they are. */
export async function releaseHeld(_accountId: string, _rewardIds: string[], _opts: { now?: number } = {}): Promise<void> {}

/** Voids (reason `fraud`) those of `rewardIds` still held (a flag's void); the others are left as they are. */
export async function voidHeld(_accountId: string, _rewardIds: string[], _opts: { now?: number } = {}): Promise<void> {}
