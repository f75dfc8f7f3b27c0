// The reward fan-out worker's logic: settling a converted referral, in four steps (docs/rewards.md "How an
// evaluation runs"), each in its own file under shared/flows/settlement/:
// 1. load.ts: the referral, its subscription's payments and refunds, and the referring member, read once;
// 2. plan.ts: pure: the new rewards, the commission clawbacks and credit reversals its refunds call for, the
//    report deltas of payments recorded before the conversion;
// 3. record.ts: all of it in one ledger transaction (exactly one reward per (referral, payment): the write
//    is conditioned on the reward list the plan was made from, so a concurrent evaluation makes it fail and
//    this one starts again from a fresh load, and a replay plans nothing new; a plan too large for one
//    transaction is written in chunks, each whole);
// 4. act.ts: the provider effects through the port, each with its own small idempotent record write:
//    credits reversed after refunds, credits applied to the referrer's attached subscription.
// Between 3 and 4, commissions whose hold is already over (a hold of 0 days) are approved into the member's
// payout, and the member emails this state calls for are queued (once each; see shared/email/enqueue.ts).
import { queueMemberEmails } from '../email/enqueue';
import { newEntityId } from '../domain/ids';
import { getItem, withRetries } from '../store/ops';
import { toReferral } from '../store/referrals';
import { referralsOfMember, RewardRaceError } from '../store/rewards';
import { keys } from '../store/table';
import { applyPendingCredits, reverseCredits } from './settlement/act';
import { loadSettlement } from './settlement/load';
import { creditsToApply, isDueNow, planSettlement } from './settlement/plan';
import { approveDueNow, recordSettlement } from './settlement/record';

export { applyPendingCredits, CreditHeldError, withCreditLease } from './settlement/act';

export async function evaluateReferral(accountId: string, referralId: string): Promise<void> {
  const settled = await withRetries(
    async () => {
      const loaded = await loadSettlement(accountId, referralId);
      if (!loaded) return null; // deleted or not converted: nothing to do
      const plan = planSettlement(loaded, { now: Math.floor(Date.now() / 1000), newId: newEntityId });
      return { loaded, ...(await recordSettlement(loaded, plan)) };
    },
    (err) => err instanceof RewardRaceError,
    8,
  );
  if (!settled) return;
  let referral = settled.referral;
  if (settled.reversals.length > 0) {
    await reverseCredits(accountId, referralId, settled.reversals, referral);
    referral = toReferral(await getItem(keys.referral(accountId, referralId))) ?? referral;
  }
  // Commissions whose hold is over already (a hold of 0 days) are approved now, not at the next hourly run.
  const now = Math.floor(Date.now() / 1000);
  if (referral.rewards.some((r) => isDueNow(r, now))) await approveDueNow(accountId, referralId, now, referral);
  // The conversion and reward notices this state calls for (each queued once; see shared/email/enqueue.ts).
  await queueMemberEmails(accountId, referral);
  // The member is read again there: a subscription attached since the load (whose apply-member-credits may
  // have run before this reward was recorded) must receive the credit now.
  await applyPendingCredits(accountId, referral);
}

/** A subscription was attached to the member: apply the credits that were waiting for one. */
export async function applyMemberCredits(accountId: string, memberId: string): Promise<void> {
  for (const referral of await referralsOfMember(accountId, memberId)) {
    if (creditsToApply(referral).length === 0) continue;
    // The index read is eventually consistent: re-read the referral before acting on it.
    const fresh = toReferral(await getItem(keys.referral(accountId, referral.id)));
    if (fresh) await applyPendingCredits(accountId, fresh);
  }
}
