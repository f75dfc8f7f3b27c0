// A member sets up Stripe payouts from the portal, in Chromium, against npm start's runtime (startLocal, on the
// run's DynamoDB Local with short polls) and its Stripe emulator's Connect side (docs/payouts.md "Members'
// methods", docs/portal.md "Payouts"): the payout settings offer the programme's connected rails, the member
// picks Stripe, "Set up payouts" reaches the emulator's onboarding page, "Finish onboarding" comes back to
// the portal (`?stripe=return`), and the page shows the method ready once Stripe's account.updated has gone
// the whole way: the emulator signs it to the Connect webhook intake, which queues it on payout-rails, whose
// worker hands it to applyStripeAccountUpdates.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import type { LocalRuntime } from '../../infra/local/start';
import { startTestRuntime } from '../support/runtime';
import { getItem } from '../../shared/store/ops';
import { saveRailConnection } from '../../shared/store/rail-connections';
import { keys } from '../../shared/store/table';
import { expectNoAxeViolations, launchChromium, portalSettled } from '../support/browser';

const dataDir = mkdtempSync(join(tmpdir(), 'refloop-portal-stripe-'));
let runtime: LocalRuntime;
let browser: Browser;

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
  runtime = await startTestRuntime(dataDir, 'refloop-portal-stripe');
  // The programme connects Stripe (as PUT /v1/account/payout-rails/stripe/ stores it) and PayPal.
  const { stripe } = runtime;
  await saveRailConnection(runtime.demo.accountId, 'stripe', {
    apiUrl: stripe.url,
    credentials: {
      secret_key: stripe.secretKey,
      webhook_secret: stripe.connect.webhookSecret,
      connect_webhook_secret: stripe.connect.connectWebhookSecret,
    },
  });
  // Connect's events (account.updated) go to the account's rail webhook intake.
  stripe.connect.setWebhookUrl(`${runtime.url}/webhooks/stripe-connect/${runtime.demo.accountId}/`);
  await saveRailConnection(runtime.demo.accountId, 'paypal', {
    apiUrl: runtime.paypal.url,
    credentials: { client_id: 'client', client_secret: 'secret', webhook_id: 'WH-1' },
  });
  browser = await launchChromium();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe("the portal's Stripe payouts", () => {
  it('the member picks Stripe, finishes onboarding at Stripe, and comes back to a ready method', async () => {
    const campaign = await call('POST', '/v1/campaigns/', {
      name: `Partners ${Date.now()}`,
      allows_commission: true,
      commission_type: 'percentage',
      commission_percent: '20.00',
    });
    const who = `stripe-${Date.now().toString(36)}`;
    const member = await call('POST', '/v1/members/', {
      identifier: who,
      email: `${who}@creators.example`,
      first_name: 'Grace',
      campaign: { id: campaign.id },
    });
    const { url } = await call('POST', `/v1/members/${member.id}/portal-sessions/`, {});

    const page = await (await browser.newContext({ viewport: { width: 1000, height: 900 } })).newPage();
    await page.goto(url);
    await page.getByTestId('portal-greeting').waitFor({ timeout: 20_000 });
    await portalSettled(page);
    const payouts = page.locator('#payout-settings');
    await payouts.getByRole('radio', { name: 'PayPal' }).waitFor({ timeout: 15_000 });
    expect(await payouts.getByRole('radio', { name: 'Wise' }).count()).toBe(0);
    // PayPal first: the method and the payout email saved together.
    await payouts.getByRole('radio', { name: 'PayPal' }).check();
    await payouts.getByLabel('Payout email').fill('grace@paypal.example');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Your settings are saved.').waitFor({ timeout: 15_000 });
    expect(await call('GET', `/v1/members/${member.id}/`)).toMatchObject({
      payout_method: 'paypal',
      payout_email: 'grace@paypal.example',
      payout_method_ready: true,
    });
    // Then Stripe: no email asked, "Set up payouts" instead.
    await payouts.getByRole('radio', { name: 'Stripe' }).check();
    const setUp = payouts.getByRole('button', { name: 'Set up payouts' });
    await setUp.waitFor({ timeout: 15_000 });
    expect(await payouts.getByLabel('Payout email').count()).toBe(0);
    await expectNoAxeViolations(page, 'payout settings with Stripe chosen');

    // "Set up payouts": the emulator's onboarding page (Stripe's), then back to the portal.
    await setUp.click();
    await page.waitForURL((u) => u.pathname.startsWith('/_emulator/connect/onboard/'), { timeout: 15_000 });
    const item = await getItem(keys.member(runtime.demo.accountId, member.id));
    const acct = item?.stripe_account_id as string;
    expect(acct).toMatch(/^acct_/);
    expect(item?.payout_method).toBe('stripe');
    await page.getByRole('button', { name: 'Finish onboarding' }).click();
    await page.waitForURL((u) => u.origin === new URL(runtime.url).origin && u.pathname.startsWith('/portal/'), { timeout: 15_000 });
    await page.getByTestId('portal-greeting').waitFor({ timeout: 20_000 });
    // The page took `?stripe=return` out of the address and said where the member stands.
    expect(new URL(page.url()).search).toBe('');

    // Stripe's account.updated was delivered to the intake; the page asks again until the worker applied it.
    expect(runtime.stripe.connect.events().some((e) => e.event.type === 'account.updated' && e.event.account === acct)).toBe(true);
    await payouts.getByText('Welcome back: your Stripe payouts are set up.').waitFor({ timeout: 20_000 });
    expect(await payouts.getByRole('radio', { name: 'Stripe' }).isChecked()).toBe(true);
    expect(await payouts.getByRole('button', { name: 'Set up payouts' }).count()).toBe(0);
    await expectNoAxeViolations(page, 'payout settings back from Stripe');
    expect(await call('GET', `/v1/members/${member.id}/`)).toMatchObject({
      payout_method: 'stripe',
      payout_method_ready: true,
      payout_method_reason: null,
    });
    await page.context().close();
  });
});
