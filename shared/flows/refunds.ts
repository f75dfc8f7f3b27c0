// Refunds on the reward fan-out worker: after the rewards of a referral are brought up to date, what its
// subscription's refunds take back (shared/domain/clawbacks.ts) is written: commission clawbacks in one
// optimistic transaction (the caller's retry loop handles a lost race), then credit reversals, which may
// call the provider:
// - a credit not applied yet: its claim is taken (so no worker applies it meanwhile), a modifier left
//   by an attempt that died before recording it is looked for on the member's subscription (by the
//   reward id in its description) and deleted, then the reversal is recorded;
// - an applied credit: its modifier is deleted at the provider (123 "not found" = deleted by an earlier
//   attempt), then the reversal is recorded. Error 124 = already billed: the credit stays, noted.
// A provider failure fails the record (SQS retries it); the claim is released first.
import { config } from '../config';
import type { CreditReversal } from '../domain/clawbacks';
import type { Referral } from '../domain/models';
import { recordCreditKept, recordCreditReversal } from '../store/clawbacks';
import { toMember } from '../store/members';
import { getItem } from '../store/ops';
import { getProviderCredentials } from '../store/provider';
import { toReferral } from '../store/referrals';
import { claimCredit, RewardRaceError, releaseCreditClaim, type StoredReward } from '../store/rewards';
import { keys } from '../store/table';
import { MODIFIER_ALREADY_BILLED, MODIFIER_NOT_FOUND, PaddleClient, ProviderApiError } from '../providers/paddle-classic/client';
import { CreditHeldError } from './settlement';
import { log } from '../log';

const CLAIM_SECONDS = 60;


async function freshReferral(accountId: string, id: string): Promise<Referral | null> {
  return toReferral(await getItem(keys.referral(accountId, id)));
}

/** Deletes a modifier; 'billed' when the provider has already charged it. */
async function deleteModifier(client: PaddleClient, modifierId: number): Promise<'deleted' | 'billed'> {
  try {
    await client.deleteModifier(modifierId);
    return 'deleted';
  } catch (err) {
    if (err instanceof ProviderApiError && err.code === MODIFIER_NOT_FOUND) return 'deleted';
    if (err instanceof ProviderApiError && err.code === MODIFIER_ALREADY_BILLED) return 'billed';
    throw err;
  }
}

export async function reverseCredits(accountId: string, referralId: string, reversals: CreditReversal[]): Promise<void> {
  let client: PaddleClient | null | undefined;
  const provider = async () => {
    if (client === undefined) {
      const creds = await getProviderCredentials(accountId);
      client = creds ? new PaddleClient(creds, { timeoutMs: config().providerTimeoutMs }) : null;
    }
    return client;
  };

  for (const reversal of reversals) {
    for (let attempt = 1; ; attempt++) {
      const referral = await freshReferral(accountId, referralId);
      if (!referral) return;
      const index = referral.rewards.findIndex((r) => r.id === reversal.reward_id);
      const reward = referral.rewards[index] as StoredReward | undefined;
      if (!reward || reward.reversed_at !== undefined || reward.note !== undefined) break;
      const context = { account_id: accountId, referral_id: referralId, reward_id: reward.id, refund_id: reversal.refund_id };
      const memberItem = await getItem(keys.member(accountId, referral.member_id));
      const member = toMember(memberItem);

      let modifierId = reward.modifier_id;
      let claimed = false;
      if (modifierId === undefined) {
        claimed = await claimCredit(accountId, referral.id, index, reward.id, CLAIM_SECONDS);
        if (!claimed) {
          const now = await freshReferral(accountId, referralId);
          const current = now?.rewards[index] as StoredReward | undefined;
          if (current?.id === reward.id && current.modifier_id !== undefined && attempt < 3) continue; // applied meanwhile: delete it
          if (current?.id !== reward.id || current.reversed_at !== undefined) break;
          throw new CreditHeldError(`credit ${reward.id} is being applied by another worker`);
        }
      }
      try {
        let outcome: 'deleted' | 'billed' = 'deleted';
        if (modifierId === undefined && member?.subscription_id != null) {
          // An attempt that created the modifier may have died before recording it.
          const c = await provider();
          const orphan = c ? (await c.listModifiers(member.subscription_id)).find((m) => String(m.description).includes(reward.id)) : undefined;
          if (orphan) modifierId = Number(orphan.modifier_id);
        }
        if (modifierId !== undefined) {
          const c = await provider();
          if (!c) throw new Error('no provider settings: the credit modifier cannot be deleted');
          outcome = await deleteModifier(c, modifierId);
        }
        if (outcome === 'billed') {
          await recordCreditKept(accountId, referral, index, reversal);
          log('info', 'refunded credit already billed: it stays', { ...context, modifier_id: modifierId });
        } else {
          await recordCreditReversal(accountId, referral, index, reversal, member !== null);
          log('info', 'credit reversed after a refund', { ...context, modifier_id: modifierId ?? null });
        }
      } catch (err) {
        if (claimed) await releaseCreditClaim(accountId, referral.id, index, reward.id).catch(() => undefined);
        // The referral changed between the read and the write: read it again and redo this reversal.
        if (err instanceof RewardRaceError && attempt < 5) continue;
        throw err;
      }
      break;
    }
  }
}
