// Settlement, step 4 of 4 (docs/rewards.md "How an evaluation runs"): the provider effects, through the
// port, after the ledger transaction. Each has its own small idempotent record write.
//
// Credit application on the referrer's attached subscription (Classic: a one-off negative modifier),
// exactly once:
// 1. a worker claims the reward for 60 s (conditional update; a concurrent worker skips it);
// 2. the adapter looks for the credit by the reward id (a previous attempt may have applied it and
//    crashed before recording it) and applies it only if there is none;
// 3. it records the provider's reference on the reward. A provider failure releases the claim and fails the
//    record, so SQS retries it. Without an attached subscription (or with one in another currency, or
//    deleted) the credit waits; attaching a subscription to the member queues apply-member-credits.
//
// Credit reversals, after a refund of the whole payment that earned the credit:
// - a credit not applied yet: its claim is taken (so no worker applies it meanwhile), a credit left by an
//   attempt that died before recording it is looked for on the member's subscription (by the reward id)
//   and removed, then the reversal is recorded;
// - an applied credit: the adapter removes it (Classic: deletes the modifier; "not found" = removed by an
//   earlier attempt), then the reversal is recorded. 'consumed' (Classic error 124, already billed): the
//   credit stays, noted.
// A provider failure fails the record (SQS retries it); the claim is released first.
import type { CreditReversal } from '../../domain/clawbacks';
import { centsToMinor } from '../../domain/currency';
import type { ProviderId, Referral } from '../../domain/models';
import { CreditMustWaitError, type CreditReversalOutcome } from '../../billing/port';
import { billingProviderFor, type AccountBillingProvider } from '../../billing/adapters';
import { recordCreditKept, recordCreditReversal } from '../../store/clawbacks';
import { acquireCreditLease, releaseCreditLease } from '../../store/credit-leases';
import { toMember } from '../../store/members';
import { getItem, RaceLostError } from '../../store/ops';
import { toReferral } from '../../store/referrals';
import { claimCredit, recordCreditApplied, RewardRaceError, releaseCreditClaim, type StoredReward } from '../../store/rewards';
import { getSubscription } from '../../store/subscriptions';
import { keys } from '../../store/table';
import { log } from '../../log';
import { countMetric } from '../../metrics';
import { creditsToApply } from './plan';

const CLAIM_SECONDS = 60;

/** Another worker holds the credit's claim: retry the record later (the queue's visibility timeout, 180 s, outlasts the claim). */
export class CreditHeldError extends RaceLostError {}

async function freshReferral(accountId: string, id: string): Promise<Referral | null> {
  return toReferral(await getItem(keys.referral(accountId, id)));
}

/**
 * Reversals take the subscription's credit lease whatever the provider: two evaluations of one referral
 * (two events of one refund) may both reverse the same credit, and a provider that decides "consumed" from
 * the credit left (Stripe) would take the other's reversal for spending.
 */
const EVERY_PROVIDER = { combinesCredits: true } as const;

/**
 * `recorded`: the referral as the evaluation just wrote it, used for the first attempt instead of reading it
 * again (a stale copy only makes the reversal's conditioned write fail and the next attempt read afresh).
 * The member is read each time: where a credit may sit depends on the subscription attached now.
 */
export async function reverseCredits(
  accountId: string,
  referralId: string,
  reversals: CreditReversal[],
  recorded?: Referral,
): Promise<void> {
  let snapshot = recorded;
  let adapter: AccountBillingProvider | null | undefined;
  const provider = async () => (adapter === undefined ? (adapter = await billingProviderFor(accountId)) : adapter);

  for (const reversal of reversals) {
    for (let attempt = 1; ; attempt++) {
      const referral = snapshot ?? (await freshReferral(accountId, referralId));
      snapshot = undefined;
      if (!referral) return;
      const index = referral.rewards.findIndex((r) => r.id === reversal.reward_id);
      const reward = referral.rewards[index] as StoredReward | undefined;
      if (!reward || reward.reversed_at !== undefined || reward.note !== undefined) break;
      const context = { account_id: accountId, referral_id: referralId, reward_id: reward.id, refund_id: reversal.refund_id };
      const member = toMember(await getItem(keys.member(accountId, referral.member_id)));

      const recordedRef = reward.provider_ref;
      let claimed = false;
      if (recordedRef === undefined) {
        claimed = await claimCredit(accountId, referral.id, index, reward.id, CLAIM_SECONDS);
        if (!claimed) {
          const now = await freshReferral(accountId, referralId);
          const current = now?.rewards[index] as StoredReward | undefined;
          if (current?.id === reward.id && current.provider_ref !== undefined && attempt < 3) continue; // applied meanwhile: delete it
          if (current?.id !== reward.id || current.reversed_at !== undefined) break;
          throw new CreditHeldError(`credit ${reward.id} is being applied by another worker`);
        }
      }
      try {
        let outcome: CreditReversalOutcome = 'reversed';
        // Recorded: remove it where it was applied. Not recorded: an attempt that applied it may have died
        // before recording it, so the adapter looks for it on the member's subscription.
        const providerRef = recordedRef ?? null;
        const subscriptionId =
          providerRef !== null ? (reward.credit_subscription_id ?? member?.subscription_id ?? null) : (member?.subscription_id ?? null);
        if (providerRef !== null || subscriptionId !== null) {
          const p = await provider();
          if (!p && providerRef !== null) throw new Error('no provider settings: the applied credit cannot be removed');
          if (p)
            outcome = await withCreditLease(EVERY_PROVIDER, accountId, subscriptionId ?? 0, () =>
              p.reverseCredit({
                rewardId: reward.id,
                subscriptionId: subscriptionId ?? 0,
                amount: centsToMinor(reward.amount, reward.currency),
                currency: reward.currency,
                providerRef,
              }),
            );
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

/** Applies the referral's pending credits (plan.ts creditsToApply) on the member's attached subscription. */
export async function applyPendingCredits(accountId: string, referral: Referral): Promise<void> {
  const pending = creditsToApply(referral);
  if (pending.length === 0) return;
  const member = toMember(await getItem(keys.member(accountId, referral.member_id)));
  const context = { account_id: accountId, referral_id: referral.id, member_id: referral.member_id };
  if (!member) return log('warn', 'credit not applied: the referring member was deleted', context);
  if (member.subscription_id === null) return log('info', 'credit waits for a subscription attached to the member', context);
  const target = await getSubscription(accountId, member.subscription_id);
  if (!target || target.status === 'deleted') return log('info', 'credit waits: the member subscription is missing or deleted', context);
  const provider = await billingProviderFor(accountId);
  if (!provider) return log('warn', 'credit waits: no provider settings', context);

  for (const { reward, index } of pending) {
    if (reward.currency !== target.currency) {
      log('warn', 'credit waits: reward and member subscription currencies differ', {
        ...context,
        reward_id: reward.id,
        reward_currency: reward.currency,
        subscription_currency: target.currency,
      });
      continue;
    }
    if (!(await claimCredit(accountId, referral.id, index, reward.id, CLAIM_SECONDS))) {
      // Applied meanwhile: done. Held by another worker (or by an attempt of ours whose claim write
      // landed but reported failure): fail this record so SQS retries it after the claim has expired
      // or been used, instead of acknowledging a credit nobody may be applying any more.
      const fresh = toReferral(await getItem(keys.referral(accountId, referral.id)));
      const current = (fresh?.rewards as StoredReward[] | undefined)?.[index];
      if (!current || current.id !== reward.id || current.provider_ref !== undefined) continue;
      throw new CreditHeldError(`credit ${reward.id} is being applied by another worker`);
    }
    try {
      const applied = await withCreditLease(provider, accountId, target.id, () =>
        provider.applyCredit({
          rewardId: reward.id,
          subscriptionId: target.id,
          amount: centsToMinor(reward.amount, reward.currency),
          currency: reward.currency,
        }),
      );
      await recordCreditApplied(accountId, referral.id, index, reward.id, applied.providerRef, target.id);
      // Once per credit: the claim keeps a second worker away, and once recorded it is never pending again.
      countMetric('CreditsApplied');
      log('info', 'credit applied', {
        ...context,
        reward_id: reward.id,
        subscription_id: target.id,
        provider_ref: applied.providerRef,
        reused: applied.reused,
        ...(applied.rewardIds ? { combined_rewards: applied.rewardIds.length } : {}),
      });
    } catch (err) {
      await releaseCreditClaim(accountId, referral.id, index, reward.id).catch(() => undefined);
      // The provider cannot take it in this period (Paddle Billing: the subscription carries a discount
      // Refloop did not create, and Refloop never replaces one). It stays pending, nothing is lost: every
      // evaluation (each sync run evaluates referred subscriptions) tries again.
      if (err instanceof CreditMustWaitError) {
        log('info', 'credit waits: the subscription carries a discount Refloop did not create', {
          ...context,
          reward_id: reward.id,
          subscription_id: target.id,
          blocked_until_ms: err.blockedUntilMs,
        });
        continue;
      }
      throw err;
    }
  }
}

/**
 * Runs one provider-side credit change under the subscription's lease when the provider combines credits
 * (store/credit-leases.ts); held by another worker: the record fails and SQS retries it shortly.
 */
export async function withCreditLease<T>(
  provider: Pick<AccountBillingProvider, 'combinesCredits'>,
  accountId: string,
  subscriptionId: ProviderId,
  change: () => Promise<T>,
): Promise<T> {
  if (!provider.combinesCredits) return change();
  const token = await acquireCreditLease(accountId, subscriptionId);
  if (token === null) throw new CreditHeldError(`another credit change is under way on subscription ${String(subscriptionId)}`);
  try {
    return await change();
  } finally {
    await releaseCreditLease(accountId, subscriptionId, token).catch(() => undefined);
  }
}
