// Property (fast-check) over random sequences of the money side on DynamoDB Local, through the same flows
// the API and the workers call: commissions earned (as the reward worker records them), refunds before and
// after payment (clawbacks), approvals, voids, batches, mark-paid and mark-failed, deleted referrals. After
// every sequence:
// - the paid rewards add up to the paid payouts;
// - no reward is in two live payouts, and every payout's amount is the sum of its rewards;
// - the member's stats and the report buckets say what the rewards say.
import fc from 'fast-check';
import { approveReward, voidReward } from '../../shared/flows/lifecycle';
import { createBatch, markBatchPaid, markPayoutFailed, markPayoutPaid } from '../../shared/flows/payouts';
import { deleteReferralAndRewards } from '../../shared/flows/referral-delete';
import { DetailError } from '../../shared/domain/errors';
import type { LedgerReward, Payout } from '../../shared/domain/lifecycle';
import { toLedgerReward } from '../../shared/store/ledger';
import { getItem, queryAll } from '../../shared/store/ops';
import { toPayout } from '../../shared/store/payouts';
import { readDays } from '../../shared/store/reports';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys, moneyListKeys } from '../../shared/store/table';
import { api } from '../support/api';
import { refundCommission } from '../support/money-steps';
import { newAccount } from '../support/fixtures';

type Op =
  | { kind: 'earn'; cents: number }
  | { kind: 'refund'; pick: number; part: 'full' | 'half' }
  | { kind: 'approve'; pick: number }
  | { kind: 'void'; pick: number }
  | { kind: 'batch' }
  | { kind: 'paid'; pick: number }
  | { kind: 'failed'; pick: number }
  | { kind: 'delete'; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('earn' as const), cents: fc.integer({ min: 1, max: 5_000 }) }), weight: 4 },
  {
    arbitrary: fc.record({ kind: fc.constant('refund' as const), pick: fc.nat(), part: fc.constantFrom('full' as const, 'half' as const) }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('approve' as const), pick: fc.nat() }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('void' as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.constant({ kind: 'batch' as const }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('paid' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('failed' as const), pick: fc.nat() }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('delete' as const), pick: fc.nat() }), weight: 1 },
);

/** Every item of one partition, read consistently. */
const all = (pk: string) => queryAll({ partitionValue: pk, consistent: true });

/** The expected 409s of a sequence that asks for something its state does not allow. */
const refused = (err: unknown) => err instanceof DetailError && (err.status === 409 || err.status === 400);

it('paid rewards equal paid payouts, no reward is in two payouts, and stats and reports follow the rewards', async () => {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 3, maxLength: 14 }), fc.boolean(), async (ops, manual) => {
      runs++;
      const { accountId, apiKey } = await newAccount('unlimited');
      const call = (method: string, path: string, body?: unknown) =>
        api(method, path, { key: apiKey, ...(body === undefined ? {} : { body }) });
      const campaign = (
        await call('POST', '/v1/campaigns/', {
          name: 'prop',
          allows_commission: true,
          commission_amount: '1.00',
          hold_days: 0,
          approval: manual ? 'manual' : 'auto',
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
      let payment = 0;
      let refundSerial = 0;
      const rewardIds = async () =>
        (await all(moneyListKeys.rewardCollection(accountId)))
          .map((i) => toLedgerReward(i))
          .filter((r): r is LedgerReward => r !== null && r.reverses === undefined);
      const payouts = async () =>
        (await all(moneyListKeys.payoutCollection(accountId))).map((i) => toPayout(i)).filter((p): p is Payout => p !== null);
      const pick = <T>(list: T[], n: number): T | undefined => (list.length ? list[n % list.length] : undefined);

      for (const o of ops) {
        try {
          if (o.kind === 'earn') {
            const ref = (await call('POST', '/v1/referrals/', { user_identifier: `u${referrals.length}`, member_code: member.code })).body;
            referrals.push(ref.id);
            const stored = toReferral(await getItem(keys.referral(accountId, ref.id)))!;
            const recorded = await recordRewards(
              accountId,
              stored,
              [{ payment_id: ++payment, type: 'commission', amount: o.cents, currency: 'USD' }],
              false,
              true,
            );
            // What the worker does next with a hold of 0 days (auto approval).
            if (!manual) await approveReward(accountId, recorded.rewards[0]!.id, { schedule: true });
          } else if (o.kind === 'refund') {
            const target = pick(await rewardIds(), o.pick);
            if (target) await refundCommission(accountId, target, o.part, `rf${++refundSerial}`);
          } else if (o.kind === 'approve') {
            const target = pick(await rewardIds(), o.pick);
            if (target) await approveReward(accountId, target.id);
          } else if (o.kind === 'void') {
            const target = pick(await rewardIds(), o.pick);
            if (target) await voidReward(accountId, target.id, 'fraud');
          } else if (o.kind === 'batch') {
            const batch = await createBatch(accountId, { format: 'csv', currency: 'USD' });
            if (batch.payout_ids.length > 0 && o.kind === 'batch' && payment % 2 === 0) await markBatchPaid(accountId, batch.id, {});
          } else if (o.kind === 'paid') {
            const target = pick(
              (await payouts()).filter((p) => p.status === 'processing' || p.status === 'due'),
              o.pick,
            );
            if (target) await markPayoutPaid(accountId, target.id, {});
          } else if (o.kind === 'failed') {
            const target = pick(
              (await payouts()).filter((p) => p.status === 'processing'),
              o.pick,
            );
            if (target) await markPayoutFailed(accountId, target.id, 'bounced');
          } else if (o.kind === 'delete') {
            const id = pick(referrals, o.pick);
            if (id) await deleteReferralAndRewards(accountId, id);
          }
        } catch (err) {
          if (!refused(err) && !(err instanceof Error && err.message === 'Not found.')) throw err;
        }
      }

      // ---- invariants ----
      const rewards = (await all(moneyListKeys.rewardCollection(accountId)))
        .map((i) => toLedgerReward(i))
        .filter((r): r is LedgerReward => r !== null);
      const pays = await payouts();
      const sum = (list: { amount: number }[]) => list.reduce((a, r) => a + r.amount, 0);
      // 1. Paid rewards add up to paid payouts.
      expect(sum(rewards.filter((r) => r.status === 'paid'))).toBe(sum(pays.filter((p) => p.status === 'paid')));
      // 2. No reward in two live payouts; each payout is the sum of the rewards that point at it.
      const live = pays.filter((p) => p.status !== 'failed' && p.status !== 'canceled');
      const seen = new Set<string>();
      for (const p of live) {
        for (const id of p.reward_ids) {
          expect(seen.has(id)).toBe(false);
          seen.add(id);
        }
        const mine = rewards.filter((r) => r.payout_id === p.id);
        expect(mine.map((r) => r.id).sort()).toEqual(p.reward_ids);
        expect(p.amount).toBe(sum(mine));
      }
      for (const r of rewards) if (r.payout_id) expect(live.some((p) => p.id === r.payout_id)).toBe(true);
      // Nothing approved waits outside a payout, nothing paid or voided sits in a collecting one.
      for (const r of rewards) {
        if (r.status === 'approved') expect(r.payout_id).not.toBeNull();
        if (r.status === 'pending' || r.status === 'voided') expect(r.payout_id).toBeNull();
      }
      // 3. Member stats and report buckets say what the rewards say.
      const stats = (await call('GET', `/v1/members/${member.id}/`)).body.stats;
      const cents = (s: string) => Math.round(Number(s) * 100);
      const by = (status: string) => sum(rewards.filter((r) => r.status === status));
      expect({
        earned: cents(stats.commission_earned),
        pending: cents(stats.commission_pending),
        approved: cents(stats.commission_approved),
        paid: cents(stats.commission_paid),
      }).toEqual({
        earned: sum(rewards.filter((r) => r.status !== 'voided')),
        pending: by('pending'),
        approved: by('approved'),
        paid: by('paid'),
      });
      const today = new Date().toISOString().slice(0, 10);
      const days = [...(await readDays(accountId, 'T', '2000-01-01', today)).values()];
      const bucket = (attr: string) => days.reduce((a, d) => a + (d[attr] ?? 0), 0);
      expect({ earned: bucket('commission_earned_USD'), paid: bucket('commission_paid_USD') }).toEqual({
        earned: sum(rewards.filter((r) => r.status !== 'voided')),
        paid: by('paid'),
      });
    }),
    { numRuns: 20 },
  );
  expect(runs).toBe(20);
}, 240_000);
