// SQS consumer of `rewards`: evaluates a converted referral's rewards and applies credits at the provider;
// creates the Paddle coupon of a referral in a double-sided campaign.
import { createReferralCoupon } from '../../shared/flows/coupons';
import { approveDue } from '../../shared/flows/lifecycle';
import { applyMemberCredits, evaluateReferral } from '../../shared/flows/settlement';
import type { RewardMessage } from '../../shared/queue/queues';
import { PoisonMessageError, sqsWorker } from '../../shared/queue/worker';

export const handler = sqsWorker<RewardMessage>('reward-fanout', async (message) => {
  switch (message.kind) {
    case 'evaluate-referral':
      return evaluateReferral(message.account_id, message.referral_id);
    case 'apply-member-credits':
      return applyMemberCredits(message.account_id, message.member_id);
    case 'approve-due': {
      // A reward that fails is logged and tried again by the next hourly run.
      await approveDue(message.account_id);
      return;
    }
    case 'create-coupon':
      await createReferralCoupon(message.account_id, message.referral_id);
      return;
    default:
      throw new PoisonMessageError(`Unknown message kind ${String((message as { kind?: unknown }).kind)}`);
  }
});
