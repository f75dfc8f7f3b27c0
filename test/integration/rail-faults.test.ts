// Payout rails under faults (docs/payouts.md "Paying through a rail", "Reconciliation"), against the real
// emulators and the real intakes: a send answered 5xx after the rail committed it, then retried as the
// payout-rails worker retries it (sendRailBatch again), pays once at PayPal, Stripe (the same Idempotency-Key,
// whether the adapter's own retry or the worker's) and Wise (the same customerTransactionId); Wise webhooks
// lost, then the batch reconciled, end as the same batch whose webhooks arrived; PayPal webhooks delivered out
// of order end at the rail's final word, a reversal after success ends failed with the rewards due again, and
// redeliveries change nothing. A 429 or 503 before the rail did anything, retried, pays once too.
import { startPaypalEmulator, type PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { startWiseEmulator, type WiseEmulator } from '../../infra/local/emulators/wise';
import { sendRailBatch } from '../../shared/flows/rail-payouts';
import { reconcileRailBatch } from '../../shared/flows/rail-reconcile';
import { customerTransactionId } from '../../shared/rails/wise/uuid';
import { getItem } from '../../shared/store/ops';
import { moneyKeys } from '../../shared/store/table';
import { startTestQueues, type TestQueues } from '../support/queues';
import { batchOf, createRailBatch, deliver, earn, paidSums, payoutsOf, railPayee, railWorld, type RailWorld } from '../support/rail-world';

let paypal: PaypalEmulator;
let stripe: StripeEmulator;
let wise: WiseEmulator;
let queues: TestQueues;
let n = 0;
const email = (what: string) => `${what}-${Date.now().toString(36)}${++n}@pay.example.com`;

beforeAll(async () => {
  queues = await startTestQueues();
  [paypal, stripe, wise] = await Promise.all([
    startPaypalEmulator({ settleAfterMs: null, webhookUrl: null }),
    startStripeEmulator({ connect: { webhookUrl: null } }),
    startWiseEmulator({ webhookUrl: null }),
  ]);
  wise.setBalance('USD', 1_000_000);
});

afterAll(async () => {
  await Promise.all([paypal?.stop(), stripe?.stop(), wise?.stop()]);
  await queues?.stop();
});

/** A world of one rail and one payee with `count` commissions of 1.00 due, and a batch of that rail: its id. */
async function oneBatch(w: RailWorld, kind: 'paypal' | 'stripe' | 'wise', to: string, count = 3) {
  const payee = await railPayee(w, kind, to);
  await earn(w, payee, count);
  const created = await createRailBatch(w, { rail: kind, currency: 'USD' });
  expect(created.status).toBe(201);
  return { memberId: payee.memberId, batchId: created.body.id as string, payoutIds: created.body.payout_ids as string[] };
}

const rejects = async (p: Promise<unknown>) => {
  let threw = false;
  try {
    await p;
  } catch {
    threw = true;
  }
  expect(threw).toBe(true);
};

describe('a send answered 5xx after the rail committed it, retried', () => {
  it('PayPal: one item at the emulator, the payout paid once, the member paid once', async () => {
    const w = await railWorld({ paypal });
    const to = email('pp5xx');
    const { memberId, batchId, payoutIds } = await oneBatch(w, 'paypal', to);
    paypal.failAfterCommit(1);
    await rejects(sendRailBatch(w.accountId, batchId));
    expect(paypal.itemsOf(batchId)).toBe(1);
    // The worker's retry: the same sender_batch_id answers the batch PayPal kept.
    await sendRailBatch(w.accountId, batchId);
    await sendRailBatch(w.accountId, batchId);
    expect(paypal.itemsOf(batchId)).toBe(1);
    const batch = await batchOf(w, batchId);
    expect(batch.status).toBe('processing');
    expect(batch.rail_batch_id).toEqual(expect.any(String));
    await paypal.settle(batch.rail_batch_id);
    await reconcileRailBatch(w.accountId, batchId);
    await reconcileRailBatch(w.accountId, batchId);
    expect(paypal.paidCount(to)).toBe(1);
    const payouts = await payoutsOf(w, memberId);
    expect(payouts.map((p) => [p.id, p.status])).toEqual([[payoutIds[0], 'paid']]);
    expect(await paidSums(w, memberId)).toEqual({ payouts: 300, rewards: 300, stat: 300 });
    expect((await batchOf(w, batchId)).status).toBe('paid');
  });

  it('Stripe: the transfer retried with the same Idempotency-Key makes one transfer', async () => {
    const w = await railWorld({ stripe });
    const { memberId, batchId, payoutIds } = await oneBatch(w, 'stripe', email('st5xx'));
    const before = stripe.connect.transfers().length;
    const keysBefore = stripe.idempotencyKeysSeen().length;
    stripe.connect.failAfterCommit(1);
    // The adapter retries the 500 in the call with the same key (and the worker would send the batch again).
    await sendRailBatch(w.accountId, batchId);
    expect(stripe.connect.transfers().length).toBe(before + 1);
    await sendRailBatch(w.accountId, batchId);
    const transfers = stripe.connect.transfers().slice(before);
    expect(transfers).toHaveLength(1);
    // Every transfer request of this batch carried one key.
    const keysSent = stripe.idempotencyKeysSeen().slice(keysBefore);
    expect(keysSent.filter((k) => k === `refloop-transfer-${payoutIds[0]}`).length).toBeGreaterThanOrEqual(2);
    expect((await payoutsOf(w, memberId))[0]).toMatchObject({ id: payoutIds[0], status: 'paid', reference: transfers[0]!.id });
    expect(await paidSums(w, memberId)).toEqual({ payouts: 300, rewards: 300, stat: 300 });
    expect((await batchOf(w, batchId)).status).toBe('paid');
  });

  it("Stripe: the transfer written, its answer lost and the retries in the call refused, the send fails retryably; the worker's retry with the same key makes no second transfer", async () => {
    const w = await railWorld({ stripe });
    const { memberId, batchId, payoutIds } = await oneBatch(w, 'stripe', email('st5xx3'));
    const before = stripe.connect.transfers().length;
    // The transfer is written and its answer lost, then the adapter's retries in the call meet 503s.
    const calls = stripe.callCounts()['POST /v1/transfers'] ?? 0;
    stripe.failNext(2, 503);
    stripe.connect.failAfterCommit(1);
    await rejects(sendRailBatch(w.accountId, batchId));
    stripe.connect.failAfterCommit(0);
    stripe.failNext(0, 503);
    expect((stripe.callCounts()['POST /v1/transfers'] ?? 0) - calls).toBe(3);
    expect(stripe.connect.transfers().length).toBe(before + 1);
    expect((await payoutsOf(w, memberId))[0]).toMatchObject({ id: payoutIds[0], status: 'processing' });
    expect((await batchOf(w, batchId)).status).toBe('processing');
    await sendRailBatch(w.accountId, batchId);
    const transfers = stripe.connect.transfers().slice(before);
    expect(transfers).toHaveLength(1);
    expect((await payoutsOf(w, memberId))[0]).toMatchObject({ id: payoutIds[0], status: 'paid', reference: transfers[0]!.id });
    expect(await paidSums(w, memberId)).toEqual({ payouts: 300, rewards: 300, stat: 300 });
    expect((await batchOf(w, batchId)).status).toBe('paid');
  });

  it('Wise: the transfer retried with the same customerTransactionId makes one transfer', async () => {
    const w = await railWorld({ wise });
    const { memberId, batchId, payoutIds } = await oneBatch(w, 'wise', email('wi5xx'));
    const key = customerTransactionId(payoutIds[0]!);
    wise.failNext('POST /v3/profiles/{id}/batch-groups/{id}/transfers', { status: 500, afterCommit: true });
    await rejects(sendRailBatch(w.accountId, batchId));
    expect(wise.transfers().filter((t) => t.customerTransactionId === key)).toHaveLength(1);
    await sendRailBatch(w.accountId, batchId);
    await sendRailBatch(w.accountId, batchId);
    const mine = wise.transfers().filter((t) => t.customerTransactionId === key);
    expect(mine).toHaveLength(1);
    await wise.simulate(mine[0]!.id, 'outgoing_payment_sent');
    await reconcileRailBatch(w.accountId, batchId);
    await reconcileRailBatch(w.accountId, batchId);
    expect((await payoutsOf(w, memberId)).map((p) => [p.id, p.status])).toEqual([[payoutIds[0], 'paid']]);
    expect(await paidSums(w, memberId)).toEqual({ payouts: 300, rewards: 300, stat: 300 });
    expect((await batchOf(w, batchId)).status).toBe('paid');
  });
});

describe('a rail answering 429 or 503 before doing anything', () => {
  it('PayPal and Wise: the send (retried in the call, or by the worker) pays each payout once', async () => {
    const w = await railWorld({ paypal, wise });
    const pp = await oneBatch(w, 'paypal', email('pp429'));
    paypal.failNext(1, 429);
    await sendRailBatch(w.accountId, pp.batchId).catch(() => undefined);
    await sendRailBatch(w.accountId, pp.batchId);
    expect(paypal.itemsOf(pp.batchId)).toBe(1);
    expect((await payoutsOf(w, pp.memberId))[0]).toMatchObject({ id: pp.payoutIds[0], status: 'processing', rail: 'paypal' });

    const wi = await oneBatch(w, 'wise', email('wi503'));
    wise.failNext('POST /v1/transfers', { status: 503, count: 2 });
    wise.failNext('POST /v3/profiles/{id}/quotes', { status: 429 });
    await sendRailBatch(w.accountId, wi.batchId).catch(() => undefined);
    await sendRailBatch(w.accountId, wi.batchId);
    const key = customerTransactionId(wi.payoutIds[0]!);
    const mine = wise.transfers().filter((t) => t.customerTransactionId === key);
    expect(mine).toHaveLength(1);
    await wise.simulate(mine[0]!.id, 'outgoing_payment_sent');
    await reconcileRailBatch(w.accountId, wi.batchId);
    expect(await paidSums(w, wi.memberId)).toEqual({ payouts: 300, rewards: 300, stat: 300 });
  });
});

describe('Wise webhooks lost, then reconciliation', () => {
  it('ends as the same batch whose webhooks arrived (one paid, one bounced back with its rewards due again)', async () => {
    /** A Wise batch of two payees, sent; one transfer sent out, the other bounced: the webhooks built. */
    async function run() {
      const w = await railWorld({ wise });
      const ok = await railPayee(w, 'wise', email('wok'));
      const bounced = await railPayee(w, 'wise', email('wbounce'));
      await earn(w, ok, 2);
      await earn(w, bounced, 3);
      const created = await createRailBatch(w, { rail: 'wise', currency: 'USD' });
      expect(created.status).toBe(201);
      const batchId = created.body.id as string;
      await sendRailBatch(w.accountId, batchId);
      const transferOf = async (memberId: string) => {
        const [p] = await payoutsOf(w, memberId);
        return wise.transfers().find((t) => t.customerTransactionId === customerTransactionId(p!.id))!;
      };
      const hooks = [
        ...(await wise.simulate((await transferOf(ok.memberId)).id, 'outgoing_payment_sent')).delivered,
        ...(await wise.simulate((await transferOf(bounced.memberId)).id, 'bounced_back')).delivered,
      ];
      return { w, batchId, members: [ok.memberId, bounced.memberId], hooks };
    }
    const state = async (w: RailWorld, batchId: string, members: string[]) => ({
      batch: (await batchOf(w, batchId)).status,
      members: await Promise.all(
        members.map(async (m) => ({
          payouts: (await payoutsOf(w, m)).map((p) => [p.status, p.amount, p.rail_status]).sort(),
          sums: await paidSums(w, m),
        })),
      ),
    });

    const delivered = await run();
    expect(delivered.hooks.length).toBeGreaterThan(0);
    await deliver(delivered.w, queues, 'wise', delivered.hooks);
    const lost = await run();
    await reconcileRailBatch(lost.w.accountId, lost.batchId);

    const expected = await state(delivered.w, delivered.batchId, delivered.members);
    expect(expected.batch).toBe('paid');
    expect(expected.members[0]!.sums).toEqual({ payouts: 200, rewards: 200, stat: 200 });
    expect(expected.members[1]!.sums).toEqual({ payouts: 0, rewards: 0, stat: 0 });
    expect(expected.members[1]!.payouts.map((p) => p[0])).toEqual(['due', 'failed']);
    expect(await state(lost.w, lost.batchId, lost.members)).toEqual(expected);
    // Again, both ways: nothing changes.
    await reconcileRailBatch(delivered.w.accountId, delivered.batchId);
    await reconcileRailBatch(lost.w.accountId, lost.batchId);
    await deliver(delivered.w, queues, 'wise', delivered.hooks);
    expect(await state(delivered.w, delivered.batchId, delivered.members)).toEqual(expected);
    expect(await state(lost.w, lost.batchId, lost.members)).toEqual(expected);
  });
});

describe('PayPal webhooks out of order', () => {
  it('the final word wins: SUCCESS before an older HELD ends paid; a REVERSED then a stale SUCCESS ends failed with the rewards due; redeliveries change nothing', async () => {
    const w = await railWorld({ paypal });
    const to = email('order');
    const { memberId, batchId, payoutIds } = await oneBatch(w, 'paypal', to);
    const payoutId = payoutIds[0]!;
    await sendRailBatch(w.accountId, batchId);
    const itemId = String((await getItem(moneyKeys.payout(w.accountId, payoutId)))?.rail_item_id);
    expect(itemId).not.toBe('undefined');
    const held = await paypal.setItemStatus(itemId, 'ONHOLD');
    const success = await paypal.setItemStatus(itemId, 'SUCCESS');
    expect(held.length).toBeGreaterThan(0);
    expect(success.length).toBeGreaterThan(0);

    // The newer SUCCESS arrives first, the older HELD after it.
    await deliver(w, queues, 'paypal', [...success, ...held]);
    const paid = await getItem(moneyKeys.payout(w.accountId, payoutId));
    expect(paid).toMatchObject({ status: 'paid', rail_status: 'SUCCESS' });
    expect(await paidSums(w, memberId)).toEqual({ payouts: 300, rewards: 300, stat: 300 });
    expect((await batchOf(w, batchId)).status).toBe('paid');
    // Redelivered: nothing changes.
    await deliver(w, queues, 'paypal', [...success, ...held, ...success]);
    expect((await getItem(moneyKeys.payout(w.accountId, payoutId)))?.version).toBe(paid?.version);

    // PayPal takes it back; then a stale SUCCESS is redelivered.
    const reversed = await paypal.setItemStatus(itemId, 'REVERSED');
    await deliver(w, queues, 'paypal', reversed);
    await deliver(w, queues, 'paypal', [...success, ...held]);
    const after = await payoutsOf(w, memberId);
    const failed = after.find((p) => p.id === payoutId)!;
    expect(failed.status).toBe('failed');
    expect(failed.failure_reason).toEqual(expect.any(String));
    expect(after.filter((p) => p.status === 'due')).toEqual([expect.objectContaining({ amount: '3.00', reward_count: 3 })]);
    expect(await paidSums(w, memberId)).toEqual({ payouts: 0, rewards: 0, stat: 0 });
    const version = (await getItem(moneyKeys.payout(w.accountId, payoutId)))?.version;
    // The reversal redelivered, and a reconciliation (PayPal's word: REVERSED): nothing changes.
    await deliver(w, queues, 'paypal', reversed);
    await reconcileRailBatch(w.accountId, batchId);
    expect((await getItem(moneyKeys.payout(w.accountId, payoutId)))?.version).toBe(version);
    expect((await payoutsOf(w, memberId)).filter((p) => p.status === 'due')).toHaveLength(1);
    expect(paypal.paidCount(to)).toBeLessThanOrEqual(1);
  });
});
