// GET /v1/rewards/, GET /v1/payouts/ and the payout summary: one Query per page (plus the count's
// GetItem, in parallel), never a Scan. Counts are exact: counters kept in the transactions that change
// the rewards and payouts (store/ledger.ts, store/payouts.ts).
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DetailError } from '../domain/errors';
import { isCampaignId, isEntityId } from '../domain/ids';
import type { LedgerReward, Payout, PayoutStatus, RewardStatus } from '../domain/lifecycle';
import { db, tableName } from './client';
import { rewardsCounterPrefix, toLedgerReward } from './ledger';
import { readCounter } from './ops';
import { emptyPage, queryPage, type PageQuery, type PageRequest } from './pagination';
import { toPayout } from './payouts';
import { GSI1, GSI2, moneyKeys, moneyListKeys, type CounterName } from './table';

export interface RewardFilters {
  status?: RewardStatus | undefined;
  member?: string | undefined;
  campaign?: string | undefined;
  type?: 'credit' | 'commission' | undefined;
}

/** Where a filter's rows are: the partition (and index) it keys on, and a FilterExpression for the rest. */
export type Source = Omit<PageQuery, 'scope'>;

const on = (field: string, value: string) => ({ expression: '#ff = :fv', names: { '#ff': field }, values: { ':fv': value } });

/** Equality on every given field, ANDed (fields the partition already keys on are left out by the caller). */
function allOf(conditions: Record<string, string | undefined>): PageQuery['filter'] | undefined {
  const parts = Object.entries(conditions).filter((e): e is [string, string] => e[1] !== undefined);
  if (parts.length === 0) return undefined;
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = {};
  const expression = parts
    .map(([field, value], i) => {
      names[`#f${i}`] = field;
      values[`:v${i}`] = value;
      return `#f${i} = :v${i}`;
    })
    .join(' AND ');
  return { expression, names, values };
}

/**
 * The rewards a filter asks for (the list and the export read the same partitions): member or campaign,
 * each with type and status in any combination (400 for member and campaign together: no counter counts
 * them). The narrowest partition (the member's rewards, else the status's, else all) and a FilterExpression
 * for the rest; the count is the combination's own counter.
 */
export function rewardsSource(accountId: string, f: RewardFilters): Source {
  if (f.member !== undefined && f.campaign !== undefined) {
    throw new DetailError(400, 'Filter by member or by campaign, not both (each may be combined with type and status).');
  }
  if (f.member) {
    const filter = allOf({ status: f.status, campaign_id: f.campaign, reward_type: f.type });
    return { index: GSI1, partitionValue: moneyKeys.rewardsByMember(accountId, f.member), ...(filter ? { filter } : {}) };
  }
  const filter = allOf({ campaign_id: f.campaign, reward_type: f.type });
  if (f.status) return { index: GSI2, partitionValue: moneyKeys.rewardsByStatus(accountId, f.status), ...(filter ? { filter } : {}) };
  return { partitionValue: moneyListKeys.rewardCollection(accountId), ...(filter ? { filter } : {}) };
}

/** The counter that holds the exact count of a reward filter (store/ledger.ts keeps one per combination). */
export function rewardsCounter(f: RewardFilters): CounterName {
  const prefix = rewardsCounterPrefix(f.member, f.campaign, f.type);
  return (f.status ? `${prefix}#s#${f.status}` : prefix) as CounterName;
}

/** The payouts a filter asks for; 400 for member and currency together. */
export function payoutsSource(accountId: string, f: PayoutFilters): Source {
  if (f.member !== undefined && f.currency !== undefined)
    throw new DetailError(400, 'Filter by member or by currency, not both (each may be combined with status).');
  if (f.member)
    return {
      index: GSI1,
      partitionValue: moneyKeys.payoutsByMember(accountId, f.member),
      ...(f.status ? { filter: on('status', f.status) } : {}),
    };
  const rest = f.currency ? { filter: on('currency', f.currency) } : {};
  if (f.status) return { index: GSI2, partitionValue: moneyKeys.payoutsByStatus(accountId, f.status), ...rest };
  return { partitionValue: moneyListKeys.payoutCollection(accountId), ...rest };
}

export async function listRewards(accountId: string, page: PageRequest, f: RewardFilters) {
  const source = rewardsSource(accountId, f);
  if (f.member !== undefined && !isEntityId(f.member)) return emptyPage();
  if (f.campaign !== undefined && !isCampaignId(f.campaign)) return emptyPage();
  const scope = `${accountId}|rewards|${f.status ?? ''}|${f.member ?? ''}|${f.campaign ?? ''}|${f.type ?? ''}`;
  const [result, count] = await Promise.all([queryPage({ ...source, scope }, page), readCounter(accountId, rewardsCounter(f))]);
  const items = result.items.map((i) => toLedgerReward(i)).filter((r): r is LedgerReward => r !== null);
  return { ...result, items, count };
}

export interface PayoutFilters {
  status?: PayoutStatus | undefined;
  member?: string | undefined;
  currency?: string | undefined;
}

export async function listPayouts(accountId: string, page: PageRequest, f: PayoutFilters) {
  const source = payoutsSource(accountId, f);
  if (f.member !== undefined && !isEntityId(f.member)) return emptyPage();
  const scope = `${accountId}|payouts|${f.status ?? ''}|${f.member ?? ''}|${f.currency ?? ''}`;
  const prefix = f.member ? `payouts#m#${f.member}` : f.currency ? `payouts#c#${f.currency}` : 'payouts';
  const counter = (f.status ? `${prefix}#s#${f.status}` : prefix) as CounterName;
  const [result, count] = await Promise.all([queryPage({ ...source, scope }, page), readCounter(accountId, counter)]);
  const items = result.items.map((i) => toPayout(i)).filter((p): p is Payout => p !== null);
  return { ...result, items, count };
}

export interface PayoutBatchFilters {
  status?: 'processing' | 'paid' | 'failed' | undefined;
}

/**
 * GET /v1/payout-batches/: the batches, newest first (`pb_` ids are time-ordered), one Query of their
 * partition (a status filter is a FilterExpression on it: batches are few) beside the count's GetItem.
 * The items come back raw; flows/payouts.ts toBatch reads them.
 */
export async function listPayoutBatches(accountId: string, page: PageRequest, f: PayoutBatchFilters) {
  const scope = `${accountId}|payout_batches|${f.status ?? ''}`;
  const counter = (f.status ? `payout_batches#s#${f.status}` : 'payout_batches') as CounterName;
  const [result, count] = await Promise.all([
    queryPage(
      { partitionValue: moneyListKeys.payoutBatchCollection(accountId), scope, ...(f.status ? { filter: on('status', f.status) } : {}) },
      page,
    ),
    readCounter(accountId, counter),
  ]);
  return { ...result, count };
}

/** Totals per status and currency: one Query of the account's `payout_sum#` counters. */
export async function payoutSummary(accountId: string): Promise<Record<'due' | 'open' | 'processing' | 'paid', Record<string, number>>> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': `A#${accountId}`, ':prefix': 'COUNT#payout_sum#' },
      ConsistentRead: true,
    }),
  );
  const summary = { due: {}, open: {}, processing: {}, paid: {} } as Record<'due' | 'open' | 'processing' | 'paid', Record<string, number>>;
  for (const item of out.Items ?? []) {
    const [, , status, currency] = String(item.sk).split('#');
    const n = Number(item.n ?? 0);
    if (status && currency && status in summary && n !== 0) summary[status as keyof typeof summary][currency] = n;
  }
  return summary;
}
