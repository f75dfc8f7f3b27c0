// e2e: `npm start` with the demo account on Stripe (DEMO_PROVIDER=stripe), over real HTTP, driven by the
// Stripe emulator's CLI: a Checkout Session with client_reference_id converts the referral by itself, the
// reward follows, the referrer's credit is a negative customer balance, a partial refund then a dispute
// claw it back in proportion and in full, and a referral's single-use promotion code converts its referral.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../infra/local/dynamodb';
import { startLocal, type LocalRuntime } from '../../infra/local/start';
import { pollUntil } from '../support/fixtures';

const ROOT = join(__dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'refloop-e2e-stripe-'));
let runtime: LocalRuntime | undefined;

/** `npm run stripe -- <args>` against the runtime's emulator; its JSON output. */
function cli(args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'infra/stripe.ts', ...args],
      { cwd: ROOT, env: { ...process.env, STRIPE_EMULATOR_URL: runtime?.stripe.url ?? '' } },
      (err, stdout, stderr) => (err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(JSON.parse(stdout))),
    );
  });
}

async function call(method: string, path: string, key: string, body?: unknown) {
  const res = await fetch(`${runtime?.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const rewardsOf = async (key: string, id: string, count: number) =>
  pollUntil(
    async () => {
      const r = await call('GET', `/v1/referrals/${id}/`, key);
      return r.body.rewards?.length === count ? r.body : null;
    },
    { timeoutMs: 20_000 },
  );

afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('walks Stripe from checkout to reward, credit and clawback under npm start', async () => {
  runtime = await startLocal({ port: await freePort(), dynamodbPort: await freePort(), sqsPort: 0, paddlePort: 0, paddleBillingPort: 0, stripePort: 0, dataDir, tableName: 'refloop-e2e-stripe', demoProvider: 'stripe' });
  expect(runtime.demoProvider).toBe('stripe');
  const key = runtime.demo.apiKey;

  const campaign = await call('POST', '/v1/campaigns/', key, {
    name: 'Stripe friends',
    allows_credit: true,
    credit_amount: '5.00',
    credit_currency: 'USD',
    referred_discount_type: 'percentage',
    referred_discount_amount: '20',
    referred_discount_recurring: false,
  });
  expect(campaign.status).toBe(201);
  const alice = await cli(['checkout', '--email', 'alice@example.com']);
  expect(alice.events.every((e: { status: number }) => e.status === 200)).toBe(true);
  await pollUntil(async () => ((await call('GET', `/v1/subscriptions/${alice.subscription_id}/`, key)).status === 200 ? true : null), { timeoutMs: 20_000 });
  const member = await call('POST', '/v1/members/', key, { identifier: 'alice', email: 'alice@example.com', campaign: { id: campaign.body.id }, subscription: { id: alice.subscription_id } });
  expect(member.status).toBe(201);

  // Bob: the Checkout Session carries the referral in client_reference_id.
  const bobReferral = await call('POST', '/v1/referrals/', key, { user_identifier: 'bob', member_code: member.body.code });
  const bob = await cli(['checkout', '--email', 'bob@example.com', '--client-reference-id', bobReferral.body.id]);
  const rewarded = await rewardsOf(key, bobReferral.body.id, 1);
  expect(rewarded).toMatchObject({ is_converted: true, subscription: { id: bob.subscription_id }, rewards: [{ type: 'credit', amount: '5.00', payment_id: bob.invoice_id }] });
  const balance = async () => (await cli(['state'])).customers.find((c: { id: string }) => c.id === alice.customer_id)?.invoice_credit_balance?.usd ?? 0;
  await pollUntil(async () => ((await balance()) === 500 ? true : null), { timeoutMs: 20_000 });

  // Carol: no client_reference_id, but her referral's single-use promotion code.
  const carolReferral = await call('POST', '/v1/referrals/', key, { user_identifier: 'carol', member_code: member.body.code });
  const withCode = await pollUntil(async () => ((await call('GET', `/v1/referrals/${carolReferral.body.id}/`, key)).body.coupon_code ?? null), { timeoutMs: 20_000 });
  const carol = await cli(['checkout', '--email', 'carol@example.com', '--promotion-code', withCode]);
  expect((await rewardsOf(key, carolReferral.body.id, 1)).subscription.id).toBe(carol.subscription_id);

  // Bob's payment: half refunded, then disputed. The first credit is taken back (not yet spent).
  await cli(['refund', '--charge', bob.charge_id, '--amount', String(Math.floor(bob.amount_paid / 2))]);
  await cli(['dispute', '--charge', bob.charge_id]);
  const clawed = await pollUntil(
    async () => {
      const r = (await call('GET', `/v1/referrals/${bobReferral.body.id}/`, key)).body;
      const net = r.rewards.reduce((sum: number, x: { amount: string }) => sum + Number(x.amount), 0);
      return Math.abs(net) < 0.001 && r.rewards.length >= 2 ? r : null;
    },
    { timeoutMs: 20_000 },
  );
  expect(clawed.rewards[0]).toMatchObject({ type: 'credit', reversed_at: expect.any(Number) });
  // Carol's credit (5.00) remains on Alice's balance; Bob's was taken back.
  await pollUntil(async () => ((await balance()) === 500 ? true : null), { timeoutMs: 20_000 });
}, 180_000);
