// The payout rails in the dashboard, in real Chromium (Debian's, through playwright-core) against npm start's
// stack (startLocal) and its Stripe emulator's Connect side:
// - Settings -> Payout rails: a wrong Stripe secret key is refused by the rail and the form says so; the
//   emulator's keys connect Stripe Connect, and the card shows the webhook URLs to register;
// - a member whose payout method is Stripe (chosen in the member's form) and whose Express account finished onboarding (the portal's
//   "Set up payouts", the emulator's onboarding, Connect's account.updated) is ready on their page;
// - an approved commission makes their payout due; Payouts -> "Pay with Stripe" asks first with the total
//   and the count of due payouts a Stripe batch takes (a due payout of a member without a method stays out),
//   then sends POST /v1/payout-batches/ {rail: "stripe", currency: "USD"}; the PayoutRails worker pays it at
//   the emulator and the batch's page follows the payout until it shows paid;
// - PayPal: an unclaimed payout shows "Send again"; once the member's address is corrected, sent again, it is paid;
// - "Disconnect" asks first, then the rail is gone.
// axe-core checks each page and the dialog (no serious or critical violation); screenshots go to
// test-results/dashboard/.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { demoLoginLink, type LocalRuntime } from '../../infra/local/start';
import { startTestRuntime } from '../support/runtime';
import { approveReward } from '../../shared/flows/lifecycle';
import { STRIPE_NOT_STARTED } from '../../shared/domain/payout-methods';
import { applyStripeAccountUpdates } from '../../shared/flows/payout-methods';
import { getItem } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys } from '../../shared/store/table';
import { expectNoAxeViolations, launchChromium } from '../support/browser';

const dataDir = mkdtempSync(join(tmpdir(), 'refloop-dashboard-rails-'));
const SHOTS = join(__dirname, '..', '..', 'test-results', 'dashboard');
let runtime: LocalRuntime;
let browser: Browser;
let page: Page;

/** The API with the demo account's key (or a portal token), answering the parsed body; a 3xx or worse throws. */
async function api(method: string, path: string, body?: unknown, token = runtime.demo.apiKey): Promise<any> {
  const res = await fetch(runtime.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function visit(path: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${runtime.url}/app/${path}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 15_000 });
  await page.waitForFunction(
    () => {
      const d = (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document;
      return d.querySelectorAll('[aria-busy="true"]').length === 0 && d.querySelectorAll('.spinner').length === 0;
    },
    undefined,
    { timeout: 15_000 },
  );
}

/** A member of the campaign with an approved commission of `cents` USD (a payout collecting it). */
async function memberWithCommission(campaignId: string, identifier: string, cents: number, extra: Record<string, unknown> = {}) {
  const member = await api('POST', '/v1/members/', {
    identifier,
    email: `${identifier}@example.com`,
    campaign: { id: campaignId },
    ...extra,
  });
  const referral = await api('POST', '/v1/referrals/', { user_identifier: `referred-${identifier}`, member_code: member.code });
  return { member, referral, cents };
}

async function approveCommission(referralId: string, cents: number): Promise<void> {
  const stored = toReferral(await getItem(keys.referral(runtime.demo.accountId, referralId)));
  if (!stored) throw new Error('no referral');
  const recorded = await recordRewards(
    runtime.demo.accountId,
    stored,
    [{ payment_id: 1, type: 'commission', amount: cents, currency: 'USD' }],
    false,
    true,
  );
  await approveReward(runtime.demo.accountId, recorded.rewards[0]!.id);
}

let campaignId: string;

beforeAll(async () => {
  runtime = await startTestRuntime(dataDir, 'refloop-dashboard-rails');
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  const { url } = await demoLoginLink(runtime);
  await page.goto(url);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: 20_000 });
  // No rail connected to start with, whatever the runtime was asked to connect (session-only routes).
  const cleared = await page.evaluate(async () => {
    const statuses: number[] = [];
    for (const kind of ['paypal', 'stripe', 'wise']) {
      statuses.push((await fetch(`/v1/account/payout-rails/${kind}/`, { method: 'DELETE', credentials: 'same-origin' })).status);
    }
    return statuses;
  });
  expect(cleared).toEqual([204, 204, 204]);
  campaignId = (await api('POST', '/v1/campaigns/', { name: 'Rails', allows_commission: true, commission_amount: '5.00', hold_days: 0 }))
    .id;
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('payout rails in the dashboard', () => {
  it('Settings -> Payout rails: a refused key shows on the form; the emulator keys connect Stripe and show its webhook URLs', async () => {
    await visit('settings', 'Settings');
    const card = page.locator('article[data-rail="stripe"]');
    await card.waitFor({ timeout: 15_000 });
    expect(await card.getByText('Not connected').count()).toBe(1);
    const stripe = runtime.stripe;

    const fill = async (secretKey: string) => {
      await card.getByLabel('Secret key', { exact: true }).fill(secretKey);
      await card.getByLabel('Webhook signing secret (your account)', { exact: true }).fill(stripe.connect.webhookSecret);
      await card.getByLabel('Webhook signing secret (connected accounts)', { exact: true }).fill(stripe.connect.connectWebhookSecret);
      const advanced = card.locator('details.advanced');
      if ((await advanced.getAttribute('open')) === null) await advanced.locator('summary').click();
      await card.getByLabel('Stripe Connect API base URL').fill(stripe.url);
    };

    await fill('sk_test_not_this_one');
    await card.getByRole('button', { name: 'Connect Stripe Connect' }).click();
    await card.locator('.field-error, .alert-error').first().waitFor({ timeout: 15_000 });
    expect(await card.getByText('Not connected').count()).toBe(1);

    await fill(stripe.secretKey);
    await card.getByRole('button', { name: 'Connect Stripe Connect' }).click();
    await card.locator('.badge', { hasText: /^Connected$/ }).waitFor({ timeout: 15_000 });
    const hook = card.getByLabel('Stripe Connect webhook URL', { exact: true });
    expect(await hook.inputValue()).toBe(`${runtime.url}/webhooks/stripe-connect/${runtime.demo.accountId}/`);
    expect(await card.getByRole('button', { name: 'Disconnect Stripe Connect' }).count()).toBe(1);
    const rails = await page.evaluate(
      async () =>
        (await (await fetch('/v1/account/payout-rails/', { credentials: 'same-origin' })).json()) as { connected: { kind: string }[] },
    );
    expect(rails.connected.map((c) => c.kind)).toEqual(['stripe']);
    await expectNoAxeViolations(page, 'settings payout rails, connected');
    await card.screenshot({ path: join(SHOTS, 'payout-rails-settings.png') });
  }, 90_000);

  it('a member ready on Stripe; "Pay with Stripe" confirms the total and count, then the batch\'s page follows the payout until it is paid', async () => {
    // Ready on Stripe: the method, the portal's "Set up payouts" (an Express account), onboarding finished.
    const ready = await memberWithCommission(campaignId, 'stripe-ready', 1250, { payout_email: 'ready@pay.example.com' });
    // The method chosen on the member's page (its form offers the connected rails); not ready yet, and why.
    await visit(`members/${encodeURIComponent(ready.member.id)}`, 'stripe-ready');
    const method = page.locator('#edit-member').getByLabel('Payout method', { exact: true });
    await method.locator('option[value="stripe"]').waitFor({ state: 'attached', timeout: 15_000 });
    expect(await method.locator('option[value="paypal"]').count()).toBe(0);
    await method.selectOption('stripe');
    await page.locator('#edit-member').getByRole('button', { name: 'Save changes' }).click();
    await page.locator('[data-method-ready="false"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-method-ready="false"]').textContent()).toContain(STRIPE_NOT_STARTED);
    expect((await api('GET', `/v1/members/${ready.member.id}/`)).payout_method).toBe('stripe');
    const link = await api('POST', `/v1/members/${ready.member.id}/portal-sessions/`, {});
    const session = await api('POST', '/portal/v1/sessions/', { token: new URL(link.url).hash.replace(/^#token=/, '') });
    await api('POST', '/portal/v1/me/stripe-account-link/', {}, session.token);
    const acct = (await getItem(keys.member(runtime.demo.accountId, ready.member.id)))?.stripe_account_id as string;
    expect(acct).toMatch(/^acct_/);
    await runtime.stripe.connect.onboard(acct);
    await applyStripeAccountUpdates(runtime.demo.accountId, [{ destination: acct, ready: true }]);
    // A member paid by file (no method): their due payout is not the Stripe batch's.
    const byFile = await memberWithCommission(campaignId, 'file-payee', 700, { payout_email: 'file@pay.example.com' });
    await approveCommission(ready.referral.id, ready.cents);
    await approveCommission(byFile.referral.id, byFile.cents);

    await visit(`members/${encodeURIComponent(ready.member.id)}`, 'stripe-ready');
    await page.locator('[data-method-ready="true"]').waitFor({ timeout: 15_000 });
    expect(await page.locator('.details-row', { hasText: 'Payout method' }).textContent()).toContain('Stripe');
    await expectNoAxeViolations(page, 'member with a ready Stripe method');
    await page.locator('#member-details').screenshot({ path: join(SHOTS, 'member-payout-method.png') });

    await visit('payouts', 'Payouts');
    const pay = page.getByRole('button', { name: 'Pay with Stripe' });
    await pay.waitFor({ timeout: 15_000 });
    // Only the connected rail is offered.
    expect(await page.getByRole('button', { name: 'Pay with PayPal' }).count()).toBe(0);
    await expectNoAxeViolations(page, 'payouts with a connected rail');

    await pay.click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor({ timeout: 15_000 });
    expect(await dialog.locator('[data-rail-count]').getAttribute('data-rail-count')).toBe('1');
    expect(await dialog.locator('[data-rail-total]').textContent()).toBe('$12.50');
    expect(await dialog.textContent()).toContain('1 other due payout in USD stays due');
    await expectNoAxeViolations(page, 'pay with Stripe dialog');
    await page.screenshot({ path: join(SHOTS, 'pay-with-stripe.png') });

    const sent = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === '/v1/payout-batches/');
    await dialog.getByRole('button', { name: 'Pay with Stripe' }).click();
    const request = await sent;
    expect(request.postDataJSON()).toEqual({ rail: 'stripe', currency: 'USD' });
    expect(request.headers()['idempotency-key']).toBeTruthy();

    // The PayoutRails worker sends it to the emulator; the batch's page follows the payout until it is paid.
    expect((await request.response())?.status()).toBe(201);
    await page.waitForURL(/\/app\/payouts\/batches\/pb_/, { timeout: 15_000 });
    await page.getByRole('heading', { level: 1, name: 'Batch $12.50' }).waitFor({ timeout: 15_000 });
    const row = page.locator('tr[data-payout]');
    await page.locator('[data-rail-progress="settled"]').waitFor({ timeout: 20_000 });
    expect(await row.count()).toBe(1);
    expect(await row.getAttribute('data-status')).toBe('paid');
    expect(await row.textContent()).toContain('Paid by Stripe.');
    await page.locator('.details-row', { hasText: 'Status' }).getByText('Paid').waitFor({ timeout: 15_000 });
    // Stripe is asked again only about a batch still processing.
    expect(await page.getByRole('button', { name: 'Check with Stripe now' }).count()).toBe(0);
    await expectNoAxeViolations(page, 'a paid Stripe batch');
    await page.screenshot({ path: join(SHOTS, 'stripe-batch.png'), fullPage: true });
    const batchId = new URL(page.url()).pathname.split('/').pop() as string;
    const paid = await api('GET', `/v1/payouts/?batch_id=${batchId}`);
    expect(paid.results).toEqual([
      expect.objectContaining({ member_id: ready.member.id, status: 'paid', rail: 'stripe', amount: '12.50' }),
    ]);
    const transfers = [...runtime.stripe.connect.ledger.transfers.values()].filter((t) => t.destination === acct);
    expect(transfers.map((t) => t.amount)).toEqual([1250]);
    // The member paid by file still has their payout due.
    expect((await api('GET', `/v1/payouts/?member=${byFile.member.id}`)).results).toEqual([expect.objectContaining({ status: 'due' })]);
  }, 120_000);

  it('PayPal: an unclaimed payout waits with "Send again"; sent again to a corrected address, it is paid', async () => {
    const paypal = runtime.paypal;
    const connected = await page.evaluate(
      async (body) =>
        (
          await fetch('/v1/account/payout-rails/paypal/', {
            method: 'PUT',
            credentials: 'same-origin',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          })
        ).status,
      { client_id: paypal.clientId, client_secret: paypal.clientSecret, webhook_id: paypal.webhookId, api_url: paypal.url },
    );
    expect(connected).toBe(200);
    const payee = await memberWithCommission(campaignId, 'paypal-payee', 900, { payout_email: 'unclaimed@pay.example.com' });
    await api('PATCH', `/v1/members/${payee.member.id}/`, { payout_method: 'paypal' });
    await approveCommission(payee.referral.id, payee.cents);

    await visit('payouts', 'Payouts');
    await page.getByRole('button', { name: 'Pay with PayPal' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor({ timeout: 15_000 });
    expect(await dialog.locator('[data-rail-count]').getAttribute('data-rail-count')).toBe('1');
    await dialog.getByRole('button', { name: 'Pay with PayPal' }).click();
    await page.waitForURL(/\/app\/payouts\/batches\/pb_/, { timeout: 15_000 });
    const resend = page.getByRole('button', { name: /^Send again/ });
    await resend.waitFor({ timeout: 20_000 });
    await page.locator('[data-rail-progress="settled"]').waitFor({ timeout: 15_000 });
    const row = page.locator('tr[data-payout]');
    expect(await row.getAttribute('data-status')).toBe('processing');
    expect(await row.textContent()).toContain('UNCLAIMED');
    await expectNoAxeViolations(page, 'an unclaimed PayPal payout');
    await page.screenshot({ path: join(SHOTS, 'paypal-unclaimed.png'), fullPage: true });

    // The member's address corrected, then "Send again": the unclaimed payment is canceled and sent anew.
    await api('PATCH', `/v1/members/${payee.member.id}/`, { payout_email: 'fixed@pay.example.com' });
    await resend.click();
    await dialog.waitFor({ timeout: 15_000 });
    const answered = page.waitForResponse((r) => r.request().method() === 'POST' && r.url().endsWith('/resend/'));
    await dialog.getByRole('button', { name: 'Send again' }).click();
    expect((await answered).status()).toBe(202);
    await page.locator('tr[data-payout][data-status="paid"]').waitFor({ timeout: 20_000 });
    expect(await page.getByRole('button', { name: /^Send again/ }).count()).toBe(0);
  }, 90_000);

  it('Settings -> Payout rails: "Disconnect" asks first, then the card and the API say Stripe is not connected', async () => {
    await visit('settings', 'Settings');
    const card = page.locator('article[data-rail="stripe"]');
    await card.getByRole('button', { name: 'Disconnect Stripe Connect' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.waitFor({ timeout: 15_000 });
    expect(await dialog.textContent()).toContain('Disconnect Stripe Connect?');
    await dialog.getByRole('button', { name: 'Disconnect' }).click();
    await card.locator('.badge', { hasText: 'Not connected' }).waitFor({ timeout: 15_000 });
    const rails = await page.evaluate(
      async () =>
        (await (await fetch('/v1/account/payout-rails/', { credentials: 'same-origin' })).json()) as { connected: { kind: string }[] },
    );
    expect(rails.connected.map((c) => c.kind)).toEqual(['paypal']);
  }, 60_000);
});
