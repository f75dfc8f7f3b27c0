// Reconciliation and re-sends of rail payouts (docs/payouts.md "Reconciliation", "Re-sending an unclaimed
// payout"): POST /v1/payout-batches/{id}/reconcile/ and POST /v1/payouts/{id}/resend/ (their answers and the
// one message each queues on payout-rails), the hourly PayoutReconcile job (exactly the open rail batches
// older than 10 minutes), the admin CLI's `payouts send` and `payouts reconcile`; then, against the PayPal
// emulator, a batch whose webhooks were lost ends, once reconciled, as the same batch whose webhooks arrived,
// and an unclaimed payout re-sent to a corrected email is paid once. On a table of its own, so the registry
// of open rail batches holds only this file's.
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { adminInProcess } from '../support/admin-cli';
import { startPaypalEmulator, type PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { handler as hourly } from '../../functions/workers/payout-reconcile';
import { newEntityId } from '../../shared/domain/ids';
import type { Payout } from '../../shared/domain/lifecycle';
import { createBatch } from '../../shared/flows/payouts';
import { applyRailOutcomes, sendRailBatch } from '../../shared/flows/rail-payouts';
import { RECONCILE_AFTER_SECONDS, reconcileRailBatch, resendRailPayout } from '../../shared/flows/rail-reconcile';
import type { RailWebhookMessage, ResendRailPayoutMessage } from '../../shared/queue/queues';
import { db, tableName } from '../../shared/store/client';
import { payoutItem } from '../../shared/store/payouts';
import { openRailBatchPut } from '../../shared/store/rail-batches';
import { saveRailConnection } from '../../shared/store/rail-connections';
import { moneyListKeys, moneyKeys } from '../../shared/store/table';
import { getItem, transact } from '../../shared/store/ops';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';
import { useOwnTable } from '../support/own-table';
import { startTestQueues, type TestQueues } from '../support/queues';

let queues: TestQueues;
let paypal: PaypalEmulator;
let accountId: string;
let apiKey: string;

const now = () => Math.floor(Date.now() / 1000);
const batchId = () => `pb_${newEntityId()}`;
const payoutId = () => `po_${newEntityId()}`;

async function put(item: Record<string, unknown>): Promise<void> {
  await db().send(new PutCommand({ TableName: tableName(), Item: item }));
}

/** A batch item as the payout flows store it. */
async function putBatch(
  id: string,
  over: { rail?: string; status?: string; format?: string | null; rail_batch_id?: string | null; payout_ids?: string[] } = {},
  account = accountId,
) {
  const rail = over.rail ?? 'paypal';
  await put({
    ...moneyListKeys.payoutBatch(account, id),
    type: 'PayoutBatch',
    id,
    rail,
    ...(rail === 'file' ? { format: over.format ?? 'csv' } : {}),
    currency: 'USD',
    status: over.status ?? 'processing',
    payout_ids: over.payout_ids ?? [],
    amount: 0,
    created_at: now(),
    ...(over.rail_batch_id ? { rail_batch_id: over.rail_batch_id } : {}),
  });
}

/** A payout item as the payout flows store it. */
async function putPayout(over: Partial<Payout>, account = accountId): Promise<Payout> {
  const p: Payout = {
    id: payoutId(),
    member_id: `mem_${newEntityId().slice(-8)}`,
    currency: 'USD',
    amount: 2500,
    reward_ids: [],
    status: 'processing',
    period_start: now() - 86_400,
    period_end: now() - 3600,
    paid_at: null,
    reference: null,
    failure_reason: null,
    batch_id: null,
    payout_email: 'ann@example.com',
    member_identifier: null,
    member_email: null,
    member_name: null,
    rail: 'paypal',
    rail_status: 'UNCLAIMED',
    rail_item_id: 'ITEM-1',
    created_at: now() - 3600,
    updated_at: now() - 3600,
    version: 3,
    ...over,
  };
  await put(payoutItem(account, p));
  return p;
}

async function messages(): Promise<Record<string, unknown>[]> {
  return (await queues.receiveAll('payout-rails')).map((m) => m.json as Record<string, unknown>);
}

/** The admin CLI's main in this process (test/support/admin-cli.ts). */
const cli = adminInProcess;

beforeAll(async () => {
  await useOwnTable();
  queues = await startTestQueues();
  paypal = await startPaypalEmulator({ settleAfterMs: null });
  ({ accountId, apiKey } = await newAccount());
  await saveRailConnection(accountId, 'paypal', {
    apiUrl: paypal.url,
    credentials: { client_id: paypal.clientId, client_secret: paypal.clientSecret, webhook_id: paypal.webhookId },
  });
});

afterAll(async () => {
  await paypal?.stop();
  await queues?.stop();
});

beforeEach(async () => {
  await queues.purge();
});

describe('POST /v1/payout-batches/{id}/reconcile/', () => {
  const reconcile = (id: string, key: string = apiKey) => api('POST', `/v1/payout-batches/${id}/reconcile/`, { key });

  it('a rail batch still processing: 202 {batch_id, queued} and one reconcile-rail-batch message', async () => {
    const id = batchId();
    await putBatch(id, { rail_batch_id: 'PAYPAL-BATCH-1' });
    const res = await reconcile(id);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ batch_id: id, queued: true });
    expect(await messages()).toEqual([{ kind: 'reconcile-rail-batch', account_id: accountId, batch_id: id }]);
  });

  it('unknown or malformed id: 404; a file batch or a batch no longer processing: 409; nothing queued', async () => {
    expect((await reconcile(batchId())).status).toBe(404);
    expect((await reconcile('pb_nope')).status).toBe(404);
    const file = batchId();
    await putBatch(file, { rail: 'file' });
    const refused = await reconcile(file);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/file batch/);
    for (const status of ['paid', 'failed']) {
      const id = batchId();
      await putBatch(id, { status, rail_batch_id: 'PAYPAL-BATCH-2' });
      const res = await reconcile(id);
      expect(res.status).toBe(409);
      expect(res.body.detail).toContain(status);
    }
    // Another account's batch is not this key's.
    const other = await newAccount();
    const theirs = batchId();
    await putBatch(theirs, {}, other.accountId);
    expect((await reconcile(theirs)).status).toBe(404);
    expect(await messages()).toEqual([]);
  });

  it('needs a credential', async () => {
    const id = batchId();
    await putBatch(id);
    expect((await api('POST', `/v1/payout-batches/${id}/reconcile/`)).status).toBe(401);
    expect(await messages()).toEqual([]);
  });
});

describe('the hourly PayoutReconcile job', () => {
  it('queues one reconcile-rail-batch per open rail batch older than 10 minutes, and none for a younger one', async () => {
    const other = await newAccount();
    const old = [
      { account: accountId, id: batchId(), opened: now() - 3 * 3600 },
      { account: other.accountId, id: batchId(), opened: now() - RECONCILE_AFTER_SECONDS - 5 },
    ];
    const young = { account: accountId, id: batchId(), opened: now() - 60 };
    await transact([...old, young].map((b) => openRailBatchPut(b.account, b.id, 'paypal', b.opened)));
    await expect(hourly()).resolves.toEqual({ queued: 2 });
    const queued = await messages();
    expect(queued.sort((a, b) => String(a.batch_id).localeCompare(String(b.batch_id)))).toEqual(
      old
        .map((b) => ({ kind: 'reconcile-rail-batch', account_id: b.account, batch_id: b.id }))
        .sort((a, b) => a.batch_id.localeCompare(b.batch_id)),
    );
  });
});

describe('POST /v1/payouts/{id}/resend/', () => {
  const resend = (id: string) => api('POST', `/v1/payouts/${id}/resend/`, { key: apiKey });

  it('an unclaimed PayPal payout: 202 with the payout, and one resend-rail-payout message per attempt', async () => {
    const p = await putPayout({ batch_id: batchId() });
    const first = await resend(p.id);
    expect(first.status).toBe(202);
    expect(first.body).toMatchObject({ id: p.id, status: 'processing', rail: 'paypal', rail_status: 'UNCLAIMED', amount: '25.00' });
    expect(await messages()).toEqual([{ kind: 'resend-rail-payout', account_id: accountId, payout_id: p.id, attempt: 1 }]);
    expect((await resend(p.id)).status).toBe(202);
    expect(await messages()).toEqual([{ kind: 'resend-rail-payout', account_id: accountId, payout_id: p.id, attempt: 2 }]);
  });

  it('409 unless processing, PayPal and UNCLAIMED; 404 for an unknown payout; nothing queued', async () => {
    const refused = [
      await putPayout({ rail_status: 'PENDING' }),
      await putPayout({ rail_status: 'SUCCESS', status: 'paid', paid_at: now() }),
      await putPayout({ rail: 'wise', rail_status: 'UNCLAIMED' }),
      await putPayout({ rail: 'file', rail_status: null, rail_item_id: null }),
      await putPayout({ status: 'due', rail: null, rail_status: null, rail_item_id: null }),
    ];
    for (const p of refused) {
      const res = await resend(p.id);
      expect(res.status).toBe(409);
      expect(res.body.detail).toMatch(/UNCLAIMED/);
    }
    expect((await resend(payoutId())).status).toBe(404);
    expect(await messages()).toEqual([]);
  });
});

describe('admin CLI: payouts send and payouts reconcile', () => {
  it('send batches the due payouts of members paid through the rail and queues its send; reconcile queues a read', async () => {
    const created = await api('POST', '/v1/members/', {
      key: apiKey,
      body: { identifier: `cli-${newEntityId().slice(-8)}`, email: 'bo@example.com', payout_email: 'bo@example.com' },
    });
    expect(created.status).toBe(201);
    const patched = await api('PATCH', `/v1/members/${created.body.id}/`, { key: apiKey, body: { payout_method: 'paypal' } });
    expect(patched.status).toBe(200);
    const due = await putPayout({
      member_id: created.body.id,
      currency: 'EUR',
      status: 'due',
      rail: null,
      rail_status: null,
      rail_item_id: null,
      payout_email: null,
      version: 1,
    });
    await queues.purge();

    const sent = await cli(['payouts', 'send', '--account', accountId, '--rail', 'paypal', '--currency', 'eur']);
    expect(sent).toMatchObject({ code: 0, stderr: '' });
    const batch = JSON.parse(sent.stdout);
    expect(batch).toMatchObject({ rail: 'paypal', currency: 'EUR', status: 'processing', format: null, payout_ids: [due.id] });
    expect(await messages()).toEqual([{ kind: 'send-rail-batch', account_id: accountId, batch_id: batch.id }]);

    const read = await cli(['payouts', 'reconcile', '--account', accountId, '--batch', batch.id]);
    expect(read).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(read.stdout)).toEqual({ account_id: accountId, batch_id: batch.id, queued: true });
    expect(await messages()).toEqual([{ kind: 'reconcile-rail-batch', account_id: accountId, batch_id: batch.id }]);
  });

  it('refuses a rail it does not know (usage, exit 2), a file batch and an unknown one (exit 1); nothing queued', async () => {
    const bad = await cli(['payouts', 'send', '--account', accountId, '--rail', 'venmo', '--currency', 'USD']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--rail must be one of paypal, stripe, wise/);
    const file = batchId();
    await putBatch(file, { rail: 'file' });
    const refused = await cli(['payouts', 'reconcile', '--account', accountId, '--batch', file]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/file batch/);
    expect((await cli(['payouts', 'reconcile', '--account', accountId, '--batch', batchId()])).code).toBe(1);
    expect((await cli(['payouts', 'reconcile', '--account', accountId, '--batch', 'pb_x'])).code).toBe(2);
    expect(await messages()).toEqual([]);
  });
});

/** A member paid through PayPal at `email`, with a due payout in `currency` (the ledger's item, as a batch takes it). */
async function paypalMember(email: string): Promise<string> {
  const created = await api('POST', '/v1/members/', {
    key: apiKey,
    body: { identifier: `pp-${newEntityId().slice(-8)}`, email: `m-${newEntityId().slice(-8)}@example.com`, payout_email: email },
  });
  expect([created.status, created.body]).toEqual([201, expect.objectContaining({ id: expect.any(String) })]);
  expect((await api('PATCH', `/v1/members/${created.body.id}/`, { key: apiKey, body: { payout_method: 'paypal' } })).status).toBe(200);
  return created.body.id as string;
}

const duePayout = (memberId: string, currency: string, amount: number) =>
  putPayout({
    member_id: memberId,
    currency,
    amount,
    status: 'due',
    rail: null,
    rail_status: null,
    rail_item_id: null,
    payout_email: null,
    version: 1,
  });

/** Each payout's status and rail status, by member. */
async function endState(payoutIds: string[]): Promise<Record<string, [string, string | null]>> {
  const out: Record<string, [string, string | null]> = {};
  for (const id of payoutIds) {
    const res = await api('GET', `/v1/payouts/${id}/`, { key: apiKey });
    out[res.body.member_id] = [res.body.status, res.body.rail_status];
  }
  return out;
}

describe('against the PayPal emulator', () => {
  it('webhooks lost, then reconciliation: the same end state as webhooks delivered (and a second reconcile changes nothing)', async () => {
    const members = [
      await paypalMember('paid@example.com'),
      await paypalMember('unclaimed@example.com'),
      await paypalMember('fail@example.com'),
    ];
    const delivered = await Promise.all(members.map((m, i) => duePayout(m, 'USD', 1000 + i)));
    const lost = await Promise.all(members.map((m, i) => duePayout(m, 'EUR', 2000 + i)));
    const hooks: { headers: Record<string, string>; body: Buffer }[] = [];

    // Delivered: the emulator's signed events go through the intake; the worker's part applies what it queued.
    const viaHooks = await createBatch(accountId, { rail: 'paypal', currency: 'USD' });
    await sendRailBatch(accountId, viaHooks.id);
    const sentUsd = await getItem(moneyListKeys.payoutBatch(accountId, viaHooks.id));
    for (const e of await paypal.settle(String(sentUsd?.rail_batch_id))) hooks.push({ headers: e.headers, body: Buffer.from(e.rawBody) });
    await queues.purge();
    for (const h of hooks)
      expect((await api('POST', `/webhooks/paypal/${accountId}/`, { rawBody: h.body, headers: h.headers })).status).toBe(200);
    for (const m of await messages()) {
      const hook = m as unknown as RailWebhookMessage;
      await applyRailOutcomes(hook.account_id, hook.rail, hook.outcomes);
    }

    // Lost: nothing delivered; the reconciliation reads the batch back.
    const viaRead = await createBatch(accountId, { rail: 'paypal', currency: 'EUR' });
    await sendRailBatch(accountId, viaRead.id);
    const sentEur = await getItem(moneyListKeys.payoutBatch(accountId, viaRead.id));
    await paypal.settle(String(sentEur?.rail_batch_id));
    await reconcileRailBatch(accountId, viaRead.id);

    const expected = {
      [members[0]!]: ['paid', 'SUCCESS'],
      [members[1]!]: ['processing', 'UNCLAIMED'],
      [members[2]!]: ['failed', 'FAILED'],
    };
    expect(await endState(delivered.map((p) => p.id))).toEqual(expected);
    expect(await endState(lost.map((p) => p.id))).toEqual(expected);
    await reconcileRailBatch(accountId, viaRead.id);
    await reconcileRailBatch(accountId, viaHooks.id);
    expect(await endState(lost.map((p) => p.id))).toEqual(expected);
    expect(await endState(delivered.map((p) => p.id))).toEqual(expected);
    for (const id of [viaHooks.id, viaRead.id])
      expect((await api('GET', `/v1/payout-batches/${id}/`, { key: apiKey })).body).toMatchObject({ rail: 'paypal', status: 'processing' });

    // The unclaimed one, its email corrected: re-sent, the old item canceled, paid once.
    const unclaimed = lost[1]!;
    expect((await api('PATCH', `/v1/members/${members[1]}/`, { key: apiKey, body: { payout_email: 'fixed@example.com' } })).status).toBe(
      200,
    );
    await queues.purge();
    expect((await api('POST', `/v1/payouts/${unclaimed.id}/resend/`, { key: apiKey })).status).toBe(202);
    const [resend] = (await messages()) as unknown as ResendRailPayoutMessage[];
    const oldItem = String((await getItem(moneyKeys.payout(accountId, unclaimed.id)))?.rail_item_id);
    await resendRailPayout(resend!.account_id, resend!.payout_id, resend!.attempt);
    // A repeat of the message does nothing more.
    await resendRailPayout(resend!.account_id, resend!.payout_id, resend!.attempt);
    const resent = await getItem(moneyKeys.payout(accountId, unclaimed.id));
    expect(typeof resent?.rail_item_id).toBe('string');
    expect(resent?.rail_item_id).not.toBe(oldItem);
    expect(resent).toMatchObject({ payout_email: 'fixed@example.com', resend_attempt: 1, resend_sent_attempt: 1, status: 'processing' });
    // The old item's cancel arrives as a failed outcome naming the old item: stale, ignored.
    const cancel = paypal
      .events()
      .filter((e) => JSON.stringify(e.event).includes(oldItem) && /CANCELED|RETURNED/.test(JSON.stringify(e.event)));
    expect(cancel.length).toBeGreaterThan(0);
    await queues.purge();
    for (const e of cancel)
      expect((await api('POST', `/webhooks/paypal/${accountId}/`, { rawBody: e.rawBody, headers: e.headers })).status).toBe(200);
    for (const m of (await messages()) as unknown as RailWebhookMessage[]) await applyRailOutcomes(m.account_id, m.rail, m.outcomes);
    // (The re-send's own item is on its way: PENDING, not failed.)
    expect(await endState([unclaimed.id])).toEqual({ [members[1]!]: ['processing', 'PENDING'] });
    // PayPal settles the new item; the old one came back canceled. The reconciliation reads both: paid once.
    await paypal.settle(String(resent?.resend_rail_batch_id));
    await reconcileRailBatch(accountId, viaRead.id);
    expect(await endState([unclaimed.id])).toEqual({ [members[1]!]: ['paid', 'SUCCESS'] });
    await reconcileRailBatch(accountId, viaRead.id);
    const paid = await api('GET', `/v1/payouts/${unclaimed.id}/`, { key: apiKey });
    expect(paid.body).toMatchObject({ status: 'paid', rail_status: 'SUCCESS', payout_email: 'fixed@example.com' });
    // Every payout of the EUR batch is settled now (paid or failed): the batch is too, and left the registry.
    expect((await api('GET', `/v1/payout-batches/${viaRead.id}/`, { key: apiKey })).body.status).toBe('paid');
  });

  it('a re-send of an item the member claimed meanwhile: PayPal will not cancel it, nothing is sent again, the payout is paid once', async () => {
    const member = await paypalMember('unclaimed@example.com');
    const payout = await duePayout(member, 'CAD', 4200);
    const batch = await createBatch(accountId, { rail: 'paypal', currency: 'CAD' });
    await sendRailBatch(accountId, batch.id);
    const railBatchId = String((await getItem(moneyListKeys.payoutBatch(accountId, batch.id)))?.rail_batch_id);
    await paypal.settle(railBatchId);
    await reconcileRailBatch(accountId, batch.id);
    expect(await endState([payout.id])).toEqual({ [member]: ['processing', 'UNCLAIMED'] });
    const oldItem = String((await getItem(moneyKeys.payout(accountId, payout.id)))?.rail_item_id);

    // The member claims it at PayPal (that webhook is lost), and the operator asks for a re-send meanwhile.
    await paypal.setItemStatus(oldItem, 'SUCCESS');
    expect((await api('PATCH', `/v1/members/${member}/`, { key: apiKey, body: { payout_email: 'late@example.com' } })).status).toBe(200);
    await queues.purge();
    expect((await api('POST', `/v1/payouts/${payout.id}/resend/`, { key: apiKey })).status).toBe(202);
    const [resend] = (await messages()) as unknown as ResendRailPayoutMessage[];
    await resendRailPayout(resend!.account_id, resend!.payout_id, resend!.attempt);

    expect(paypal.itemsOf(`${batch.id}-r1`)).toBe(0);
    const after = await getItem(moneyKeys.payout(accountId, payout.id));
    expect(after).toMatchObject({ status: 'paid', rail_status: 'SUCCESS', rail_item_id: oldItem, payout_email: 'unclaimed@example.com' });
    expect(paypal.paidCount('late@example.com')).toBe(0);
    // A repeat of the message, and the reconciliation, change nothing.
    await resendRailPayout(resend!.account_id, resend!.payout_id, resend!.attempt);
    await reconcileRailBatch(accountId, batch.id);
    expect(await endState([payout.id])).toEqual({ [member]: ['paid', 'SUCCESS'] });
    expect((await api('GET', `/v1/payout-batches/${batch.id}/`, { key: apiKey })).body.status).toBe('paid');
  });
});
