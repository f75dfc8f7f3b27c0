// Property (fast-check) of held rewards (docs/fraud.md "Holds") on DynamoDB Local, through the flows the
// API, the workers and the flags call: random sequences of commissions earned, approvals, holds (of a
// referral or of the member, each by a new flag), releases (one reward, or a flag's), voids (one reward, or
// a flag's), refunds (clawbacks) and batches marked paid. After every sequence:
// - the member's stats (earned, pending, approved, held, paid) are what the ledger's rewards say;
// - every payout's amount is the sum of its rewards, and no held reward is in a payout;
// - the report buckets (commission earned and paid) are what the rewards say;
// - the list counters (all, per status, per member and status) count the ledger's rewards exactly;
// - each flag's held_count is the number of rewards it still holds, its held_reward_ids each once;
// - an approval-due item exists exactly for each pending reward with an approval time.
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { DetailError } from '../../shared/domain/errors';
import { newEntityId } from '../../shared/domain/ids';
import { REWARD_STATUSES, type LedgerReward, type Payout } from '../../shared/domain/lifecycle';
import { holdRewards, releaseHeld, releaseReward, voidHeld } from '../../shared/flows/fraud-holds';
import { approveReward, voidReward } from '../../shared/flows/lifecycle';
import { createBatch, markBatchPaid } from '../../shared/flows/payouts';
import { db, tableName } from '../../shared/store/client';
import { toLedgerReward } from '../../shared/store/ledger';
import { getItem, queryAll, readCounter } from '../../shared/store/ops';
import { toPayout } from '../../shared/store/payouts';
import { toReferral } from '../../shared/store/referrals';
import { readDays } from '../../shared/store/reports';
import { recordRewards } from '../../shared/store/rewards';
import { fraudKeys, keys, moneyKeys, moneyListKeys, type CounterName } from '../../shared/store/table';
import { api } from '../support/api';
import { refundCommission } from '../support/money-steps';
import { newAccount } from '../support/fixtures';

type Op =
  | { kind: 'earn'; cents: number; referral: number | null }
  | { kind: 'approve'; pick: number }
  | { kind: 'holdReferral'; pick: number }
  | { kind: 'holdMember' }
  | { kind: 'release'; pick: number }
  | { kind: 'releaseFlag'; pick: number }
  | { kind: 'void'; pick: number }
  | { kind: 'voidFlag'; pick: number }
  | { kind: 'refund'; pick: number; part: 'full' | 'half' }
  | { kind: 'batch'; paid: boolean };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant('earn' as const), cents: fc.integer({ min: 1, max: 5_000 }), referral: fc.option(fc.nat()) }),
    weight: 5,
  },
  { arbitrary: fc.record({ kind: fc.constant('approve' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('holdReferral' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.constant({ kind: 'holdMember' as const }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('release' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('releaseFlag' as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('void' as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('voidFlag' as const), pick: fc.nat() }), weight: 1 },
  {
    arbitrary: fc.record({ kind: fc.constant('refund' as const), pick: fc.nat(), part: fc.constantFrom('full' as const, 'half' as const) }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('batch' as const), paid: fc.boolean() }), weight: 2 },
);

/** Every item of one partition, read consistently. */
const all = (pk: string) => queryAll({ partitionValue: pk, consistent: true });

/** What a sequence may ask that its state does not allow: 400 or 409 (a release of a reward not held, say). */
const refused = (err: unknown) => err instanceof DetailError && (err.status === 409 || err.status === 400);

const sum = (list: { amount: number }[]) => list.reduce((a, r) => a + r.amount, 0);

it('stats, payouts, report buckets, counters and flags follow the ledger through holds, releases and voids', async () => {
  let runs = 0;
  // Runs whose flags held something, and runs that ended with rewards still held: the sequences reach both.
  let holding = 0;
  let stillHeld = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 12 }), fc.constantFrom(0, 30), async (generated, holdDays) => {
      runs++;
      // Every other run ends with a new commission and a member-level hold, so the sequences surely reach
      // a final state with rewards still held (random ones alone missed it in about one run of CI in 20).
      const ops: typeof generated =
        runs % 2 === 0 ? [...generated, { kind: 'earn', referral: null, cents: 700 }, { kind: 'holdMember' }] : generated;
      const { accountId, apiKey } = await newAccount('unlimited');
      const call = (method: string, path: string, body?: unknown) =>
        api(method, path, { key: apiKey, ...(body === undefined ? {} : { body }) });
      const campaign = (
        await call('POST', '/v1/campaigns/', {
          name: 'held-prop',
          allows_commission: true,
          commission_amount: '1.00',
          hold_days: holdDays,
          min_payout: '5.00',
        })
      ).body;
      const member = (
        await call('POST', '/v1/members/', {
          identifier: 'payee',
          email: 'payee@example.com',
          campaign: { id: campaign.id },
          payout_email: 'payee@pay.example.com',
        })
      ).body;
      const referrals: string[] = [];
      const flags: string[] = [];
      let payment = 0;
      let refundSerial = 0;
      const ledger = async () =>
        (await all(moneyListKeys.rewardCollection(accountId))).map((i) => toLedgerReward(i)).filter((r): r is LedgerReward => r !== null);
      const tops = async () => (await ledger()).filter((r) => r.reverses === undefined);
      const pick = <T>(list: T[], n: number): T | undefined => (list.length ? list[n % list.length] : undefined);
      const newFlag = async () => {
        const id = `ff_${newEntityId()}`;
        await db().send(
          new PutCommand({
            TableName: tableName(),
            Item: { ...fraudKeys.flag(accountId, id), type: 'FraudFlag', id, status: 'open', held_count: 0, held_reward_ids: [] },
          }),
        );
        flags.push(id);
        return id;
      };
      const resolve = (id: string, status: string) =>
        db().send(
          new UpdateCommand({
            TableName: tableName(),
            Key: fraudKeys.flag(accountId, id),
            UpdateExpression: 'SET #st = :s',
            ExpressionAttributeNames: { '#st': 'status' },
            ExpressionAttributeValues: { ':s': status },
          }),
        );

      for (const o of ops) {
        try {
          if (o.kind === 'earn') {
            // A new referral, or another payment of one already there.
            let id = o.referral === null ? undefined : pick(referrals, o.referral);
            if (!id) {
              const ref = (await call('POST', '/v1/referrals/', { user_identifier: `u${referrals.length}`, member_code: member.code }))
                .body;
              referrals.push(ref.id);
              id = ref.id as string;
            }
            const stored = toReferral(await getItem(keys.referral(accountId, id)))!;
            const recorded = await recordRewards(
              accountId,
              stored,
              [{ payment_id: ++payment, type: 'commission', amount: o.cents, currency: 'USD' }],
              false,
              true,
            );
            // What the worker does next with a hold of 0 days (a held one stays held).
            const created = recorded.rewards[recorded.rewards.length - 1]!;
            if (holdDays === 0) await approveReward(accountId, created.id, { schedule: true });
          } else if (o.kind === 'approve') {
            const target = pick(await tops(), o.pick);
            if (target) await approveReward(accountId, target.id);
          } else if (o.kind === 'holdReferral') {
            const id = pick(referrals, o.pick);
            if (id) {
              await holdRewards(accountId, { referralId: id }, await newFlag());
            }
          } else if (o.kind === 'holdMember') {
            await holdRewards(accountId, { memberId: member.id }, await newFlag());
          } else if (o.kind === 'release') {
            const target = pick(await tops(), o.pick);
            if (target) await releaseReward(accountId, target.id);
          } else if (o.kind === 'releaseFlag' || o.kind === 'voidFlag') {
            const id = pick(flags, o.pick);
            if (id) {
              const flag = (await getItem(fraudKeys.flag(accountId, id))) as { held_reward_ids: string[] };
              if (o.kind === 'releaseFlag') await releaseHeld(accountId, flag.held_reward_ids, { flagId: id });
              else await voidHeld(accountId, flag.held_reward_ids, { flagId: id });
              await resolve(id, o.kind === 'releaseFlag' ? 'released' : 'voided');
            }
          } else if (o.kind === 'void') {
            const target = pick(await tops(), o.pick);
            if (target) await voidReward(accountId, target.id, 'fraud');
          } else if (o.kind === 'refund') {
            const target = pick(await tops(), o.pick);
            if (target) await refundCommission(accountId, target, o.part, `rf${++refundSerial}`);
          } else if (o.kind === 'batch') {
            const batch = await createBatch(accountId, { format: 'csv', currency: 'USD' });
            if (batch.payout_ids.length > 0 && o.paid) await markBatchPaid(accountId, batch.id, {});
          }
        } catch (err) {
          if (!refused(err)) throw err;
        }
      }

      // ---- invariants ----
      const rewards = await ledger();
      const pays = (await all(moneyListKeys.payoutCollection(accountId))).map((i) => toPayout(i)).filter((p): p is Payout => p !== null);
      const by = (status: string) => sum(rewards.filter((r) => r.status === status));

      // Payouts: each the sum of the rewards that point at it; no held reward in any.
      for (const p of pays.filter((x) => x.status !== 'failed' && x.status !== 'canceled')) {
        const mine = rewards.filter((r) => r.payout_id === p.id);
        expect(mine.map((r) => r.id).sort()).toEqual(p.reward_ids);
        expect(p.amount).toBe(sum(mine));
      }
      const inPayouts = new Set(pays.flatMap((p) => p.reward_ids));
      for (const r of rewards.filter((x) => x.status === 'held')) {
        expect(r.payout_id).toBeNull();
        expect(inPayouts.has(r.id)).toBe(false);
        expect(r.held_by).toMatch(/^ff_/);
      }
      expect(sum(rewards.filter((r) => r.status === 'paid'))).toBe(sum(pays.filter((p) => p.status === 'paid')));

      // Member stats.
      const stats = (await call('GET', `/v1/members/${member.id}/`)).body.stats;
      const cents = (s: string) => Math.round(Number(s) * 100);
      expect({
        earned: cents(stats.commission_earned),
        pending: cents(stats.commission_pending),
        approved: cents(stats.commission_approved),
        held: cents(stats.commission_held),
        paid: cents(stats.commission_paid),
      }).toEqual({
        earned: sum(rewards.filter((r) => r.status !== 'voided')),
        pending: by('pending'),
        approved: by('approved'),
        held: by('held'),
        paid: by('paid'),
      });

      // Report buckets.
      const today = new Date().toISOString().slice(0, 10);
      const days = [...(await readDays(accountId, 'T', '2000-01-01', today)).values()];
      const bucket = (attr: string) => days.reduce((a, d) => a + (d[attr] ?? 0), 0);
      expect({ earned: bucket('commission_earned_USD'), paid: bucket('commission_paid_USD') }).toEqual({
        earned: sum(rewards.filter((r) => r.status !== 'voided')),
        paid: by('paid'),
      });

      // List counters.
      const counted: Record<string, number> = {};
      const expected: Record<string, number> = {};
      for (const prefix of ['rewards', `rewards#m#${member.id}`, `rewards#c#${campaign.id}`]) {
        counted[prefix] = await readCounter(accountId, prefix as CounterName);
        expected[prefix] = rewards.length;
        for (const status of REWARD_STATUSES) {
          const name = `${prefix}#s#${status}`;
          counted[name] = await readCounter(accountId, name as CounterName);
          expected[name] = rewards.filter((r) => r.status === status).length;
        }
      }
      expect(counted).toEqual(expected);

      // Flags: held_count is what each still holds; each id listed once.
      if (rewards.some((r) => r.status === 'held')) stillHeld++;
      let held = false;
      for (const id of flags) {
        const flag = (await getItem(fraudKeys.flag(accountId, id))) as { held_count: number; held_reward_ids: string[] };
        const holds = rewards.filter((r) => r.status === 'held' && r.held_by === id && r.reverses === undefined);
        expect({ id, count: flag.held_count }).toEqual({ id, count: holds.length });
        expect(new Set(flag.held_reward_ids).size).toBe(flag.held_reward_ids.length);
        if (flag.held_reward_ids.length > 0) held = true;
        for (const r of holds) expect(flag.held_reward_ids).toContain(r.id);
      }
      if (held) holding++;

      // Approval-due items: exactly the pending rewards with an approval time (clawbacks follow theirs).
      const due = (await all(moneyKeys.approvalDueCollection(accountId))).map((i) => String(i.sk)).sort();
      const scheduled = rewards
        .filter((r) => r.status === 'pending' && r.approves_at !== null)
        .map((r) => moneyKeys.approvalDue(accountId, r.approves_at as number, r.id).sk)
        .sort();
      expect(due).toEqual(scheduled);
    }),
    { numRuns: 10 },
  );
  expect(runs).toBe(10);
  expect({ holding: holding > 0, stillHeld: stillHeld > 0 }).toEqual({ holding: true, stillHeld: true });
}, 120_000);
