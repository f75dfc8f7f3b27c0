// Queues the member emails a referral's state calls for, from the reward fan-out worker after each
// evaluation (so the conversion endpoint keeps its single SQS send): the conversion notice once the
// referral is converted, and one reward notice per earned reward. Flags on the referral and its
// rewards record what was queued; they are set after the send, so a crash in between queues the same
// message again on the next evaluation, and the email worker's marker keeps it to one email.
//
// Notices for conversions or rewards older than NOTICE_WINDOW_DAYS are not queued: deploying this
// feature (or a referral's first re-evaluation in a long time) must not email members about history.
import type { Referral } from '../domain/models';
import { publishAll } from '../queue/publish';
import type { MemberEmailMessage } from '../queue/queues';
import { markEmailsQueued } from '../store/emails';

export const NOTICE_WINDOW_DAYS = 7;

type FlaggedReward = Referral['rewards'][number] & { email_queued?: boolean };
type Flagged = Referral & { conversion_email_queued?: boolean };

export async function queueMemberEmails(accountId: string, referral: Referral, now = Math.floor(Date.now() / 1000)): Promise<number> {
  const r = referral as Flagged;
  const since = now - NOTICE_WINDOW_DAYS * 86400;
  const base = { kind: 'member-email' as const, account_id: accountId, referral_id: r.id, member_id: r.member_id };
  const messages: MemberEmailMessage[] = [];
  const conversion = r.converted_at !== null && r.converted_at >= since && r.conversion_email_queued !== true;
  if (conversion) messages.push({ ...base, template: 'conversion' });
  const rewards = (r.rewards as FlaggedReward[])
    .map((reward, index) => ({ reward, index }))
    .filter(
      ({ reward }) => reward.amount > 0 && reward.reversed_at === undefined && reward.email_queued !== true && reward.created_at >= since,
    );
  for (const { reward } of rewards) messages.push({ ...base, template: 'reward', reward_id: reward.id });
  if (messages.length === 0) return 0;
  await publishAll('member-emails', messages);
  await markEmailsQueued(
    accountId,
    r.id,
    conversion,
    rewards.map(({ reward, index }) => ({ index, id: reward.id })),
  );
  return messages.length;
}
