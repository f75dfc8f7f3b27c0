import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { emulatorUrl, main } from '../../infra/chargebee';
import { type CliResult, cliInProcess, cliProcess } from '../support/cli-in-process';
import { type ChargebeeEmulator, checkoutCommandFor, EMULATOR_PORT, startChargebeeEmulator } from '../../infra/local/emulators/chargebee';

let spawnedOnce = false;

/**
 * The first command runs as `npm run chargebee` runs it (tsx in a child process: the program's entry point);
 * the others run its main in this process (test/support/cli-in-process.ts), without a child's start-up.
 */
function cli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  if (!spawnedOnce) {
    spawnedOnce = true;
    return cliProcess('infra/chargebee.ts', args, env);
  }
  return cliInProcess('chargebee', main, args, env);
}

/** Exit 0, nothing on stderr, one JSON line on stdout: that JSON. */
function json(res: CliResult): any {
  expect({ code: res.code, stderr: res.stderr }).toEqual({ code: 0, stderr: '' });
  const lines = res.stdout.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0] as string);
}

let emulator: ChargebeeEmulator;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  emulator = await startChargebeeEmulator();
  env = { CHARGEBEE_EMULATOR_URL: emulator.url };
});

afterAll(async () => {
  await emulator?.stop();
});

describe('the chargebee CLI', () => {
  it('finds the emulator: CHARGEBEE_EMULATOR_URL, else runtime.json, else the default port', () => {
    const saved = { url: process.env.CHARGEBEE_EMULATOR_URL, dir: process.env.DATA_DIR };
    const dir = mkdtempSync(join(tmpdir(), 'chargebee-cli-'));
    try {
      delete process.env.CHARGEBEE_EMULATOR_URL;
      process.env.DATA_DIR = dir;
      expect(emulatorUrl()).toBe(`http://127.0.0.1:${EMULATOR_PORT}`);
      writeFileSync(
        join(dir, 'runtime.json'),
        JSON.stringify({ pid: process.pid, emulator_urls: { chargebee: 'http://127.0.0.1:4567/' } }),
      );
      expect(emulatorUrl()).toBe('http://127.0.0.1:4567');
      process.env.CHARGEBEE_EMULATOR_URL = 'http://127.0.0.1:9999/';
      expect(emulatorUrl()).toBe('http://127.0.0.1:9999');
    } finally {
      for (const [k, v] of [
        ['CHARGEBEE_EMULATOR_URL', saved.url],
        ['DATA_DIR', saved.dir],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      rmSync(dir, { recursive: true, force: true });
    }
    // npm start prints the command with the URL only when it is not the default one.
    expect(checkoutCommandFor(`http://127.0.0.1:${EMULATOR_PORT}`)).toBe(
      'npm run --silent chargebee -- checkout --email buyer@example.com',
    );
    expect(checkoutCommandFor('http://127.0.0.1:4567')).toBe(
      'CHARGEBEE_EMULATOR_URL=http://127.0.0.1:4567 npm run --silent chargebee -- checkout --email buyer@example.com',
    );
  });

  it('checkout, renew with credits, refund, dispute and credits print the JSON answer', async () => {
    const bought = json(await cli(['checkout', '--email', 'cli@example.com', '--referral-id', 'rf_cli', '--tax-percent', '20'], env));
    expect(bought).toMatchObject({ status: 'active', amount_paid: 1200, currency_code: 'USD' });
    expect(bought.events.map((e: { type: string }) => e.type)).toEqual(['customer_created', 'subscription_created', 'payment_succeeded']);
    expect(emulator.ledger.customer(bought.customer_id).cf_refloop_referral_id).toBe('rf_cli');
    await emulator.request('POST', '/api/v2/promotional_credits/add', {
      customer_id: bought.customer_id,
      amount: 400,
      currency_code: 'USD',
      description: 'reward',
    });
    const [renewed, refunded, credits] = await Promise.all([
      cli(['renew', '--subscription', bought.subscription_id], env).then(json),
      cli(['refund', '--invoice', bought.invoice_id, '--amount', '200'], env).then(json),
      cli(['credits', '--customer', bought.customer_id], env).then(json),
    ]);
    expect(renewed).toMatchObject({ invoice_status: 'paid', credits_used: 400, total: 720 });
    expect(refunded).toMatchObject({ amount: 200, reason_code: 'product_unsatisfactory' });
    expect(refunded.credit_note_id).toMatch(/^cn_/);
    expect(credits.history).toEqual([expect.objectContaining({ type: 'increment', amount: 400 })]);
    const pending = json(await cli(['refund', '--invoice', bought.invoice_id, '--amount', '300', '--pending'], env));
    expect(pending.events.map((e: { type: string }) => e.type)).toEqual(['credit_note_created', 'refund_initiated']);
    const settled = json(await cli(['settle-refund', '--credit-note', pending.credit_note_id], env));
    expect(settled.events.map((e: { type: string }) => e.type)).toEqual(['payment_refunded']);
    const disputed = json(await cli(['dispute', '--invoice', bought.invoice_id], env));
    expect(disputed).toMatchObject({ reason_code: 'chargeback', amount: 700 });
  }, 30_000);

  it('exit 2 on bad arguments, 1 when the emulator refuses or is down', async () => {
    const [bad, refused, down] = await Promise.all([
      cli(['refund', '--invoice', 'x y'], env),
      cli(['cancel', '--subscription', 'no-such-subscription'], env),
      cli(['state'], { CHARGEBEE_EMULATOR_URL: 'http://127.0.0.1:1' }),
    ]);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toMatch(/^chargebee: --invoice must be a Chargebee id.*usage: chargebee refund/);
    expect(refused).toMatchObject({ code: 1, stdout: '', stderr: 'chargebee: Subscription not found for id no-such-subscription\n' });
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^Chargebee emulator not reachable at http:\/\/127\.0\.0\.1:1/);
  }, 30_000);
});
