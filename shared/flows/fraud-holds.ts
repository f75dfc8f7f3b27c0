// Held rewards (docs/fraud.md "Holds"): a hold puts unpaid commissions in `held`, which approval and payouts
// skip; an operator releases them (back to pending, or approved at once when their hold period has passed)
// or voids them.
//
// - What a hold takes: every commission of the referral (or of the member) that is pending, or approved in
//   a collecting payout (`open`/`due`: it leaves the payout, whose amount and status follow in the same
//   transaction); never one in a payout being paid, never a credit. A clawback follows the reward it
//   reverses (held, released and voided with it) and is not counted on the flag.
// - Each held reward carries `held_by: <flag id>` (kept afterwards: the same flag never takes it again).
//   The flag's `held_reward_ids` and `held_count` change in the same transactions as the rewards
//   (store/ledger.ts MoneyTxn), the holds conditioned on the flag existing and being open.
// - Many rewards are moved in several transactions, each whole and of bounded size (MAX_ITEMS); a repeat
//   (or a retry after a crash between two) holds, releases or voids only what is left.
// - Every write is conditioned on the state read (store/ledger.ts moveReward, the payout's version): a
//   concurrent approval, void, batch or release makes the transaction fail, and the operation reads again.
import { DetailError, NotFoundError } from '../domain/errors';
import { isEntityId } from '../domain/ids';
import { holdable, type LedgerReward, type Lifecycle, type Payout } from '../domain/lifecycle';
import type { Referral } from '../domain/models';
import { ledgerRewardView } from '../domain/views';
import { log } from '../log';
import { ledgerFromReferral, MoneyTxn, toLedgerReward } from '../store/ledger';
import { batchGet, ConditionsFailedError, getItem, lookup, queryAll, RaceLostError, transact, withRetries } from '../store/ops';
import { eventItem } from '../store/outbox';
import { changeCollecting, collectingTarget, toPayout, type CollectingTarget } from '../store/payouts';
import { toReferral } from '../store/referrals';
import { flagKey, GSI1, keys, moneyKeys } from '../store/table';

class HoldRaceError extends RaceLostError {}

/** Items of one transaction at most (DynamoDB allows 100; one is left for an Idempotency-Key marker). */
export const MAX_ITEMS = 99;

/** A reward with the clawbacks that follow it (read from its referral's copies). */
interface Family {
  reward: LedgerReward;
  clawbacks: LedgerReward[];
}

type Op = { kind: 'hold'; flagId: string } | { kind: 'release' } | { kind: 'void' };

/** What the operation read: the referrals (for the rewards' copies and clawbacks), and what exists. */
interface World {
  referrals: Map<string, Referral>;
  members: Set<string>;
  flags: Map<string, Record<string, unknown>>;
}

const nowOf = (opts: { now?: number }) => opts.now ?? Math.floor(Date.now() / 1000);

async function readWorld(accountId: string, referralIds: string[], memberIds: string[], flagIds: string[]): Promise<World> {
  const found = await batchGet([
    ...referralIds.map((id) => keys.referral(accountId, id)),
    ...memberIds.map((id) => keys.member(accountId, id)),
    ...flagIds.map((id) => flagKey(accountId, id)),
  ]);
  const referrals = new Map<string, Referral>();
  for (const id of referralIds) {
    const referral = toReferral(lookup(found, keys.referral(accountId, id)));
    if (referral) referrals.set(id, referral);
  }
  const flags = new Map<string, Record<string, unknown>>();
  for (const id of flagIds) {
    const flag = lookup(found, flagKey(accountId, id));
    if (flag) flags.set(id, flag);
  }
  return { referrals, members: new Set(memberIds.filter((id) => lookup(found, keys.member(accountId, id)))), flags };
}

/** The clawbacks of `reward` in its referral that move with it (in the same state). */
function followers(referral: Referral, reward: LedgerReward): LedgerReward[] {
  return referral.rewards.flatMap((c, i) => {
    if (c.reverses !== reward.id) return [];
    const claw = ledgerFromReferral(referral, i);
    return claw.status === reward.status && claw.payout_id === reward.payout_id ? [claw] : [];
  });
}

/** Where a family lands: one member's collecting payout in one currency, or none. */
function payoutGroup(op: Op, f: Family, now: number): string | null {
  const r = f.reward;
  if (op.kind === 'hold') return r.status === 'approved' ? `${r.member_id} ${r.currency}` : null;
  if (op.kind === 'release') return dueNow(r, now) ? `${r.member_id} ${r.currency}` : null;
  return null;
}

/** A released reward whose hold period has passed is approved at once (manual approval: never). */
const dueNow = (r: LedgerReward, now: number) => r.approves_at !== null && r.approves_at <= now;

/** The lifecycle fields of a reward of the family after the operation. */
function nextOf(op: Op, now: number, payoutId: string | null): Partial<Lifecycle> {
  if (op.kind === 'hold') return { status: 'held', held_by: op.flagId, approved_at: null, payout_id: null };
  if (op.kind === 'void') return { status: 'voided', voided_at: now, void_reason: 'fraud', approves_at: null, payout_id: null };
  return payoutId !== null ? { status: 'approved', approved_at: now, payout_id: payoutId } : { status: 'pending' };
}

/**
 * Moves `families` (all of one payout group) in as few transactions as fit MAX_ITEMS, each whole; answers
 * the top rewards as moved. A condition that fails is a race lost (HoldRaceError): the caller reads again.
 */
async function moveFamilies(
  accountId: string,
  op: Op,
  families: Family[],
  world: World,
  target: CollectingTarget | null,
  now: number,
): Promise<LedgerReward[]> {
  const moved: LedgerReward[] = [];
  let current = target;
  const build = (chunk: Family[]) => {
    const txn = new MoneyTxn(accountId);
    let payout: Payout | null = null;
    if (current) {
      const all = chunk.flatMap((f) => [f.reward, ...f.clawbacks]);
      payout = changeCollecting(
        txn,
        current,
        op.kind === 'release'
          ? { add: all.map((r) => ({ id: r.id, amount: r.amount, created_at: r.created_at })), remove: [] }
          : { add: [], remove: all.map((r) => ({ id: r.id, amount: r.amount })) },
        now,
      );
    }
    const tops: LedgerReward[] = [];
    for (const f of chunk) {
      const r = f.reward;
      if (!world.members.has(r.member_id)) txn.memberGone(r.member_id);
      if (!world.referrals.has(r.referral_id)) txn.referralGone(r.referral_id);
      if (r.held_by && !world.flags.has(r.held_by)) txn.flagGone(r.held_by);
      const next = nextOf(op, now, payout?.id ?? null);
      const top = txn.moveReward(r, next);
      for (const c of f.clawbacks) txn.moveReward(c, next);
      const view = ledgerRewardView(top);
      if (op.kind === 'hold') txn.push(eventItem(accountId, 'reward.held', `${r.id}:${op.flagId}`, view), `event:${r.id}`);
      else if (op.kind === 'void') txn.push(eventItem(accountId, 'reward.voided', r.id, view), `event:${r.id}`);
      else {
        txn.push(eventItem(accountId, 'reward.released', `${r.id}:${r.held_by ?? ''}`, view), `event:${r.id}`);
        if (top.status === 'approved')
          txn.push(eventItem(accountId, 'reward.approved', `${r.id}:${r.held_by ?? ''}`, view), `approved:${r.id}`);
      }
      tops.push(top);
    }
    return { items: txn.build(), payout, tops };
  };

  let i = 0;
  while (i < families.length) {
    // The largest chunk from `i` that fits one transaction (a family is never split).
    let best = build(families.slice(i, i + 1));
    if (best.items.length > MAX_ITEMS) throw new Error(`reward ${families[i]?.reward.id} needs ${best.items.length} items`);
    let n = 1;
    while (i + n < families.length) {
      const bigger = build(families.slice(i, i + n + 1));
      if (bigger.items.length > MAX_ITEMS) break;
      best = bigger;
      n++;
    }
    try {
      await transact(best.items);
    } catch (err) {
      if (err instanceof ConditionsFailedError) throw new HoldRaceError();
      throw err;
    }
    if (current && best.payout) current = { ...current, payout: best.payout };
    moved.push(...best.tops);
    i += n;
  }
  return moved;
}

/** Runs `op` on the families, one payout group after another (reading each group's collecting payout). */
async function moveAll(accountId: string, op: Op, families: Family[], world: World, now: number): Promise<LedgerReward[]> {
  const groups = new Map<string | null, Family[]>();
  for (const f of families) {
    const g = payoutGroup(op, f, now);
    groups.set(g, [...(groups.get(g) ?? []), f]);
  }
  const moved: LedgerReward[] = [];
  for (const [group, list] of groups) {
    let target: CollectingTarget | null = null;
    if (group !== null) {
      const first = (list[0] as Family).reward;
      target = await collectingTarget(accountId, first.member_id, first.currency);
      // A hold takes rewards out of the member's collecting payout: they must be in it (else read again).
      if (op.kind === 'hold' && list.some((f) => f.reward.payout_id !== target?.payout?.id)) throw new HoldRaceError();
    }
    moved.push(...(await moveFamilies(accountId, op, list, world, target, now)));
  }
  return moved;
}

/** The referrals a hold looks at: the one flagged, or every referral of the member. */
async function scopeReferrals(accountId: string, scope: { referralId: string } | { memberId: string }): Promise<string[]> {
  if ('referralId' in scope) return isEntityId(scope.referralId) ? [scope.referralId] : [];
  if (!isEntityId(scope.memberId)) return [];
  // The index is read for the ids only; the referrals themselves are read strongly consistent after.
  const items = await queryAll({ partitionValue: keys.referralsByMember(accountId, scope.memberId), index: GSI1 });
  return [...new Set(items.filter((i) => i.type === 'Referral').map((i) => String(i.sk)))];
}

/**
 * Puts every unpaid commission of the referral or of the member in `held`, tagged `held_by: flagId` (the flag
 * item must exist: its `held_reward_ids` and `held_count` change in the same transactions). A reward in a
 * payout being paid is left alone. Idempotent; answers the ids it held now.
 */
export async function holdRewards(
  accountId: string,
  scope: { referralId: string } | { memberId: string },
  flagId: string,
  opts: { now?: number } = {},
): Promise<string[]> {
  const held = new Set<string>();
  await withRetries(
    async () => {
      const now = nowOf(opts);
      const referralIds = await scopeReferrals(accountId, scope);
      if (referralIds.length === 0) return;
      const first = await readWorld(accountId, referralIds, [], [flagId]);
      const flag = first.flags.get(flagId);
      // A flag gone or resolved holds nothing (a hold is conditioned on it being open anyway).
      if (!flag || (flag.status !== undefined && flag.status !== 'open')) return;
      const already = new Set(Array.isArray(flag.held_reward_ids) ? (flag.held_reward_ids as string[]) : []);
      const candidates: LedgerReward[] = [];
      for (const referral of first.referrals.values()) {
        referral.rewards.forEach((_r, i) => {
          const r = ledgerFromReferral(referral, i);
          if (r.held_by === flagId || already.has(r.id)) return; // this flag held it once: never again
          if (r.type === 'commission' && r.reverses === undefined && (r.status === 'pending' || r.status === 'approved'))
            candidates.push(r);
        });
      }
      if (candidates.length === 0) return;
      // The payouts of the approved ones: only a collecting payout lets a reward go.
      const payoutIds = [...new Set(candidates.map((r) => r.payout_id).filter((p): p is string => p !== null))];
      const [payouts, members] = await Promise.all([
        batchGet(payoutIds.map((p) => moneyKeys.payout(accountId, p))),
        batchGet([...new Set(candidates.map((r) => r.member_id))].map((m) => keys.member(accountId, m))),
      ]);
      const world: World = {
        ...first,
        members: new Set([...candidates.map((r) => r.member_id)].filter((m) => lookup(members, keys.member(accountId, m)))),
      };
      const families: Family[] = candidates
        .filter((r) =>
          holdable(r, r.payout_id ? (toPayout(lookup(payouts, moneyKeys.payout(accountId, r.payout_id)))?.status ?? null) : null),
        )
        .map((r) => ({ reward: r, clawbacks: followers(world.referrals.get(r.referral_id) as Referral, r) }));
      for (const r of await moveAll(accountId, { kind: 'hold', flagId }, families, world, now)) held.add(r.id);
    },
    (err) => err instanceof HoldRaceError,
    8,
  );
  if (held.size > 0) log('info', 'rewards held', { account_id: accountId, flag_id: flagId, count: held.size });
  return [...held];
}

/** The held rewards among `rewardIds` (of flag `flagId` when given), as families read from their referrals. */
async function heldFamilies(
  accountId: string,
  rewardIds: string[],
  flagId: string | undefined,
  read?: LedgerReward,
): Promise<{ families: Family[]; world: World }> {
  const ids = [...new Set(rewardIds.filter(isEntityId))];
  // A reward just read (the reward endpoint's) is not read again.
  const found = read ? new Map() : await batchGet(ids.map((id) => keys.reward(accountId, id)));
  const ledger = new Map<string, LedgerReward>(read ? [[read.id, read]] : []);
  for (const id of read ? [] : ids) {
    const r = toLedgerReward(lookup(found, keys.reward(accountId, id)));
    if (r) ledger.set(id, r);
  }
  const held = [...ledger.values()].filter(
    (r) => r.status === 'held' && r.reverses === undefined && (flagId === undefined || r.held_by === flagId),
  );
  const world = await readWorld(
    accountId,
    [...new Set(held.map((r) => r.referral_id))],
    [...new Set(held.map((r) => r.member_id))],
    [...new Set(held.map((r) => r.held_by).filter((f): f is string => typeof f === 'string'))],
  );
  const families = held.map((r) => {
    const referral = world.referrals.get(r.referral_id);
    // The referral's copy is what the move conditions on with the ledger item (both change together).
    const copy = referral?.rewards[r.index]?.id === r.id ? ledgerFromReferral(referral, r.index) : r;
    return { reward: copy, clawbacks: referral ? followers(referral, copy) : [] };
  });
  return { families: families.filter((f) => f.reward.status === 'held'), world };
}

async function releaseOrVoid(
  accountId: string,
  op: Op,
  rewardIds: string[],
  opts: { now?: number; flagId?: string },
  read?: LedgerReward,
): Promise<LedgerReward[]> {
  let first = read;
  return withRetries(
    async () => {
      const now = nowOf(opts);
      const { families, world } = await heldFamilies(accountId, rewardIds, opts.flagId, first);
      first = undefined; // a retry reads afresh
      return moveAll(accountId, op, families, world, now);
    },
    (err) => err instanceof HoldRaceError,
    8,
  );
}

/** POST /v1/rewards/{id}/release/: a held reward back to pending (or approved when its hold period has passed); 409 when not held. */
export async function releaseReward(accountId: string, rewardId: string, opts: { now?: number } = {}): Promise<LedgerReward> {
  if (!isEntityId(rewardId)) throw new NotFoundError();
  for (let attempt = 1; ; attempt++) {
    const reward = toLedgerReward(await getItem(keys.reward(accountId, rewardId)));
    if (!reward) throw new NotFoundError();
    if (reward.reverses !== undefined) throw new DetailError(409, 'A clawback is released with the reward it reverses.');
    if (reward.status !== 'held') throw new DetailError(409, `This reward is ${reward.status}, not held: only a held reward is released.`);
    const [moved] = await releaseOrVoid(accountId, { kind: 'release' }, [rewardId], opts, reward);
    if (moved) {
      log('info', 'reward released', { account_id: accountId, reward_id: rewardId, flag_id: reward.held_by ?? null, status: moved.status });
      return { ...moved, version: reward.version + 1, index: reward.index };
    }
    // Released or voided meanwhile: answer as it is now (409 unless held again).
    if (attempt >= 3) throw new DetailError(409, 'This reward changed while it was being released; read it again.');
  }
}

/**
 * Releases those of `rewardIds` still held (a flag's release); the others are left as they are. With
 * `flagId`, only those that flag holds (a reward released and held again by another flag stays held).
 */
export async function releaseHeld(accountId: string, rewardIds: string[], opts: { now?: number; flagId?: string } = {}): Promise<void> {
  const moved = await releaseOrVoid(accountId, { kind: 'release' }, rewardIds, opts);
  if (moved.length > 0) log('info', 'rewards released', { account_id: accountId, count: moved.length, flag_id: opts.flagId ?? null });
}

/** Voids (reason `fraud`) those of `rewardIds` still held (a flag's void); the others are left as they are. With `flagId`, only that flag's. */
export async function voidHeld(accountId: string, rewardIds: string[], opts: { now?: number; flagId?: string } = {}): Promise<void> {
  const moved = await releaseOrVoid(accountId, { kind: 'void' }, rewardIds, opts);
  if (moved.length > 0) log('info', 'held rewards voided', { account_id: accountId, count: moved.length, flag_id: opts.flagId ?? null });
}
