// The reward ledger (docs/design/money.md): one item per reward beside its copy inside the referral (which keeps a
// referral and its rewards one GetItem). Both copies, the member's stats, the list counters, the payout a
// reward belongs to and the webhook events change in ONE transaction, built by MoneyTxn, so they never
// disagree. A TransactWriteItems may touch an item once: MoneyTxn merges what several rewards do to the
// same counter, member, referral or payout into one write.
//
// Items: `A#<acct>#REWARD` / reward id (GSI1: the member's rewards, GSI2: rewards by status, both newest
// first), and for a pending commission that approves by itself `A#<acct>#APPROVAL_DUE` / approves_at#id,
// which the approval job reads with one Query per account.
//
// Held rewards (docs/fraud.md "Holds"): a reward entering `held` (created so, or moved) appends its id to its
// flag's `held_reward_ids` and adds 1 to its `held_count`, conditioned on the flag existing (and being open);
// one leaving `held` (released, voided, or deleted with its referral) takes 1 off, in the same transaction.
// Clawbacks follow the reward they reverse and are not counted on the flag.
import { commissionStat, earnedStat, lifecycleOf, type LedgerReward, type Lifecycle, type RewardStatus } from '../domain/lifecycle';
export { lifecycleOf, type LedgerReward } from '../domain/lifecycle';
import type { Referral, Reward } from '../domain/models';
import { storedProviderId } from '../domain/models';
import { tableName } from './client';
import { counterUpdate, type TransactItem } from './ops';
import { flagKey, keys, moneyKeys, type CounterName, type Key } from './table';
import { ReportDeltas, type MoneyMetric, type Scopes } from './reports';

/** The ledger record of reward `index` of a referral (as its embedded copy says). */
export function ledgerFromReferral(referral: Referral, index: number, version = 1): LedgerReward {
  const r = referral.rewards[index] as Reward;
  return {
    id: r.id,
    type: r.type,
    amount: r.amount,
    currency: r.currency,
    created_at: r.created_at,
    payment_id: r.payment_id,
    ...(r.reverses !== undefined ? { reverses: r.reverses } : {}),
    ...(r.refund_id !== undefined ? { refund_id: r.refund_id } : {}),
    ...(r.note !== undefined ? { note: r.note } : {}),
    referral_id: referral.id,
    member_id: referral.member_id,
    campaign_id: referral.campaign_id,
    index,
    version,
    ...lifecycleOf(r),
  };
}

export function toLedgerReward(item: Record<string, unknown> | undefined): LedgerReward | null {
  if (item?.type !== 'Reward') return null;
  const n = (v: unknown) => (v === undefined || v === null ? null : Number(v));
  return {
    id: String(item.id),
    type: item.reward_type === 'credit' ? 'credit' : 'commission',
    amount: Number(item.amount),
    currency: String(item.currency),
    created_at: Number(item.created_at),
    payment_id: storedProviderId(item.payment_id),
    ...(typeof item.reverses === 'string' ? { reverses: item.reverses } : {}),
    ...(typeof item.refund_id === 'string' ? { refund_id: item.refund_id } : {}),
    ...(typeof item.note === 'string' ? { note: item.note } : {}),
    referral_id: String(item.referral_id),
    member_id: String(item.member_id),
    campaign_id: typeof item.campaign_id === 'string' ? item.campaign_id : null,
    index: Number(item.index),
    version: Number(item.version ?? 1),
    status: item.status as RewardStatus,
    approves_at: n(item.approves_at),
    approved_at: n(item.approved_at),
    paid_at: n(item.paid_at),
    voided_at: n(item.voided_at),
    void_reason: (item.void_reason as Lifecycle['void_reason']) ?? null,
    payout_id: typeof item.payout_id === 'string' ? item.payout_id : null,
    ...(typeof item.held_by === 'string' ? { held_by: item.held_by } : {}),
  };
}

/**
 * The list counters a reward counts in (store/money-lists.ts rewardsCounter), each also with its status:
 * all, its member, its campaign, its type, and its type with its member or with its campaign. Member and
 * campaign together have none: those counters would depend on the campaign, and a payout's chunk of rewards
 * earned in several campaigns would carry too many of them for one transaction (docs/data-model.md).
 */
export function rewardCounterPrefixes(r: Pick<LedgerReward, 'member_id' | 'campaign_id' | 'type'>): string[] {
  const out = [
    rewardsCounterPrefix(),
    rewardsCounterPrefix(r.member_id),
    rewardsCounterPrefix(undefined, undefined, r.type),
    rewardsCounterPrefix(r.member_id, undefined, r.type),
  ];
  if (r.campaign_id) out.push(rewardsCounterPrefix(undefined, r.campaign_id), rewardsCounterPrefix(undefined, r.campaign_id, r.type));
  return out;
}

/** `rewards[#m#<member>][#c#<campaign>][#t#<type>]`: the count of one filter combination (without status). */
export function rewardsCounterPrefix(member?: string, campaign?: string, type?: string): string {
  return ['rewards', ...(member ? [`m#${member}`] : []), ...(campaign ? [`c#${campaign}`] : []), ...(type ? [`t#${type}`] : [])].join('#');
}

const LIFECYCLE_FIELDS = ['status', 'approves_at', 'approved_at', 'paid_at', 'voided_at', 'void_reason', 'payout_id', 'held_by'] as const;

type MemberStat =
  | 'credit_earned'
  | 'commission_earned'
  | 'commission_pending'
  | 'commission_approved'
  | 'commission_held'
  | 'commission_paid';

/** What a transaction does to one fraud flag's hold (merged: a transaction writes an item once). */
interface FlagChange {
  count: number;
  /** Rewards entering `held`: appended, only while the flag is open. */
  ids: string[];
}

/** A reward counted on its flag: held by one, and not a clawback (those follow their reward). */
const flagOf = (r: Pick<LedgerReward, 'status' | 'reverses' | 'held_by'>): string | null =>
  r.status === 'held' && r.reverses === undefined && r.held_by ? r.held_by : null;

interface EmbeddedChanges {
  sets: string[];
  removes: string[];
  conditions: string[];
  values: Record<string, unknown>;
  /** Placeholders of the reward fields (`status` is a reserved word). */
  names: Record<string, string>;
}

const noChanges = (): EmbeddedChanges => ({ sets: [], removes: [], conditions: [], values: {}, names: {} });

/**
 * One money transaction in the making. Callers add reward creations and moves (and payout writes, through
 * `push`), then `build()` returns the items with the merged counter, member and referral writes.
 */
export class MoneyTxn {
  private readonly items: TransactItem[] = [];
  private readonly counters = new Map<CounterName, number>();
  // Read by takeStats and referralCondition (functions below, apart from the class).
  readonly stats = new Map<string, Map<MemberStat, number>>();
  readonly embedded = new Map<string, EmbeddedChanges>();
  private readonly deadMembers = new Set<string>();
  private readonly deadReferrals = new Set<string>();
  private readonly flags = new Map<string, FlagChange>();
  private readonly deadFlags = new Set<string>();
  /** Labels of the items in order, for telling which condition failed. */
  readonly labels: string[] = [];
  /** The report buckets of what is earned and paid (store/reports.ts), written in the same transaction. */
  private readonly deltas: ReportDeltas;

  constructor(readonly accountId: string) {
    this.deltas = new ReportDeltas(accountId);
  }

  private earned(r: LedgerReward, at: number, sign: 1 | -1): void {
    this.deltas.add(at, { memberId: r.member_id, campaignId: r.campaign_id }, earnedStat(r.type), sign * r.amount, r.currency);
  }

  /** A report delta (store/reports.ts) merged with the transaction's own (a bucket is one write). */
  report(at: number, scopes: Scopes, metric: MoneyMetric, amount: number, currency: string): this {
    this.deltas.add(at, scopes, metric, amount, currency);
    return this;
  }

  /** The member was deleted: its stats are not written (a write would recreate a partial item). */
  memberGone(memberId: string): this {
    this.deadMembers.add(memberId);
    return this;
  }

  /** The referral was deleted: only the ledger copy of its rewards changes. */
  referralGone(referralId: string): this {
    this.deadReferrals.add(referralId);
    return this;
  }

  /** The flag was read and is gone: rewards leaving its hold do not write it. */
  flagGone(flagId: string): this {
    this.deadFlags.add(flagId);
    return this;
  }

  /** Rewards entering (`delta` 1, their ids appended) or leaving (-1) the hold of flag `flagId`. */
  flag(flagId: string, delta: 1 | -1, rewardId: string): this {
    if (delta < 0 && this.deadFlags.has(flagId)) return this;
    const change = this.flags.get(flagId) ?? { count: 0, ids: [] };
    change.count += delta;
    if (delta > 0) change.ids.push(rewardId);
    this.flags.set(flagId, change);
    return this;
  }

  push(item: TransactItem, label = 'item'): this {
    this.items.push(item);
    this.labels.push(label);
    return this;
  }

  count(name: CounterName, delta: number): this {
    this.counters.set(name, (this.counters.get(name) ?? 0) + delta);
    return this;
  }

  stat(memberId: string, field: MemberStat, delta: number): this {
    if (delta === 0) return this;
    const fields = this.stats.get(memberId) ?? new Map<MemberStat, number>();
    fields.set(field, (fields.get(field) ?? 0) + delta);
    this.stats.set(memberId, fields);
    return this;
  }

  /** A new reward: its ledger item, its counts and stats (its referral copy is the caller's append). */
  addReward(r: LedgerReward): this {
    this.push(
      { Put: { TableName: tableName(), Item: ledgerItem(this.accountId, r), ConditionExpression: 'attribute_not_exists(pk)' } },
      `reward:${r.id}`,
    );
    for (const prefix of rewardCounterPrefixes(r)) {
      this.count(prefix as CounterName, 1);
      this.count(`${prefix}#s#${r.status}` as CounterName, 1);
    }
    if (r.status !== 'voided') {
      this.stat(r.member_id, earnedStat(r.type), r.amount);
      this.earned(r, r.created_at, 1);
    }
    const stat = commissionStat(r.type, r.status);
    if (stat) this.stat(r.member_id, stat, r.amount);
    this.schedule(r);
    const flag = flagOf(r);
    if (flag) this.flag(flag, 1, r.id);
    return this;
  }

  /** A pending commission that approves by itself: its approval-due item. */
  private schedule(r: LedgerReward): void {
    if (r.status !== 'pending' || r.approves_at === null) return;
    this.push(
      {
        Put: {
          TableName: tableName(),
          Item: { ...moneyKeys.approvalDue(this.accountId, r.approves_at, r.id), type: 'ApprovalDue', reward_id: r.id },
        },
      },
      `due:${r.id}`,
    );
  }

  /**
   * Moves a stored reward to `next` (conditioned on the version read): its ledger item, its referral copy
   * (unless `embeddedToo` is false: the caller writes it), counts, stats and approval schedule.
   */
  moveReward(r: LedgerReward, next: Partial<Lifecycle>, opts: { embeddedToo?: boolean } = {}): LedgerReward {
    const moved: LedgerReward = { ...r, ...next, version: r.version + 1 };
    // Conditioned on the state read (status and payout), not on a version: a move can be planned from the
    // referral's copy of the reward, which carries the same state.
    const names: Record<string, string> = { '#st': 'status', '#v': 'version', '#po': 'payout_id' };
    const values: Record<string, unknown> = { ':one': 1, ':from': r.status };
    const sets = ['#v = #v + :one'];
    const payoutCondition = r.payout_id === null ? 'attribute_not_exists(#po)' : '#po = :pfrom';
    if (r.payout_id !== null) values[':pfrom'] = r.payout_id;
    const removes: string[] = [];
    for (const field of LIFECYCLE_FIELDS) {
      if (!(field in next)) continue;
      const value = moved[field];
      if (field === 'payout_id') {
        if (value === null) removes.push('#po');
        else {
          values[':payout_id'] = value;
          sets.push('#po = :payout_id');
        }
        continue;
      }
      names[`#${field}`] = field;
      if (value === null) {
        removes.push(`#${field}`);
      } else {
        values[`:${field}`] = value;
        sets.push(`#${field} = :${field}`);
      }
    }
    if (moved.status !== r.status) {
      names['#g2'] = 'gsi2pk';
      values[':g2'] = moneyKeys.rewardsByStatus(this.accountId, moved.status);
      sets.push('#g2 = :g2');
    }
    this.push(
      {
        Update: {
          TableName: tableName(),
          Key: keys.reward(this.accountId, r.id),
          UpdateExpression: `SET ${sets.join(', ')}${removes.length ? ` REMOVE ${removes.join(', ')}` : ''}`,
          ConditionExpression: `#st = :from AND ${payoutCondition}`,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        },
      },
      `reward:${r.id}`,
    );
    if (moved.status !== r.status) {
      for (const prefix of rewardCounterPrefixes(r)) {
        this.count(`${prefix}#s#${r.status}` as CounterName, -1);
        this.count(`${prefix}#s#${moved.status}` as CounterName, 1);
      }
      if (moved.status === 'voided' && r.status !== 'voided') {
        this.stat(r.member_id, earnedStat(r.type), -r.amount);
        this.earned(r, moved.voided_at ?? Math.floor(Date.now() / 1000), -1);
      }
      if (moved.status === 'paid' && r.type === 'commission') {
        this.deltas.add(
          moved.paid_at ?? Math.floor(Date.now() / 1000),
          { memberId: r.member_id, campaignId: r.campaign_id },
          'commission_paid',
          r.amount,
          r.currency,
        );
      }
      const before = commissionStat(r.type, r.status);
      const after = commissionStat(r.type, moved.status);
      if (before) this.stat(r.member_id, before, -r.amount);
      if (after) this.stat(r.member_id, after, r.amount);
      if (r.status === 'pending' && r.approves_at !== null) {
        this.push({ Delete: { TableName: tableName(), Key: moneyKeys.approvalDue(this.accountId, r.approves_at, r.id) } }, `due:${r.id}`);
      }
      // Released (held -> pending): its approval-due item again.
      this.schedule(moved);
      const left = flagOf(r);
      const entered = flagOf(moved);
      if (left) this.flag(left, -1, r.id);
      if (entered) this.flag(entered, 1, r.id);
    }
    if (opts.embeddedToo !== false) this.setEmbedded(r.referral_id, r.index, r.id, next);
    return moved;
  }

  /** Sets lifecycle fields on reward `index` of a referral (merged with the referral's other changes). */
  setEmbedded(
    referralId: string,
    index: number,
    rewardId: string,
    fields: Partial<Lifecycle> | Record<string, unknown>,
    removes: string[] = [],
  ): this {
    if (this.deadReferrals.has(referralId)) return this;
    const changes = this.embedded.get(referralId) ?? noChanges();
    const at = `#rw[${index}]`;
    if (!changes.values[`:id${index}`]) {
      changes.conditions.push(`${at}.#id = :id${index}`);
      changes.values[`:id${index}`] = rewardId;
    }
    for (const [field, value] of Object.entries(fields)) {
      changes.values[`:${field}${index}`] = value;
      changes.names[`#f_${field}`] = field;
      changes.sets.push(`${at}.#f_${field} = :${field}${index}`);
    }
    for (const field of removes) {
      changes.names[`#f_${field}`] = field;
      changes.removes.push(`${at}.#f_${field}`);
    }
    this.embedded.set(referralId, changes);
    return this;
  }

  /** The referral write: appends `added` at `length` (conditioned on it) and the embedded changes. */
  referralAppend(
    referralId: string,
    length: number,
    added: Reward[],
    extra: { sets?: string[]; values?: Record<string, unknown> } = {},
  ): this {
    const changes = this.embedded.get(referralId) ?? noChanges();
    added.forEach((reward, i) => {
      changes.sets.push(`#rw[${length + i}] = :new${i}`);
      changes.values[`:new${i}`] = reward;
    });
    changes.conditions.push('size(#rw) = :len');
    changes.values[':len'] = length;
    changes.sets.push(...(extra.sets ?? []));
    Object.assign(changes.values, extra.values ?? {});
    this.embedded.set(referralId, changes);
    return this;
  }

  build(): TransactItem[] {
    const out = [...this.items];
    for (const [referralId, c] of this.embedded) {
      if (c.sets.length === 0 && c.removes.length === 0) continue;
      out.push({
        Update: {
          TableName: tableName(),
          Key: keys.referral(this.accountId, referralId),
          UpdateExpression: [c.sets.length ? `SET ${c.sets.join(', ')}` : '', c.removes.length ? `REMOVE ${c.removes.join(', ')}` : '']
            .filter(Boolean)
            .join(' '),
          ConditionExpression: ['attribute_exists(pk)', ...c.conditions].join(' AND '),
          ExpressionAttributeNames: {
            '#rw': 'rewards',
            ...(c.conditions.some((x) => x.includes('#id')) ? { '#id': 'id' } : {}),
            ...c.names,
          },
          ExpressionAttributeValues: c.values,
        },
      });
      this.labels.push(`referral:${referralId}`);
    }
    for (const [memberId, fields] of this.stats) {
      if (this.deadMembers.has(memberId)) continue;
      const nonZero = [...fields].filter(([, d]) => d !== 0);
      if (nonZero.length === 0) continue;
      out.push({
        Update: {
          TableName: tableName(),
          Key: keys.member(this.accountId, memberId),
          UpdateExpression: `ADD ${nonZero.map(([f], i) => `${f} :d${i}`).join(', ')}`,
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: Object.fromEntries(nonZero.map(([, d], i) => [`:d${i}`, d])),
        },
      });
      this.labels.push(`member:${memberId}`);
    }
    for (const [flagId, c] of this.flags) {
      const append = c.ids.length > 0;
      if (c.count === 0 && !append) continue;
      // Rewards entering the hold are appended, and only while the flag is open.
      out.push({
        Update: {
          TableName: tableName(),
          Key: flagKey(this.accountId, flagId),
          UpdateExpression: `${append ? 'SET #ids = list_append(if_not_exists(#ids, :none), :ids) ' : ''}ADD held_count :n`,
          ConditionExpression: `attribute_exists(pk)${append ? ' AND (attribute_not_exists(#st) OR #st = :open)' : ''}`,
          ...(append ? { ExpressionAttributeNames: { '#ids': 'held_reward_ids', '#st': 'status' } } : {}),
          ExpressionAttributeValues: { ':n': c.count, ...(append ? { ':none': [], ':ids': c.ids, ':open': 'open' } : {}) },
        },
      });
      this.labels.push(`flag:${flagId}`);
    }
    for (const item of this.deltas.items()) {
      out.push(item);
      this.labels.push('report');
    }
    for (const [name, delta] of this.counters) {
      if (delta === 0) continue;
      // One Update per counter (merged above), on one of its shards (store/shards.ts).
      out.push(counterUpdate(this.accountId, name, delta));
      this.labels.push(`counter:${name}`);
    }
    return out;
  }
}

// Rarely used steps of a money transaction, as functions rather than methods: a bundle drops a function it
// never calls, never a class's method (the reward worker's bundle is at its budget).

/** A reward leaves the ledger with its referral (a delete): its item, counts, stats, schedule and flag count. */
export function removeReward(txn: MoneyTxn, r: LedgerReward): MoneyTxn {
  txn.push({ Delete: { TableName: tableName(), Key: keys.reward(txn.accountId, r.id) } }, `reward:${r.id}`);
  for (const prefix of rewardCounterPrefixes(r)) {
    txn.count(prefix as CounterName, -1);
    txn.count(`${prefix}#s#${r.status}` as CounterName, -1);
  }
  if (r.status !== 'voided') {
    txn.stat(r.member_id, earnedStat(r.type), -r.amount);
    txn.report(
      Math.floor(Date.now() / 1000),
      { memberId: r.member_id, campaignId: r.campaign_id },
      earnedStat(r.type),
      -r.amount,
      r.currency,
    );
  }
  const stat = commissionStat(r.type, r.status);
  if (stat) txn.stat(r.member_id, stat, -r.amount);
  if (r.status === 'pending' && r.approves_at !== null) {
    txn.push({ Delete: { TableName: tableName(), Key: moneyKeys.approvalDue(txn.accountId, r.approves_at, r.id) } }, `due:${r.id}`);
  }
  const flag = flagOf(r);
  if (flag) txn.flag(flag, -1, r.id);
  return txn;
}

/** The update items so far for the member's stats, merged (for a caller that writes the member itself). */
export function takeStats(txn: MoneyTxn, memberId: string): Map<string, number> {
  const fields = txn.stats.get(memberId) ?? new Map();
  txn.stats.delete(memberId);
  return fields as Map<string, number>;
}

/** An extra condition on the referral's write (e.g. a credit not claimed by a worker). */
export function referralCondition(txn: MoneyTxn, referralId: string, condition: string, values: Record<string, unknown>): MoneyTxn {
  const changes = txn.embedded.get(referralId) ?? noChanges();
  changes.conditions.push(condition);
  Object.assign(changes.values, values);
  txn.embedded.set(referralId, changes);
  return txn;
}

export function ledgerItem(accountId: string, r: LedgerReward): Record<string, unknown> {
  const { type, ...rest } = r;
  const item: Record<string, unknown> = {
    ...keys.reward(accountId, r.id),
    type: 'Reward',
    reward_type: type,
    gsi1pk: moneyKeys.rewardsByMember(accountId, r.member_id),
    gsi1sk: r.id,
    gsi2pk: moneyKeys.rewardsByStatus(accountId, r.status),
    gsi2sk: r.id,
  };
  for (const [k, v] of Object.entries(rest)) if (v !== null && v !== undefined) item[k] = v;
  return item;
}

export const rewardKey = (accountId: string, id: string): Key => keys.reward(accountId, id);
