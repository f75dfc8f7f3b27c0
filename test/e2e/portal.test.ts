// The member portal and its widget in real Chromium (Debian's, through playwright-core), against the local
// gateway over HTTP on the suite's DynamoDB Local (docs/portal.md).
//
// Three origins on loopback: the gateway (Refloop), an allowed host app and a host app the account did not
// allow. Each host app is what README's example is: a server route that asks Refloop for a portal URL with
// the secret key (never in the browser), and a page that loads /js/refloop-embed.js and mounts the URL.
// Proven here: the allowed host frames the portal and the member sees their own data only; the other host
// cannot frame it, and its widget reports that through onError (naming the site and the embed origins)
// with a notice in place of the frame; a credit-only member is asked for no payout email; the README's
// example runs as pasted; an expired session calls onTokenExpired and the URL the host hands over works without
// a reload of either page; a used link cannot be replayed; a revoked session stops working; without a
// token the portal shows nothing of any member. axe-core checks the portal framed and alone; screenshots
// go to test-results/portal/ (gitignored).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Browser, Frame, Page } from 'playwright-core';
import { expectNoAxeViolations, launchChromium, portalSettled } from '../support/browser';
import { startGateway, type Gateway } from '../../infra/local/gateway';
import { tokenHash } from '../../shared/domain/team';
import { db, tableName } from '../../shared/store/client';
import { nowSeconds } from '../../shared/store/ops';
import { portalKeys } from '../../shared/store/portal';
import { newAccount, pollUntil } from '../support/fixtures';

const SHOTS = join(__dirname, '..', '..', 'test-results', 'portal');

let gateway: Gateway;
let browser: Browser;
let allowed: Host;
let refused: Host;
let account: { accountId: string; apiKey: string };
let alice: { id: string; code: string };
let bob: { id: string; code: string };

async function call(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(gateway.url + path, {
    method,
    headers: { authorization: `Bearer ${account.apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

interface Host {
  url: string;
  server: Server;
  /** Portal URLs the host's backend asked for (the last is the newest). */
  issued: string[];
}

/** A host app: `/` mounts the widget for Alice, `/portal-url` is its backend route (README's Express route). */
async function startHost(): Promise<Host> {
  const host: Host = { url: '', server: createServer(), issued: [] };
  host.server.on('request', (req, res) => {
    void (async () => {
      if (req.url === '/portal-url') {
        // The app's backend: its own user is Alice; the secret key stays on the server.
        const session = await call('POST', `/v1/members/${alice.id}/portal-sessions/`, { return_url: `${host.url}/account` });
        host.issued.push(session.url);
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify({ url: session.url }));
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host app</title></head><body>
<main><h1>Your account</h1><div id="referrals"></div></main>
<script src="${gateway.url}/js/refloop-embed.js"></script>
<script>
  window.events = [];
  window.errors = [];
  window.hostMark = Math.random();
  var readyTimeout = Number(new URLSearchParams(location.search).get('readyTimeout')) || undefined;
  async function portalUrl() {
    const res = await fetch('/portal-url', { method: 'POST' });
    return (await res.json()).url;
  }
  portalUrl().then(function (url) {
    window.widget = Refloop.mount('#referrals', {
      url: url,
      theme: { accent: '#0b6e4f', radius: '10px' },
      onReady: function () { window.events.push('ready'); },
      readyTimeout: readyTimeout,
      onError: function (e) { window.events.push('error:' + e.code); window.errors.push(e); },
      onTokenExpired: function () { window.events.push('expired'); return portalUrl(); }
    });
  });
</script></body></html>`);
    })().catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await new Promise<void>((ok) => host.server.listen(0, '127.0.0.1', ok));
  host.url = `http://127.0.0.1:${(host.server.address() as AddressInfo).port}`;
  return host;
}

const axe = expectNoAxeViolations;

/** The portal's frame in a host page, once its greeting shows and its lists have loaded. */
async function portalFrame(page: Page): Promise<Frame> {
  const frame = await pollUntil(() => page.frames().find((f) => f.url().startsWith(`${gateway.url}/portal/`)) ?? null, {
    timeoutMs: 15_000,
  });
  await frame.getByTestId('portal-greeting').waitFor({ timeout: 15_000 });
  await portalSettled(frame);
  return frame;
}

/** The portal session token the frame keeps in its sessionStorage (per account), or null. */
const storedToken = (frame: Frame) =>
  frame.evaluate(() => {
    const g = globalThis as unknown as { location: { pathname: string }; sessionStorage: { getItem(k: string): string | null } };
    const raw = g.sessionStorage.getItem(`refloop-portal:${g.location.pathname.split('/')[2]}`);
    return raw ? (JSON.parse(raw) as { token: string }).token : null;
  });

const events = (page: Page) => page.evaluate(() => (globalThis as unknown as { events: string[] }).events);

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  gateway = await startGateway({ port: 0 });
  account = await newAccount();
  [allowed, refused] = await Promise.all([startHost(), startHost()]);
  await call('PATCH', '/v1/account/', { embed_origins: [allowed.url], referral_url: 'https://acme.example/' });
  const campaign = await call('POST', '/v1/campaigns/', {
    name: 'Friends',
    allows_commission: true,
    commission_type: 'percentage',
    commission_percent: '20.00',
    commission_months: 12,
    hold_days: 30,
  });
  alice = await call('POST', '/v1/members/', {
    identifier: 'alice',
    email: 'alice@example.com',
    first_name: 'Alice',
    campaign: { id: campaign.id },
  });
  bob = await call('POST', '/v1/members/', {
    identifier: 'bob',
    email: 'bob@example.com',
    first_name: 'Bob',
    campaign: { id: campaign.id },
  });
  for (const user of ['jane.doe@example.com', 'sam@example.org'])
    await call('POST', '/v1/referrals/', { user_identifier: user, member_code: alice.code });
  await call('POST', '/v1/referrals/', { user_identifier: 'carol@bob-friends.example', member_code: bob.code });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  for (const host of [allowed, refused]) await new Promise((ok) => host?.server.close(ok));
  await gateway?.close();
});

describe('the widget on an allowed host', () => {
  let page: Page;
  let frame: Frame;

  beforeAll(async () => {
    page = await (await browser.newContext({ viewport: { width: 900, height: 800 } })).newPage();
    await page.goto(allowed.url);
    frame = await portalFrame(page);
  }, 60_000);

  it("shows the member's own link, terms and referrals (masked), and nobody else's", async () => {
    await expect(frame.getByTestId('portal-greeting').innerText()).resolves.toContain('Alice');
    await expect(frame.getByTestId('share-link').inputValue()).resolves.toBe(`https://acme.example/?via=${alice.code}`);
    await frame.locator('#referrals').getByText('j***@e***.com').waitFor({ timeout: 15_000 });
    const referrals = await frame.locator('#referrals').innerText();
    expect(referrals).toContain('j***@e***.com');
    expect(referrals).toContain('s***@e***.org');
    const all = await frame.locator('body').innerText();
    for (const secret of ['jane.doe', 'sam@', 'carol', 'Bob', bob.code])
      expect({ secret, shown: all.includes(secret) }).toEqual({ secret, shown: false });
    await expect(frame.locator('#terms').innerText()).resolves.toContain('Earn 20% of what they pay');
    // The token left the frame's address; the host heard `ready`; the iframe took its content's height.
    expect(frame.url()).not.toContain('token=');
    await pollUntil(async () => (await events(page)).includes('ready'));
    const [frameHeight, contentHeight] = await Promise.all([
      page
        .locator('#referrals iframe')
        .evaluate((el) => (el as unknown as { getBoundingClientRect(): { height: number } }).getBoundingClientRect().height),
      frame.evaluate(
        () => (globalThis as unknown as { document: { documentElement: { scrollHeight: number } } }).document.documentElement.scrollHeight,
      ),
    ]);
    expect(frameHeight).toBeGreaterThan(480);
    expect(Math.abs(frameHeight - contentHeight)).toBeLessThan(40);
    await axe(frame, 'portal framed');
    await page.screenshot({ path: join(SHOTS, 'widget-allowed-host.png'), fullPage: true });
  });

  it('an expired session calls onTokenExpired, and the new URL works without reloading the host or the frame', async () => {
    const hostMark = await page.evaluate(() => (globalThis as unknown as { hostMark: number }).hostMark);
    await frame.evaluate(() => ((globalThis as unknown as { frameMark: number }).frameMark = 7));
    const issuedBefore = allowed.issued.length;
    // The session ends (its expiry passes; DynamoDB's TTL would delete it later).
    const token = await storedToken(frame);
    if (!token) throw new Error('the portal keeps no session token');
    await db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: portalKeys.session(tokenHash(token)),
        UpdateExpression: 'SET expires_at = :past',
        ExpressionAttributeValues: { ':past': nowSeconds() - 1 },
      }),
    );
    // The member saves a setting: the portal meets the 401, asks the host, and carries on.
    await frame.getByLabel('Payout email').fill('alice@pay.example');
    await frame.getByRole('button', { name: 'Save' }).click();
    await pollUntil(async () => (await events(page)).includes('expired'), { timeoutMs: 15_000 });
    await pollUntil(() => allowed.issued.length > issuedBefore, { timeoutMs: 15_000 });
    await frame.getByTestId('portal-greeting').waitFor({ timeout: 15_000 });
    const newToken = await pollUntil(async () => {
      const t = await storedToken(frame);
      return t && t !== token ? t : null;
    });
    expect(newToken).toMatch(/^rps_/);
    expect(await page.evaluate(() => (globalThis as unknown as { hostMark: number }).hostMark)).toBe(hostMark);
    expect(await frame.evaluate(() => (globalThis as unknown as { frameMark: number }).frameMark)).toBe(7);
    // The new session answers (the member saves again, and it sticks).
    await frame.getByLabel('Payout email').fill('alice@pay.example');
    await frame.getByRole('button', { name: 'Save' }).click();
    await frame.getByText('Your settings are saved.').waitFor({ timeout: 15_000 });
    expect((await call('GET', `/v1/members/${alice.id}/`)).payout_email).toBe('alice@pay.example');
  });

  it('a revoked session stops working at once; the host hands over a new URL', async () => {
    const issuedBefore = allowed.issued.length;
    const expiredBefore = (await events(page)).filter((e) => e === 'expired').length;
    await call('DELETE', `/v1/members/${alice.id}/portal-sessions/`);
    await frame.getByRole('button', { name: 'Save' }).click();
    await pollUntil(async () => (await events(page)).filter((e) => e === 'expired').length > expiredBefore, { timeoutMs: 15_000 });
    await pollUntil(() => allowed.issued.length > issuedBefore, { timeoutMs: 15_000 });
    await frame.getByTestId('portal-greeting').waitFor({ timeout: 15_000 });
    // A frame that speaks is never reported as refused or unreachable (the wait has long passed by now).
    expect((await events(page)).filter((e) => /^error:portal_/.test(e))).toEqual([]);
  });
});

describe('a credit-only member', () => {
  it('is asked for no payout email and shown no payouts; the email opt-out still saves', async () => {
    const credit = await call('POST', '/v1/campaigns/', { name: 'Credit friends', allows_credit: true, credit_amount: '5.00' });
    const carla = await call('POST', '/v1/members/', {
      identifier: 'carla',
      email: 'carla@example.com',
      first_name: 'Carla',
      campaign: { id: credit.id },
    });
    const { url } = await call('POST', `/v1/members/${carla.id}/portal-sessions/`, {});
    const page = await (await browser.newContext()).newPage();
    await page.goto(url);
    await page.getByTestId('portal-greeting').waitFor({ timeout: 15_000 });
    await portalSettled(page);
    await expect(page.locator('#terms').innerText()).resolves.toMatch(/credit/i);
    expect(await page.getByLabel('Payout email').count()).toBe(0);
    expect(await page.locator('#payouts').count()).toBe(0);
    expect(await page.locator('body').innerText()).not.toMatch(/payout email/i);
    await page.getByLabel("Don't email me about my referrals and rewards").check();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Your settings are saved.').waitFor({ timeout: 15_000 });
    expect(await call('GET', `/v1/members/${carla.id}/`)).toMatchObject({ email_opt_out: true, payout_email: null });
    await axe(page, 'portal of a credit-only member');
    await page.context().close();
  });
});

describe('framing and links', () => {
  it('a host the account did not allow cannot frame the portal, and the widget says why (onError, a notice in place of the frame)', async () => {
    const page = await (await browser.newContext()).newPage();
    const refusals: string[] = [];
    page.on('console', (m) => {
      if (/frame-ancestors/.test(m.text())) refusals.push(m.text());
    });
    // A shorter wait than the default 15 s, to keep the test quick (the unit test covers the default).
    await page.goto(`${refused.url}/?readyTimeout=5000`);
    await pollUntil(() => refused.issued.length > 0, { timeoutMs: 15_000 });
    // Chromium blocks the document (CSP frame-ancestors): an error page, never the portal.
    await pollUntil(() => refusals.length > 0 || page.frames().some((f) => f.url().startsWith('chrome-error://')), { timeoutMs: 15_000 });
    const portal = page.frames().find((f) => f.url().startsWith(`${gateway.url}/portal/`));
    if (portal) expect(await portal.locator('[data-testid="portal-greeting"]').count()).toBe(0);
    // The frame never spoke: the host hears it through onError, in words naming this site and the setting.
    await pollUntil(async () => (await events(page)).includes('error:portal_refused'), { timeoutMs: 30_000 });
    const [error] = await page.evaluate(() => (globalThis as unknown as { errors: { code: string; message: string }[] }).errors);
    expect(error?.message).toContain(`this site (${refused.url}) is not in the account's embed origins`);
    expect(await events(page)).not.toContain('ready');
    // The visitor sees a short sentence where the frame was, not the browser's bare error page.
    await expect(page.locator('#referrals [role="alert"]').innerText()).resolves.toBe(
      'The referral programme cannot be shown here right now.',
    );
    expect(await page.locator('#referrals iframe').isVisible()).toBe(false);
    await axe(page, 'host with a refused portal');
    await page.screenshot({ path: join(SHOTS, 'widget-refused-host.png'), fullPage: true });
    await page.context().close();
  });

  it('a used link cannot be replayed, and without a token the portal shows no member', async () => {
    const { url } = { url: (await call('POST', `/v1/members/${alice.id}/portal-sessions/`, {})).url as string };
    const first = await (await browser.newContext()).newPage();
    await first.goto(url);
    await first.getByTestId('portal-greeting').waitFor({ timeout: 15_000 });
    expect(first.url()).not.toContain('token=');
    await portalSettled(first);
    await axe(first, 'portal standalone');
    await first.screenshot({ path: join(SHOTS, 'portal-standalone.png'), fullPage: true });
    await first.setViewportSize({ width: 390, height: 844 });
    await first.screenshot({ path: join(SHOTS, 'portal-phone.png'), fullPage: true });

    // The same URL in another browser: refused, nothing of Alice's.
    const replay = await (await browser.newContext()).newPage();
    await replay.goto(url);
    await replay.getByTestId('portal-expired').waitFor({ timeout: 15_000 });
    const text = await replay.locator('body').innerText();
    for (const secret of ['Alice', alice.code, 'j***@']) expect({ secret, shown: text.includes(secret) }).toEqual({ secret, shown: false });
    await axe(replay, 'portal expired');

    const bare = await (await browser.newContext()).newPage();
    await bare.goto(`${gateway.url}/portal/${account.accountId}/`);
    await bare.getByTestId('portal-expired').waitFor({ timeout: 15_000 });
    expect(await bare.locator('body').innerText()).not.toContain('Alice');
    for (const p of [first, replay, bare]) await p.context().close();
  });
});

describe("README's example (an Express route and the page that mounts the widget)", () => {
  const dir = join(__dirname, '..', '..', 'test-results', 'readme-portal');
  let server: ChildProcess | undefined;
  afterAll(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((ok) => server?.once('exit', ok));
      server.kill();
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  });

  /** The README section's code blocks of one language. */
  function blocks(lang: string): string[] {
    const text = readFileSync(join(__dirname, '..', '..', 'README.md'), 'utf8');
    const start = text.indexOf('\n## The member portal in your app\n');
    const section = text.slice(start, text.indexOf('\n## ', start + 4));
    return [...section.matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((m) => m[1] as string);
  }

  it('runs as written: the page on an allowed origin frames the portal of the member the backend names', async () => {
    const [js] = blocks('js');
    const [html] = blocks('html');
    if (!js || !html) throw new Error('README has no js and html blocks under "The member portal in your app"');
    const port = await new Promise<number>((ok) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const p = (probe.address() as AddressInfo).port;
        probe.close(() => ok(p));
      });
    });
    const origin = `http://127.0.0.1:${port}`;
    await call('PATCH', '/v1/account/', { embed_origins: [allowed.url, origin] });
    mkdirSync(join(dir, 'public'), { recursive: true });
    // As pasted: not a character changed. What differs per run is the environment the README names.
    writeFileSync(join(dir, 'server.mjs'), js);
    writeFileSync(join(dir, 'public', 'account.html'), html);
    const env = { ...process.env, REFLOOP_URL: gateway.url, REFLOOP_API_KEY: account.apiKey, DEMO_MEMBER_ID: alice.id, PORT: String(port) };
    server = spawn(process.execPath, ['server.mjs'], { cwd: dir, env, stdio: 'ignore' });
    await pollUntil(async () => (await fetch(`${origin}/account.html`)).ok, { timeoutMs: 15_000 });
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${origin}/account.html`);
    const frame = await portalFrame(page);
    await expect(frame.getByTestId('portal-greeting').innerText()).resolves.toContain('Alice');
    await page.context().close();
  }, 60_000);
});
