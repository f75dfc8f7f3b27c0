// Writing what refunds take back (shared/domain/clawbacks.ts), inside the referral item like every
// reward, each write conditioned on the reward list it was planned from (as store/rewards.ts does), with
// the referring member's stats changed in the same transaction.
import { newEntityId } from '../domain/ids';
import type { CreditReversal, PlannedClawback } from '../domain/clawbacks';
import { formatCents } from '../domain/money';
import type { Referral, Reward } from '../domain/models';
import { tableName } from './client';
import { ConditionsFailedError, transact, type TransactItem } from './ops';
import { RewardRaceError } from './rewards';
import { keys } from './table';

function memberStats(accountId: string, memberId: string, field: 'credit_earned' | 'commission_earned', delta: number): TransactItem {
  return {
    Update: {
      TableName: tableName(),
      Key: keys.member(accountId, memberId),
      UpdateExpression: `ADD ${field} :d`,
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':d': delta },
    },
  };
}

const clawbackNote = (c: PlannedClawback, percent: string) => `Clawback of ${percent} of the reward: payment ${c.payment_id} refunded (refund ${c.refund_id}).`;

/** Appends commission clawbacks and lowers the member's commission_earned, in one transaction. */
export async function recordClawbacks(accountId: string, referral: Referral, planned: PlannedClawback[], memberExists: boolean): Promise<Referral> {
  if (planned.length === 0) return referral;
  const now = Math.floor(Date.now() / 1000);
  const added: Reward[] = planned.map((c) => {
    const original = referral.rewards.find((r) => r.id === c.reverses);
    const percent = original && original.amount > 0 ? `${((-c.amount / original.amount) * 100).toFixed(2)}%` : formatCents(-c.amount);
    return { id: newEntityId(), type: c.type, amount: c.amount, currency: c.currency, created_at: now, payment_id: c.payment_id, reverses: c.reverses, refund_id: c.refund_id, note: clawbackNote(c, percent) };
  });
  const total = added.reduce((a, r) => a + r.amount, 0);
  const items: TransactItem[] = [
    {
      Update: {
        TableName: tableName(),
        Key: keys.referral(accountId, referral.id),
        UpdateExpression: 'SET #rw = list_append(if_not_exists(#rw, :empty), :new)',
        ConditionExpression: 'attribute_exists(pk) AND size(#rw) = :n',
        ExpressionAttributeNames: { '#rw': 'rewards' },
        ExpressionAttributeValues: { ':empty': [], ':new': added, ':n': referral.rewards.length },
      },
    },
  ];
  if (memberExists) items.push(memberStats(accountId, referral.member_id, 'commission_earned', total));
  try {
    await transact(items);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new RewardRaceError();
    throw err;
  }
  return { ...referral, rewards: [...referral.rewards, ...added] };
}

/**
 * Marks credit reward `index` reversed (its modifier is deleted, or it was never applied) and appends a
 * clawback of the whole credit; lowers the member's credit_earned. One transaction; the appended item
 * is written at index `n` (the list's length), so no two paths of the update overlap.
 */
export async function recordCreditReversal(accountId: string, referral: Referral, index: number, reversal: CreditReversal, memberExists: boolean): Promise<void> {
  const reward = referral.rewards[index] as Reward;
  const now = Math.floor(Date.now() / 1000);
  const n = referral.rewards.length;
  const clawback: Reward = {
    id: newEntityId(),
    type: 'credit',
    amount: -reward.amount,
    currency: reward.currency,
    created_at: now,
    payment_id: reward.payment_id,
    reverses: reward.id,
    refund_id: reversal.refund_id,
    note: `Credit reversed: payment ${reward.payment_id} refunded (refund ${reversal.refund_id}) before the credit was billed.`,
  };
  const items: TransactItem[] = [
    {
      Update: {
        TableName: tableName(),
        Key: keys.referral(accountId, referral.id),
        UpdateExpression: `SET #rw[${index}].reversed_at = :now, #rw[${index}].refund_id = :rf, #rw[${n}] = :claw REMOVE #rw[${index}].claim_until`,
        ConditionExpression: `size(#rw) = :n AND #rw[${index}].#id = :rid AND attribute_not_exists(#rw[${index}].reversed_at) AND attribute_not_exists(#rw[${index}].#note)`,
        ExpressionAttributeNames: { '#rw': 'rewards', '#id': 'id', '#note': 'note' },
        ExpressionAttributeValues: { ':now': now, ':rf': reversal.refund_id, ':claw': clawback, ':n': n, ':rid': reward.id },
      },
    },
  ];
  if (memberExists) items.push(memberStats(accountId, referral.member_id, 'credit_earned', -reward.amount));
  try {
    await transact(items);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new RewardRaceError();
    throw err;
  }
}

/** A credit the provider billed before the refund: it stays, and the reward says so (once). */
export async function recordCreditKept(accountId: string, referral: Referral, index: number, reversal: CreditReversal): Promise<void> {
  const reward = referral.rewards[index] as Reward;
  try {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.referral(accountId, referral.id),
          UpdateExpression: `SET #rw[${index}].#note = :note, #rw[${index}].refund_id = :rf REMOVE #rw[${index}].claim_until`,
          ConditionExpression: `#rw[${index}].#id = :rid AND attribute_not_exists(#rw[${index}].reversed_at) AND attribute_not_exists(#rw[${index}].#note)`,
          ExpressionAttributeNames: { '#rw': 'rewards', '#id': 'id', '#note': 'note' },
          ExpressionAttributeValues: {
            ':note': `Payment ${reward.payment_id} was refunded (refund ${reversal.refund_id}) after this credit was billed on the member's subscription; the credit stays.`,
            ':rf': reversal.refund_id,
            ':rid': reward.id,
          },
        },
      },
    ]);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new RewardRaceError();
    throw err;
  }
}
