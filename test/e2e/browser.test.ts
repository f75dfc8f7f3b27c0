// The browser script in a real headless Chromium (Debian's `chromium`, driven by playwright-core; .ci/run
// installs it, no test tool downloads a browser). A page on one origin carries the one-tag installation;
// the API runs behind the local gateway on another origin, so CORS is exercised for real. CHROMIUM_PATH
// overrides the browser's path (default /usr/bin/chromium).
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { startGateway, type Gateway } from '../../infra/local/gateway';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';

const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';

let gateway: Gateway;
let site: Server;
let siteUrl: string;
let browser: Browser;
let account: Awaited<ReturnType<typeof newAccount>>;

interface RefloopGlobal {
  code: string | null;
  referralId: string | null;
  clicked: Promise<boolean>;
  signup(userIdentifier: string): Promise<string | null>;
  passthrough(extra?: Record<string, unknown>): string;
  customData(extra?: Record<string, unknown>): Record<string, unknown>;
}
type WithRefloop = { refloop: RefloopGlobal };

beforeAll(async () => {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `No Chromium at ${CHROMIUM}: install Debian's chromium (apt-get install chromium), as .ci/run does, or set CHROMIUM_PATH`,
    );
  }
  account = await newAccount();
  gateway = await startGateway({ port: 0 });
  // The app's site: every path serves the same page with the one-tag installation.
  site = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(`<!doctype html><html><head><title>App</title>
<script src="${gateway.url}/js/refloop.js" data-key="${account.publishableKey}" async></script>
</head><body><h1>Welcome</h1></body></html>`);
  });
  await new Promise<void>((ok) => site.listen(0, '127.0.0.1', ok));
  // Another origin than the API's: same host, another port.
  siteUrl = `http://localhost:${(site.address() as AddressInfo).port}`;
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await new Promise<void>((ok) => (site ? site.close(() => ok()) : ok()));
  await gateway?.close();
});

async function loaded(page: import('playwright-core').Page): Promise<void> {
  await page.waitForFunction(() => (globalThis as unknown as Partial<WithRefloop>).refloop !== undefined, undefined, { timeout: 10_000 });
}

it('attributes a visitor from ?via= to a js referral and the checkout passthrough', async () => {
  const created = await api('POST', '/v1/members/', {
    key: account.apiKey,
    body: { identifier: 'alice', email: 'alice@example.com', code: 'ALICE' },
  });
  expect(created.status).toBe(201);
  const memberId = created.body.id as string;
  const clicks = async () => (await api('GET', `/v1/members/${memberId}/`, { key: account.apiKey })).body.stats.link_clicks as number;

  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${siteUrl}/?via=ALICE`);
  await loaded(page);
  expect(await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.clicked)).toBe(true);
  expect(await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.code)).toBe('ALICE');

  // The first-party cookie: the code and a visitor id, the account's attribution window (60 days by
  // default, docs/attribution.md), SameSite=Lax (not Secure on http).
  const [cookie] = (await context.cookies(siteUrl)).filter((c) => c.name === 'refloop-ref');
  expect(cookie).toBeDefined();
  expect(cookie).toMatchObject({ sameSite: 'Lax', secure: false, path: '/' });
  const days = ((cookie?.expires ?? 0) - Date.now() / 1000) / 86400;
  expect(days).toBeGreaterThan(59.9);
  expect(days).toBeLessThanOrEqual(60);
  const stored = JSON.parse(decodeURIComponent(cookie?.value ?? '')) as { c: string; v: string; r?: string; m: string; d: number };
  expect(stored.c).toBe('ALICE');
  expect(stored).toMatchObject({ m: 'first_click', d: 60 });
  expect(stored.v).toMatch(/^[0-9a-f]{32}$/);
  expect(stored.r).toBeUndefined();
  await pollUntil(async () => (await clicks()) === 1);

  // A reload sends the click again; the same visitor counts once.
  await page.reload();
  await loaded(page);
  expect(await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.clicked)).toBe(true);
  expect(await clicks()).toBe(1);

  // Signup on a later page without ?via=: the cookie carries the code.
  await page.goto(`${siteUrl}/signup`);
  await loaded(page);
  const referralId = await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.signup('browser-user-1'));
  expect(referralId).toMatch(/^[0-9a-f]{32}$/);
  const listed = await api('GET', `/v1/referrals/?member=${memberId}`, { key: account.apiKey });
  expect(listed.body.count).toBe(1);
  expect(listed.body.results[0]).toMatchObject({ id: referralId, user_identifier: 'browser-user-1', source: 'js', member_id: memberId });

  // passthrough() hands the id to Paddle Checkout, merged into the app's own keys when given.
  expect(await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.passthrough())).toBe(
    JSON.stringify({ refloop_referral_id: referralId }),
  );
  expect(JSON.parse(await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.passthrough({ plan: 'pro' })))).toEqual({
    plan: 'pro',
    refloop_referral_id: referralId,
  });
  // customData() is the same as an object, for Paddle.js v2 (Paddle Billing) and Stripe metadata.
  expect(await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.customData({ plan: 'pro' }))).toEqual({
    plan: 'pro',
    refloop_referral_id: referralId,
  });

  // Another page of the site later: the referral id is remembered in the cookie.
  const later = await context.newPage();
  await later.goto(`${siteUrl}/billing`);
  await loaded(later);
  expect(await later.evaluate(() => (globalThis as unknown as WithRefloop).refloop.referralId)).toBe(referralId);
  expect(await clicks()).toBe(1);
  await context.close();
}, 60_000);

it('a visitor who did not come through a referral link gets no cookie and no referral', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${siteUrl}/pricing`);
  await loaded(page);
  expect(await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.signup('browser-user-2'))).toBeNull();
  expect(await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.passthrough())).toBe('{}');
  expect(await page.evaluate(() => (globalThis as unknown as WithRefloop).refloop.customData())).toEqual({});
  expect((await context.cookies(siteUrl)).filter((c) => c.name === 'refloop-ref')).toEqual([]);
  expect((await api('GET', '/v1/referrals/user/browser-user-2/', { key: account.apiKey })).status).toBe(404);
  await context.close();
}, 60_000);
