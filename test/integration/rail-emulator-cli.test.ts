import Stripe from 'stripe';
import { LOCAL_KEYS as PAYPAL_KEYS, type PaypalEmulator, startPaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { startEmulator as startStripe, LOCAL_KEYS as STRIPE_KEYS, type StripeEmulator } from '../../infra/local/emulators/stripe';
import type { RunningEmulator } from '../../infra/local/emulators/types';
import { startEmulator as startWise, type RunningWiseEmulator } from '../../infra/local/emulators/wise';
import { wise as wiseDefinition } from '../../shared/rails/wise';
import { cli as paypalCli } from '../../infra/paypal';
import { runRailCli } from '../../infra/rail-emulator-cli';
import { main as stripeMain } from '../../infra/stripe';
import { cli as wiseCli } from '../../infra/wise';
import { type CliResult, cliInProcess, cliProcess } from '../support/cli-in-process';

const MAINS: Record<string, [string, (argv: string[]) => Promise<number>]> = {
  'infra/paypal.ts': ['paypal', (argv) => runRailCli(paypalCli, argv)],
  'infra/wise.ts': ['wise', (argv) => runRailCli(wiseCli, argv)],
  'infra/stripe.ts': ['stripe', stripeMain],
};
const spawnedOnce = new Set<string>();

/**
 * A CLI's first command runs as `npm run <cli>` runs it (tsx in a child process: the program's entry point);
 * the others run its main in this process (test/support/cli-in-process.ts), without a child's start-up.
 */
function cli(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  const main = MAINS[file];
  if (!main || !spawnedOnce.has(file)) {
    spawnedOnce.add(file);
    return cliProcess(file, args, env);
  }
  return cliInProcess(main[0], main[1], args, env);
}

/** Exit 0, nothing on stderr, one JSON line on stdout: that JSON. */
function json(res: CliResult): any {
  expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
  const lines = res.stdout.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

let paypal: PaypalEmulator;
let wise: RunningWiseEmulator;
let stripe: RunningEmulator<StripeEmulator>;

beforeAll(async () => {
  // Items settle only when told, so the CLI moves them.
  [paypal, wise, stripe] = await Promise.all([
    startPaypalEmulator({ port: 0, ...PAYPAL_KEYS, settleAfterMs: null }),
    startWise({ port: 0 }),
    startStripe({ port: 0 }),
  ]);
});

afterAll(async () => {
  await Promise.all([paypal?.stop(), wise?.close(), stripe?.close()]);
});

test('paypal: batches, item-status, outcome and settle --batch move a sent batch by hand', async () => {
  const token = await fetch(`${paypal.url}/v1/oauth2/token`, {
    method: 'POST',
    headers: { Authorization: `Basic ${Buffer.from(`${paypal.clientId}:${paypal.clientSecret}`).toString('base64')}` },
    body: 'grant_type=client_credentials',
  }).then((r) => r.json() as Promise<{ access_token: string }>);
  const sent = await fetch(`${paypal.url}/v1/payments/payouts`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${token.access_token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({
      sender_batch_header: { sender_batch_id: 'pb_cli_1' },
      items: [0, 1].map((i) => ({
        recipient_type: 'EMAIL',
        amount: { value: '5.00', currency: 'USD' },
        receiver: `cli${i}@example.com`,
        sender_item_id: `po_cli_${i}`,
      })),
    }),
  }).then((r) => r.json() as Promise<{ batch_header: { payout_batch_id: string } }>);
  const batchId = sent.batch_header.payout_batch_id;
  const env = { PAYPAL_EMULATOR_URL: paypal.url };
  const run = (args: string[]) => cli('infra/paypal.ts', args, env);

  const listed = json(await run(['batches']));
  const batch = listed.batches.find((b: any) => b.payout_batch_id === batchId);
  expect(batch).toMatchObject({
    sender_batch_id: 'pb_cli_1',
    items: [{ transaction_status: 'PENDING' }, { transaction_status: 'PENDING' }],
  });
  const [first, second] = batch.items.map((i: any) => i.payout_item_id as string);

  json(await run(['item-status', '--item', first, '--status', 'unclaimed']));
  expect(json(await run(['outcome', '--receiver', 'CLI1@example.com', '--status', 'failed']))).toEqual({
    receiver: 'cli1@example.com',
    status: 'FAILED',
  });
  json(await run(['settle', '--batch', batchId]));
  const after = json(await run(['batches'])).batches.find((b: any) => b.payout_batch_id === batchId);
  expect(after.items.map((i: any) => [i.payout_item_id, i.transaction_status])).toEqual([
    [first, 'UNCLAIMED'],
    [second, 'FAILED'],
  ]);

  const refused = await run(['item-status', '--item', 'NOSUCHITEM', '--status', 'SUCCESS']);
  expect(refused).toMatchObject({ code: 1, stdout: '' });
  expect(refused.stderr.trim().split('\n')).toHaveLength(1);
});

test('wise: balance, sca on|off, state, and simulate moves a sent transfer to outgoing_payment_sent', async () => {
  const env = { WISE_EMULATOR_URL: wise.url };
  const run = (args: string[]) => cli('infra/wise.ts', args, env);
  expect(json(await run(['balance', '--amount', '2500.50', '--currency', 'gbp']))).toEqual({ currency: 'GBP', amount: 2500.5 });
  expect(json(await run(['sca', 'on']))).toEqual({ sca_required: true });
  expect(json(await run(['state']))).toMatchObject({ profile_id: wise.handle.profileId, sca_required: true, balances: { GBP: 2500.5 } });
  expect(json(await run(['sca', 'off']))).toEqual({ sca_required: false });

  // A payout sent by the Wise rail (funded from the balance, SCA off), then moved by hand.
  const rail = await wiseDefinition.adapter(wise.connection);
  const sent = await rail.sendBatch('pb_wise_cli', [
    { id: 'po_wise_cli_1', memberId: 'mem_1', amount: 1200, currency: 'EUR', destination: 'cli@example.com' },
  ]);
  const transferId = String(sent.items[0]?.railItemId);
  expect(json(await run(['simulate', '--transfer', transferId, '--state', 'outgoing_payment_sent']))).toMatchObject({
    status: 'outgoing_payment_sent',
  });
  const transfer = json(await run(['state'])).transfers.find((t: any) => String(t.id) === transferId);
  expect(transfer).toMatchObject({ status: 'outgoing_payment_sent', email: 'cli@example.com' });

  const refused = await run(['simulate', '--transfer', '999999', '--state', 'outgoing_payment_sent']);
  expect(refused).toMatchObject({ code: 1, stdout: '' });
  expect(refused.stderr).toMatch(/^wise: .+\n$/);
});

test('stripe connect-*: onboard an account, set the balance, reverse a transfer, read the state', async () => {
  // The Connect side runs on the Stripe emulator `npm start` runs, with its fixed local secrets.
  expect(stripe.handle.connect).toMatchObject({
    webhookSecret: STRIPE_KEYS.connectPlatformWebhookSecret,
    connectWebhookSecret: STRIPE_KEYS.connectWebhookSecret,
  });
  const sdk = new Stripe(stripe.handle.secretKey, {
    host: '127.0.0.1',
    port: new URL(stripe.url).port,
    protocol: 'http',
    maxNetworkRetries: 0,
    telemetry: false,
  });
  const env = { STRIPE_EMULATOR_URL: stripe.url };
  const run = (args: string[]) => cli('infra/stripe.ts', args, env);
  const acct = await sdk.accounts.create({ type: 'express', email: 'cli@example.com', capabilities: { transfers: { requested: true } } });

  expect(json(await run(['connect-onboard', '--account', acct.id]))).toEqual({
    events: [{ event_id: expect.any(String), type: 'account.updated', status: null }],
  });
  const transfer = await sdk.transfers.create({ amount: 700, currency: 'usd', destination: acct.id, transfer_group: 'pb_cli' });
  expect(json(await run(['connect-reverse', '--transfer', transfer.id, '--amount', '200']))).toEqual({
    events: [{ event_id: expect.any(String), type: 'transfer.reversed', status: null }],
  });
  expect(json(await run(['connect-balance', '--amount', '0']))).toMatchObject({ balance: { usd: 0 } });
  const state = json(await run(['connect-state']));
  expect(state.accounts).toEqual([expect.objectContaining({ id: acct.id, payouts_enabled: true })]);
  expect(state.transfers).toEqual([expect.objectContaining({ id: transfer.id, amount: 700, amount_reversed: 200 })]);
  // With no balance left, the next transfer is refused as Stripe refuses it.
  await expect(sdk.transfers.create({ amount: 100, currency: 'usd', destination: acct.id })).rejects.toMatchObject({
    code: 'balance_insufficient',
  });
});
