// Held rewards (docs/fraud.md "Holds"), the pure parts: the status's stat and rules, a new reward of a
// referral under a hold, and what a money transaction writes on the flag (shared/store/ledger.ts MoneyTxn)
// when rewards enter or leave `held`.
import { commissionStat, holdable, lifecycleOf, voidable, type LedgerReward } from '../../shared/domain/lifecycle';
import { REWARD_STATUSES, type Reward } from '../../shared/domain/models';
import { newReward } from '../../shared/domain/rewards';
import { MoneyTxn, removeReward } from '../../shared/store/ledger';
import type { TransactItem } from '../../shared/store/ops';

const FLAG = `ff_${'a'.repeat(32)}`;
const OTHER = `ff_${'b'.repeat(32)}`;

function reward(fields: Partial<LedgerReward> = {}): LedgerReward {
  return {
    id: 'r'.repeat(32),
    type: 'commission',
    amount: 500,
    currency: 'USD',
    created_at: 1_000,
    payment_id: 1,
    referral_id: 'f'.repeat(32),
    member_id: 'm'.repeat(32),
    campaign_id: null,
    index: 0,
    version: 1,
    status: 'pending',
    approves_at: 1_000 + 30 * 86_400,
    approved_at: null,
    paid_at: null,
    voided_at: null,
    void_reason: null,
    payout_id: null,
    ...fields,
  };
}

const flagWrites = (items: TransactItem[]) => items.filter((i) => i.Update?.Key?.pk === 'A#acct#FRAUD_FLAG');
const dueWrites = (items: TransactItem[]) =>
  items.filter((i) => String(i.Put?.Item?.pk ?? i.Delete?.Key?.pk ?? '').endsWith('#APPROVAL_DUE'));

describe('the held status', () => {
  it('is a reward status; a held commission counts in commission_held only, a credit in none', () => {
    expect(REWARD_STATUSES).toContain('held');
    expect(commissionStat('commission', 'held')).toBe('commission_held');
    expect(commissionStat('commission', 'pending')).toBe('commission_pending');
    expect(commissionStat('credit', 'held')).toBeNull();
  });

  it('a hold takes a pending commission, or an approved one in a collecting payout; never a credit, a clawback, nor a payout being paid', () => {
    expect(holdable(reward(), null)).toBe(true);
    expect(holdable(reward({ status: 'approved' }), 'open')).toBe(true);
    expect(holdable(reward({ status: 'approved' }), 'due')).toBe(true);
    expect(holdable(reward({ status: 'approved' }), 'processing')).toBe(false);
    expect(holdable(reward({ status: 'approved' }), null)).toBe(false);
    for (const status of ['paid', 'voided', 'held', 'applied'] as const) expect(holdable(reward({ status }), null)).toBe(false);
    expect(holdable(reward({ type: 'credit' }), null)).toBe(false);
    expect(holdable(reward({ reverses: 'x'.repeat(32), amount: -100 }), null)).toBe(false);
  });

  it('a held reward may be voided (it is in no payout)', () => {
    expect(voidable('held', null)).toBe(true);
  });

  it("reads held_by from the referral's copy", () => {
    const stored = { id: 'x', type: 'commission', amount: 1, currency: 'USD', created_at: 1, payment_id: 1, status: 'held', held_by: FLAG };
    expect(lifecycleOf(stored as Reward)).toMatchObject({ status: 'held', held_by: FLAG });
    expect(lifecycleOf({ ...stored, status: 'pending', held_by: undefined } as unknown as Reward)).not.toHaveProperty('held_by');
  });
});

describe('a new reward of a referral under a hold', () => {
  const planned = { payment_id: 7, type: 'commission' as const, amount: 300, currency: 'USD' };

  it('a commission is held by the flag, keeping the approval time a release restores', () => {
    expect(newReward(planned, 'id1', 1_000, { hold_days: 10, fraud_hold: FLAG })).toMatchObject({
      status: 'held',
      held_by: FLAG,
      approves_at: 1_000 + 10 * 86_400,
    });
    // Manual approval: no approval time to keep.
    const manual = newReward(planned, 'id1', 1_000, { approval: 'manual', fraud_hold: FLAG });
    expect(manual).toMatchObject({ status: 'held', held_by: FLAG });
    expect(manual).not.toHaveProperty('approves_at');
  });

  it('a credit is never held; without a hold nothing changes', () => {
    const credit = newReward({ ...planned, type: 'credit' }, 'id2', 1_000, { fraud_hold: FLAG });
    expect(credit).toMatchObject({ status: 'pending' });
    expect(credit).not.toHaveProperty('held_by');
    expect(newReward(planned, 'id3', 1_000, { hold_days: 0 })).toMatchObject({ status: 'pending', approves_at: 1_000 });
  });
});

describe("a money transaction and the reward's flag", () => {
  it('a reward created held appends its id and adds 1, conditioned on the flag existing and open; two merge into one write', () => {
    const txn = new MoneyTxn('acct');
    txn.addReward(reward({ status: 'held', held_by: FLAG }));
    txn.addReward(reward({ id: 's'.repeat(32), status: 'held', held_by: FLAG }));
    const items = txn.build();
    const [flag, ...more] = flagWrites(items);
    expect(more).toEqual([]);
    expect(flag?.Update).toMatchObject({
      Key: { pk: 'A#acct#FRAUD_FLAG', sk: FLAG },
      UpdateExpression: 'SET #ids = list_append(if_not_exists(#ids, :none), :ids) ADD held_count :n',
      ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#st) OR #st = :open)',
      ExpressionAttributeValues: { ':n': 2, ':ids': ['r'.repeat(32), 's'.repeat(32)], ':open': 'open', ':none': [] },
    });
    // A held reward has no approval-due item.
    expect(dueWrites(items)).toEqual([]);
  });

  it('a hold (pending -> held) deletes the approval-due item and counts on the flag', () => {
    const txn = new MoneyTxn('acct');
    txn.moveReward(reward(), { status: 'held', held_by: FLAG });
    const items = txn.build();
    expect(dueWrites(items).map((i) => Object.keys(i))).toEqual([['Delete']]);
    expect(flagWrites(items)[0]?.Update?.ExpressionAttributeValues).toMatchObject({ ':n': 1, ':ids': ['r'.repeat(32)] });
  });

  it('a release (held -> pending) puts the approval-due item back and takes 1 off the flag, with no condition on its status', () => {
    const txn = new MoneyTxn('acct');
    txn.moveReward(reward({ status: 'held', held_by: FLAG }), { status: 'pending' });
    const items = txn.build();
    expect(dueWrites(items).map((i) => i.Put?.Item?.reward_id)).toEqual(['r'.repeat(32)]);
    expect(flagWrites(items)[0]?.Update).toMatchObject({
      UpdateExpression: 'ADD held_count :n',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':n': -1 },
    });
  });

  it('a void of a held reward takes it off its flag; a flag known to be gone is not written; a clawback is never counted', () => {
    const voided = new MoneyTxn('acct');
    voided.moveReward(reward({ status: 'held', held_by: FLAG }), { status: 'voided', voided_at: 2_000, void_reason: 'fraud' });
    expect(flagWrites(voided.build())[0]?.Update?.ExpressionAttributeValues).toEqual({ ':n': -1 });

    const gone = new MoneyTxn('acct').flagGone(FLAG);
    gone.moveReward(reward({ status: 'held', held_by: FLAG }), { status: 'pending' });
    expect(flagWrites(gone.build())).toEqual([]);

    const claw = new MoneyTxn('acct');
    claw.addReward(reward({ status: 'held', held_by: FLAG, reverses: 'r'.repeat(32), amount: -100 }));
    claw.moveReward(reward({ id: 'c'.repeat(32), status: 'held', held_by: FLAG, reverses: 'r'.repeat(32) }), { status: 'pending' });
    expect(flagWrites(claw.build())).toEqual([]);
  });

  it('a reward moving between two flags counts off one and on the other; one deleted with its referral counts off', () => {
    const txn = new MoneyTxn('acct');
    txn.moveReward(reward({ status: 'held', held_by: FLAG }), { status: 'pending' });
    txn.moveReward(reward({ id: 't'.repeat(32) }), { status: 'held', held_by: OTHER });
    removeReward(txn, reward({ id: 'u'.repeat(32), status: 'held', held_by: OTHER }));
    const writes = flagWrites(txn.build());
    expect(writes.map((w) => [w.Update?.Key?.sk, w.Update?.ExpressionAttributeValues?.[':n']])).toEqual([
      [FLAG, -1],
      [OTHER, 0],
    ]);
    // OTHER: +1 (appended) and -1 in one write; the append stays conditioned on the flag being open.
    expect(writes[1]?.Update?.ExpressionAttributeValues?.[':ids']).toEqual(['t'.repeat(32)]);
  });

  it('member stats: a hold moves pending to held, earned unchanged', () => {
    const txn = new MoneyTxn('acct');
    txn.moveReward(reward(), { status: 'held', held_by: FLAG });
    const member = txn.build().find((i) => i.Update?.Key?.pk === 'A#acct#MEMBER');
    const values = Object.values(member?.Update?.ExpressionAttributeValues ?? {});
    expect(member?.Update?.UpdateExpression).toBe('ADD commission_pending :d0, commission_held :d1');
    expect(values).toEqual([-500, 500]);
  });
});
