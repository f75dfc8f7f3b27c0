// e2e: `npm start` with the demo account on Paddle Billing (DEMO_PROVIDER=paddle-billing), over real HTTP,
// driven by the emulator's CLI exactly as the README tells a developer: a checkout with Paddle.js's
// customData converts the referral by itself, the reward follows, the referrer's credit lands as a Refloop
// discount on their subscription, and a refund approved later claws it all back. Then a restart that asks
// for another provider keeps the demo on Paddle Billing (it mirrors its subscriptions).
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../../infra/local/dynamodb';
import { startLocal, type LocalRuntime } from '../../infra/local/start';
import { pollUntil } from '../support/fixtures';

const ROOT = join(__dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'refloop-e2e-billing-'));
let runtime: LocalRuntime | undefined;

async function start(demoProvider: 'paddle-billing' | 'stripe'): Promise<LocalRuntime> {
  runtime = await startLocal({ port: await freePort(), dynamodbPort: await freePort(), sqsPort: 0, paddlePort: 0, paddleBillingPort: 0, stripePort: 0, dataDir, tableName: 'refloop-e2e-billing', demoProvider });
  return runtime;
}

/** `npm run paddle-billing -- <args>` against the runtime's emulator; its JSON output. */
function cli(args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'infra/paddle-billing.ts', ...args],
      { cwd: ROOT, env: { ...process.env, PADDLE_BILLING_EMULATOR_URL: runtime?.paddleBilling.url ?? '' } },
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

afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

it('walks Paddle Billing from checkout to reward, credit and clawback under npm start', async () => {
  const { demo, demoProvider } = await start('paddle-billing');
  expect(demoProvider).toBe('paddle-billing');
  const key = demo.apiKey;

  const campaign = await call('POST', '/v1/campaigns/', key, { name: 'Billing friends', allows_credit: true, credit_amount: '5.00', credit_currency: 'USD' });
  expect(campaign.status).toBe(201);
  // The referrer's own subscription, then the member with it attached.
  const alice = await cli(['checkout', '--email', 'alice@example.com']);
  expect(alice.notifications.every((n: { status: number }) => n.status === 200)).toBe(true);
  await pollUntil(async () => ((await call('GET', `/v1/subscriptions/${alice.subscription_id}/`, key)).status === 200 ? true : null), { timeoutMs: 20_000 });
  const member = await call('POST', '/v1/members/', key, { identifier: 'alice', email: 'alice@example.com', campaign: { id: campaign.body.id }, subscription: { id: alice.subscription_id } });
  expect(member.status).toBe(201);
  const referral = await call('POST', '/v1/referrals/', key, { user_identifier: 'bob', member_code: member.body.code });
  expect(referral.status).toBe(200);

  // Bob pays through Paddle.js with the browser script's customData.
  const bob = await cli(['checkout', '--email', 'bob@example.com', '--custom-data', JSON.stringify({ refloop_referral_id: referral.body.id })]);
  expect(bob.notifications.map((n: { status: number }) => n.status)).toEqual(bob.notifications.map(() => 200));
  const rewarded = await pollUntil(
    async () => {
      const r = await call('GET', `/v1/referrals/${referral.body.id}/`, key);
      return r.body.rewards?.length === 1 ? r.body : null;
    },
    { timeoutMs: 20_000 },
  );
  expect(rewarded).toMatchObject({ is_converted: true, subscription: { id: bob.subscription_id }, rewards: [{ type: 'credit', amount: '5.00', payment_id: bob.transaction_id }] });
  // The credit is a Refloop discount on Alice's subscription.
  const discounted = await pollUntil(
    async () => {
      const state = await cli(['state']);
      const sub = state.subscriptions.find((s: { id: string }) => s.id === alice.subscription_id);
      return sub?.discount ? state : null;
    },
    { timeoutMs: 20_000 },
  );
  expect(discounted.discounts.some((d: { amount: string }) => d.amount === '500')).toBe(true);

  // Bob's payment is refunded: pending first, then approved; the reward and the credit are taken back.
  const refund = await cli(['refund', '--transaction', bob.transaction_id]);
  expect(refund.status).toBe('pending_approval');
  await cli(['approve', '--adjustment', refund.adjustment_id]);
  const clawed = await pollUntil(
    async () => {
      const r = await call('GET', `/v1/referrals/${referral.body.id}/`, key);
      return r.body.rewards?.length === 2 ? r.body : null;
    },
    { timeoutMs: 20_000 },
  );
  expect(clawed.rewards[1]).toMatchObject({ amount: '-5.00', reverses: clawed.rewards[0].id, refund_id: refund.adjustment_id });
  await pollUntil(
    async () => {
      const state = await cli(['state']);
      return state.subscriptions.find((s: { id: string }) => s.id === alice.subscription_id)?.discount ? null : true;
    },
    { timeoutMs: 20_000 },
  );

  // A restart that asks for Stripe keeps the demo on Paddle Billing: it mirrors Paddle Billing's subscriptions.
  await runtime?.stop();
  const again = await start('stripe');
  expect(again.demoProvider).toBe('paddle-billing');
  expect(again.demoProviderNote).toContain('stays on paddle-billing');
}, 180_000);
