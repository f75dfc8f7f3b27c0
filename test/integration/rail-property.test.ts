// Property (fast-check) over random sequences of paying through the rails (docs/payouts.md "Paying through a
// rail", "Reconciliation"), against the real PayPal and Stripe emulators, the real intakes and the worker's
// flows: rewards earned, rail batches sent (PayPal or Stripe), the rail's outcome of a PayPal item (settled,
// unclaimed, failed) with its webhook delivered or lost, a paid payout reversed (PayPal REVERSED, a Stripe
// transfer reversal) with its webhook delivered or lost, a batch reconciled, an old webhook redelivered late or
// again. After every sequence, and again once every batch is read back from its rail:
// - for every member, the paid payouts add up to the paid rewards, and to the member's commission_paid;
// - no payout was paid twice at a rail (one PayPal item, one Stripe transfer per payout id);
// - once read back, each payout says what its rail says (paid, failed, or still processing).
import fc from 'fast-check';
import { startPaypalEmulator, type PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import type { ItemStatus } from '../../infra/local/emulators/paypal-payouts/ledger';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { applyRailOutcomes, sendRailBatch } from '../../shared/flows/rail-payouts';
import { reconcileRailBatch } from '../../shared/flows/rail-reconcile';
import type { RailKind } from '../../shared/rails/definition';
import type { RailConnection } from '../../shared/rails/port';
import { railDefinition } from '../../shared/rails/registry';
import { railConnection } from '../../shared/store/rail-connections';
import { startTestQueues, type TestQueues } from '../support/queues';
import { batchOf, createRailBatch, deliver, earn, paidSums, payoutsOf, railPayee, railWorld, type RailWorld } from '../support/rail-world';

type Op =
  | { kind: 'earn'; member: number; count: number }
  | { kind: 'send'; rail: 'paypal' | 'stripe' }
  | { kind: 'outcome'; pick: number; to: 'SUCCESS' | 'UNCLAIMED' | 'FAILED'; lost: boolean }
  | { kind: 'reverse'; pick: number; lost: boolean }
  | { kind: 'reconcile'; pick: number }
  | { kind: 'redeliver'; pick: number };

const op: fc.Arbitrary<Op> = fc.oneof(
  {
    arbitrary: fc.record({ kind: fc.constant('earn' as const), member: fc.nat(), count: fc.integer({ min: 1, max: 3 }) }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('send' as const), rail: fc.constantFrom('paypal' as const, 'stripe' as const) }), weight: 3 },
  {
    arbitrary: fc.record({
      kind: fc.constant('outcome' as const),
      pick: fc.nat(),
      to: fc.constantFrom('SUCCESS' as const, 'UNCLAIMED' as const, 'FAILED' as const),
      lost: fc.boolean(),
    }),
    weight: 4,
  },
  { arbitrary: fc.record({ kind: fc.constant('reverse' as const), pick: fc.nat(), lost: fc.boolean() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('reconcile' as const), pick: fc.nat() }), weight: 2 },
  { arbitrary: fc.record({ kind: fc.constant('redeliver' as const), pick: fc.nat() }), weight: 2 },
);

interface Delivery {
  rawBody: string;
  headers: Record<string, string>;
}

let paypal: PaypalEmulator;
let stripe: StripeEmulator;
let queues: TestQueues;
let n = 0;

beforeAll(async () => {
  queues = await startTestQueues();
  [paypal, stripe] = await Promise.all([
    startPaypalEmulator({ settleAfterMs: null, webhookUrl: null }),
    startStripeEmulator({ connect: { webhookUrl: null } }),
  ]);
});

afterAll(async () => {
  await Promise.all([paypal?.stop(), stripe?.stop()]);
  await queues?.stop();
});

const stripeDeliveries = (events: readonly { rawBody: string; signature: string }[]): Delivery[] =>
  events.map((e) => ({ rawBody: e.rawBody, headers: { 'content-type': 'application/json', 'stripe-signature': e.signature } }));

/** The rail's word on a batch now (the reconciliation's read, whatever the batch's status), applied. */
async function readBack(w: RailWorld, kind: RailKind, batchId: string): Promise<void> {
  const batch = await batchOf(w, batchId);
  if (!batch.rail_batch_id) return;
  const connection = (await railConnection(w.accountId, kind)) as RailConnection;
  const adapter = await railDefinition(kind)!.adapter(connection);
  const read = await adapter.readBatch(batchId, batch.rail_batch_id, batch.payout_ids);
  await applyRailOutcomes(w.accountId, kind, read.items);
}

/** Paid payouts = paid rewards = commission_paid, for every member. */
async function expectSumsAgree(w: RailWorld, members: string[]): Promise<void> {
  for (const m of members) {
    const sums = await paidSums(w, m);
    expect({ member: m, payouts: sums.payouts, stat: sums.stat }).toEqual({ member: m, payouts: sums.rewards, stat: sums.rewards });
  }
}

it('paid payouts equal paid rewards and the stats, nothing is paid twice, and read back every payout says what its rail says', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(op, { minLength: 4, maxLength: 12 }), async (more) => {
      // Both rails have a batch under way from the start, so the rest has something to act on.
      const ops: Op[] = [{ kind: 'send', rail: 'paypal' }, { kind: 'send', rail: 'stripe' }, ...more];
      const w = await railWorld({ paypal, stripe });
      const payees = [
        await railPayee(w, 'paypal', `pp-a-${++n}@pay.example.com`),
        await railPayee(w, 'paypal', `pp-b-${++n}@pay.example.com`),
        await railPayee(w, 'stripe', `st-${++n}@pay.example.com`),
      ];
      const members = payees.map((p) => p.memberId);
      for (const [i, p] of payees.entries()) await earn(w, p, i + 1);
      const batches: { id: string; rail: 'paypal' | 'stripe' }[] = [];
      const history: { kind: RailKind; d: Delivery }[] = [];
      const mine = (senderBatchId: string) => batches.some((b) => b.id === senderBatchId);
      const paypalItems = () => [...paypal.ledger.items.values()].filter((i) => mine(i.sender_batch_id));
      const ours = new Set<string>();
      const payoutOfTransfer = (t: any): string | null => (t?.metadata?.refloop_payout_id as string | undefined) ?? null;
      const stripeTransfers = () => stripe.connect.transfers().filter((t: any) => ours.has(payoutOfTransfer(t) ?? ''));
      const record = async (kind: RailKind, ds: Delivery[], lost: boolean) => {
        for (const d of ds) history.push({ kind, d });
        if (!lost && ds.length > 0) await deliver(w, queues, kind, ds);
      };

      for (const o of ops) {
        if (o.kind === 'earn') {
          await earn(w, payees[o.member % payees.length]!, o.count);
        } else if (o.kind === 'send') {
          const created = await createRailBatch(w, { rail: o.rail, currency: 'USD' });
          if (created.status === 409) continue; // nothing due on that rail
          expect(created.status).toBe(201);
          batches.push({ id: created.body.id, rail: o.rail });
          for (const id of created.body.payout_ids as string[]) ours.add(id);
          const before = stripe.connect.events().length;
          await sendRailBatch(w.accountId, created.body.id);
          if (o.rail === 'stripe') {
            await stripe.connect.settle();
            const made = stripe.connect
              .events()
              .slice(before)
              .filter((e) => e.event.type.startsWith('transfer.'));
            await record('stripe', stripeDeliveries(made), false);
          }
        } else if (o.kind === 'outcome') {
          const open = paypalItems().filter((i) => i.transaction_status === 'PENDING' || i.transaction_status === 'UNCLAIMED');
          if (open.length === 0) continue;
          const item = open[o.pick % open.length]!;
          const events = await paypal.setItemStatus(item.payout_item_id, o.to as ItemStatus);
          await record('paypal', events, o.lost);
        } else if (o.kind === 'reverse') {
          const paid: ({ rail: 'paypal'; id: string } | { rail: 'stripe'; id: string })[] = [
            ...paypalItems()
              .filter((i) => i.transaction_status === 'SUCCESS')
              .map((i) => ({ rail: 'paypal' as const, id: i.payout_item_id })),
            ...stripeTransfers()
              .filter((t: any) => !t.reversed)
              .map((t: any) => ({ rail: 'stripe' as const, id: String(t.id) })),
          ];
          if (paid.length === 0) continue;
          const target = paid[o.pick % paid.length]!;
          if (target.rail === 'paypal') await record('paypal', await paypal.setItemStatus(target.id, 'REVERSED'), o.lost);
          else await record('stripe', stripeDeliveries(await stripe.connect.reverse(target.id)), o.lost);
        } else if (o.kind === 'reconcile') {
          if (batches.length === 0) continue;
          await reconcileRailBatch(w.accountId, batches[o.pick % batches.length]!.id);
        } else {
          if (history.length === 0) continue;
          const old = history[o.pick % history.length]!;
          await deliver(w, queues, old.kind, [old.d]);
        }
      }

      if (process.env.RAIL_PROPERTY_TRACE)
        console.log(
          JSON.stringify({
            ops: ops.map((o) => o.kind),
            items: paypalItems().map((i) => i.transaction_status),
            reversed: stripeTransfers().map((t: any) => t.reversed),
          }),
        );
      // Whatever arrived or was lost so far, the ledger agrees with itself.
      await expectSumsAgree(w, members);
      // Nothing paid twice: one PayPal item and one Stripe transfer per payout id.
      const itemsPerPayout = new Map<string, number>();
      for (const i of paypalItems()) {
        const id = i.payout_item.sender_item_id ?? '';
        itemsPerPayout.set(id, (itemsPerPayout.get(id) ?? 0) + 1);
      }
      for (const t of stripeTransfers()) {
        const id = payoutOfTransfer(t)!;
        itemsPerPayout.set(id, (itemsPerPayout.get(id) ?? 0) + 1);
      }
      expect([...itemsPerPayout.entries()].filter(([, count]) => count > 1)).toEqual([]);

      // Read every batch back from its rail (a lost webhook's last chance): each payout says what its rail says.
      for (const b of batches) await readBack(w, b.rail, b.id);
      await expectSumsAgree(w, members);
      const railWord = new Map<string, string>();
      for (const i of paypalItems()) {
        const s = i.transaction_status;
        railWord.set(
          i.payout_item.sender_item_id!,
          s === 'SUCCESS' ? 'paid' : s === 'FAILED' || s === 'REVERSED' ? 'failed' : 'processing',
        );
      }
      for (const t of stripeTransfers()) railWord.set(payoutOfTransfer(t)!, (t as any).reversed ? 'failed' : 'paid');
      const ledgerWord = new Map<string, string>();
      for (const m of members) for (const p of await payoutsOf(w, m)) if (railWord.has(p.id)) ledgerWord.set(p.id, p.status);
      expect(Object.fromEntries(ledgerWord)).toEqual(Object.fromEntries(railWord));
      // A batch none of whose payouts is processing is settled (paid stays paid when a payout is reversed later).
      for (const b of batches) {
        const batch = await batchOf(w, b.id);
        const processing = (batch.payout_ids as string[]).some((id) => ledgerWord.get(id) === 'processing');
        expect([b.id, batch.status === 'processing']).toEqual([b.id, processing]);
      }
    }),
    { numRuns: 7 },
  );
}, 120_000);
