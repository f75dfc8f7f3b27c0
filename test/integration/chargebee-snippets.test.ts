// docs/providers/chargebee.md "Attribution": its two marked blocks run as pasted. The Express backend
// (`<!-- tested: chargebee-backend -->`) is written to a file of its own and started with node; it uses the
// official `chargebee` package, whose requests to `https://<site>.chargebee.com` a preloaded module sends to
// the Chargebee emulator instead (as a DNS entry would: the snippet and the package are unchanged). The
// page (`<!-- tested: chargebee-page -->`) is served by that backend and run in Chromium; Chargebee.js is
// not reachable offline, so the test serves a stand-in at its address that does what `openCheckout` does
// with `hostedPage` (calls it, opens the hosted page it answers) and calls `success` once the test has
// completed that page at the emulator. The emulator's webhooks go to a real intake (the local gateway, the
// local SQS and the workers behind pollers): the referral converts.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { startChargebeeEmulator, type ChargebeeEmulator } from '../../infra/local/emulators/chargebee';
import { startGateway, type Gateway } from '../../infra/local/gateway';
import type { Pollers } from '../../infra/local/pollers';
import { saveProviderConnection } from '../../shared/store/provider';
import { api } from '../support/api';
import { launchChromium } from '../support/browser';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestPollers, startTestQueues, type TestQueues } from '../support/queues';

const ROOT = join(__dirname, '..', '..');
const DOC = join(ROOT, 'docs', 'providers', 'chargebee.md');

/** The fenced block right after `<!-- tested: <name> -->` in the page, as written. */
function block(name: string): string {
  const text = readFileSync(DOC, 'utf8');
  const match = new RegExp(`<!-- tested: ${name} -->\\n\`\`\`[a-z]*\\n([\\s\\S]*?)\\n\`\`\`\\n`).exec(text);
  if (!match?.[1]) throw new Error(`docs/providers/chargebee.md has no block marked "tested: ${name}"`);
  return match[1];
}

/** Preloaded into the backend: Chargebee's API hosts are answered by the emulator (CHARGEBEE_EMULATOR_URL). */
const POINT_AT_EMULATOR = `
const target = new URL(process.env.CHARGEBEE_EMULATOR_URL);
const realFetch = globalThis.fetch;
globalThis.fetch = async (input, init) => {
  const request = new Request(input, init);
  const url = new URL(request.url);
  if (!url.hostname.endsWith('.chargebee.com')) return realFetch(request);
  url.protocol = target.protocol;
  url.host = target.host;
  const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer();
  return realFetch(url, { method: request.method, headers: request.headers, body, signal: request.signal });
};
`;

/** What the page gets at https://js.chargebee.com/v2/chargebee.js: openCheckout calls hostedPage and keeps the page. */
const CHARGEBEE_JS = `
window.Chargebee = {
  init(options) {
    window.__chargebeeSite = options.site;
    return {
      openCheckout(options) {
        window.__checkout = Promise.resolve(options.hostedPage()).then((page) => {
          window.__checkoutOptions = options;
          return page;
        });
      },
    };
  },
};
`;

/** What the page's globals hold, as the stand-in and the test set them. */
interface PageGlobals {
  refloop: { referralId: string };
  __chargebeeSite: string;
  __checkout: Promise<{ id: string; state: string }>;
  __checkoutOptions: { success: (hostedPageId: string) => void };
  document: { body: { dataset: Record<string, string | undefined> } };
}

let queues: TestQueues;
let pollers: Pollers;
let gateway: Gateway;
let chargebee: ChargebeeEmulator;
let dir: string;
let child: ChildProcess | undefined;
let site: string;
let output = '';
let browser: Browser | undefined;

beforeAll(async () => {
  queues = await startTestQueues();
  pollers = startTestPollers(queues);
  gateway = await startGateway({ port: 0 });
  chargebee = await startChargebeeEmulator({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'refloop-chargebee-snippet-'));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  writeFileSync(join(dir, 'server.mjs'), block('chargebee-backend'));
  mkdirSync(join(dir, 'public'));
  writeFileSync(join(dir, 'public', 'checkout.html'), block('chargebee-page'));
  writeFileSync(join(dir, 'point-at-emulator.mjs'), POINT_AT_EMULATOR);
  child = spawn(process.execPath, ['--import', './point-at-emulator.mjs', 'server.mjs'], {
    cwd: dir,
    env: {
      ...process.env,
      CHARGEBEE_SITE: chargebee.site,
      CHARGEBEE_API_KEY: chargebee.apiKey,
      CHARGEBEE_EMULATOR_URL: chargebee.url,
      PORT: '0',
    },
  });
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const port = await pollUntil(() => /listening on (\d+)/.exec(output)?.[1], { timeoutMs: 15_000 });
  site = `http://127.0.0.1:${port}`;
}, 60_000);

afterAll(async () => {
  child?.kill();
  await browser?.close();
  await chargebee?.stop();
  await gateway?.close();
  await pollers?.stop();
  await queues?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

interface Tenant {
  accountId: string;
  key: string;
}

/** A fresh account connected to the emulator, whose webhooks go to its intake through the gateway. */
async function tenant(): Promise<Tenant> {
  const { accountId, apiKey } = await newAccount();
  await saveProviderConnection(accountId, {
    kind: 'chargebee',
    site: chargebee.site,
    apiKey: chargebee.apiKey,
    apiUrl: chargebee.url,
    webhookUsername: chargebee.webhookUsername,
    webhookPassword: chargebee.webhookPassword,
  });
  chargebee.setWebhookUrl(`${gateway.url}/webhooks/chargebee/${accountId}/`);
  return { accountId, key: apiKey };
}

async function referral(t: Tenant, user: string): Promise<{ id: string; memberId: string }> {
  const code = `CB${Date.now().toString(36).toUpperCase()}${user.length}`;
  const member = await api('POST', '/v1/members/', { key: t.key, body: { identifier: `m-${code}`, email: `${code}@example.com`, code } });
  expect(member.status).toBe(201);
  const created = await api('POST', '/v1/referrals/', { key: t.key, body: { user_identifier: user, member_code: code } });
  expect(created.status).toBe(200);
  return { id: created.body.id, memberId: member.body.id };
}

/** The referral once converted to the subscription the hosted page made. */
async function converted(t: Tenant, referralId: string, subscriptionId: string) {
  return pollUntil(
    async () => {
      const body = (await api('GET', `/v1/referrals/${referralId}/`, { key: t.key })).body;
      return body.is_converted && body.subscription?.id === subscriptionId ? body : null;
    },
    { timeoutMs: 15_000 },
  );
}

describe('docs/providers/chargebee.md "Attribution", as pasted', () => {
  it('the backend writes the referral id to a new customer, opens a hosted page, and its completion converts the referral', async () => {
    const t = await tenant();
    const ref = await referral(t, 'snippet-node-user');
    const user = `node-${Date.now().toString(36)}`;

    const answer = await fetch(`${site}/api/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-demo-user': user },
      body: JSON.stringify({ referral_id: ref.id }),
    });
    expect({ status: answer.status, output }).toMatchObject({ status: 200 });
    const page = (await answer.json()) as { id: string; state: string; url: string };
    expect(page).toMatchObject({ state: 'created' });

    // The customer the snippet created carries the referral both ways.
    const customer = chargebee.ledger.customers.get(user);
    expect(customer).toMatchObject({
      email: `${user}@example.com`,
      cf_refloop_referral_id: ref.id,
      meta_data: { refloop_referral_id: ref.id },
    });

    const done = await chargebee.completeCheckout(page.id);
    expect(done.hostedPage.state).toBe('succeeded');
    expect(done.subscription.customer_id).toBe(user);
    const body = await converted(t, ref.id, done.subscription.id);
    expect(body.subscription).toMatchObject({ id: done.subscription.id, status: 'active', email: `${user}@example.com` });
    // The hosted page is the checkout id.
    const byCheckout = await api('POST', `/v1/referrals/${ref.id}/conversion/`, { key: t.key, body: { checkout_id: page.id } });
    expect(byCheckout.status).toBe(200);
  });

  it("the backend passes a double-sided referral's coupon code to the hosted page; its redemption converts the referral", async () => {
    const t = await tenant();
    const campaign = await api('POST', '/v1/campaigns/', {
      key: t.key,
      body: {
        name: `cb-coupon-${Date.now()}`,
        allows_commission: true,
        commission_amount: '3.00',
        commission_currency: 'USD',
        referred_discount_type: 'percentage',
        referred_discount_amount: '10',
        referred_discount_recurring: false,
      },
    });
    expect(campaign.status).toBe(201);
    const code = `CBC${Date.now().toString(36).toUpperCase()}`;
    const member = await api('POST', '/v1/members/', {
      key: t.key,
      body: { identifier: `m-${code}`, email: `${code}@example.com`, code, campaign: { id: campaign.body.id } },
    });
    expect(member.status).toBe(201);
    const created = await api('POST', '/v1/referrals/', {
      key: t.key,
      body: { user_identifier: 'snippet-coupon-user', member_code: code },
    });
    const withCode = await pollUntil(async () => {
      const body = (await api('GET', `/v1/referrals/${created.body.id}/`, { key: t.key })).body;
      return body.coupon_code ? body : null;
    });

    const user = `coupon-${Date.now().toString(36)}`;
    const answer = await fetch(`${site}/api/checkout`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-demo-user': user },
      body: JSON.stringify({ coupon_code: withCode.coupon_code }),
    });
    expect({ status: answer.status, output }).toMatchObject({ status: 200 });
    const page = (await answer.json()) as { id: string };
    // No referral id: the customer carries none, only the code names the referral.
    expect(chargebee.ledger.customers.get(user)?.cf_refloop_referral_id).toBeUndefined();
    const done = await chargebee.completeCheckout(page.id);
    expect(done.subscription.coupons).toEqual([expect.objectContaining({ coupon_code: withCode.coupon_code })]);
    expect(done.invoice).toMatchObject({ sub_total: 1000, amount_paid: 900 });
    await converted(t, created.body.id, done.subscription.id);
  });

  it('the Chargebee.js page calls the backend, which updates an existing customer; the completed checkout converts the referral', async () => {
    const t = await tenant();
    const ref = await referral(t, 'snippet-page-user');
    // The page's user is the backend's stand-in `demo-user`, a customer already (of an earlier purchase).
    await chargebee.request('POST', '/api/v2/customers', { id: 'demo-user', email: 'demo-user@example.com' });

    browser = await launchChromium();
    const context = await browser.newContext();
    await context.route('https://js.chargebee.com/v2/chargebee.js', (route) =>
      route.fulfill({ status: 200, contentType: 'application/javascript', body: CHARGEBEE_JS }),
    );
    const page = await context.newPage();
    // The browser script's answer for a visitor who came through a link and signed up (docs/browser.md).
    await page.addInitScript((referralId) => {
      (globalThis as unknown as PageGlobals).refloop = { referralId };
    }, ref.id);
    await page.goto(`${site}/checkout.html`);
    await page.click('#subscribe');
    const hosted = await page.evaluate(() => (globalThis as unknown as PageGlobals).__checkout);
    expect(hosted.state).toBe('created');
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).__chargebeeSite)).toBe('acme-test');
    expect(chargebee.ledger.customers.get('demo-user')).toMatchObject({
      cf_refloop_referral_id: ref.id,
      meta_data: { refloop_referral_id: ref.id },
    });

    const done = await chargebee.completeCheckout(hosted.id);
    await page.evaluate((id) => (globalThis as unknown as PageGlobals).__checkoutOptions.success(id), hosted.id);
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).document.body.dataset.checkout)).toBe(hosted.id);
    await converted(t, ref.id, done.subscription.id);
  }, 60_000);
});
