// Refunds on the reward fan-out worker: after the rewards of a referral are brought up to date, what its
// subscription's refunds take back (shared/domain/clawbacks.ts) is written: commission clawbacks in one
// optimistic transaction (the caller's retry loop handles a lost race), then credit reversals, which may
// call the provider through the port:
// - a credit not applied yet: its claim is taken (so no worker applies it meanwhile), a credit left by an
//   attempt that died before recording it is looked for on the member's subscription (by the reward id)
//   and removed, then the reversal is recorded;
// - an applied credit: the adapter removes it (Classic: deletes the modifier; "not found" = removed by an
//   earlier attempt), then the reversal is recorded. 'consumed' (Classic error 124, already billed): the
//   credit stays, noted.
// A provider failure fails the record (SQS retries it); the claim is released first.
import type { CreditReversal } from '../domain/clawbacks';
import { centsToMinor } from '../domain/currency';
import type { Referral } from '../domain/models';
import { recordCreditKept, recordCreditReversal } from '../store/clawbacks';
import { toMember } from '../store/members';
import { getItem } from '../store/ops';
import { toReferral } from '../store/referrals';
import { claimCredit, RewardRaceError, releaseCreditClaim, type StoredReward } from '../store/rewards';
import { keys } from '../store/table';
import { CreditHeldError, withCreditLease } from './settlement';
import { log } from '../log';
import { billingProviderFor, type AccountBillingProvider } from '../billing/registry';
import type { CreditReversalOutcome } from '../billing/port';

const CLAIM_SECONDS = 60;


async function freshReferral(accountId: string, id: string): Promise<Referral | null> {
  return toReferral(await getItem(keys.referral(accountId, id)));
}

/**
 * Reversals take the subscription's credit lease whatever the provider: two evaluations of one referral
 * (two events of one refund) may both reverse the same credit, and a provider that decides "consumed" from
 * the credit left (Stripe) would take the other's reversal for spending.
 */
const EVERY_PROVIDER = { combinesCredits: true } as const;

export async function reverseCredits(accountId: string, referralId: string, reversals: CreditReversal[]): Promise<void> {
  let adapter: AccountBillingProvider | null | undefined;
  const provider = async () => (adapter === undefined ? (adapter = await billingProviderFor(accountId)) : adapter);

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
        let outcome: CreditReversalOutcome = 'reversed';
        // Recorded: remove it where it was applied. Not recorded: an attempt that applied it may have died
        // before recording it, so the adapter looks for it on the member's subscription.
        const providerRef = modifierId === undefined ? null : String(modifierId);
        const subscriptionId = providerRef !== null ? (reward.credit_subscription_id ?? member?.subscription_id ?? null) : (member?.subscription_id ?? null);
        if (providerRef !== null || subscriptionId !== null) {
          const p = await provider();
          if (!p && providerRef !== null) throw new Error('no provider settings: the applied credit cannot be removed');
          if (p) outcome = await withCreditLease(EVERY_PROVIDER, accountId, subscriptionId ?? 0, () => p.reverseCredit({ rewardId: reward.id, subscriptionId: subscriptionId ?? 0, amount: centsToMinor(reward.amount, reward.currency), currency: reward.currency, providerRef }));
        }
        if (outcome === 'consumed') {
          await recordCreditKept(accountId, referral, index, reversal);
          log('info', 'refunded credit already billed: it stays', { ...context, provider_ref: providerRef });
        } else {
          await recordCreditReversal(accountId, referral, index, reversal, member !== null);
          log('info', 'credit reversed after a refund', { ...context, provider_ref: providerRef });
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
