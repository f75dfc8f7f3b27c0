// The Wise rail (shared/rails/wise/) against its emulator (infra/local/emulators/wise/): a batch of two sent
// into one batch group, funded, simulated to outgoing_payment_sent and read back paid; a transfer creation
// answered 5xx after Wise committed it, then the same batch sent again: one transfer per payout; insufficient
// funds (the group cancelled); SCA reported in words; a bounced transfer read back failed; the signed
// webhook verified and mapped by the rail's definition, a forged one refused. The webhook check also passes
// Wise's own published sandbox sample (key, body and signature from Wise's signature examples).
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RailBatchError, type PayoutRail, type RailConnection, type RailPayout } from '../../shared/rails/port';
import { wise } from '../../shared/rails/wise';
import { wiseRail } from '../../shared/rails/wise/adapter';
import { customerTransactionId } from '../../shared/rails/wise/uuid';
import { verifyWiseWebhook } from '../../shared/rails/wise/webhook';
import { startWiseEmulator, type WiseEmulator } from '../../infra/local/emulators/wise';
import { Ledger } from '../../infra/local/emulators/wise/ledger';

interface Received {
  headers: Record<string, string | undefined>;
  body: Buffer;
}

let emulator: WiseEmulator;
let receiver: Server;
let received: Received[] = [];
let connection: RailConnection;
let rail: PayoutRail;
let seq = 0;

const payout = (amount: number, email: string, currency = 'EUR'): RailPayout => {
  seq += 1;
  return { id: `po_01JWISETEST${String(seq).padStart(4, '0')}${Date.now()}`, memberId: `mem_${seq}`, amount, currency, destination: email };
};

/** Polls until `check` holds or the deadline passes (then the last failure is thrown). */
async function eventually(check: () => void | Promise<void>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    try {
      await check();
      return;
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

const sendError = async (p: Promise<unknown>): Promise<RailBatchError> => {
  try {
    await p;
  } catch (err) {
    if (err instanceof RailBatchError) return err;
    throw err;
  }
  throw new Error('expected a RailBatchError');
};

beforeAll(async () => {
  receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        headers: {
          'x-signature-sha256': req.headers['x-signature-sha256'] as string | undefined,
          'x-delivery-id': req.headers['x-delivery-id'] as string | undefined,
          'x-test-notification': req.headers['x-test-notification'] as string | undefined,
        },
        body: Buffer.concat(chunks),
      });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  emulator = await startWiseEmulator({ webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/wise/acc_1/` });
  connection = {
    apiUrl: emulator.url,
    credentials: { api_token: emulator.apiToken, profile_id: String(emulator.profileId), webhook_public_key: emulator.publicKeyPem },
  };
  rail = await wise.adapter(connection);
});

afterAll(async () => {
  await emulator?.stop();
  await new Promise<void>((resolve) => receiver?.close(() => resolve()));
});

beforeEach(() => {
  received = [];
  emulator.requireSca(false);
  emulator.setBalance('EUR', 100_000);
});

describe('the Wise rail against its emulator', () => {
  it('checks the connection and a member email', async () => {
    await expect(rail.verifyConnection()).resolves.toBeUndefined();
    await expect(rail.readiness('ann@example.com')).resolves.toEqual({ ready: true, reason: null });
    expect((await rail.readiness('not an email')).ready).toBe(false);
    const refused = await sendError(
      wiseRail({ ...connection, credentials: { ...connection.credentials, api_token: 'wrong' } }).verifyConnection(),
    );
    expect(refused.code).toBe('unauthorized');
  });

  it('sends a batch of two into one funded group; simulated to outgoing_payment_sent, read back paid', async () => {
    const batch = [payout(1234, 'ann@example.com'), payout(500, 'bob@example.com')];
    const before = emulator.balance('EUR');
    const sent = await rail.sendBatch('pb_wise_two', batch);
    expect(sent.items.map((i) => [i.payoutId, i.state])).toEqual(batch.map((p) => [p.id, 'processing']));
    const group = emulator.ledger.groups.get(sent.railBatchId);
    expect(group).toMatchObject({ name: 'pb_wise_two', sourceCurrency: 'EUR', status: 'COMPLETED', funded: true });
    expect(group?.transferIds).toHaveLength(2);
    expect(emulator.balance('EUR')).toBeCloseTo(before - 17.34, 2);
    const transfers = emulator.transfers().filter((t) => group?.transferIds.includes(t.id));
    expect(transfers.map((t) => [t.customerTransactionId, t.targetValue]).sort()).toEqual(
      [
        [customerTransactionId(batch[0]?.id as string), 12.34],
        [customerTransactionId(batch[1]?.id as string), 5],
      ].sort(),
    );

    for (const t of transfers) await emulator.simulate(t.id, 'outgoing_payment_sent');
    const read = await rail.readBatch(
      'pb_wise_two',
      sent.railBatchId,
      batch.map((p) => p.id),
    );
    expect(read.items.map((i) => [i.payoutId, i.state, i.railStatus]).sort()).toEqual(
      batch.map((p) => [p.id, 'paid', 'outgoing_payment_sent']).sort(),
    );
  });

  it('a transfer answered 5xx after Wise made it, then the same batch again: one transfer per payout, funded once', async () => {
    const batch = [payout(2000, 'cy@example.com'), payout(3000, 'di@example.com')];
    const before = emulator.balance('EUR');
    emulator.failNext('POST /v3/profiles/{id}/batch-groups/{id}/transfers', { status: 500, afterCommit: true });
    const first = await sendError(rail.sendBatch('pb_wise_retry', batch));
    expect(first).toMatchObject({ code: 'unavailable', retryable: true });

    const again = await rail.sendBatch('pb_wise_retry', batch);
    const groups = [...emulator.ledger.groups.values()].filter((g) => g.name === 'pb_wise_retry');
    expect(groups).toHaveLength(1);
    const keys = batch.map((p) => customerTransactionId(p.id));
    expect(emulator.transfers().filter((t) => keys.includes(t.customerTransactionId))).toHaveLength(2);
    expect(groups[0]?.transferIds).toHaveLength(2);
    expect(again.items.map((i) => i.state)).toEqual(['processing', 'processing']);
    expect(emulator.balance('EUR')).toBeCloseTo(before - 50, 2);

    // Once more after funding: nothing new, nothing funded twice.
    const third = await rail.sendBatch('pb_wise_retry', batch);
    expect(third.railBatchId).toBe(again.railBatchId);
    expect(emulator.transfers().filter((t) => keys.includes(t.customerTransactionId))).toHaveLength(2);
    expect(emulator.balance('EUR')).toBeCloseTo(before - 50, 2);
  });

  it('a 429 is retryable for the batch', async () => {
    emulator.failNext('POST /v3/profiles/{id}/quotes', { status: 429 });
    const err = await sendError(rail.sendBatch('pb_wise_429', [payout(100, 'ed@example.com')]));
    expect(err).toMatchObject({ code: 'unavailable', retryable: true });
  });

  it('a Wise that does not answer is a retryable batch error after the timeout', async () => {
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const slow = wiseRail({ ...connection, apiUrl: `http://127.0.0.1:${(silent.address() as AddressInfo).port}` }, { timeoutMs: 200 });
      const err = await sendError(slow.sendBatch('pb_wise_silent', [payout(100, 'fa@example.com')]));
      expect(err).toMatchObject({ code: 'unavailable', retryable: true });
      expect(err.message).toMatch(/did not answer .* within 200 ms/);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  it('insufficient funds: a batch error, and the group is cancelled so it can never be paid later', async () => {
    emulator.setBalance('EUR', 10);
    const batch = [payout(900, 'fy@example.com'), payout(900, 'gi@example.com')];
    const err = await sendError(rail.sendBatch('pb_wise_short', batch));
    expect(err.code).toBe('insufficient_funds');
    expect(err.message).toMatch(/balance cannot cover/);
    expect(emulator.balance('EUR')).toBe(10);
    const group = [...emulator.ledger.groups.values()].find((g) => g.name === 'pb_wise_short');
    expect(group?.status).toBe('CANCELLED');
    expect(
      emulator
        .transfers()
        .filter((t) => group?.transferIds.includes(t.id))
        .map((t) => t.status),
    ).toEqual(['cancelled', 'cancelled']);

    // Sent again after a top-up: the same payouts are the cancelled transfers, failed; nothing is paid.
    emulator.setBalance('EUR', 1_000);
    const again = await rail.sendBatch('pb_wise_short', batch);
    expect(again.items.map((i) => [i.payoutId, i.state, i.railStatus])).toEqual(batch.map((p) => [p.id, 'failed', 'cancelled']));
    expect(emulator.balance('EUR')).toBe(1_000);
  });

  it('SCA: reported in words, nothing funded, the waiting transfer cancellable', async () => {
    emulator.requireSca(true);
    const before = emulator.balance('EUR');
    const batch = [payout(700, 'ha@example.com')];
    const err = await sendError(rail.sendBatch('pb_wise_sca', batch));
    expect(err.code).toBe('sca_required');
    expect(err.message).toBe('Wise asks for a strong customer authentication approval of this payment: approve it in Wise, then reconcile');
    expect(emulator.balance('EUR')).toBe(before);
    // The unfunded transfer waits for the approval; it can still be cancelled (once).
    const transfer = emulator.transfers().find((t) => t.customerTransactionId === customerTransactionId(batch[0]?.id as string));
    expect(transfer?.status).toBe('incoming_payment_waiting');
    expect(await rail.cancelItem(String(transfer?.id))).toBe(true);
    expect(await rail.cancelItem(String(transfer?.id))).toBe(false);
  });

  it('a bounced transfer reads back failed, with the reason in words, and cannot be cancelled', async () => {
    const batch = [payout(1500, 'io@example.com')];
    const sent = await rail.sendBatch('pb_wise_bounce', batch);
    const id = sent.items[0]?.railItemId as string;
    await emulator.simulate(id, 'bounced_back');
    const read = await rail.readBatch(
      'pb_wise_bounce',
      sent.railBatchId,
      batch.map((p) => p.id),
    );
    expect(read.items).toEqual([
      {
        payoutId: batch[0]?.id,
        state: 'failed',
        railStatus: 'bounced_back',
        railItemId: id,
        reason: expect.stringMatching(/bounced back/),
      },
    ]);
    expect(await rail.cancelItem(id)).toBe(false);
  });

  it('the control endpoints (for a CLI) show the state and move a transfer by hand', async () => {
    const batch = [payout(250, 'ko@example.com')];
    const sent = await rail.sendBatch('pb_wise_control', batch);
    const control = async (action: string, body?: unknown) => {
      const res = await fetch(`${emulator.url}/_emulator/${action}`, {
        method: body === undefined ? 'GET' : 'POST',
        ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const moved = await control('simulate', { transfer_id: sent.items[0]?.railItemId, state: 'outgoing_payment_sent' });
    expect(moved).toMatchObject({ status: 200, body: { status: 'outgoing_payment_sent' } });
    expect(moved.body.webhooks).toEqual([{ status: 200 }, { status: 200 }]);
    const state = await control('state');
    expect(state.body.transfers).toContainEqual(
      expect.objectContaining({ email: 'ko@example.com', status: 'outgoing_payment_sent', amount: 2.5 }),
    );
    expect((await control('simulate', { transfer_id: sent.items[0]?.railItemId, state: 'nowhere' })).status).toBe(400);
    expect((await rail.readBatch('pb_wise_control', sent.railBatchId, [batch[0]?.id as string])).items[0]?.state).toBe('paid');
  });

  it("the emulator keeps Wise's rules: a stale batch-group version, an expired quote, a subscription's test notification", async () => {
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${emulator.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${emulator.apiToken}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const p = `/v3/profiles/${emulator.profileId}`;
    const group = await api('POST', `${p}/batch-groups`, { name: 'pb_wise_rules', sourceCurrency: 'EUR' });
    expect(group).toMatchObject({ status: 200, body: { name: 'pb_wise_rules', status: 'NEW', version: 1 } });
    const stale = await api('PATCH', `${p}/batch-groups/${group.body.id}`, { status: 'CANCELLED', version: 0 });
    expect(stale).toMatchObject({ status: 409, body: { errors: [expect.objectContaining({ code: 'batch-group.version.mismatch' })] } });
    expect((await api('PATCH', `${p}/batch-groups/${group.body.id}`, { status: 'CANCELLED', version: 1 })).body.status).toBe('CANCELLED');
    expect((await api('POST', `${p}/quotes`, { sourceCurrency: 'EUR', targetCurrency: 'USD', targetAmount: 1 })).body).toEqual({
      errors: [expect.objectContaining({ code: 'error.route.not.supported', arguments: ['EUR-USD'] })],
    });

    let now = Date.parse('2026-01-01T00:00:00Z');
    const ledger = new Ledger({ now: () => now });
    const quote = ledger.createQuote(String(ledger.business.id), { sourceCurrency: 'EUR', targetCurrency: 'EUR', targetAmount: 5 });
    expect(quote.expirationTime).toBe('2026-01-01T00:30:00Z');
    const recipient = ledger.createRecipient({
      type: 'email',
      currency: 'EUR',
      accountHolderName: 'Lu',
      details: { email: 'lu@example.com' },
    });
    now += 30 * 60 * 1000;
    expect(() =>
      ledger.createTransfer(
        { targetAccount: recipient.id, quoteUuid: quote.id, customerTransactionId: customerTransactionId('po_x') },
        null,
        null,
      ),
    ).toThrow(/expired/);

    received = [];
    const hook = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/subscribed/`;
    const sub = await api('POST', `${p}/subscriptions`, {
      name: 'Refloop',
      trigger_on: 'transfers#state-change',
      delivery: { version: '2.0.0', url: hook },
    });
    expect(sub).toMatchObject({ status: 201, body: { delivery: { version: '2.0.0', url: hook }, trigger_on: 'transfers#state-change' } });
    expect(received.map((r) => r.headers['x-test-notification'])).toEqual(['true']);
    const test = received[0] as Received;
    expect(await wise.verifyWebhook(test, connection, Date.now())).toMatchObject({ ok: true, outcomes: [] });
    const refused = await api('POST', `${p}/subscriptions`, {
      name: 'Down',
      trigger_on: 'transfers#state-change',
      delivery: { version: '2.0.0', url: 'http://127.0.0.1:9/' },
    });
    expect(refused).toMatchObject({ status: 422, body: { errors: [expect.objectContaining({ code: 'INVALID_CALLBACK_URL' })] } });
  });

  it('the signed state-change webhook verifies and maps; a forged one is refused', async () => {
    const sent = await rail.sendBatch('pb_wise_hook', [payout(800, 'jo@example.com')]);
    const id = sent.items[0]?.railItemId as string;
    received = [];
    await emulator.simulate(id, 'outgoing_payment_sent');
    await eventually(() =>
      expect(received.map((r) => JSON.parse(r.body.toString()).data.current_state)).toContain('outgoing_payment_sent'),
    );
    const delivery = received.find((r) => JSON.parse(r.body.toString()).data.current_state === 'outgoing_payment_sent') as Received;
    const verdict = await wise.verifyWebhook({ headers: delivery.headers, body: delivery.body }, connection, Date.now());
    expect(verdict).toEqual({
      ok: true,
      deliveryId: delivery.headers['x-delivery-id'],
      outcomes: [{ payoutId: '', state: 'paid', railStatus: 'outgoing_payment_sent', railItemId: id, reason: null }],
      accountUpdates: [],
    });

    const forgedBody = Buffer.from(delivery.body.toString().replace('outgoing_payment_sent', 'bounced_back'));
    expect(await wise.verifyWebhook({ headers: delivery.headers, body: forgedBody }, connection, Date.now())).toMatchObject({
      ok: false,
      status: 403,
    });
    const unsigned = { ...delivery.headers, 'x-signature-sha256': undefined };
    expect(await wise.verifyWebhook({ headers: unsigned, body: delivery.body }, connection, Date.now())).toMatchObject({
      ok: false,
      status: 403,
    });
    const failure = JSON.stringify({
      data: {
        transfer_id: Number(id),
        profile_id: emulator.profileId,
        failure_reason_code: 'ACCOUNT_CLOSED',
        failure_description: 'The account is closed',
        occurred_at: '2026-01-01T00:00:00Z',
      },
      subscription_id: '00000000-0000-4000-8000-000000000002',
      event_type: 'transfers#payout-failure',
      schema_version: '2.0.0',
      sent_at: '2026-01-01T00:00:00Z',
    });
    const failureHeaders = { 'x-signature-sha256': emulator.sign(failure), 'x-delivery-id': '7d3c2b1a-0000-4000-8000-000000000003' };
    expect(await wise.verifyWebhook({ headers: failureHeaders, body: Buffer.from(failure) }, connection, Date.now())).toMatchObject({
      ok: true,
      outcomes: [
        {
          payoutId: '',
          state: 'failed',
          railStatus: 'payout_failure',
          railItemId: id,
          reason: 'Wise could not pay out the transfer: The account is closed (ACCOUNT_CLOSED)',
        },
      ],
    });
    const otherKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey.export({ type: 'spki', format: 'pem' }).toString();
    const withOtherKey = { ...connection, credentials: { ...connection.credentials, webhook_public_key: otherKey } };
    expect(await wise.verifyWebhook(delivery, withOtherKey, Date.now())).toMatchObject({ ok: false, status: 403 });
  });

  it("passes Wise's published sandbox sample (bare base64 key, 354-byte body) and refuses it altered", () => {
    const key = [
      'MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAwpb91cEYuyJNQepZAVfP',
      'ZIlPZfNUefH+n6w9SW3fykqKu938cR7WadQv87oF2VuT+fDt7kqeRziTmPSUhqPU',
      'ys/V2Q1rlfJuXbE+Gga37t7zwd0egQ+KyOEHQOpcTwKmtZ81ieGHynAQzsn1We3j',
      'wt760MsCPJ7GMT141ByQM+yW1Bx+4SG3IGjXWyqOWrcXsxAvIXkpUD/jK/L958Cg',
      'nZEgz0BSEh0QxYLITnW1lLokSx/dTianWPFEhMC9BgijempgNXHNfcVirg1lPSyg',
      'z7KqoKUN0oHqWLr2U1A+7kqrl6O2nx3CKs1bj1hToT1+p4kcMoHXA7kA+VBLUpEs',
      'VwIDAQAB',
    ].join('\n');
    const body =
      '{"data":{"resource":{"id":49983981,"profile_id":16055450,"account_id":14124090,"type":"transfer"},"current_state":"incoming_payment_waiting","previous_state":null,"occurred_at":"2021-08-23T10:12:50Z"},"subscription_id":"90aa8e14-4ef1-4a56-861c-f3c9cde097ea","event_type":"transfers#state-change","schema_version":"2.0.0","sent_at":"2021-08-23T10:12:50Z"}';
    const signature =
      'wKcKCYXAzxNgiu7xmoDm943NUni7Rz33QN8JkEA9dWSGebgndonabgSj18Y4C08OrwVmueGsED2s00M7DtJVcYKOS1i3G4TMVx+mgM3aL9djMBkQtiYNBFUd6wrPI7ZUNHv/TrlKSjTMc+6JFvUvJ7owY3z85e3I4jLRLJowMFvO8kvCJ60+1pY9wDwZvtZ//WS93LrwGjk9Dvwzpmu0w+P4J75tETT5qC3Uv0y5G2yO8SEoO3yNP/tg/BOli02niHb53vEOUWUb9bly6thnfMoXoiV/osoGxgF20R58RlvkAmezyyl1Sv542TfS2DpiwVnmjjjkCyXeSUcKookYLQ==';
    expect(Buffer.byteLength(body)).toBe(354);
    const headers = { 'x-signature-sha256': signature, 'x-delivery-id': 'a1b2c3d4-e5f6-4890-abcd-ef1234567890' };
    expect(verifyWiseWebhook({ headers, body: Buffer.from(body) }, key)).toMatchObject({
      ok: true,
      outcomes: [{ payoutId: '', state: 'processing', railStatus: 'incoming_payment_waiting', railItemId: '49983981' }],
    });
    const altered = Buffer.from(body.replace('incoming_payment_waiting', 'processing'));
    expect(verifyWiseWebhook({ headers, body: altered }, key)).toMatchObject({ ok: false, status: 403 });
  });
});
