// GET /v1/rewards/, GET /v1/payouts/ and the payout summary: one Query per page (plus the count's
// GetItem, in parallel), never a Scan. Counts are exact: counters kept in the transactions that change
// the rewards and payouts (store/ledger.ts, store/payouts.ts).
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { DetailError } from '../domain/errors';
import { isCampaignId, isEntityId } from '../domain/ids';
import type { LedgerReward, Payout, PayoutStatus, RewardStatus } from '../domain/lifecycle';
import { db, tableName } from './client';
import { toLedgerReward } from './ledger';
import { readCounter } from './ops';
import { emptyPage, queryPage, type PageQuery, type PageRequest } from './pagination';
import { toPayout } from './payouts';
import { GSI1, GSI2, keys, type CounterName } from './table';

export interface RewardFilters {
  status?: RewardStatus | undefined;
  member?: string | undefined;
  campaign?: string | undefined;
  type?: 'credit' | 'commission' | undefined;
}

/** Where a filter's rows are: the partition (and index) it keys on, and a FilterExpression for the rest. */
export type Source = Omit<PageQuery, 'scope'>;

const on = (field: string, value: string) => ({ expression: '#ff = :fv', names: { '#ff': field }, values: { ':fv': value } });

/** The rewards a filter asks for (the list and the export read the same partitions); 400 for two of member/campaign/type. */
export function rewardsSource(accountId: string, f: RewardFilters): Source {
  if ([f.member, f.campaign, f.type].filter((x) => x !== undefined).length > 1) {
    throw new DetailError(400, 'Filter by at most one of member, campaign and type (each may be combined with status).');
  }
  if (f.member) return { index: GSI1, partitionValue: keys.rewardsByMember(accountId, f.member), ...(f.status ? { filter: on('status', f.status) } : {}) };
  const rest = f.campaign ? { filter: on('campaign_id', f.campaign) } : f.type ? { filter: on('reward_type', f.type) } : {};
  if (f.status) return { index: GSI2, partitionValue: keys.rewardsByStatus(accountId, f.status), ...rest };
  return { partitionValue: keys.rewardCollection(accountId), ...rest };
}

/** The payouts a filter asks for; 400 for member and currency together. */
export function payoutsSource(accountId: string, f: PayoutFilters): Source {
  if (f.member !== undefined && f.currency !== undefined) throw new DetailError(400, 'Filter by member or by currency, not both (each may be combined with status).');
  if (f.member) return { index: GSI1, partitionValue: keys.payoutsByMember(accountId, f.member), ...(f.status ? { filter: on('status', f.status) } : {}) };
  const rest = f.currency ? { filter: on('currency', f.currency) } : {};
  if (f.status) return { index: GSI2, partitionValue: keys.payoutsByStatus(accountId, f.status), ...rest };
  return { partitionValue: keys.payoutCollection(accountId), ...rest };
}

export async function listRewards(accountId: string, page: PageRequest, f: RewardFilters) {
  const source = rewardsSource(accountId, f);
  if (f.member !== undefined && !isEntityId(f.member)) return emptyPage();
  if (f.campaign !== undefined && !isCampaignId(f.campaign)) return emptyPage();
  const scope = `${accountId}|rewards|${f.status ?? ''}|${f.member ?? ''}|${f.campaign ?? ''}|${f.type ?? ''}`;
  const prefix = f.member ? `rewards#m#${f.member}` : f.campaign ? `rewards#c#${f.campaign}` : f.type ? `rewards#t#${f.type}` : 'rewards';
  const counter = (f.status ? `${prefix}#s#${f.status}` : prefix) as CounterName;
  const [result, count] = await Promise.all([queryPage({ ...source, scope }, page), readCounter(accountId, counter)]);
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

/** Totals per status and currency: one Query of the account's `payout_sum#` counters. */
export async function payoutSummary(accountId: string): Promise<Record<'due' | 'open' | 'processing' | 'paid', Record<string, number>>> {
  const out = await db().send(
    new QueryCommand({
      TableName: tableName(),
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':pk': keys.counter(accountId, 'payouts').pk, ':prefix': 'COUNT#payout_sum#' },
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
