// The fraud review queue (docs/fraud.md "Flags"): one item per recorded finding, `A#<acct>#FRAUD_FLAG` by its
// time-ordered id (`ff_<uuidv7 hex>`, newest first), listed through GSI2 by status and GSI1 by member.
//
// - Exact counts come from counters changed in the same transactions as the flags: `fraud_flags` and one per
//   filter combination, named `fraud_flags[#m#<member>][#r#<rule>][#s#<status>]` (all eight; a flag with no
//   member is in the four without `#m#`).
// - A status change moves the GSI2 key and the status's counters in one transaction conditioned on the
//   status it read (flows/fraud-flags.ts).
import { NotFoundError } from '../domain/errors';
import type { FraudFlagRecord, FraudFlagStatus, FraudRule } from '../domain/fraud';
import { isEntityId } from '../domain/ids';
import { tableName } from './client';
import { counterUpdate, getItem, readCounter, type TransactItem } from './ops';
import { emptyPage, queryPage, type PageQuery, type PageRequest } from './pagination';
import { fraudKeys, GSI1, GSI2, type CounterName } from './table';

/** `ff_` + 32 hex (a UUIDv7 without dashes). */
export const isFraudFlagId = (id: string): boolean => /^ff_[0-9a-f]{32}$/.test(id);

export function toFraudFlag(item: Record<string, unknown> | undefined): FraudFlagRecord | null {
  if (item?.type !== 'FraudFlag') return null;
  return {
    id: String(item.id),
    rule: item.rule as FraudRule,
    action: item.action === 'hold' ? 'hold' : 'flag',
    status: item.status as FraudFlagStatus,
    subject_type: item.subject_type as FraudFlagRecord['subject_type'],
    subject_id: String(item.subject_id),
    member_id: typeof item.member_id === 'string' ? item.member_id : null,
    detail: String(item.detail),
    evidence: (item.evidence ?? {}) as FraudFlagRecord['evidence'],
    held_reward_ids: Array.isArray(item.held_reward_ids) ? (item.held_reward_ids as string[]) : [],
    held_count: Math.max(0, Number(item.held_count ?? 0)),
    created_at: Number(item.created_at),
    resolved_at: item.resolved_at === undefined || item.resolved_at === null ? null : Number(item.resolved_at),
    note: typeof item.note === 'string' ? item.note : null,
  };
}

/** The API object (fraudFlagResponse in shared/schemas/responses.ts). */
export function fraudFlagView(f: FraudFlagRecord): FraudFlagRecord {
  return {
    id: f.id,
    rule: f.rule,
    action: f.action,
    status: f.status,
    subject_type: f.subject_type,
    subject_id: f.subject_id,
    member_id: f.member_id,
    detail: f.detail,
    evidence: f.evidence,
    held_reward_ids: f.held_reward_ids,
    held_count: f.held_count,
    created_at: f.created_at,
    resolved_at: f.resolved_at,
    note: f.note,
  };
}

export async function getFraudFlag(accountId: string, id: string): Promise<FraudFlagRecord | null> {
  if (!isFraudFlagId(id)) return null; // never a key DynamoDB would refuse
  return toFraudFlag(await getItem(fraudKeys.flag(accountId, id)));
}

/** The flag's item (a new flag: `open`, nothing held yet). */
export function fraudFlagItem(accountId: string, f: FraudFlagRecord): Record<string, unknown> {
  return {
    ...fraudKeys.flag(accountId, f.id),
    type: 'FraudFlag',
    ...f,
    member_id: f.member_id ?? undefined,
    resolved_at: f.resolved_at ?? undefined,
    note: f.note ?? undefined,
    ...(f.member_id ? { gsi1pk: fraudKeys.flagsByMember(accountId, f.member_id), gsi1sk: f.id } : {}),
    gsi2pk: fraudKeys.flagsByStatus(accountId, f.status),
    gsi2sk: f.id,
  };
}

/** The counter of one filter combination. */
export function fraudFlagsCounter(f: {
  member?: string | null | undefined;
  rule?: string | undefined;
  status?: string | undefined;
}): CounterName {
  let name = 'fraud_flags';
  if (f.member) name += `#m#${f.member}`;
  if (f.rule) name += `#r#${f.rule}`;
  if (f.status) name += `#s#${f.status}`;
  return name as CounterName;
}

/**
 * The counter updates of a flag of `rule` and `member` in `status`: every combination that includes the
 * status (`withStatus`), and, when `all`, those that do not (created once, never moved).
 */
export function fraudFlagCounters(
  accountId: string,
  f: { rule: string; member: string | null; status: FraudFlagStatus },
  delta: number,
  all: boolean,
): TransactItem[] {
  const members = f.member ? [undefined, f.member] : [undefined];
  const names: CounterName[] = [];
  for (const member of members)
    for (const rule of [undefined, f.rule]) {
      names.push(fraudFlagsCounter({ member, rule, status: f.status }));
      if (all) names.push(fraudFlagsCounter({ member, rule }));
    }
  return names.map((name) => counterUpdate(accountId, name, delta));
}

/** The transaction item that moves an open flag to its final status (conditioned on it being still open and holding nothing). */
export function resolveFlagItem(
  accountId: string,
  f: FraudFlagRecord,
  to: Exclude<FraudFlagStatus, 'open'>,
  o: { note: string | null; nowSeconds: number },
): TransactItem {
  const sets = ['#status = :to', 'resolved_at = :now', 'gsi2pk = :byStatus'];
  const values: Record<string, unknown> = {
    ':to': to,
    ':now': o.nowSeconds,
    ':byStatus': fraudKeys.flagsByStatus(accountId, to),
    ':open': 'open',
    ':zero': 0,
  };
  if (o.note) {
    sets.push('note = :note');
    values[':note'] = o.note;
  }
  return {
    Update: {
      TableName: tableName(),
      Key: fraudKeys.flag(accountId, f.id),
      UpdateExpression: `SET ${sets.join(', ')}`,
      // held_count: a reward held by this flag meanwhile (a new reward of a held referral) is released or
      // voided first (the caller reads the flag again and repeats).
      ConditionExpression: '#status = :open AND (attribute_not_exists(held_count) OR held_count = :zero)',
      ExpressionAttributeNames: { '#status': 'status' },
      ExpressionAttributeValues: values,
    },
  };
}

export interface FraudFlagFilters {
  rule?: FraudRule | undefined;
  status?: FraudFlagStatus | undefined;
  member?: string | undefined;
}

const allOf = (conditions: Record<string, string | undefined>): PageQuery['filter'] | undefined => {
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
};

/**
 * GET /v1/fraud-flags/: newest first; one Query (the member's GSI1 partition, else the status's GSI2
 * partition, else all flags; the other filters as a FilterExpression) beside the combination's counter.
 */
export async function listFraudFlags(accountId: string, page: PageRequest, f: FraudFlagFilters) {
  if (f.member !== undefined && !isEntityId(f.member)) return emptyPage();
  let source: Omit<PageQuery, 'scope'>;
  if (f.member !== undefined) {
    const filter = allOf({ rule: f.rule, status: f.status });
    source = { index: GSI1, partitionValue: fraudKeys.flagsByMember(accountId, f.member), ...(filter ? { filter } : {}) };
  } else if (f.status !== undefined) {
    const filter = allOf({ rule: f.rule });
    source = { index: GSI2, partitionValue: fraudKeys.flagsByStatus(accountId, f.status), ...(filter ? { filter } : {}) };
  } else {
    const filter = allOf({ rule: f.rule });
    source = { partitionValue: fraudKeys.flagCollection(accountId), ...(filter ? { filter } : {}) };
  }
  const scope = `${accountId}|fraud_flags|${f.rule ?? ''}|${f.status ?? ''}|${f.member ?? ''}`;
  const [result, count] = await Promise.all([queryPage({ ...source, scope }, page), readCounter(accountId, fraudFlagsCounter(f))]);
  // A status index entry may lag its item (GSIs are eventually consistent): the item's own status decides.
  const items = result.items
    .map((i) => toFraudFlag(i))
    .filter((x): x is FraudFlagRecord => x !== null && (f.status === undefined || x.status === f.status));
  return { ...result, items, count };
}

/** A malformed or unknown id, or another account's: 404. */
export async function getFraudFlagOrThrow(accountId: string, id: string): Promise<FraudFlagRecord> {
  const flag = await getFraudFlag(accountId, id);
  if (!flag) throw new NotFoundError();
  return flag;
}
