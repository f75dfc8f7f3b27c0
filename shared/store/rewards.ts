// Rewards live inside their referral item (a referral reads with its rewards in one GetItem). Writing
// them is optimistic: the referral update is conditioned on the number of rewards it had when the
// payments were read, so two workers evaluating the same referral at once cannot both add a reward for
// the same payment; the loser re-reads and finds the reward already there. The referring member's
// stats change in the same transaction.
import { newEntityId } from '../domain/ids';
import type { ProviderId, Referral, Reward } from '../domain/models';
import { newReward, type PlannedReward } from '../domain/rewards';
import { ledgerFromReferral, MoneyTxn, toLedgerReward } from './ledger';
import { getItem } from './ops';
import { rewardView } from '../domain/views';
import { tableName } from './client';
import { eventItem } from './outbox';
import { ConditionsFailedError, queryAll, RaceLostError, transact, type TransactItem } from './ops';
import { PROVIDER_REF_ATTRIBUTE, toReferral } from './referrals';
import { GSI1, keys } from './table';
import { log } from '../log';

/** A reward as stored: the public fields plus where its credit was applied at the provider. */
export interface StoredReward extends Reward {
  /**
   * Credit only: where the provider holds the applied credit (the port's `providerRef`). Stored under the
   * attribute's first name (store/referrals.ts PROVIDER_REF_ATTRIBUTE).
   */
  provider_ref?: string;
  /** Credit only: the subscription the credit was applied to. */
  credit_subscription_id?: ProviderId;
  /** Credit only: unix seconds until which one worker holds the right to apply it. */
  claim_until?: number;
}

export class RewardRaceError extends RaceLostError {}

/** DynamoDB's limit on the items of one TransactWriteItems. */
export const MAX_TRANSACT_ITEMS = 100;

/**
 * Rewards written per transaction. Each new reward takes up to 3 items (its ledger item, its approval
 * schedule, its `reward.created` event) and every transaction adds the referral, the member, the report
 * buckets and up to 8 list counters: 20 rewards stay well under MAX_TRANSACT_ITEMS (docs/rewards.md).
 */
export const REWARDS_PER_TRANSACTION = 20;

/**
 * Appends `planned` rewards to the referral and sets `rewards_completed`, adding their amounts to the
 * member's stats. Nothing is written when there is nothing new.
 *
 * Written in chunks of REWARDS_PER_TRANSACTION, oldest payment first, each chunk one transaction with
 * everything it counts (ledger items, events, the member's stats, the report buckets and the list
 * counters), so every committed chunk is whole and consistent. Each chunk is conditioned on the size of
 * the reward list it extends: a replay (the same message again, or a retry after a crash between two
 * chunks) re-plans from the list that holds the committed chunks and so only writes the rest, and a
 * concurrent evaluation loses the condition (RewardRaceError) instead of duplicating a reward.
 * `rewards_completed` is set with the last chunk only. `onChunk` hears of each committed chunk.
 */
export async function recordRewards(
  accountId: string,
  referral: Referral,
  planned: PlannedReward[],
  completed: boolean,
  memberExists: boolean,
  onChunk?: (committed: PlannedReward[]) => void,
): Promise<Referral> {
  if (planned.length === 0 && completed === referral.rewards_completed) return referral;
  let current = referral;
  const count = Math.max(1, Math.ceil(planned.length / REWARDS_PER_TRANSACTION));
  for (let i = 0; i < count; i++) {
    const chunk = planned.slice(i * REWARDS_PER_TRANSACTION, (i + 1) * REWARDS_PER_TRANSACTION);
    const last = i === count - 1;
    current = await recordChunk(accountId, current, chunk, last ? completed : current.rewards_completed, memberExists);
    onChunk?.(chunk);
  }
  return current;
}

/** One chunk of recordRewards: one transaction. */
async function recordChunk(
  accountId: string,
  referral: Referral,
  planned: PlannedReward[],
  completed: boolean,
  memberExists: boolean,
): Promise<Referral> {
  const now = Math.floor(Date.now() / 1000);
  const added: StoredReward[] = planned.map((p) => newReward(p, newEntityId(), now, referral));
  const after: Referral = { ...referral, rewards: [...referral.rewards, ...added] };
  const txn = new MoneyTxn(accountId);
  if (!memberExists) txn.memberGone(referral.member_id);
  // Exactly-once: the write only lands on the reward list it was computed from (size condition).
  txn.referralAppend(referral.id, referral.rewards.length, added, { sets: ['rewards_completed = :done'], values: { ':done': completed } });
  addNewRewards(txn, after, referral.rewards.length, added.length);
  await commitRewards(txn);
  return { ...after, rewards_completed: completed };
}

/**
 * The ledger items and `reward.created` events of the `count` rewards at `from` in `after` (the referral
 * as it will be once they are appended; the append itself is the caller's referralAppend).
 */
export function addNewRewards(txn: MoneyTxn, after: Referral, from: number, count: number): void {
  for (let i = from; i < from + count; i++) {
    const r = after.rewards[i] as Reward;
    txn.addReward(ledgerFromReferral(after, i));
    // The Reward object of the API, with the referral and member it belongs to.
    const data = { ...rewardView(r), referral_id: after.id, member_id: after.member_id };
    txn.push(eventItem(txn.accountId, 'reward.created', `${after.id}:${r.payment_id}`, data), `event:${r.id}`);
  }
}

/** Commits a reward transaction: a condition that failed is a race lost (RewardRaceError: re-read and re-plan). */
export async function commitRewards(txn: MoneyTxn | TransactItem[]): Promise<void> {
  const items = Array.isArray(txn) ? txn : txn.build();
  // One item is kept free for the Idempotency-Key marker that transact() adds inside an API request.
  if (items.length > MAX_TRANSACT_ITEMS - 1)
    throw new Error(`a reward transaction needs ${items.length} items (at most ${MAX_TRANSACT_ITEMS})`);
  try {
    await transact(items);
  } catch (err) {
    if (err instanceof ConditionsFailedError) throw new RewardRaceError();
    throw err;
  }
}

/** The non-null fields of `o` (a stored reward carries no null lifecycle fields). */
export function defined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== null && v !== undefined)) as Partial<T>;
}

function rewardPath(index: number) {
  return `#rw[${index}]`;
}

/**
 * One conditional update of reward `index` of a referral (the reward is addressed by list index, and
 * the condition always checks that the index still holds `rewardId`). False when a condition failed.
 */
async function updateReward(
  accountId: string,
  referralId: string,
  index: number,
  rewardId: string,
  update: (r: string) => string,
  condition: (r: string) => string,
  values: Record<string, unknown> = {},
): Promise<boolean> {
  const r = rewardPath(index);
  try {
    await transact([
      {
        Update: {
          TableName: tableName(),
          Key: keys.referral(accountId, referralId),
          UpdateExpression: update(r),
          ConditionExpression: `${r}.#id = :rid${condition(r) ? ` AND ${condition(r)}` : ''}`,
          ExpressionAttributeNames: { '#rw': 'rewards', '#id': 'id', ...(condition(r).includes('#st') ? { '#st': 'status' } : {}) },
          ExpressionAttributeValues: { ':rid': rewardId, ...values },
        },
      },
    ]);
    return true;
  } catch (err) {
    if (err instanceof ConditionsFailedError) return false;
    throw err;
  }
}

/** Takes the right to apply credit reward `index` for `seconds`; false if it is applied or held by another worker. */
export async function claimCredit(
  accountId: string,
  referralId: string,
  index: number,
  rewardId: string,
  seconds: number,
): Promise<boolean> {
  const now = Math.floor(Date.now() / 1000);
  return updateReward(
    accountId,
    referralId,
    index,
    rewardId,
    (r) => `SET ${r}.claim_until = :until`,
    // A reversed credit (its payment refunded) is never applied.
    // A voided one neither (an operator voided it before it was applied).
    (r) =>
      `attribute_not_exists(${r}.${PROVIDER_REF_ATTRIBUTE}) AND attribute_not_exists(${r}.reversed_at) AND (attribute_not_exists(${r}.claim_until) OR ${r}.claim_until < :now) AND (attribute_not_exists(${r}.#st) OR ${r}.#st <> :voided)`,
    { ':until': now + seconds, ':now': now, ':voided': 'voided' },
  );
}

/** Records where a credit was applied and releases the claim. */
export async function recordCreditApplied(
  accountId: string,
  referralId: string,
  index: number,
  rewardId: string,
  providerRef: string,
  subscriptionId: ProviderId,
): Promise<void> {
  // The credit reached the provider: the reward is `applied` (ledger and referral copy, one transaction).
  const ledger = toLedgerReward(await getItem(keys.reward(accountId, rewardId)));
  const txn = new MoneyTxn(accountId);
  if (ledger?.status === 'pending') txn.moveReward(ledger, { status: 'applied' });
  txn.setEmbedded(referralId, index, rewardId, { [PROVIDER_REF_ATTRIBUTE]: providerRef, credit_subscription_id: subscriptionId }, [
    'claim_until',
  ]);
  let done = true;
  try {
    await transact(txn.build());
  } catch (err) {
    if (!(err instanceof ConditionsFailedError)) throw err;
    done = false;
  }
  // The referral was deleted meanwhile: the credit stays at the provider, found again by the reward id.
  if (!done) log('warn', 'credit applied but its referral changed', { referral_id: referralId, provider_ref: providerRef });
}

/** Gives a claim back early (after a failed provider call) so a retry need not wait for it to expire. */
export async function releaseCreditClaim(accountId: string, referralId: string, index: number, rewardId: string): Promise<void> {
  await updateReward(
    accountId,
    referralId,
    index,
    rewardId,
    (r) => `REMOVE ${r}.claim_until`,
    (r) => `attribute_not_exists(${r}.${PROVIDER_REF_ATTRIBUTE})`,
  );
}

/** Every referral made by a member (GSI1, eventually consistent), for applying pending credits. */
export async function referralsOfMember(accountId: string, memberId: string): Promise<Referral[]> {
  const items = await queryAll({ partitionValue: keys.referralsByMember(accountId, memberId), index: GSI1 });
  return items.map((item) => toReferral(item)).filter((r): r is Referral => r !== null);
}
