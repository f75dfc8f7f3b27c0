// Chargebee on `npm start` (startLocal with the demo account on Chargebee, as `DEMO_PROVIDER=chargebee npm
// start` runs it; the run's DynamoDB Local, short polls): the emulator's Basic-auth webhooks reach the demo's
// intake, the worker re-fetches each event from the emulator and applies it. A referrer whose own Chargebee
// subscription is attached to their member earns a credit when the referred checkout converts: promotional
// credits on the referrer's customer, spent by the referrer's next renewal before tax. A second referrer's
// credit, still unspent when the referred payment is refunded in full, is deducted again (balance back to
// 0, the reward reversed and clawed back). docs/providers/chargebee.md "Credits for the referrer".
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChargebeeEmulator } from '../../infra/local/emulators/chargebee';
import type { LocalRuntime } from '../../infra/local/start';
import { pollUntil } from '../support/fixtures';
import { startTestRuntime } from '../support/runtime';

const ROOT = join(__dirname, '..', '..');
const dataDir = mkdtempSync(join(tmpdir(), 'refloop-chargebee-walk-'));
let runtime: LocalRuntime;
let cb: ChargebeeEmulator;

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(runtime.url + path, {
    method,
    headers: { authorization: `Bearer ${runtime.demo.apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

beforeAll(async () => {
  runtime = await startTestRuntime(dataDir, 'refloop-chargebee-walk', { demoProvider: 'chargebee', buildDashboard: false });
  const running = runtime.emulators.find((e) => e.kind === 'chargebee');
  if (!running) throw new Error('npm start runs no Chargebee emulator');
  cb = running.handle as ChargebeeEmulator;
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

/** `npm run --silent chargebee -- <args>` as docs/providers/chargebee.md shows it, beside this npm start (its runtime.json). */
function chargebeeCli(args: string[]): Promise<any> {
  return new Promise((resolve, reject) => {
    execFile(
      'npm',
      ['run', '--silent', 'chargebee', '--', ...args],
      { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir }, timeout: 30_000 },
      (err, stdout, stderr) => {
        if (err) reject(new Error(`chargebee ${args.join(' ')}: ${err.message} ${stderr}`));
        else resolve(JSON.parse(stdout));
      },
    );
  });
}

const unique = () => `${Date.now().toString(36)}${Math.floor(Math.random() * 1e4)}`;

/** A credit campaign and a referrer member whose own (synced) Chargebee subscription is attached. */
async function referrer(name: string, taxRate = 0) {
  const campaign = await call('POST', '/v1/campaigns/', {
    name: `Chargebee credits ${name} ${unique()}`,
    allows_credit: true,
    credit_amount: '5.00',
    credit_currency: 'USD',
  });
  const own = await cb.checkout({ email: `${name}-${unique()}@example.com`, taxRate });
  const subscriptionId = own.subscription.id as string;
  await pollUntil(async () => ((await call('GET', `/v1/subscriptions/${subscriptionId}/`)).status === 'active' ? true : null), {
    timeoutMs: 15_000,
  });
  const member = await call('POST', '/v1/members/', {
    identifier: `${name}-${unique()}`,
    email: own.customer.email,
    campaign: { id: campaign.id },
    subscription: { id: subscriptionId },
  });
  return { member, subscriptionId, customerId: own.customer.id as string };
}

/** A referred user's checkout with the referral on their customer, to the credit reward applied at Chargebee. */
async function referredCheckout(code: string, name: string, referralOn: 'customer-cf' | 'customer-meta') {
  const ref = await call('POST', '/v1/referrals/', { user_identifier: `${name}-${unique()}`, member_code: code });
  const bought = await cb.checkout({ email: `${name}-${unique()}@example.com`, referralId: ref.id, referralOn });
  const rewarded = await pollUntil(
    async () => {
      const body = await call('GET', `/v1/referrals/${ref.id}/`);
      return body.is_converted && body.rewards?.[0]?.status === 'applied' ? body : null;
    },
    { timeoutMs: 20_000 },
  );
  expect(rewarded.subscription.id).toBe(bought.subscription.id);
  expect(rewarded.rewards).toHaveLength(1);
  const invoiceId = bought.invoice?.id as string;
  expect(rewarded.rewards[0]).toMatchObject({ type: 'credit', amount: '5.00', currency: 'USD', payment_id: invoiceId });
  return { referralId: ref.id as string, reward: rewarded.rewards[0], invoiceId };
}

describe('Chargebee on npm start', () => {
  it("a referred checkout converts, the referrer's promotional credit is spent by their next invoice before tax", async () => {
    const alice = await referrer('alice', 0.2);
    const { reward } = await referredCheckout(alice.member.code, 'bob', 'customer-cf');

    // 5.00 of promotional credits on Alice's customer, once, found again by the reward's reference.
    await pollUntil(() => (cb.balanceOf(alice.customerId, 'USD') === 500 ? true : null));
    const credits = cb.promotionalCredits(alice.customerId);
    expect(credits.filter((c) => c.reference === `refloop:reward:${reward.id}`)).toEqual([
      expect.objectContaining({ type: 'increment', amount: 500, credit_type: 'referral_rewards', currency_code: 'USD' }),
    ]);

    // Alice's renewal: 10.00, less the 5.00 credit before tax, then 20% tax on the 5.00 left.
    const renewed = await cb.renew(alice.subscriptionId);
    expect(renewed.invoice).toMatchObject({ sub_total: 1000, tax: 100, total: 600, amount_paid: 600 });
    expect(renewed.invoice.discounts).toEqual([expect.objectContaining({ entity_type: 'promotional_credits', amount: 500 })]);
    expect(cb.balanceOf(alice.customerId, 'USD')).toBe(0);
    // Refloop mirrors the renewal; the credit stays applied.
    await pollUntil(async () => {
      const sub = await call('GET', `/v1/subscriptions/${alice.subscriptionId}/`);
      return sub.status === 'active' ? sub : null;
    });
    const after = await call('GET', `/v1/rewards/?member=${alice.member.id}`);
    expect(after.results).toEqual([expect.objectContaining({ id: reward.id, status: 'applied', reversed_at: null })]);
  }, 60_000);

  it('a refund of the referred payment while the credit is unspent deducts it: balance back to 0, the reward reversed', async () => {
    const carol = await referrer('carol');
    const { referralId, reward, invoiceId } = await referredCheckout(carol.member.code, 'dan', 'customer-meta');
    await pollUntil(() => (cb.balanceOf(carol.customerId, 'USD') === 500 ? true : null));

    await cb.refund(invoiceId);
    const clawed = await pollUntil(
      async () => {
        const body = await call('GET', `/v1/referrals/${referralId}/`);
        return body.rewards?.length === 2 && body.rewards[0].reversed_at ? body : null;
      },
      { timeoutMs: 20_000 },
    );
    expect(clawed.rewards[1]).toMatchObject({ amount: '-5.00', reverses: reward.id });
    await pollUntil(() => (cb.balanceOf(carol.customerId, 'USD') === 0 ? true : null));
    const deductions = cb.promotionalCredits(carol.customerId).filter((c) => c.type === 'decrement');
    expect(deductions).toEqual([expect.objectContaining({ amount: 500, reference: `refloop:reversal:${reward.id}` })]);
    const member = await call('GET', `/v1/members/${carol.member.id}/`);
    expect(member.stats).toMatchObject({ credit_earned: '0.00' });
  }, 60_000);

  it("the emulator's CLI, as the docs show it, finds npm start's emulator: a referred checkout converts and the credits command shows the referrer's", async () => {
    const erin = await referrer('erin');
    const ref = await call('POST', '/v1/referrals/', { user_identifier: `fay-${unique()}`, member_code: erin.member.code });
    const out = await chargebeeCli(['checkout', '--email', `fay-${unique()}@example.com`, '--referral-id', ref.id]);
    expect(out).toMatchObject({ status: 'active', amount_paid: 1000, currency_code: 'USD' });
    const rewarded = await pollUntil(
      async () => {
        const body = await call('GET', `/v1/referrals/${ref.id}/`);
        return body.is_converted && body.rewards?.[0]?.status === 'applied' ? body : null;
      },
      { timeoutMs: 20_000 },
    );
    expect(rewarded.subscription.id).toBe(out.subscription_id);
    const credits = await chargebeeCli(['credits', '--customer', erin.customerId]);
    expect(credits.balances).toEqual([{ currency_code: 'USD', promotional_credits: 500 }]);
    expect(credits.history).toEqual([
      expect.objectContaining({ type: 'increment', amount: 500, reference: `refloop:reward:${rewarded.rewards[0].id}` }),
    ]);
  }, 60_000);
});
