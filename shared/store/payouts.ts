// Payouts (docs/design/money.md "Payouts"): one member's approved commissions in one currency. A collecting payout
// (`open` or `due`) is found through its pointer item (`PAYOUT_CURRENT#<member>` / currency); a payout
// leaves collection when a batch takes it (`processing`), and the pointer goes with it, so the member's
// next approvals start a new payout. Every change of a payout's amount happens in the transaction that
// moves its rewards (store/ledger.ts MoneyTxn), conditioned on the payout version read: the amount is
// always the sum of its rewards. The summary's totals are counters (`payout_sum#<status>#<currency>`),
// changed in the same transactions.
import { collectingStatus, COLLECTING, type Payout, type PayoutStatus } from '../domain/lifecycle';
export type { Payout } from '../domain/lifecycle';
import { newEntityId } from '../domain/ids';
import { maxPayoutCents, payoutAboveMaximum } from '../domain/money-limits';
import { toCampaign } from './campaigns';
import { tableName } from './client';
import { eventItem } from './outbox';
import { batchGet, getItem, lookup } from './ops';
import { keys, moneyKeys, type CounterName } from './table';
import type { MoneyTxn } from './ledger';
import { payoutView } from '../domain/payout-views';
import { methodReadiness } from '../domain/payout-methods';

export const isPayoutId = (v: string) => /^po_[0-9a-f]{32}$/.test(v);
export const newPayoutId = () => `po_${newEntityId()}`;

export function toPayout(item: Record<string, unknown> | undefined): Payout | null {
  if (item?.type !== 'Payout') return null;
  const n = (v: unknown) => (v === undefined || v === null ? null : Number(v));
  const s = (v: unknown) => (typeof v === 'string' ? v : null);
  const ids =
    item.reward_ids instanceof Set
      ? [...(item.reward_ids as Set<string>)]
      : Array.isArray(item.reward_ids)
        ? (item.reward_ids as string[])
        : [];
  return {
    id: String(item.id),
    member_id: String(item.member_id),
    currency: String(item.currency),
    amount: Number(item.amount ?? 0),
    reward_ids: ids.sort(),
    status: item.status as PayoutStatus,
    period_start: n(item.period_start),
    period_end: n(item.period_end),
    paid_at: n(item.paid_at),
    reference: s(item.reference),
    failure_reason: s(item.failure_reason),
    batch_id: s(item.batch_id),
    payout_email: s(item.payout_email),
    member_identifier: s(item.member_identifier),
    member_email: s(item.member_email),
    member_name: s(item.member_name),
    rail: s(item.rail),
    rail_status: s(item.rail_status),
    rail_item_id: s(item.rail_item_id),
    resend_attempt: n(item.resend_attempt),
    resend_rail_batch_id: s(item.resend_rail_batch_id),
    resend_sent_attempt: n(item.resend_sent_attempt),
    rail_destination: s(item.rail_destination),
    created_at: Number(item.created_at),
    updated_at: Number(item.updated_at ?? item.created_at),
    version: Number(item.version ?? 1),
  };
}

export const payoutCounterPrefixes = (p: Pick<Payout, 'member_id' | 'currency'>) => [
  'payouts',
  `payouts#m#${p.member_id}`,
  `payouts#c#${p.currency}`,
];

export async function getPayout(accountId: string, id: string): Promise<Payout | null> {
  if (!isPayoutId(id)) return null;
  return toPayout(await getItem(moneyKeys.payout(accountId, id)));
}

/** Where a member's approvals in `currency` go now, and what makes that payout due. */
/** Why a payout that would be due stays open (`failure_reason`): the account requires tax details first. */
export const TAX_DETAILS_MISSING = 'Waiting for tax details: the programme requires them before paying.';

export interface CollectingTarget {
  memberId: string;
  currency: string;
  payout: Payout | null;
  minPayout: number;
  payoutEmail: string | null;
  /** Whether the member still exists (its stats are written only then). */
  memberExists: boolean;
  /** The account requires tax details (`tax_details_required`) and the member has given none: never due. */
  taxDetailsMissing?: boolean;
  /**
   * The member chose a payout method (domain/payout-methods.ts) that cannot receive money yet: why, in
   * words (never due meanwhile). Null when ready, and for members without a method (they need a payout
   * email, as before the rails, and an open payout then says nothing).
   */
  methodNotReady?: string | null;
}

/** Reads the member's collecting payout in `currency` (pointer, payout), its payout email and minimum. */
export async function collectingTarget(accountId: string, memberId: string, currency: string): Promise<CollectingTarget> {
  // The account rides along in the same BatchGet: its tax-details requirement (no extra round trip).
  const found = await batchGet([
    moneyKeys.payoutPointer(accountId, memberId, currency),
    keys.member(accountId, memberId),
    keys.account(accountId),
  ]);
  const pointer = lookup(found, moneyKeys.payoutPointer(accountId, memberId, currency));
  const member = lookup(found, keys.member(accountId, memberId));
  const account = lookup(found, keys.account(accountId));
  const campaignId = typeof member?.campaign_id === 'string' ? member.campaign_id : null;
  const [payoutItem, campaignItem] = await Promise.all([
    typeof pointer?.payout_id === 'string' ? getItem(moneyKeys.payout(accountId, pointer.payout_id)) : Promise.resolve(undefined),
    campaignId ? getItem(keys.campaign(accountId, campaignId)) : Promise.resolve(undefined),
  ]);
  const payout = toPayout(payoutItem);
  const campaign = toCampaign(campaignItem);
  // The member's payout method decides whether they can be paid (an email, or a ready Stripe account).
  const readiness = methodReadiness(member);
  return {
    memberId,
    currency,
    // A pointer whose payout left collection (a crash between two writes cannot leave one, but a stale read can): start anew.
    payout: payout && COLLECTING.includes(payout.status) ? payout : null,
    // The minimum is the campaign's, in its commission currency; a payout in another currency has none.
    minPayout: campaign && campaign.commission_currency === currency ? campaign.min_payout : 0,
    payoutEmail: readiness.ready ? readiness.destination : null,
    memberExists: member?.type === 'Member',
    methodNotReady: readiness.method !== null && !readiness.ready ? readiness.reason : null,
    taxDetailsMissing: account?.tax_details_required === true && typeof member?.tax_details_at !== 'number',
  };
}

interface Delta {
  add: { id: string; amount: number; created_at: number }[];
  remove: { id: string; amount: number }[];
}

/**
 * Adds and removes rewards on the target's collecting payout (creating it, with its pointer, when there is
 * none) inside `txn`; returns the payout as it will be. Conditioned on the version read.
 */
export function changeCollecting(txn: MoneyTxn, target: CollectingTarget, delta: Delta, now = Math.floor(Date.now() / 1000)): Payout {
  const accountId = txn.accountId;
  const before = target.payout;
  const ids = new Set(before?.reward_ids ?? []);
  // The amount is the sum of the listed rewards: a reward counts once, and only while it is listed (the
  // voids of a referral delete let a payout go of rewards before their own items move: flows/referral-delete.ts).
  const removed = delta.remove.filter((r) => ids.has(r.id));
  for (const r of removed) ids.delete(r.id);
  const added = delta.add.filter((r) => !ids.has(r.id));
  for (const r of added) ids.add(r.id);
  const amount = (before?.amount ?? 0) + added.reduce((a, r) => a + r.amount, 0) - removed.reduce((a, r) => a + r.amount, 0);
  const times = added.map((r) => r.created_at);
  const periodStart = [before?.period_start, ...times].filter((t): t is number => typeof t === 'number');
  // Above the maximum per payout (domain/money-limits.ts) it is held: never due, so never batched.
  const held = amount > maxPayoutCents(target.currency);
  const payable = collectingStatus(amount, target.minPayout, target.payoutEmail);
  // Would be due but the member's required tax details are missing: it waits, open, and says why.
  const waitsForTax = !held && payable === 'due' && target.taxDetailsMissing === true;
  // Would be due but the member's chosen method cannot receive money yet: it waits, open, and says why.
  const notReady = target.methodNotReady ?? null;
  const waitsForMethod = !held && !waitsForTax && payable === 'open' && notReady !== null && amount > 0 && amount >= target.minPayout;
  const status = held || waitsForTax ? 'open' : payable;
  const next: Payout = {
    id: before?.id ?? newPayoutId(),
    member_id: target.memberId,
    currency: target.currency,
    amount,
    reward_ids: [...ids].sort(),
    status,
    period_start: periodStart.length ? Math.min(...periodStart) : null,
    period_end: periodStart.length ? Math.max(before?.period_end ?? 0, ...times) : null,
    paid_at: null,
    reference: null,
    failure_reason: held ? payoutAboveMaximum(target.currency) : waitsForTax ? TAX_DETAILS_MISSING : waitsForMethod ? notReady : null,
    batch_id: null,
    payout_email: null,
    member_identifier: null,
    member_email: null,
    member_name: null,
    created_at: before?.created_at ?? now,
    updated_at: now,
    version: (before?.version ?? 0) + 1,
  };
  if (!before) {
    txn.push(
      { Put: { TableName: tableName(), Item: payoutItem(accountId, next), ConditionExpression: 'attribute_not_exists(pk)' } },
      `payout:${next.id}`,
    );
    txn.push(
      {
        Put: {
          TableName: tableName(),
          Item: { ...moneyKeys.payoutPointer(accountId, target.memberId, target.currency), type: 'PayoutPointer', payout_id: next.id },
          // Two approvals racing for a member's first payout: one creates it, the other re-reads and joins it.
          ConditionExpression: 'attribute_not_exists(pk)',
        },
      },
      `pointer:${target.memberId}:${target.currency}`,
    );
    for (const prefix of payoutCounterPrefixes(next)) {
      txn.count(prefix as CounterName, 1);
      txn.count(`${prefix}#s#${status}` as CounterName, 1);
    }
  } else {
    putPayoutVersion(txn, before, next, ['open', 'due']);
  }
  payoutSums(txn, before, next);
  if (next.status === 'due' && before?.status !== 'due') {
    txn.push(eventItem(accountId, 'payout.due', `${next.id}:${next.version}`, payoutView(next)), `event:${next.id}`);
  }
  return next;
}

/**
 * A transition of a payout that moves its rewards in several transactions (more than one chunk of them):
 * recorded on the payout by one conditional write before any reward moves (claimPayout), so the payout has
 * one outcome. A retry of the same transition resumes from it with the values it holds; any other
 * transition answers 409 until the claimed one has finished (its last write replaces the payout without it).
 */
export interface PayoutClaim {
  to: 'paid' | 'failed' | 'canceled';
  at: number;
  /** mark-paid: what the payout will say. */
  paid_at?: number;
  reference?: string | null;
  /** mark-failed / cancel: the reason. */
  reason?: string;
  /** A paid payout taken back by its rail (flows/payouts.ts reversePaidPayout): its paid rewards go back. */
  reversal?: boolean;
}

function toClaim(value: unknown): PayoutClaim | null {
  if (!value || typeof value !== 'object') return null;
  const c = value as Record<string, unknown>;
  if (c.to !== 'paid' && c.to !== 'failed' && c.to !== 'canceled') return null;
  return {
    to: c.to,
    at: Number(c.at),
    ...(c.paid_at !== undefined && c.paid_at !== null ? { paid_at: Number(c.paid_at) } : {}),
    ...(c.reference !== undefined ? { reference: typeof c.reference === 'string' ? c.reference : null } : {}),
    ...(typeof c.reason === 'string' ? { reason: c.reason } : {}),
    ...(c.reversal === true ? { reversal: true } : {}),
  };
}

/** A payout with the transition claimed on it, if any (one strongly consistent GetItem). */
export async function getPayoutAndClaim(accountId: string, id: string): Promise<{ payout: Payout; claim: PayoutClaim | null } | null> {
  if (!isPayoutId(id)) return null;
  const item = await getItem(moneyKeys.payout(accountId, id));
  const payout = toPayout(item);
  return payout ? { payout, claim: toClaim(item?.claim) } : null;
}

/**
 * The claim write (inside `txn`): the payout at the version and status read, with no claim yet, gets
 * `claim` and a new version, so no other writer conditioned on the version read (a batch, an approval, a
 * void, another transition) can change it any more. A due payout leaves collection as a batch would take
 * it (`processing`, its pointer deleted): the member's next approvals start a new payout. Returns the
 * payout as claimed.
 */
export function claimPayout(txn: MoneyTxn, before: Payout, claim: PayoutClaim, now: number): Payout {
  const next: Payout = { ...before, status: 'processing', updated_at: now, version: before.version + 1 };
  txn.push(
    {
      Put: {
        TableName: tableName(),
        Item: { ...payoutItem(txn.accountId, next), claim: Object.fromEntries(Object.entries(claim).filter(([, v]) => v !== undefined)) },
        ConditionExpression: 'version = :v AND #st = :s AND attribute_not_exists(#claim)',
        ExpressionAttributeNames: { '#st': 'status', '#claim': 'claim' },
        ExpressionAttributeValues: { ':v': before.version, ':s': before.status },
      },
    },
    `payout:${before.id}`,
  );
  if (before.status !== next.status) {
    for (const prefix of payoutCounterPrefixes(next)) {
      txn.count(`${prefix}#s#${before.status}` as CounterName, -1);
      txn.count(`${prefix}#s#${next.status}` as CounterName, 1);
    }
    payoutSums(txn, before, next);
  }
  if (before.status === 'due') {
    txn.push(
      {
        Delete: {
          TableName: tableName(),
          Key: moneyKeys.payoutPointer(txn.accountId, before.member_id, before.currency),
          ConditionExpression: 'attribute_not_exists(pk) OR payout_id = :p',
          ExpressionAttributeValues: { ':p': before.id },
        },
      },
      `pointer:${before.member_id}:${before.currency}`,
    );
  }
  return next;
}

/** Replaces payout `before` with `next`, conditioned on the version and status read; counters follow the status. */
export function putPayoutVersion(txn: MoneyTxn, before: Payout, next: Payout, allowed: readonly PayoutStatus[] = [before.status]): void {
  const values: Record<string, unknown> = { ':v': before.version };
  allowed.forEach((s, i) => {
    values[`:s${i}`] = s;
  });
  txn.push(
    {
      Put: {
        TableName: tableName(),
        Item: payoutItem(txn.accountId, next),
        ConditionExpression: `version = :v AND #st IN (${allowed.map((_, i) => `:s${i}`).join(', ')})`,
        ExpressionAttributeNames: { '#st': 'status' },
        ExpressionAttributeValues: values,
      },
    },
    `payout:${next.id}`,
  );
  if (before.status !== next.status) {
    for (const prefix of payoutCounterPrefixes(next)) {
      txn.count(`${prefix}#s#${before.status}` as CounterName, -1);
      txn.count(`${prefix}#s#${next.status}` as CounterName, 1);
    }
  }
}

/** The summary's running totals: what `before` counted leaves its status, what `next` counts joins its. */
export function payoutSums(txn: MoneyTxn, before: Payout | null, next: Payout): void {
  if (before) txn.count(`payout_sum#${before.status}#${before.currency}` as CounterName, -before.amount);
  txn.count(`payout_sum#${next.status}#${next.currency}` as CounterName, next.amount);
}

export function payoutItem(accountId: string, p: Payout): Record<string, unknown> {
  const item: Record<string, unknown> = {
    ...moneyKeys.payout(accountId, p.id),
    type: 'Payout',
    gsi1pk: moneyKeys.payoutsByMember(accountId, p.member_id),
    gsi1sk: p.id,
    gsi2pk: moneyKeys.payoutsByStatus(accountId, p.status),
    gsi2sk: p.id,
  };
  for (const [k, v] of Object.entries(p)) {
    if (v === null || v === undefined) continue;
    // A string set cannot be empty in DynamoDB: an empty payout has no reward_ids attribute.
    if (k === 'reward_ids') {
      if ((v as string[]).length > 0) item[k] = new Set(v as string[]);
      continue;
    }
    item[k] = v;
  }
  return item;
}
