// Paying through a rail (docs/payouts.md "Paying through a rail"), against the real emulators started here
// (PayPal Payouts, Stripe with Connect) and the real handlers: POST /v1/payout-batches/ with a rail queues a
// send-rail-batch message; the worker's flows (sendRailBatch, applyRailOutcomes) are called directly, with
// outcomes read back from the emulator as the reconciliation reads them. A Stripe batch is paid at once; a
// PayPal batch ends paid after its items settle; a failed item makes its payout failed with words and its
// rewards a new due payout; balance_insufficient fails the batch and every payout; a repeated send pays
// once; a reversal of a paid payout makes it failed and the rewards due again; unclaimed flags rail_status
// and emits payout.unclaimed once.
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { startPaypalEmulator, type PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { eventId } from '../../shared/domain/events';
import { approveReward } from '../../shared/flows/lifecycle';
import { refreshMemberPayouts } from '../../shared/flows/payouts';
import { applyRailOutcomes, sendRailBatch } from '../../shared/flows/rail-payouts';
import type { RailKind } from '../../shared/rails/definition';
import type { RailConnection } from '../../shared/rails/port';
import { railDefinition } from '../../shared/rails/registry';
import { createConnectedAccount } from '../../shared/rails/stripe/adapter';
import { db, tableName } from '../../shared/store/client';
import { getItem } from '../../shared/store/ops';
import { railBatchKeys } from '../../shared/store/rail-batches';
import { railConnection, saveRailConnection } from '../../shared/store/rail-connections';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys, moneyKeys } from '../../shared/store/table';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';
import { startTestQueues, type TestQueues } from '../support/queues';

let paypal: PaypalEmulator;
let stripe: StripeEmulator;
let queues: TestQueues;
let serial = 0;

interface World {
  accountId: string;
  key: string;
  campaignId: string;
}

beforeAll(async () => {
  queues = await startTestQueues();
  [paypal, stripe] = await Promise.all([
    startPaypalEmulator({ settleAfterMs: null }),
    startStripeEmulator({ connect: { webhookUrl: null } }),
  ]);
});

afterAll(async () => {
  await Promise.all([paypal?.stop(), stripe?.stop()]);
  await queues?.stop();
});

async function world(rails: RailKind[]): Promise<World> {
  const { accountId, apiKey: key } = await newAccount('unlimited');
  for (const kind of rails) {
    if (kind === 'paypal')
      await saveRailConnection(accountId, 'paypal', {
        apiUrl: paypal.url,
        credentials: { client_id: paypal.clientId, client_secret: paypal.clientSecret, webhook_id: paypal.webhookId },
      });
    if (kind === 'stripe')
      await saveRailConnection(accountId, 'stripe', {
        apiUrl: stripe.url,
        credentials: {
          secret_key: stripe.secretKey,
          webhook_secret: stripe.connect.webhookSecret,
          connect_webhook_secret: stripe.connect.connectWebhookSecret,
        },
      });
  }
  const campaign = await api('POST', '/v1/campaigns/', {
    key,
    body: { name: `rails-${++serial}`, allows_commission: true, commission_amount: '1.00', approval: 'manual' },
  });
  expect(campaign.status).toBe(201);
  return { accountId, key, campaignId: campaign.body.id };
}

/** A member paid through `method` (ready), with `count` approved commissions of 1.00: its id. */
async function payee(w: World, method: RailKind | null, payoutEmail: string, count = 3): Promise<string> {
  const n = ++serial;
  const member = await api('POST', '/v1/members/', {
    key: w.key,
    body: { identifier: `payee-${n}`, email: `payee-${n}@example.com`, campaign: { id: w.campaignId }, payout_email: payoutEmail },
  });
  expect(member.status).toBe(201);
  const memberId = member.body.id as string;
  const fields: Record<string, unknown> = {};
  if (method) fields.payout_method = method;
  if (method === 'stripe') {
    const connection = (await railConnection(w.accountId, 'stripe')) as RailConnection;
    const account = await createConnectedAccount(connection, memberId, payoutEmail);
    await stripe.connect.onboard(account.id, 'complete');
    fields.stripe_account_id = account.id;
    fields.stripe_ready = true;
  }
  if (Object.keys(fields).length > 0) {
    const names = Object.keys(fields);
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: keys.member(w.accountId, memberId),
        UpdateExpression: `SET ${names.map((_, i) => `#f${i} = :v${i}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(names.map((f, i) => [`#f${i}`, f])),
        ExpressionAttributeValues: Object.fromEntries(names.map((f, i) => [`:v${i}`, fields[f]])),
      }),
    );
  }
  const ref = await api('POST', '/v1/referrals/', { key: w.key, body: { user_identifier: `u-${n}`, member_code: member.body.code } });
  expect(ref.status < 300).toBe(true);
  const stored = toReferral(await getItem(keys.referral(w.accountId, ref.body.id)))!;
  const planned = Array.from({ length: count }, (_, i) => ({
    payment_id: n * 1000 + i + 1,
    type: 'commission' as const,
    amount: 100,
    currency: 'USD',
  }));
  const after = await recordRewards(w.accountId, stored, planned, false, true);
  for (const r of after.rewards) await approveReward(w.accountId, r.id);
  await refreshMemberPayouts(w.accountId, memberId);
  return memberId;
}

const payoutsOf = async (w: World, memberId: string) =>
  (await api('GET', `/v1/payouts/?member=${memberId}`, { key: w.key })).body.results as Record<string, any>[];
const batchOf = async (w: World, id: string) => (await api('GET', `/v1/payout-batches/${id}/`, { key: w.key })).body as Record<string, any>;
const createBatch = (w: World, body: Record<string, unknown>) => api('POST', '/v1/payout-batches/', { key: w.key, body });

/** What the rail says about a batch now (the reconciliation's read), applied to the ledger. */
async function reconcile(w: World, kind: RailKind, batchId: string): Promise<void> {
  const batch = await batchOf(w, batchId);
  const connection = (await railConnection(w.accountId, kind)) as RailConnection;
  const adapter = await railDefinition(kind)!.adapter(connection);
  const read = await adapter.readBatch(batchId, batch.rail_batch_id, batch.payout_ids);
  await applyRailOutcomes(w.accountId, kind, read.items);
}

const eventOf = (w: World, type: 'payout.sent' | 'payout.unclaimed' | 'payout.failed' | 'payout.paid', payoutId: string) =>
  getItem(keys.event(w.accountId, eventId(type, payoutId)));

/** The member's paid commissions (its stat) equal the sum of its paid payouts. */
async function expectPaidAgrees(w: World, memberId: string): Promise<number> {
  const member = await getItem(keys.member(w.accountId, memberId));
  const paid = (await payoutsOf(w, memberId))
    .filter((p) => p.status === 'paid')
    .reduce((a, p) => a + Math.round(Number(p.amount) * 100), 0);
  expect(Number(member?.commission_paid ?? 0)).toBe(paid);
  return paid;
}

describe('rail batches', () => {
  it('refuses a rail not connected, a format on a rail batch, and a named payout of a member paid otherwise', async () => {
    const w = await world(['paypal']);
    const fileMember = await payee(w, null, `file-${serial}@pay.example.com`, 1);
    const due = (await payoutsOf(w, fileMember)).find((p) => p.status === 'due')!;
    const noStripe = await createBatch(w, { rail: 'stripe', currency: 'USD' });
    expect(noStripe.status).toBe(409);
    expect(noStripe.body.detail).toMatch(/^Connect Stripe Connect in Settings first/);
    const withFormat = await createBatch(w, { rail: 'paypal', format: 'csv', currency: 'USD' });
    expect(withFormat.status).toBe(400);
    expect(withFormat.body).toHaveProperty('format');
    const other = await createBatch(w, { rail: 'paypal', currency: 'USD', payout_ids: [due.id] });
    expect(other.status).toBe(409);
    expect(other.body.detail).toMatch(/payout method/);
    const none = await createBatch(w, { rail: 'paypal', currency: 'USD' });
    expect(none.status).toBe(409);
    // The file batch behaves as before.
    const file = await createBatch(w, { currency: 'USD', format: 'csv' });
    expect(file.status).toBe(201);
    expect(file.body).toMatchObject({ rail: 'file', format: 'csv', failure_reason: null, rail_batch_id: null });
  });

  it('a Stripe batch is paid at once, sending it twice pays once; a reversal makes the payout failed and its rewards due again', async () => {
    const w = await world(['stripe']);
    const memberId = await payee(w, 'stripe', `s-${serial}@pay.example.com`);
    const [due] = await payoutsOf(w, memberId);
    expect(due).toMatchObject({ status: 'due', amount: '3.00', rail: null, rail_status: null });
    await queues.receiveAll('payout-rails');
    const created = await createBatch(w, { rail: 'stripe', currency: 'USD' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ rail: 'stripe', format: null, file_url: null, status: 'processing', payout_ids: [due!.id] });
    const batchId = created.body.id as string;
    const queued = await queues.receiveAll('payout-rails', { waitMs: 2000 });
    expect(queued.map((m) => m.json)).toContainEqual({ kind: 'send-rail-batch', account_id: w.accountId, batch_id: batchId });
    expect(await getItem(railBatchKeys.openBatch(w.accountId, batchId))).toBeDefined();
    const before = stripe.connect.transfers().length;

    await sendRailBatch(w.accountId, batchId);
    await sendRailBatch(w.accountId, batchId);
    const transfers = stripe.connect.transfers().slice(before);
    expect(transfers).toHaveLength(1);
    const batch = await batchOf(w, batchId);
    expect(batch).toMatchObject({ status: 'paid', rail: 'stripe', failure_reason: null });
    expect(batch.rail_batch_id).toEqual(expect.any(String));
    expect(await getItem(railBatchKeys.openBatch(w.accountId, batchId))).toBeUndefined();
    const listed = await api('GET', `/v1/payouts/?batch_id=${batchId}`, { key: w.key });
    expect(listed.status).toBe(200);
    expect(listed.body.count).toBe(1);
    const paid = listed.body.results[0];
    expect(paid).toMatchObject({ id: due!.id, status: 'paid', rail: 'stripe', reference: transfers[0]!.id });
    expect(paid.rail_status).toEqual(expect.any(String));
    expect(await eventOf(w, 'payout.sent', due!.id)).toBeDefined();
    expect(await eventOf(w, 'payout.paid', due!.id)).toBeDefined();
    expect(await expectPaidAgrees(w, memberId)).toBe(300);

    // Taken back: the payout fails with words, the rewards are due again in a new payout.
    await stripe.connect.reverse(transfers[0]!.id);
    await reconcile(w, 'stripe', batchId);
    await reconcile(w, 'stripe', batchId);
    const after = await payoutsOf(w, memberId);
    const reversed = after.find((p) => p.id === due!.id)!;
    expect(reversed.status).toBe('failed');
    expect(reversed.failure_reason).toEqual(expect.any(String));
    const again = after.filter((p) => p.status === 'due');
    expect(again).toHaveLength(1);
    expect(again[0]).toMatchObject({ amount: '3.00', reward_count: 3 });
    expect(again[0]!.id).not.toBe(due!.id);
    expect(await eventOf(w, 'payout.failed', due!.id)).toBeDefined();
    expect(await expectPaidAgrees(w, memberId)).toBe(0);
    const member = await getItem(keys.member(w.accountId, memberId));
    expect(Number(member?.commission_approved)).toBe(300);
  });

  it('Stripe balance_insufficient fails the batch and every payout, with the words; the rewards are due again', async () => {
    const w = await world(['stripe']);
    const a = await payee(w, 'stripe', `sa-${serial}@pay.example.com`, 2);
    const b = await payee(w, 'stripe', `sb-${serial}@pay.example.com`, 2);
    const created = await createBatch(w, { rail: 'stripe', currency: 'USD' });
    expect(created.status).toBe(201);
    expect(created.body.payout_ids).toHaveLength(2);
    const before = stripe.connect.transfers().length;
    stripe.connect.setBalance('usd', 0);
    try {
      await sendRailBatch(w.accountId, created.body.id);
    } finally {
      stripe.connect.setBalance('usd', 1_000_000_00);
    }
    expect(stripe.connect.transfers().length).toBe(before);
    const batch = await batchOf(w, created.body.id);
    expect(batch.status).toBe('failed');
    expect(batch.failure_reason).toEqual(expect.any(String));
    expect(await getItem(railBatchKeys.openBatch(w.accountId, created.body.id))).toBeUndefined();
    for (const memberId of [a, b]) {
      const payouts = await payoutsOf(w, memberId);
      const failed = payouts.find((p) => created.body.payout_ids.includes(p.id))!;
      expect(failed).toMatchObject({ status: 'failed', failure_reason: batch.failure_reason });
      expect(payouts.filter((p) => p.status === 'due')).toHaveLength(1);
    }
    // A later batch pays them under new payout ids.
    const next = await createBatch(w, { rail: 'stripe', currency: 'USD' });
    expect(next.status).toBe(201);
    expect(next.body.payout_ids.some((id: string) => created.body.payout_ids.includes(id))).toBe(false);
    await sendRailBatch(w.accountId, next.body.id);
    expect((await batchOf(w, next.body.id)).status).toBe('paid');
    expect(await expectPaidAgrees(w, a)).toBe(200);
  });

  it('a PayPal batch ends paid after its items settle; a failed item fails its payout with words and its rewards are due again; sending twice makes one item each', async () => {
    const w = await world(['paypal']);
    const ok = await payee(w, 'paypal', `ok-${serial}@pay.example.com`);
    const badEmail = `fail-${serial}@pay.example.com`;
    paypal.setOutcome(badEmail, 'FAILED');
    const bad = await payee(w, 'paypal', badEmail);
    const created = await createBatch(w, { rail: 'paypal', currency: 'USD' });
    expect(created.status).toBe(201);
    const batchId = created.body.id as string;
    await sendRailBatch(w.accountId, batchId);
    await sendRailBatch(w.accountId, batchId);
    expect(paypal.itemsOf(batchId)).toBe(2);
    let batch = await batchOf(w, batchId);
    expect(batch.status).toBe('processing');
    for (const memberId of [ok, bad]) {
      const [p] = await payoutsOf(w, memberId);
      expect(p).toMatchObject({ status: 'processing', rail: 'paypal' });
      expect(p!.rail_status).toEqual(expect.any(String));
      expect(await eventOf(w, 'payout.sent', p!.id)).toBeDefined();
    }

    await paypal.settle(batch.rail_batch_id);
    await reconcile(w, 'paypal', batchId);
    const okPayouts = await payoutsOf(w, ok);
    expect(okPayouts).toHaveLength(1);
    expect(okPayouts[0]).toMatchObject({ status: 'paid', rail_status: 'SUCCESS' });
    const badPayouts = await payoutsOf(w, bad);
    const failed = badPayouts.find((p) => p.status === 'failed')!;
    expect(failed.failure_reason).toEqual(expect.any(String));
    expect(failed.failure_reason.length).toBeGreaterThan(5);
    expect(badPayouts.filter((p) => p.status === 'due')).toEqual([expect.objectContaining({ amount: '3.00', reward_count: 3 })]);
    batch = await batchOf(w, batchId);
    expect(batch.status).toBe('paid');

    // The same outcomes again change nothing.
    const versions = await Promise.all([...okPayouts, ...badPayouts].map((p) => getItem(moneyKeys.payout(w.accountId, p.id))));
    await reconcile(w, 'paypal', batchId);
    const again = await Promise.all([...okPayouts, ...badPayouts].map((p) => getItem(moneyKeys.payout(w.accountId, p.id))));
    expect(again.map((i) => i?.version)).toEqual(versions.map((i) => i?.version));
    expect(await expectPaidAgrees(w, ok)).toBe(300);
    expect(await expectPaidAgrees(w, bad)).toBe(0);
  });

  it('an unclaimed PayPal item flags rail_status UNCLAIMED, stays processing, and emits payout.unclaimed once', async () => {
    const w = await world(['paypal']);
    const email = `unclaimed-${serial}@pay.example.com`;
    paypal.setOutcome(email, 'UNCLAIMED');
    const memberId = await payee(w, 'paypal', email);
    const created = await createBatch(w, { rail: 'paypal', currency: 'USD' });
    expect(created.status).toBe(201);
    const batchId = created.body.id as string;
    await sendRailBatch(w.accountId, batchId);
    await paypal.settle((await batchOf(w, batchId)).rail_batch_id);
    await reconcile(w, 'paypal', batchId);
    const [p] = await payoutsOf(w, memberId);
    expect(p).toMatchObject({ status: 'processing', rail: 'paypal', rail_status: 'UNCLAIMED' });
    const event = await eventOf(w, 'payout.unclaimed', p!.id);
    expect(event).toBeDefined();
    const version = (await getItem(moneyKeys.payout(w.accountId, p!.id)))?.version;
    await reconcile(w, 'paypal', batchId);
    expect((await getItem(moneyKeys.payout(w.accountId, p!.id)))?.version).toBe(version);
    expect((await eventOf(w, 'payout.unclaimed', p!.id))?.created_ms).toBe(event?.created_ms);
    expect((await batchOf(w, batchId)).status).toBe('processing');
    expect(await getItem(railBatchKeys.openBatch(w.accountId, batchId))).toBeDefined();
    // The rail decides its outcome: marking it by hand is refused (its webhook could pay the rewards again).
    for (const action of ['mark-paid', 'mark-failed', 'cancel']) {
      const res = await api('POST', `/v1/payouts/${p!.id}/${action}/`, {
        key: w.key,
        body: action === 'mark-paid' ? {} : { reason: 'by hand' },
      });
      expect({ action, status: res.status, detail: res.body?.detail }).toEqual({
        action,
        status: 409,
        detail: expect.stringContaining('is being paid through PayPal Payouts'),
      });
    }
    expect((await getItem(moneyKeys.payout(w.accountId, p!.id)))?.version).toBe(version);
  });
});
