// The payout rails' webhook intakes (docs/payouts.md "Webhooks"): for PayPal Payouts, Stripe Connect and
// Wise, a real delivery of the rail's emulator (its webhook URL pointed at a listener here, the request
// captured as sent) replayed through the local gateway to /webhooks/<rail>/<account_id>/: 200 and exactly one
// rail-webhook message on payout-rails with the mapped outcomes; one flipped bit, another account's id or
// (PayPal) a certificate URL off the allowed hosts: a 4xx and nothing queued.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPaypalEmulator, type PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { startWiseEmulator, type WiseEmulator } from '../../infra/local/emulators/wise';
import type { RailWebhookMessage } from '../../shared/queue/queues';
import type { RailKind } from '../../shared/rails/definition';
import { freePort } from '../../infra/local/dynamodb';
import { clearRailConnectionCache } from '../../shared/rails/intake';
import type { RailConnection, RailPayout } from '../../shared/rails/port';
import { railDefinition } from '../../shared/rails/registry';
import { createConnectedAccount } from '../../shared/rails/stripe/adapter';
import { saveRailConnection } from '../../shared/store/rail-connections';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestQueues, type TestQueues } from '../support/queues';

interface Captured {
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** The headers a rail signs with or the intake reads; the rest (host, length) are the replay's own. */
const KEPT = /^(paypal-|stripe-signature$|x-signature-sha256$|x-delivery-id$|x-test-notification$|content-type$)/;

let queues: TestQueues;
let listener: Server;
let captured: Captured[] = [];
let paypal: PaypalEmulator;
let stripe: StripeEmulator;
let wise: WiseEmulator;
let accountId: string;
let otherAccountId: string;
const connections = {} as Record<RailKind, RailConnection>;
let seq = 0;

const payoutId = () => `po_01JRAILHOOK${Date.now().toString(36).toUpperCase()}${++seq}`;
const batchId = () => `pb_01JRAILHOOK${Date.now().toString(36).toUpperCase()}${++seq}`;
const payout = (destination: string, currency: string, amount = 1250): RailPayout => ({
  id: payoutId(),
  memberId: `mem_${seq}`,
  amount,
  currency,
  destination,
});

/** The delivery replayed to the rail's intake (each path written out: the route table's test looks for its calls). */
function replay(kind: RailKind, account: string, d: Pick<Captured, 'headers' | 'body'>) {
  const options = { rawBody: d.body, headers: d.headers };
  if (kind === 'paypal') return api('POST', `/webhooks/paypal/${account}/`, options);
  if (kind === 'stripe') return api('POST', `/webhooks/stripe-connect/${account}/`, options);
  return api('POST', `/webhooks/wise/${account}/`, options);
}

async function queued(): Promise<RailWebhookMessage[]> {
  return (await queues.receiveAll('payout-rails')).map((m) => m.json as RailWebhookMessage);
}

/** The first delivery to `/<kind>` whose body matches, polled until a deadline. */
const delivery = (kind: RailKind, match: (body: any) => boolean) =>
  pollUntil(() => captured.find((c) => c.path === `/${kind}` && match(JSON.parse(c.body.toString('utf8')))), {
    timeoutMs: 5000,
    intervalMs: 20,
  });

function flipped(d: Captured): Captured {
  const body = Buffer.from(d.body);
  const at = Math.floor(body.length / 2);
  body[at] = (body[at] as number) ^ 0x01;
  return { ...d, body };
}

beforeAll(async () => {
  queues = await startTestQueues();
  listener = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string' && KEPT.test(k)) headers[k] = v;
      captured.push({ path: req.url ?? '', headers, body: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(listener.address() as AddressInfo).port}`;
  [paypal, stripe, wise] = await Promise.all([startPaypalEmulator({ settleAfterMs: null }), startStripeEmulator(), startWiseEmulator()]);
  paypal.setWebhookUrl(`${base}/paypal`);
  stripe.connect.setWebhookUrl(`${base}/stripe`);
  wise.setWebhookUrl(`${base}/wise`);
  connections.paypal = {
    apiUrl: paypal.url,
    credentials: { client_id: paypal.clientId, client_secret: paypal.clientSecret, webhook_id: paypal.webhookId },
  };
  connections.stripe = {
    apiUrl: stripe.url,
    credentials: {
      secret_key: stripe.secretKey,
      webhook_secret: stripe.connect.webhookSecret,
      connect_webhook_secret: stripe.connect.connectWebhookSecret,
    },
  };
  connections.wise = {
    apiUrl: wise.url,
    credentials: { api_token: wise.apiToken, profile_id: String(wise.profileId), webhook_public_key: wise.publicKeyPem },
  };
  ({ accountId } = await newAccount());
  ({ accountId: otherAccountId } = await newAccount());
  for (const kind of ['paypal', 'stripe', 'wise'] as const) await saveRailConnection(accountId, kind, connections[kind]);
  clearRailConnectionCache();
});

afterAll(async () => {
  await Promise.all([paypal?.stop(), stripe?.stop(), wise?.stop()]);
  listener?.closeAllConnections();
  await new Promise((resolve) => listener?.close(resolve));
  await queues?.stop();
});

beforeEach(async () => {
  captured = [];
  await queues.purge();
});

/** A delivery must be refused with a 4xx and queue nothing. */
async function refused(kind: RailKind, account: string, d: Pick<Captured, 'headers' | 'body'>, status?: number) {
  const res = await replay(kind, account, d);
  if (status !== undefined) expect(res.status).toBe(status);
  expect(res.status).toBeGreaterThanOrEqual(400);
  expect(res.status).toBeLessThan(500);
  expect(typeof res.body.detail).toBe('string');
  expect(await queued()).toEqual([]);
}

describe('PayPal Payouts: /webhooks/paypal/{account_id}/', () => {
  it('a signed item event is queued once with its outcome; tampered, another account or a foreign certificate URL: 4xx; the certificate out of reach: 503; nothing queued', async () => {
    const adapter = await railDefinition('paypal')!.adapter(connections.paypal);
    const paid = payout('hook-paid@example.com', 'USD');
    const unclaimed = payout('unclaimed@example.com', 'USD');
    const sent = await adapter.sendBatch(batchId(), [paid, unclaimed]);
    await paypal.settle(sent.railBatchId);
    const success = await delivery('paypal', (b) => b.resource?.payout_item?.sender_item_id === paid.id);
    const waiting = await delivery('paypal', (b) => b.resource?.payout_item?.sender_item_id === unclaimed.id);

    const res = await replay('paypal', accountId, success);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ received: true });
    const messages = await queued();
    expect(messages).toEqual([
      {
        kind: 'rail-webhook',
        account_id: accountId,
        rail: 'paypal',
        delivery_id: JSON.parse(success.body.toString()).id,
        outcomes: [expect.objectContaining({ payoutId: paid.id, state: 'paid', railStatus: 'SUCCESS' })],
        account_updates: [],
        received_at: expect.any(Number),
      },
    ]);

    expect((await replay('paypal', accountId, waiting)).status).toBe(200);
    expect((await queued()).map((m) => m.outcomes)).toEqual([
      [expect.objectContaining({ payoutId: unclaimed.id, state: 'unclaimed', railStatus: 'UNCLAIMED' })],
    ]);

    await refused('paypal', accountId, flipped(success), 403);
    await refused('paypal', otherAccountId, success, 404);
    await refused('paypal', 'acc_not_an_account', success, 404);
    await refused(
      'paypal',
      accountId,
      { ...success, headers: { ...success.headers, 'paypal-cert-url': 'https://evil.example.com/v1/notifications/certs/CERT-1' } },
      403,
    );
    await refused('paypal', accountId, { ...success, headers: { 'content-type': 'application/json' } }, 403);

    // PayPal's certificate host out of reach (an account whose api_url, where the certificate URL points, is a
    // port nobody listens on): 503 with Retry-After and nothing queued; PayPal delivers the event again.
    const { accountId: unreachableId } = await newAccount();
    const closed = `http://127.0.0.1:${await freePort()}`;
    await saveRailConnection(unreachableId, 'paypal', { ...connections.paypal, apiUrl: closed });
    const unreachable = await replay('paypal', unreachableId, {
      ...success,
      headers: { ...success.headers, 'paypal-cert-url': `${closed}/v1/notifications/certs/CERT-UNREACHABLE` },
    });
    expect({ status: unreachable.status, retryAfter: unreachable.headers['retry-after'], detail: unreachable.body.detail }).toEqual({
      status: 503,
      retryAfter: '60',
      detail: expect.stringMatching(/could not be fetched/),
    });
    expect(await queued()).toEqual([]);
  });
});

describe('Stripe Connect: /webhooks/stripe-connect/{account_id}/', () => {
  it('transfer.created (platform secret) and account.updated (Connect secret) are queued once each; tampered or another account: 4xx', async () => {
    const acct = await createConnectedAccount(connections.stripe, 'mem_hook', 'hook@example.com', {
      timeoutMs: 2000,
      attempts: 1,
      backoffMs: 10,
    });
    await stripe.connect.onboard(acct.id);
    const updated = await delivery('stripe', (b) => b.type === 'account.updated' && b.account === acct.id && b.data.object.payouts_enabled);
    const adapter = await railDefinition('stripe')!.adapter(connections.stripe);
    const p = payout(acct.id, 'USD');
    await adapter.sendBatch(batchId(), [p]);
    const created = await delivery('stripe', (b) => b.type === 'transfer.created' && b.data.object.metadata?.refloop_payout_id === p.id);

    expect((await replay('stripe', accountId, created)).status).toBe(200);
    expect(await queued()).toEqual([
      expect.objectContaining({
        kind: 'rail-webhook',
        account_id: accountId,
        rail: 'stripe',
        delivery_id: JSON.parse(created.body.toString()).id,
        outcomes: [expect.objectContaining({ payoutId: p.id, state: 'paid' })],
        account_updates: [],
      }),
    ]);

    expect((await replay('stripe', accountId, updated)).status).toBe(200);
    expect(await queued()).toEqual([
      expect.objectContaining({ rail: 'stripe', outcomes: [], account_updates: [{ destination: acct.id, ready: true }] }),
    ]);

    await refused('stripe', accountId, flipped(created), 403);
    await refused('stripe', otherAccountId, created, 404);
    await refused('stripe', accountId, { ...created, headers: {} }, 403);
  });
});

describe('Wise: /webhooks/wise/{account_id}/', () => {
  it('a signed transfer state change is queued once with its outcome (named by the transfer id); tampered or another account: 4xx', async () => {
    wise.setBalance('EUR', 100_000);
    const adapter = await railDefinition('wise')!.adapter(connections.wise);
    const sent = await adapter.sendBatch(batchId(), [payout('jo@example.com', 'EUR', 800)]);
    const transferId = sent.items[0]?.railItemId as string;
    await wise.simulate(transferId, 'outgoing_payment_sent');
    const changed = await delivery('wise', (b) => b.data?.current_state === 'outgoing_payment_sent');

    expect((await replay('wise', accountId, changed)).status).toBe(200);
    expect(await queued()).toEqual([
      {
        kind: 'rail-webhook',
        account_id: accountId,
        rail: 'wise',
        delivery_id: changed.headers['x-delivery-id'],
        outcomes: [{ payoutId: '', state: 'paid', railStatus: 'outgoing_payment_sent', railItemId: transferId, reason: null }],
        account_updates: [],
        received_at: expect.any(Number),
      },
    ]);

    await refused('wise', accountId, flipped(changed), 403);
    await refused('wise', otherAccountId, changed, 404);
    await refused('wise', accountId, { ...changed, headers: { 'content-type': 'application/json' } }, 403);
  });
});

it('a body over the limit is a 413 before any check; nothing queued', async () => {
  await refused('paypal', accountId, { headers: { 'content-type': 'application/json' }, body: Buffer.alloc(129 * 1024, 0x20) }, 413);
});
