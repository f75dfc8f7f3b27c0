// The PayPal Payouts rail's contract: the adapter (shared/rails/paypal/adapter.ts) against the emulator
// (infra/local/emulators/paypal-payouts/), and the webhook check (shared/rails/paypal/webhook.ts) against the
// emulator's signed deliveries. PayPal has no maintained Node server SDK for Payouts in this repository, so
// the request body is checked against PayPal's documented request sample (below) instead.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPaypalEmulator, type PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { paypal } from '../../shared/rails/paypal';
import { paypalAmount, paypalRail } from '../../shared/rails/paypal/adapter';
import { RailBatchError, type PayoutRail, type RailConnection, type RailPayout } from '../../shared/rails/port';

/**
 * A `POST /v1/payments/payouts` request as PayPal's Payouts API reference documents it (a batch header with
 * the subject and message, EMAIL items with a string amount, a note, a sender_item_id and the PAYPAL wallet):
 * the shape every request the adapter sends must keep (docs/payouts/paypal.md "What Refloop sends").
 */
const DOCUMENTED_SAMPLE = {
  sender_batch_header: {
    sender_batch_id: 'Payouts_2018_100007',
    email_subject: 'You have a payout!',
    email_message: 'You have received a payout! Thanks for using our service!',
  },
  items: [
    {
      recipient_type: 'EMAIL',
      amount: { value: '9.87', currency: 'USD' },
      note: 'Thanks for your patronage!',
      sender_item_id: '201403140001',
      receiver: 'receiver@example.com',
      recipient_wallet: 'PAYPAL',
    },
  ],
};

let emulator: PaypalEmulator;
let connection: RailConnection;
let rail: PayoutRail;
let hook: Server;
const hooked: { headers: Record<string, string>; body: Buffer }[] = [];
let seq = 0;

const batchId = () => `pb_01JTEST${Date.now().toString(36).toUpperCase()}${++seq}`;
const payout = (destination: string, amount = 1234, currency = 'USD'): RailPayout => ({
  id: `po_01JTEST${Date.now().toString(36).toUpperCase()}${++seq}`,
  memberId: `mem_${seq}`,
  amount,
  currency,
  destination,
});

async function until<T>(what: string, probe: () => T | undefined | null | false, deadlineMs = 5000): Promise<T> {
  const end = Date.now() + deadlineMs;
  for (;;) {
    const v = probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

beforeAll(async () => {
  hook = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers[k] = v;
      hooked.push({ headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => hook.listen(0, '127.0.0.1', resolve));
  emulator = await startPaypalEmulator({ settleAfterMs: null });
  connection = {
    apiUrl: emulator.url,
    credentials: { client_id: emulator.clientId, client_secret: emulator.clientSecret, webhook_id: emulator.webhookId },
  };
  rail = paypalRail(connection, { timeoutMs: 3000 });
});

afterAll(async () => {
  await emulator.stop();
  await new Promise<void>((resolve) => hook.close(() => resolve()));
});

test('the definition: its fields, its production API, its emulator', () => {
  expect(paypal.fields.map((f) => f.name)).toEqual(['client_id', 'client_secret', 'webhook_id']);
  expect(paypal).toMatchObject({
    kind: 'paypal',
    defaultApiUrl: 'https://api-m.paypal.com',
    destination: 'email',
    webhookPath: 'paypal',
    emulator: 'paypal-payouts',
  });
});

test('amounts: two decimals, whole units in JPY, HUF and TWD', () => {
  expect(paypalAmount(1234, 'USD')).toBe('12.34');
  expect(paypalAmount(5, 'EUR')).toBe('0.05');
  expect(paypalAmount(100000, 'JPY')).toBe('1000');
  expect(paypalAmount(1050, 'HUF')).toBeNull();
});

test('a batch of three: sent PENDING in the documented request shape, then read back paid, unclaimed and failed', async () => {
  const pb = batchId();
  const payouts = [payout('paid@example.com'), payout('unclaimed@example.com'), payout('fail@example.com')];
  const sent = await rail.sendBatch(pb, payouts);
  expect(sent.items.map((i) => [i.payoutId, i.state, i.railStatus])).toEqual(payouts.map((p) => [p.id, 'processing', 'PENDING']));
  expect(sent.items.every((i) => typeof i.railItemId === 'string')).toBe(true);

  // The request keeps PayPal's documented shape.
  const request = emulator.batchRequests().at(-1) as typeof DOCUMENTED_SAMPLE;
  expect(Object.keys(request).sort()).toEqual(Object.keys(DOCUMENTED_SAMPLE).sort());
  for (const k of Object.keys(DOCUMENTED_SAMPLE.sender_batch_header)) expect(request.sender_batch_header).toHaveProperty(k);
  expect(request.sender_batch_header.sender_batch_id).toBe(pb);
  for (const [i, item] of request.items.entries()) {
    expect(Object.keys(item).sort()).toEqual(Object.keys(DOCUMENTED_SAMPLE.items[0] as object).sort());
    expect(item).toMatchObject({
      recipient_type: 'EMAIL',
      sender_item_id: payouts[i]?.id,
      receiver: payouts[i]?.destination,
      recipient_wallet: 'PAYPAL',
    });
    expect(item.amount).toEqual({ value: '12.34', currency: 'USD' });
  }

  await emulator.settle(sent.railBatchId);
  const read = await rail.readBatch(pb, sent.railBatchId);
  const byId = new Map(read.items.map((i) => [i.payoutId, i]));
  expect(byId.get(payouts[0]!.id)).toMatchObject({ state: 'paid', railStatus: 'SUCCESS', reason: null });
  expect(byId.get(payouts[1]!.id)).toMatchObject({ state: 'unclaimed', railStatus: 'UNCLAIMED' });
  expect(byId.get(payouts[1]!.id)?.reason).toMatch(/not claimed/i);
  expect(byId.get(payouts[2]!.id)).toMatchObject({ state: 'failed', railStatus: 'FAILED' });
  expect(byId.get(payouts[2]!.id)?.reason).toMatch(/locked or inactive/);
});

test('a 5xx after PayPal committed, then the same batch again: answered from the original, paid once', async () => {
  const pb = batchId();
  const payouts = [payout('once-a@example.com'), payout('once-b@example.com'), payout('once-c@example.com')];
  emulator.failAfterCommit(1);
  const err = await rail.sendBatch(pb, payouts).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(RailBatchError);
  expect(err).toMatchObject({ code: 'unavailable', retryable: true });
  expect(emulator.itemsOf(pb)).toBe(3);

  const again = await rail.sendBatch(pb, payouts);
  expect(again.items.map((i) => i.payoutId)).toEqual(payouts.map((p) => p.id));
  // And once more without any fault: the duplicate sender_batch_id is read as "already sent".
  const third = await rail.sendBatch(pb, payouts);
  expect(third.railBatchId).toBe(again.railBatchId);
  expect(emulator.itemsOf(pb)).toBe(3);
  expect([...emulator.ledger.bySenderBatchId.keys()].filter((k) => k === pb)).toHaveLength(1);

  await emulator.settle(again.railBatchId);
  const read = await rail.readBatch(pb, again.railBatchId);
  expect(read.items.map((i) => i.state)).toEqual(['paid', 'paid', 'paid']);
  for (const p of payouts) expect(emulator.paidCount(p.destination)).toBe(1);
});

test('429 and 5xx before anything is recorded: unavailable, retryable; a validation error rejects the whole batch', async () => {
  emulator.failNext(1, 429);
  await expect(rail.sendBatch(batchId(), [payout('a@example.com')])).rejects.toMatchObject({ code: 'unavailable', retryable: true });
  emulator.failNext(1, 503);
  await expect(rail.sendBatch(batchId(), [payout('a@example.com')])).rejects.toMatchObject({ code: 'unavailable', retryable: true });

  const pb = batchId();
  const bad = rail.sendBatch(pb, [payout('ok@example.com'), payout('not-an-email')]);
  await expect(bad).rejects.toMatchObject({ name: 'RailBatchError', code: 'invalid', retryable: false });
  await expect(bad).rejects.toThrow(/items\[1\]\.receiver/);
  expect(emulator.itemsOf(pb)).toBe(0);
});

test('zero-decimal currencies go without decimals; a fraction PayPal cannot pay is refused before sending', async () => {
  const sent = await rail.sendBatch(batchId(), [payout('yen@example.com', 100000, 'JPY')]);
  expect(sent.items[0]?.state).toBe('processing');
  const request = emulator.batchRequests().at(-1) as typeof DOCUMENTED_SAMPLE;
  expect(request.items[0]?.amount).toEqual({ value: '1000', currency: 'JPY' });
  await expect(rail.sendBatch(batchId(), [payout('huf@example.com', 1050, 'HUF')])).rejects.toMatchObject({ code: 'invalid' });
});

test('bad credentials: unauthorized, not retryable', async () => {
  const bad = paypalRail({ ...connection, credentials: { ...connection.credentials, client_secret: 'wrong' } }, { timeoutMs: 3000 });
  await expect(bad.verifyConnection()).rejects.toMatchObject({ code: 'unauthorized', retryable: false });
  await expect(bad.sendBatch(batchId(), [payout('a@example.com')])).rejects.toMatchObject({ code: 'unauthorized' });
  await expect(rail.verifyConnection()).resolves.toBeUndefined();
});

test('the token is reused: one token call for two sends', async () => {
  const own = await startPaypalEmulator({ settleAfterMs: null });
  try {
    const r = paypalRail(
      { apiUrl: own.url, credentials: { client_id: own.clientId, client_secret: own.clientSecret } },
      { timeoutMs: 3000 },
    );
    await r.sendBatch(batchId(), [payout('t1@example.com')]);
    await r.sendBatch(batchId(), [payout('t2@example.com')]);
    expect(own.tokenCalls()).toBe(1);
    expect(own.callCounts()['POST /v1/payments/payouts']).toBe(2);
  } finally {
    await own.stop();
  }
});

test('the token is fetched again shortly before its expires_in, and once more when PayPal refuses it', async () => {
  const own = await startPaypalEmulator({ settleAfterMs: null, tokenTtlSeconds: 32400 });
  try {
    let clock = Date.now();
    const r = paypalRail(
      { apiUrl: own.url, credentials: { client_id: own.clientId, client_secret: own.clientSecret } },
      { timeoutMs: 3000, nowMs: () => clock },
    );
    await r.sendBatch(batchId(), [payout('e1@example.com')]);
    clock += (32400 - 400) * 1000; // still more than 5 minutes left: reused
    await r.sendBatch(batchId(), [payout('e2@example.com')]);
    expect(own.tokenCalls()).toBe(1);
    clock += 200 * 1000; // within the last 5 minutes: a new one
    await r.sendBatch(batchId(), [payout('e3@example.com')]);
    expect(own.tokenCalls()).toBe(2);
    own.ledger.tokens.clear(); // PayPal revokes it: 401, one fresh token, the call succeeds
    const sent = await r.sendBatch(batchId(), [payout('e4@example.com')]);
    expect(sent.items[0]?.state).toBe('processing');
    expect(own.tokenCalls()).toBe(3);
  } finally {
    await own.stop();
  }
});

test('a batch id PayPal already has with other payouts: the payouts it never had failed, nothing sent twice', async () => {
  const pb = batchId();
  const first = [payout('d1@example.com')];
  await rail.sendBatch(pb, first);
  const other = payout('d2@example.com');
  const again = await rail.sendBatch(pb, [...first, other]);
  expect(again.items.map((i) => [i.payoutId, i.state])).toEqual([
    [first[0]!.id, 'processing'],
    [other.id, 'failed'],
  ]);
  expect(emulator.itemsOf(pb)).toBe(1);
});

test('the control endpoints move states by hand; the postback check agrees with the offline one', async () => {
  const pb = batchId();
  const sent = await rail.sendBatch(pb, [payout('ctl@example.com')]);
  const post = (action: string, body: unknown) =>
    fetch(`${emulator.url}/_emulator/${action}`, { method: 'POST', body: JSON.stringify(body) }).then(async (r) => ({
      status: r.status,
      body: (await r.json()) as any,
    }));
  await expect(post('outcome', { receiver: 'ctl@example.com', status: 'BLOCKED' })).resolves.toMatchObject({ status: 200 });
  const settled = await post('settle', { payout_batch_id: sent.railBatchId });
  expect(settled.body.delivered.map((d: { event_type: string }) => d.event_type)).toEqual([
    'PAYMENT.PAYOUTS-ITEM.BLOCKED',
    'PAYMENT.PAYOUTSBATCH.SUCCESS',
  ]);
  await expect(post('item-status', { payout_item_id: sent.items[0]!.railItemId, status: 'nope' })).resolves.toMatchObject({ status: 400 });
  const listed = (await fetch(`${emulator.url}/_emulator/batches`).then((r) => r.json())) as any;
  expect(listed.batches.find((b: { sender_batch_id: string }) => b.sender_batch_id === pb).items[0].transaction_status).toBe('BLOCKED');
  expect((await rail.readBatch(pb, sent.railBatchId)).items[0]).toMatchObject({ state: 'failed', railStatus: 'BLOCKED' });

  // PayPal's postback check (POST /v1/notifications/verify-webhook-signature) on the emulator's last delivery.
  const last = emulator.events().at(-1)!;
  const token = await fetch(`${emulator.url}/v1/oauth2/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${emulator.clientId}:${emulator.clientSecret}`).toString('base64')}` },
    body: 'grant_type=client_credentials',
  }).then((r) => r.json() as Promise<{ access_token: string }>);
  const verify = (sig: string) =>
    fetch(`${emulator.url}/v1/notifications/verify-webhook-signature`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token.access_token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({
        auth_algo: last.headers['paypal-auth-algo'],
        cert_url: last.headers['paypal-cert-url'],
        transmission_id: last.headers['paypal-transmission-id'],
        transmission_sig: sig,
        transmission_time: last.headers['paypal-transmission-time'],
        webhook_id: emulator.webhookId,
        webhook_event: JSON.parse(last.rawBody),
      }),
    }).then((r) => r.json());
  await expect(verify(last.headers['paypal-transmission-sig']!)).resolves.toEqual({ verification_status: 'SUCCESS' });
  await expect(verify(Buffer.alloc(256).toString('base64'))).resolves.toEqual({ verification_status: 'FAILURE' });
});

test('cancel: an unclaimed item is returned; any other status cannot be canceled', async () => {
  const pb = batchId();
  const payouts = [payout('unclaimed@example.com'), payout('paid2@example.com')];
  const sent = await rail.sendBatch(pb, payouts);
  await expect(rail.cancelItem(sent.items[0]!.railItemId!)).resolves.toBe(false); // still PENDING
  await emulator.settle(sent.railBatchId);
  await expect(rail.cancelItem(sent.items[0]!.railItemId!)).resolves.toBe(true);
  await expect(rail.cancelItem(sent.items[1]!.railItemId!)).resolves.toBe(false); // SUCCESS
  const read = await rail.readBatch(pb, sent.railBatchId);
  expect(read.items[0]).toMatchObject({ state: 'failed', railStatus: 'RETURNED' });
  // A re-send after the email is corrected is a new batch id, pb_…-r1, paying the same po_….
  const resent = await rail.sendBatch(`${pb}-r1`, [{ ...payouts[0]!, destination: 'fixed@example.com' }]);
  expect(resent.railBatchId).not.toBe(sent.railBatchId);
  expect(resent.items[0]?.payoutId).toBe(payouts[0]!.id);
});

test('readBatch follows the pages (page_size 1000)', async () => {
  const pb = batchId();
  const many = Array.from({ length: 1001 }, (_, i) => payout(`m${i}@example.com`, 100));
  const before = emulator.callCounts()['GET /v1/payments/payouts/{id}'] ?? 0;
  const sent = await rail.sendBatch(pb, many);
  expect(sent.items).toHaveLength(1001);
  expect(sent.items.every((i) => i.railItemId !== null)).toBe(true);
  expect((emulator.callCounts()['GET /v1/payments/payouts/{id}'] ?? 0) - before).toBe(2);
});

describe('webhooks', () => {
  test('delivered asynchronously, signed, verified offline and mapped; the event id is the dedupe key', async () => {
    const own = await startPaypalEmulator({ webhookUrl: `http://127.0.0.1:${(hook.address() as AddressInfo).port}/`, settleAfterMs: 50 });
    try {
      const conn: RailConnection = {
        apiUrl: own.url,
        credentials: { client_id: own.clientId, client_secret: own.clientSecret, webhook_id: own.webhookId },
      };
      const pb = batchId();
      const payouts = [payout('hook-paid@example.com'), payout('unclaimed@example.com')];
      await paypalRail(conn, { timeoutMs: 3000 }).sendBatch(`${pb}-r2`, payouts);
      const deliveries = await until('two item webhooks', () => {
        const items = hooked.filter((h) => h.body.toString().includes('PAYMENT.PAYOUTS-ITEM.'));
        return items.length >= 2 && items;
      });
      const outcomes = [];
      for (const d of deliveries) {
        const verdict = await paypal.verifyWebhook({ headers: d.headers, body: d.body }, conn, Date.now());
        expect(verdict.ok).toBe(true);
        if (!verdict.ok) continue;
        expect(verdict.deliveryId).toBe(JSON.parse(d.body.toString()).id);
        outcomes.push(...verdict.outcomes);
      }
      expect(outcomes.map((o) => [o.payoutId, o.state]).sort()).toEqual(
        [
          [payouts[0]!.id, 'paid'],
          [payouts[1]!.id, 'unclaimed'],
        ].sort(),
      );
      // The batch event is verified too, and reports no item.
      const batchEvent = await until('the batch webhook', () =>
        hooked.find((h) => h.body.toString().includes('PAYMENT.PAYOUTSBATCH.SUCCESS')),
      );
      await expect(paypal.verifyWebhook({ headers: batchEvent.headers, body: batchEvent.body }, conn, Date.now())).resolves.toMatchObject({
        ok: true,
        outcomes: [],
      });
    } finally {
      await own.stop();
    }
  });

  test('a later reversal arrives as failed, with the reason in words', async () => {
    const sent = await rail.sendBatch(batchId(), [payout('rev@example.com')]);
    await emulator.settle(sent.railBatchId);
    const [delivery] = await emulator.setItemStatus(sent.items[0]!.railItemId!, 'REVERSED');
    const verdict = await paypal.verifyWebhook(
      { headers: delivery!.headers, body: Buffer.from(delivery!.rawBody) },
      connection,
      Date.now(),
    );
    expect(verdict).toMatchObject({ ok: true, outcomes: [{ payoutId: sent.items[0]!.payoutId, state: 'failed', railStatus: 'REVERSED' }] });
    if (verdict.ok) expect(verdict.outcomes[0]?.reason).toMatch(/reversed/i);
  });

  test('forged, unsigned, another webhook id or a certificate on another host: 403', async () => {
    const body = JSON.stringify({
      id: 'WH-FORGED',
      event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
      resource: { payout_item_id: 'X', transaction_status: 'SUCCESS', payout_item: { sender_item_id: 'po_forged' } },
    });
    const headers = emulator.sign(body);
    const check = (h: Record<string, string>, b: string, c: RailConnection = connection) =>
      paypal.verifyWebhook({ headers: h, body: Buffer.from(b) }, c, Date.now());

    await expect(check(headers, body)).resolves.toMatchObject({ ok: true, deliveryId: 'WH-FORGED' });
    await expect(check(headers, body.replace('po_forged', 'po_other'))).resolves.toEqual({
      ok: false,
      status: 403,
      detail: expect.any(String),
    });
    await expect(check({}, body)).resolves.toMatchObject({ ok: false, status: 403 });
    await expect(check({ ...headers, 'paypal-transmission-sig': Buffer.alloc(256).toString('base64') }, body)).resolves.toMatchObject({
      ok: false,
      status: 403,
    });
    await expect(
      check(headers, body, { ...connection, credentials: { ...connection.credentials, webhook_id: 'WH-OTHER' } }),
    ).resolves.toMatchObject({
      ok: false,
      status: 403,
    });
    // The genuine certificate, but named on another origin (localhost is not the connection's 127.0.0.1).
    const otherOrigin = headers['paypal-cert-url']!.replace('127.0.0.1', 'localhost');
    await expect(check({ ...headers, 'paypal-cert-url': otherOrigin }, body)).resolves.toMatchObject({ ok: false, status: 403 });
    await expect(
      check({ ...headers, 'paypal-cert-url': 'https://evil.example.com/v1/notifications/certs/CERT-1' }, body),
    ).resolves.toMatchObject({
      ok: false,
      status: 403,
    });
    await expect(check({ ...headers, 'paypal-auth-algo': 'SHA1withRSA' }, body)).resolves.toMatchObject({ ok: false, status: 403 });
  });

  test('a certificate host that cannot be reached, or answers 429 or 5xx: 503 (PayPal delivers again); one that answers 404 or no certificate: 403', async () => {
    const body = JSON.stringify({
      id: 'WH-CERT-HOST',
      event_type: 'PAYMENT.PAYOUTS-ITEM.SUCCEEDED',
      resource: { payout_item_id: 'X', transaction_status: 'SUCCESS', payout_item: { sender_item_id: 'po_cert' } },
    });
    const signed = emulator.sign(body);
    // A host that answers each certificate path with its own status (the connection's api_url: an allowed origin).
    const answers: Record<string, [number, string]> = {
      '/certs/busy': [503, '{}'],
      '/certs/limited': [429, '{}'],
      '/certs/missing': [404, '{}'],
      '/certs/junk': [200, 'not a certificate'],
      '/certs/good': [200, emulator.certificatePem],
    };
    let asked = 0;
    const host = createServer((req, res) => {
      asked++;
      const [status, text] = answers[req.url ?? ''] ?? [404, ''];
      res.writeHead(status).end(text);
    });
    await new Promise<void>((ok) => host.listen(0, '127.0.0.1', ok));
    const origin = `http://127.0.0.1:${(host.address() as AddressInfo).port}`;
    const conn: RailConnection = { ...connection, apiUrl: origin };
    const check = (path: string) =>
      paypal.verifyWebhook({ headers: { ...signed, 'paypal-cert-url': `${origin}${path}` }, body: Buffer.from(body) }, conn, Date.now());
    try {
      await expect(check('/certs/good')).resolves.toMatchObject({ ok: true, deliveryId: 'WH-CERT-HOST' });
      for (const path of ['/certs/busy', '/certs/limited'])
        await expect(check(path)).resolves.toEqual({ ok: false, status: 503, detail: expect.stringMatching(/could not be fetched/) });
      for (const path of ['/certs/missing', '/certs/junk'])
        await expect(check(path)).resolves.toEqual({ ok: false, status: 403, detail: 'The PayPal certificate could not be read.' });
      // A signature that cannot be one (not base64, or too short for RSA) is refused before anything is fetched.
      const before = asked;
      for (const sig of ['AAAA', 'not base64!', Buffer.alloc(64, 1).toString('base64')])
        await expect(
          paypal.verifyWebhook(
            { headers: { ...signed, 'paypal-transmission-sig': sig, 'paypal-cert-url': `${origin}/certs/busy` }, body: Buffer.from(body) },
            conn,
            Date.now(),
          ),
        ).resolves.toEqual({ ok: false, status: 403, detail: 'The PayPal signature is not a SHA256withRSA signature.' });
      expect(asked).toBe(before);
    } finally {
      await new Promise<void>((ok) => host.close(() => ok()));
    }
    // Nothing listens there any more: 503 too.
    await expect(check('/certs/busy')).resolves.toMatchObject({ ok: false, status: 503 });
  });
});

test("the emulator's own rules: a token is required, more than 15,000 items or yen with decimals are refused, an item reads back", async () => {
  const token = await fetch(`${emulator.url}/v1/oauth2/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${emulator.clientId}:${emulator.clientSecret}`).toString('base64')}` },
    body: 'grant_type=client_credentials',
  }).then((r) => r.json() as Promise<{ access_token: string; token_type: string; expires_in: number }>);
  expect(token).toMatchObject({ token_type: 'Bearer', expires_in: 32400 });
  const create = (body: unknown, bearer = token.access_token) =>
    fetch(`${emulator.url}/v1/payments/payouts`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    }).then(async (r) => ({ status: r.status, body: (await r.json()) as any }));
  const item = (i: number, value = '1.00', currency = 'USD') => ({
    recipient_type: 'EMAIL',
    amount: { value, currency },
    receiver: `r${i}@example.com`,
    sender_item_id: `po_raw_${i}`,
  });
  await expect(create({ sender_batch_header: { sender_batch_id: batchId() }, items: [item(0)] }, 'nope')).resolves.toMatchObject({
    status: 401,
    body: { error: 'invalid_token' },
  });
  const tooMany = await create({
    sender_batch_header: { sender_batch_id: batchId() },
    items: Array.from({ length: 15_001 }, (_, i) => item(i)),
  });
  expect(tooMany).toMatchObject({ status: 400, body: { name: 'VALIDATION_ERROR', details: [{ field: 'items' }] } });
  const yen = await create({ sender_batch_header: { sender_batch_id: batchId() }, items: [item(0, '10.50', 'JPY')] });
  expect(yen).toMatchObject({ status: 400, body: { name: 'VALIDATION_ERROR', details: [{ field: 'items[0].amount.value' }] } });

  const pb = batchId();
  const created = await create({ sender_batch_header: { sender_batch_id: pb }, items: [item(1)] });
  expect(created).toMatchObject({
    status: 201,
    body: { batch_header: { batch_status: 'PENDING', sender_batch_header: { sender_batch_id: pb } } },
  });
  const dup = await create({ sender_batch_header: { sender_batch_id: pb }, items: [item(1)] });
  expect(dup).toMatchObject({ status: 400, body: { name: 'USER_BUSINESS_ERROR', details: [{ field: 'SENDER_BATCH_ID' }] } });
  expect(dup.body.links[0].href).toBe(`${emulator.url}/v1/payments/payouts/${created.body.batch_header.payout_batch_id}`);
  const batch = (await fetch(dup.body.links[0].href, { headers: { Authorization: `Bearer ${token.access_token}` } }).then((r) =>
    r.json(),
  )) as any;
  const one = (await fetch(`${emulator.url}/v1/payments/payouts-item/${batch.items[0].payout_item_id}`, {
    headers: { Authorization: `Bearer ${token.access_token}` },
  }).then((r) => r.json())) as any;
  expect(one).toMatchObject({
    transaction_status: 'PENDING',
    sender_batch_id: pb,
    payout_item: { sender_item_id: 'po_raw_1', receiver: 'r1@example.com' },
  });
});

test('readiness: an email address is ready', async () => {
  await expect(rail.readiness('jane@example.com')).resolves.toEqual({ ready: true, reason: null });
  await expect(rail.readiness('jane')).resolves.toMatchObject({ ready: false, reason: expect.stringMatching(/email/) });
});
