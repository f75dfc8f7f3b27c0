// The Stripe Connect payout rail against the Stripe emulator's Connect side. First the official `stripe`
// package (the dev dependency whose API version Refloop pins), pointed at the emulator with
// host/port/protocol, proves the emulator's wire format: accounts, account links, transfers (idempotent
// replay and mismatch), the transfer list, reversals, balance_insufficient, and constructEvent on every
// webhook it delivers. Then the rail's adapter: an account created once per member, onboarded through the
// Account Link's page, readiness before and after, a batch of two paid, a retry that pays nothing twice
// (also after an answer lost past the commit), balance_insufficient as a batch failure, a member not ready
// as an item failure, a reversal read back as failed, and the webhooks verified or refused.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Stripe from 'stripe';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import type { DeliveredConnectEvent } from '../../infra/local/emulators/stripe/connect-routes';
import { signatureHeader as providerSignatureHeader } from '../../shared/providers/stripe/signature';
import { STRIPE_API_VERSION as PROVIDER_API_VERSION } from '../../shared/providers/stripe/wire';
import { RailBatchError, type RailConnection, type RailPayout } from '../../shared/rails/port';
import { createAccountLink, createConnectedAccount, stripeRail } from '../../shared/rails/stripe/adapter';
import { stripeRailDefinition } from '../../shared/rails/stripe';
import { signatureHeader, verifyStripeRailWebhook } from '../../shared/rails/stripe/webhook';
import { STRIPE_API_VERSION, type ConnectEvent } from '../../shared/rails/stripe/wire';

interface Received {
  headers: Record<string, string | undefined>;
  rawBody: string;
}

let emulator: StripeEmulator;
let receiver: Server;
const received: Received[] = [];
let sdk: Stripe;
let connection: RailConnection;
const FAST = { timeoutMs: 2_000, attempts: 3, backoffMs: 20 };

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      received.push({ headers: { 'stripe-signature': req.headers['stripe-signature'] as string | undefined }, rawBody: body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  emulator = await startStripeEmulator({ connect: { webhookUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/` } });
  connection = {
    apiUrl: emulator.url,
    credentials: {
      secret_key: emulator.secretKey,
      webhook_secret: emulator.connect.webhookSecret,
      connect_webhook_secret: emulator.connect.connectWebhookSecret,
    },
  };
  sdk = new Stripe(emulator.secretKey, {
    host: '127.0.0.1',
    port: emulator.port,
    protocol: 'http',
    maxNetworkRetries: 0,
    telemetry: false,
  });
});

afterAll(async () => {
  await emulator?.stop();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

/** The first webhook received that `match`es, polled until a deadline. */
async function webhook(match: (e: ConnectEvent) => boolean, timeoutMs = 5_000): Promise<Received> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const hit = received.find((w) => match(JSON.parse(w.rawBody) as ConnectEvent));
    if (hit) return hit;
    if (Date.now() > deadline) throw new Error('no such webhook arrived');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const verify = (w: Received, conn = connection, nowMs = Date.now()) =>
  verifyStripeRailWebhook({ headers: w.headers, body: Buffer.from(w.rawBody, 'utf8') }, conn, nowMs);

let memberSeq = 0;
/** A connected account, onboarded (complete) or not. */
async function account(onboarded: boolean): Promise<string> {
  memberSeq += 1;
  const acct = await createConnectedAccount(connection, `mem_${memberSeq}_${Date.now()}`, `m${memberSeq}@example.com`, FAST);
  if (onboarded) await emulator.connect.onboard(acct.id);
  return acct.id;
}

const payout = (id: string, destination: string, amount = 1250, currency = 'USD'): RailPayout => ({
  id,
  memberId: 'mem_x',
  amount,
  currency,
  destination,
});

describe('the official stripe package reads and writes the emulator', () => {
  it('accounts, account links, transfers (replay and mismatch), list, reversal, balance_insufficient; constructEvent on every webhook', async () => {
    const acct = await sdk.accounts.create({ type: 'express', email: 'ann@example.com', capabilities: { transfers: { requested: true } } });
    expect(acct).toMatchObject({
      object: 'account',
      type: 'express',
      payouts_enabled: false,
      details_submitted: false,
      capabilities: { transfers: 'inactive' },
    });
    expect(acct.id).toMatch(/^acct_/);
    expect((await sdk.accounts.retrieve(acct.id)).id).toBe(acct.id);
    await expect(sdk.accounts.retrieve('acct_notours123')).rejects.toMatchObject({ type: 'StripePermissionError', statusCode: 403 });

    const link = await sdk.accountLinks.create({
      account: acct.id,
      type: 'account_onboarding',
      refresh_url: 'https://x.test/r',
      return_url: 'https://x.test/ok',
    });
    expect(link.object).toBe('account_link');
    expect(link.expires_at - link.created).toBe(300);
    expect(link.url).toContain('/_emulator/connect/onboard/');

    // Not onboarded: the transfer is refused as Stripe does.
    await expect(sdk.transfers.create({ amount: 100, currency: 'usd', destination: acct.id })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'insufficient_capabilities_for_transfer',
      param: 'destination',
    });
    await emulator.connect.onboard(acct.id);

    const params = {
      amount: 700,
      currency: 'usd',
      destination: acct.id,
      transfer_group: 'pb_sdk',
      metadata: { refloop_payout_id: 'po_sdk1' },
    };
    const t1 = await sdk.transfers.create(params, { idempotencyKey: 'k-sdk-1' });
    expect(t1).toMatchObject({
      object: 'transfer',
      amount: 700,
      amount_reversed: 0,
      reversed: false,
      currency: 'usd',
      destination: acct.id,
      transfer_group: 'pb_sdk',
    });
    expect(t1.id).toMatch(/^tr_/);
    const replay = await sdk.transfers.create(params, { idempotencyKey: 'k-sdk-1' });
    expect(replay.id).toBe(t1.id);
    await expect(sdk.transfers.create({ ...params, amount: 701 }, { idempotencyKey: 'k-sdk-1' })).rejects.toMatchObject({
      type: 'StripeIdempotencyError',
    });

    const listed = await sdk.transfers.list({ transfer_group: 'pb_sdk' });
    expect(listed.data.map((t) => t.id)).toEqual([t1.id]);

    const reversal = await sdk.transfers.createReversal(t1.id, { amount: 200 });
    expect(reversal).toMatchObject({ object: 'transfer_reversal', amount: 200, transfer: t1.id });
    const after = await sdk.transfers.retrieve(t1.id);
    expect(after).toMatchObject({ amount_reversed: 200, reversed: false });

    emulator.connect.setBalance('usd', 50);
    await expect(sdk.transfers.create({ amount: 100, currency: 'usd', destination: acct.id })).rejects.toMatchObject({
      type: 'StripeInvalidRequestError',
      code: 'balance_insufficient',
      statusCode: 400,
    });
    emulator.connect.setBalance('usd', 1_000_000_00);

    await emulator.connect.settle();
    const ours = emulator.connect
      .events()
      .filter(
        (d: DeliveredConnectEvent) =>
          d.event.account === acct.id || (d.event.data.object as { destination?: string }).destination === acct.id,
      );
    expect(ours.map((d) => d.event.type)).toEqual(['account.updated', 'transfer.created', 'transfer.reversed']);
    for (const d of ours) {
      const secret = d.event.account ? emulator.connect.connectWebhookSecret : emulator.connect.webhookSecret;
      const event = sdk.webhooks.constructEvent(d.rawBody, d.signature, secret);
      expect(event.id).toBe(d.event.id);
      if (d.event.type === 'account.updated') expect(event.account).toBe(acct.id);
      expect(() => sdk.webhooks.constructEvent(d.rawBody, d.signature, 'whsec_wrong')).toThrow();
    }
  });

  it('the rail pins the billing provider API version and signs as it does', () => {
    expect(STRIPE_API_VERSION).toBe(PROVIDER_API_VERSION);
    expect(signatureHeader('whsec_x', '{"a":1}', 1700000000)).toBe(providerSignatureHeader('whsec_x', '{"a":1}', 1700000000));
  });
});

describe('the Stripe Connect rail adapter against the emulator', () => {
  it('the definition loads the adapter; a wrong key is unauthorized', async () => {
    expect(stripeRailDefinition).toMatchObject({
      kind: 'stripe',
      destination: 'connected-account',
      webhookPath: 'stripe-connect',
      emulator: 'stripe',
    });
    await (await stripeRailDefinition.adapter(connection)).verifyConnection();
    const wrong = stripeRail({ ...connection, credentials: { ...connection.credentials, secret_key: 'sk_test_wrong' } }, FAST);
    await expect(wrong.verifyConnection()).rejects.toMatchObject({ name: 'RailBatchError', code: 'unauthorized', retryable: false });
  });

  it('account once per member, onboarding through the Account Link page, readiness false then true, account.updated verified', async () => {
    const memberId = `mem_onboard_${Date.now()}`;
    const acct = await createConnectedAccount(connection, memberId, 'bob@example.com', FAST);
    expect((await createConnectedAccount(connection, memberId, 'bob@example.com', FAST)).id).toBe(acct.id);
    const rail = stripeRail(connection, FAST);
    const before = await rail.readiness(acct.id);
    expect(before.ready).toBe(false);
    expect(before.reason).toMatch(/onboarding is not finished/);

    const link = await createAccountLink(connection, acct.id, 'http://portal.test/refresh', 'http://portal.test/back', FAST);
    expect(link.expires_at).toBeGreaterThan(Date.now() / 1000);
    const page = await fetch(link.url);
    expect(page.status).toBe(200);
    const html = await page.text();
    const action = /<form method="post" action="([^"]+)"/.exec(html)?.[1] as string;
    expect(action).toBeDefined();
    const submitted = await fetch(new URL(action, link.url), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'outcome=complete',
      redirect: 'manual',
    });
    expect(submitted.status).toBe(303);
    expect(submitted.headers.get('location')).toBe('http://portal.test/back');
    // Single-use: a second visit goes to refresh_url.
    const again = await fetch(link.url, { redirect: 'manual' });
    expect(again.status).toBe(302);
    expect(again.headers.get('location')).toBe('http://portal.test/refresh');

    expect(await rail.readiness(acct.id)).toEqual({ ready: true, reason: null });
    const w = await webhook((e) => e.type === 'account.updated' && e.account === acct.id);
    const verdict = await verify(w);
    expect(verdict).toMatchObject({ ok: true, outcomes: [], accountUpdates: [{ destination: acct.id, ready: true }] });
    if (verdict.ok) expect(verdict.deliveryId).toBe((JSON.parse(w.rawBody) as ConnectEvent).id);
    // Signed with the platform endpoint's secret instead: verified, but not read as an account update.
    const platformSigned = {
      headers: { 'stripe-signature': signatureHeader(emulator.connect.webhookSecret, w.rawBody, Math.floor(Date.now() / 1000)) },
      rawBody: w.rawBody,
    };
    expect(await verify(platformSigned)).toMatchObject({ ok: true, accountUpdates: [] });

    expect(await rail.readiness('acct_missing123')).toMatchObject({ ready: false, reason: expect.stringMatching(/set up payouts again/) });
  });

  it('a batch of two is paid; sending it again makes no second transfer; an answer lost after the commit pays once', async () => {
    const [a, b] = [await account(true), await account(true)];
    const rail = stripeRail(connection, FAST);
    const batch = `pb_two_${Date.now()}`;
    const payouts = [payout(`po_a_${batch}`, a, 1250), payout(`po_b_${batch}`, b, 3000, 'EUR')];
    const first = await rail.sendBatch(batch, payouts);
    expect(first.railBatchId).toBe(batch);
    expect(first.items.map((i) => [i.payoutId, i.state, i.railStatus])).toEqual([
      [payouts[0]?.id, 'paid', 'paid'],
      [payouts[1]?.id, 'paid', 'paid'],
    ]);
    for (const i of first.items) expect(i.railItemId).toMatch(/^tr_/);
    const count = emulator.connect.transfers().length;

    const retry = await rail.sendBatch(batch, payouts);
    expect(retry.items.map((i) => i.railItemId)).toEqual(first.items.map((i) => i.railItemId));
    expect(emulator.connect.transfers().length).toBe(count);

    const made = emulator.connect.transfers().filter((t) => t.transfer_group === batch);
    expect(made.map((t) => [t.amount, t.currency, t.metadata.refloop_payout_id, t.metadata.refloop_batch_id])).toEqual([
      [1250, 'usd', payouts[0]?.id, batch],
      [3000, 'eur', payouts[1]?.id, batch],
    ]);
    expect(emulator.idempotencyKeysSeen()).toContain(`refloop-transfer-${payouts[0]?.id}`);

    // The emulator writes the next transfer, then answers 500: the adapter's retry replays it.
    const lostBatch = `pb_lost_${Date.now()}`;
    emulator.connect.failAfterCommit(1);
    const lost = await rail.sendBatch(lostBatch, [payout(`po_l_${lostBatch}`, a, 999)]);
    expect(lost.items).toMatchObject([{ state: 'paid' }]);
    expect(emulator.connect.transfers().filter((t) => t.transfer_group === lostBatch)).toHaveLength(1);

    const read = await rail.readBatch(batch, batch);
    expect(read.items.map((i) => [i.payoutId, i.state]).sort()).toEqual(payouts.map((p) => [p.id, 'paid']).sort());
  });

  it('balance_insufficient fails the batch; a member not ready fails only their item', async () => {
    const [ready, notReady] = [await account(true), await account(false)];
    const rail = stripeRail(connection, FAST);
    emulator.connect.setBalance('usd', 100);
    const batch = `pb_poor_${Date.now()}`;
    const count = emulator.connect.transfers().length;
    const err = await rail
      .sendBatch(batch, [payout(`po_p1_${batch}`, ready, 5000), payout(`po_p2_${batch}`, ready, 5000)])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RailBatchError);
    expect(err).toMatchObject({ code: 'insufficient_funds', retryable: false });
    expect(emulator.connect.transfers().length).toBe(count);
    emulator.connect.setBalance('usd', 1_000_000_00);

    const mixed = `pb_mixed_${Date.now()}`;
    const out = await rail.sendBatch(mixed, [
      payout(`po_m1_${mixed}`, notReady),
      payout(`po_m2_${mixed}`, ready),
      payout(`po_m3_${mixed}`, 'acct_gone123'),
    ]);
    expect(out.items[2]).toMatchObject({ state: 'failed', railStatus: 'resource_missing' });
    expect(out.items[0]).toMatchObject({ state: 'failed', railStatus: 'insufficient_capabilities_for_transfer', railItemId: null });
    expect(out.items[0]?.reason).toMatch(/cannot receive transfers/);
    expect(out.items[1]).toMatchObject({ state: 'paid' });
    expect(await rail.cancelItem(out.items[1]?.railItemId as string)).toBe(false);
  });

  it('rate limited or down: retried, then unavailable (retryable)', async () => {
    const rail = stripeRail(connection, FAST);
    emulator.failNext(1, 429, 0);
    await rail.verifyConnection();
    emulator.failNext(3, 503);
    await expect(rail.verifyConnection()).rejects.toMatchObject({ code: 'unavailable', retryable: true });

    // The answer of the batch's first transfer lost (no retry in the call): the batch fails, retryable, and
    // sent again pays each once. Lost on a later transfer: the transfers confirmed are answered and the other
    // stays processing (not_confirmed) until the batch is sent again. One transfer per payout throughout.
    const dest = await account(true);
    const batch = `pb_down_${Date.now()}`;
    const payouts = [payout(`po_d1_${batch}`, dest), payout(`po_d2_${batch}`, dest)];
    const oneCall = stripeRail(connection, { ...FAST, attempts: 1 });
    emulator.connect.failAfterCommit(1);
    await expect(oneCall.sendBatch(batch, payouts)).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    const half = await oneCall.sendBatch(batch, [payouts[0] as RailPayout, payouts[1] as RailPayout]);
    expect(half.items.map((i) => i.state)).toEqual(['paid', 'paid']);
    const third = payout(`po_d3_${batch}`, dest);
    emulator.connect.failAfterCommit(1);
    const partial = await stripeRail(connection, { ...FAST, attempts: 1 }).sendBatch(batch, [payouts[0] as RailPayout, third]);
    expect(partial.items).toMatchObject([
      { payoutId: payouts[0]?.id, state: 'paid' },
      { payoutId: third.id, state: 'processing', railStatus: 'not_confirmed' },
    ]);
    const settled = await rail.sendBatch(batch, [payouts[0] as RailPayout, payouts[1] as RailPayout, third]);
    expect(settled.items.map((i) => i.state)).toEqual(['paid', 'paid', 'paid']);
    expect(emulator.connect.transfers().filter((t) => t.transfer_group === batch)).toHaveLength(3);
  });

  it('a reversal reads back as failed; transfer.reversed is verified as failed; a forged or stale webhook is refused', async () => {
    const dest = await account(true);
    const rail = stripeRail(connection, FAST);
    const batch = `pb_rev_${Date.now()}`;
    const sent = await rail.sendBatch(batch, [payout(`po_r1_${batch}`, dest, 4000), payout(`po_r2_${batch}`, dest, 4000)]);
    const tr = sent.items[0]?.railItemId as string;
    await emulator.connect.reverse(tr);
    const read = await rail.readBatch(batch, batch);
    const byId = Object.fromEntries(read.items.map((i) => [i.payoutId, i]));
    expect(byId[`po_r1_${batch}`]).toMatchObject({ state: 'failed', railStatus: 'reversed', railItemId: tr });
    expect(byId[`po_r2_${batch}`]).toMatchObject({ state: 'paid' });

    const w = await webhook((e) => e.type === 'transfer.reversed' && (e.data.object as { id: string }).id === tr);
    expect(await verify(w)).toMatchObject({
      ok: true,
      outcomes: [{ payoutId: `po_r1_${batch}`, state: 'failed', railStatus: 'reversed', railItemId: tr }],
      accountUpdates: [],
    });
    // Forged: another secret, a changed body, no header, a stale timestamp.
    const t = Math.floor(Date.now() / 1000);
    expect(
      await verify({ headers: { 'stripe-signature': signatureHeader('whsec_forged', w.rawBody, t) }, rawBody: w.rawBody }),
    ).toMatchObject({ ok: false, status: 403 });
    expect(await verify({ headers: w.headers, rawBody: w.rawBody.replace('"reversed": true', '"reversed": false') })).toMatchObject({
      ok: false,
      status: 403,
    });
    expect(await verify({ headers: {}, rawBody: w.rawBody })).toMatchObject({ ok: false, status: 403 });
    expect(await verify(w, connection, Date.now() + 10 * 60_000)).toMatchObject({ ok: false, status: 403 });
    // Signed but not an event, or not JSON: 400; too large: 413.
    const signed = (rawBody: string) => ({
      headers: { 'stripe-signature': signatureHeader(emulator.connect.webhookSecret, rawBody, t) },
      rawBody,
    });
    expect(await verify(signed('{"object":"charge"}'))).toMatchObject({ ok: false, status: 400 });
    expect(await verify(signed('not json'))).toMatchObject({ ok: false, status: 400 });
    expect(await verify(signed(`{"pad":"${'x'.repeat(130 * 1024)}"}`))).toMatchObject({ ok: false, status: 413 });
    // A live connection ignores test-mode events.
    const live = { ...connection, credentials: { ...connection.credentials, secret_key: 'sk_live_x' } };
    expect(await verify(w, live)).toMatchObject({ ok: true, outcomes: [] });
  });
});
