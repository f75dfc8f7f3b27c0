// CSV exports (docs/design/money.md "Exports"): GET /v1/exports/{members|referrals|rewards|payouts|
// payout-batches|subscriptions}.csv with the list's filters. Paged, not held: each response carries at most `page_size`
// rows (default and maximum 10,000) read by a few Queries that follow LastEvaluatedKey, and a `Link:
// <…>; rel="next"` header while rows remain. A 100,000-row export is ten requests of bounded time and
// memory; none comes near API Gateway's 30 s or Lambda's 6 MB response limit.
//
// Money is a decimal string beside its currency; times are ISO 8601 UTC; newest first, like the lists.
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { createHash } from 'node:crypto';
import { NotFoundError, ValidationError } from '../domain/errors';
import { isCampaignId, isEntityId } from '../domain/ids';
import type { LedgerReward, Payout } from '../domain/lifecycle';
import type { Member, Referral, Subscription } from '../domain/models';
import { formatCents } from '../domain/money';
import { safeCsvField } from '../domain/payout-files';
import { db, tableName } from '../store/client';
import { toLedgerReward } from '../store/ledger';
import { toMember } from '../store/members';
import { toPayout } from '../store/payouts';
import { toBatch, type PayoutBatch } from './payouts';
import { payoutsSource, rewardsSource, type PayoutFilters, type RewardFilters, type Source as ListSource } from '../store/money-lists';
import { toReferral } from '../store/referrals';
import { toSubscription } from '../store/subscriptions';
import { GSI1, GSI2, keys, listKeys, moneyListKeys } from '../store/table';

export const EXPORTS = ['members', 'referrals', 'rewards', 'payouts', 'payout-batches', 'subscriptions'] as const;
export type ExportKind = (typeof EXPORTS)[number];
export const EXPORT_PAGE_MAX = 10_000;

const iso = (seconds: number | null | undefined) =>
  seconds === null || seconds === undefined ? '' : new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

interface Source<T> {
  query: ListSource;
  parse: (item: Record<string, unknown>) => T | null;
  header: string[];
  row: (t: T) => (string | number | null)[];
}

const sk = (index?: string) => (index === GSI1 ? 'gsi1sk' : index === GSI2 ? 'gsi2sk' : 'sk');

/** Where a kind's rows are, given the list filters (the same partitions as the lists). */
function sourceOf(accountId: string, kind: ExportKind, f: Record<string, string | undefined>): Source<unknown> {
  switch (kind) {
    case 'members':
      if (f.campaign !== undefined && !isCampaignId(f.campaign)) throw new ValidationError({ campaign: ['Not a campaign id.'] });
      return {
        query: f.campaign
          ? { index: GSI1, partitionValue: listKeys.membersByCampaign(accountId, f.campaign) }
          : { partitionValue: listKeys.memberCollection(accountId) },
        parse: (i) => toMember(i),
        header: [
          'id',
          'identifier',
          'email',
          'first_name',
          'last_name',
          'code',
          'campaign_id',
          'link_clicks',
          'referrals',
          'conversions',
          'credit_earned',
          'commission_earned',
          'commission_pending',
          'commission_held',
          'commission_approved',
          'commission_paid',
          'payout_email',
          'email_opt_out',
          'created_at',
        ],
        row: (m) => {
          const x = m as Member;
          return [
            x.id,
            x.identifier,
            x.email,
            x.first_name,
            x.last_name,
            x.code,
            x.campaign_id,
            x.link_clicks,
            x.referrals,
            x.conversions,
            formatCents(x.credit_earned),
            formatCents(x.commission_earned),
            formatCents(x.commission_pending),
            formatCents(x.commission_held ?? 0),
            formatCents(x.commission_approved),
            formatCents(x.commission_paid),
            x.payout_email,
            String(x.email_opt_out),
            iso(x.created_at),
          ];
        },
      } as Source<unknown>;
    case 'referrals':
      if (f.member !== undefined && !isEntityId(f.member)) throw new ValidationError({ member: ['Not a member id.'] });
      if (f.sub !== undefined && f.member === undefined)
        throw new ValidationError({ sub: ["A sub-id is one member's: filter by `member` too."] });
      return {
        query:
          f.member && f.sub
            ? { index: GSI2, partitionValue: listKeys.referralsBySub(accountId, f.member, f.sub) }
            : f.member
              ? { index: GSI1, partitionValue: keys.referralsByMember(accountId, f.member) }
              : { partitionValue: listKeys.referralCollection(accountId) },
        parse: (i) => toReferral(i),
        header: [
          'id',
          'member_id',
          'user_identifier',
          'source',
          'sub',
          'campaign_id',
          'created_at',
          'converted_at',
          'subscription_id',
          'reward_type',
          'reward_amount',
          'reward_percent',
          'currency',
          'rewards',
          'credit_earned',
          'commission_earned',
        ],
        row: (r) => {
          const x = r as Referral;
          const sum = (t: string) => x.rewards.filter((w) => w.type === t).reduce((a, w) => a + w.amount, 0);
          return [
            x.id,
            x.member_id,
            x.user_identifier,
            x.source,
            x.sub ?? null,
            x.campaign_id,
            iso(x.created_at),
            iso(x.converted_at),
            x.subscription ? String(x.subscription.id) : null,
            x.reward_type,
            formatCents(x.reward_amount),
            x.reward_percent ? formatCents(x.reward_percent) : null,
            x.currency,
            x.rewards.length,
            formatCents(sum('credit')),
            formatCents(sum('commission')),
          ];
        },
      } as Source<unknown>;
    case 'rewards': {
      const query = rewardsSource(accountId, f as RewardFilters);
      return {
        query,
        parse: (i) => toLedgerReward(i),
        header: [
          'id',
          'type',
          'status',
          'amount',
          'currency',
          'referral_id',
          'member_id',
          'campaign_id',
          'payment_id',
          'reverses',
          'created_at',
          'approves_at',
          'approved_at',
          'paid_at',
          'voided_at',
          'void_reason',
          'payout_id',
        ],
        row: (r) => {
          const x = r as LedgerReward;
          return [
            x.id,
            x.type,
            x.status,
            formatCents(x.amount),
            x.currency,
            x.referral_id,
            x.member_id,
            x.campaign_id,
            String(x.payment_id),
            x.reverses ?? null,
            iso(x.created_at),
            iso(x.approves_at),
            iso(x.approved_at),
            iso(x.paid_at),
            iso(x.voided_at),
            x.void_reason,
            x.payout_id,
          ];
        },
      } as Source<unknown>;
    }
    case 'payouts': {
      const query = payoutsSource(accountId, f as PayoutFilters);
      return {
        query,
        parse: (i) => toPayout(i),
        header: [
          'id',
          'member_id',
          'status',
          'amount',
          'currency',
          'reward_count',
          'period_start',
          'period_end',
          'batch_id',
          'payout_email',
          'paid_at',
          'reference',
          'failure_reason',
          'created_at',
        ],
        row: (p) => {
          const x = p as Payout;
          return [
            x.id,
            x.member_id,
            x.status,
            formatCents(x.amount),
            x.currency,
            x.reward_ids.length,
            iso(x.period_start),
            iso(x.period_end),
            x.batch_id,
            x.payout_email,
            iso(x.paid_at),
            x.reference,
            x.failure_reason,
            iso(x.created_at),
          ];
        },
      } as Source<unknown>;
    }
    case 'payout-batches':
      if (f.status !== undefined && f.status !== 'processing' && f.status !== 'paid')
        throw new ValidationError({ status: [`Select a valid choice. ${f.status} is not one of the available choices.`] });
      return {
        query: {
          partitionValue: moneyListKeys.payoutBatchCollection(accountId),
          ...(f.status ? { filter: { expression: '#ff = :fv', names: { '#ff': 'status' }, values: { ':fv': f.status } } } : {}),
        },
        parse: (i) => toBatch(i),
        header: ['id', 'status', 'format', 'currency', 'amount', 'payout_count', 'created_at', 'paid_at', 'reference'],
        row: (b) => {
          const x = b as PayoutBatch;
          return [
            x.id,
            x.status,
            x.format,
            x.currency,
            formatCents(x.amount),
            x.payout_ids.length,
            iso(x.created_at),
            iso(x.paid_at),
            x.reference ?? null,
          ];
        },
      } as Source<unknown>;
    case 'subscriptions':
      return {
        query: f.status
          ? { index: GSI2, partitionValue: keys.subscriptionsByStatus(accountId, f.status) }
          : { index: GSI1, partitionValue: keys.subscriptionsByCreation(accountId) },
        parse: (i) => toSubscription(i),
        header: [
          'id',
          'status',
          'email',
          'currency',
          'unit_price',
          'plan_id',
          'plan_name',
          'next_bill_date',
          'last_bill_date',
          'member_id',
          'referral_id',
          'created_at',
        ],
        row: (s) => {
          const x = s as Subscription;
          return [
            String(x.id),
            x.status,
            x.email,
            x.currency,
            x.unit_price,
            String(x.plan.id),
            x.plan.name,
            x.next_bill_date,
            x.last_bill_date,
            x.member_id ?? null,
            x.referral_id ?? null,
            iso(x.created_at),
          ];
        },
      } as Source<unknown>;
  }
}

/** A cursor is the last sort key sent, bound to the export and its filters (like the lists' cursors). */
function digest(scope: string): string {
  return createHash('sha256').update(scope).digest('base64url').slice(0, 12);
}

function decodeCursor(raw: string, scope: string): string {
  try {
    const c = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8')) as { k?: unknown; s?: unknown };
    if (typeof c.k === 'string' && c.k.length > 0 && c.k.length <= 300 && c.s === digest(scope)) return c.k;
  } catch {
    // fall through
  }
  throw new ValidationError({ cursor: ['Invalid cursor.'] });
}

export interface ExportPage {
  csv: string;
  rows: number;
  nextCursor: string | null;
}

/**
 * One page of an export: the header (first page only) and up to `size` rows after `cursor`, read by
 * Queries of 1,000 items that follow LastEvaluatedKey (a filter may read more than it keeps).
 */
export async function exportPage(
  accountId: string,
  file: string,
  filters: Record<string, string | undefined>,
  size: number,
  cursor?: string,
): Promise<ExportPage> {
  const kind = file.replace(/\.csv$/, '') as ExportKind;
  if (!file.endsWith('.csv') || !(EXPORTS as readonly string[]).includes(kind)) throw new NotFoundError();
  const source = sourceOf(accountId, kind, filters);
  const scope = `${accountId}|export|${kind}|${JSON.stringify(filters)}`;
  const after = cursor ? decodeCursor(cursor, scope) : undefined;
  const skName = sk(source.query.index);
  const lines: string[] = after ? [] : [source.header.join(',')];
  let rows = 0;
  let lastSk: string | undefined;
  let startKey: Record<string, unknown> | undefined;
  let more = false;
  do {
    const input: QueryCommandInput = {
      TableName: tableName(),
      ...(source.query.index ? { IndexName: source.query.index } : { ConsistentRead: true }),
      KeyConditionExpression: `#pk = :pk${after ? ' AND #sk < :after' : ''}`,
      ExpressionAttributeNames: {
        '#pk': source.query.index ? `${source.query.index}pk` : 'pk',
        ...(after ? { '#sk': skName } : {}),
        ...(source.query.filter?.names ?? {}),
      },
      ExpressionAttributeValues: {
        ':pk': source.query.partitionValue,
        ...(after ? { ':after': after } : {}),
        ...(source.query.filter?.values ?? {}),
      },
      ...(source.query.filter ? { FilterExpression: source.query.filter.expression } : {}),
      ScanIndexForward: false,
      Limit: Math.min(1_000, size - rows + 1),
      ...(startKey ? { ExclusiveStartKey: startKey } : {}),
    };
    const out = await db().send(new QueryCommand(input));
    for (const item of out.Items ?? []) {
      if (rows === size) {
        more = true;
        break;
      }
      const parsed = source.parse(item);
      lastSk = String(item[skName]);
      if (parsed === null) continue;
      lines.push(source.row(parsed).map(safeCsvField).join(','));
      rows++;
    }
    startKey = out.LastEvaluatedKey;
    if (rows === size && startKey) more = true;
  } while (!more && startKey);
  const nextCursor =
    more && lastSk !== undefined ? Buffer.from(JSON.stringify({ k: lastSk, s: digest(scope) })).toString('base64url') : null;
  return { csv: lines.length ? `${lines.join('\r\n')}\r\n` : '', rows, nextCursor };
}
