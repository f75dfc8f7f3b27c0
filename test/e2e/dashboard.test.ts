// The operator dashboard in real Chromium (Debian's, through playwright-core) against npm start's stack
// (startLocal: DynamoDB Local, the local SQS with its workers, the provider emulators, the gateway serving
// /app/). The owner logs in with the link from the outbox, creates a campaign, a member and an `app`
// referral; the referred user subscribes on the Paddle emulator and the app's backend converts; the
// overview's figures equal the API's report; the owner approves the commission, batches the payout and
// marks the batch paid. A viewer is refused every write; a cross-site write with the session is refused.
// Every page gets an axe-core pass (no serious or critical violation) and a screenshot under
// test-results/dashboard/ (gitignored).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium, expectNoAxeViolations } from '../support/browser';
import { routes } from '../../functions/routes';
import { PROVIDER_DEFINITIONS } from '../../shared/billing/registry';
import type { LocalRuntime } from '../../infra/local/start';
import { startTestRuntime } from '../support/runtime';
import { CROSS_SITE_REFUSED, PERMISSION_DENIED } from '../../shared/domain/team';
import { pollUntil } from '../support/fixtures';

const ROOT = join(__dirname, '..', '..');
const SHOTS = join(ROOT, 'test-results', 'dashboard');

const dataDir = mkdtempSync(join(tmpdir(), 'refloop-dashboard-'));
let runtime: LocalRuntime;
let browser: Browser;
let owner: BrowserContext;
let page: Page;

async function api(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(runtime.url + path, {
    method,
    headers: { authorization: `Bearer ${runtime.demo.apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** The newest login link mailed to `to` after `since` (ms), from the outbox's .eml files. */
async function loginLinkFor(to: string, since: number): Promise<string> {
  const outbox = join(dataDir, 'outbox');
  return pollUntil(
    () => {
      let files: string[];
      try {
        files = readdirSync(outbox).filter((f) => f.endsWith('.eml'));
      } catch {
        return null;
      }
      const fresh = files
        .map((f) => ({ f, t: statSync(join(outbox, f)).mtimeMs, text: readFileSync(join(outbox, f), 'utf8') }))
        .filter((m) => m.t >= since - 5 && m.text.includes(`To: ${to}`))
        .sort((a, b) => b.t - a.t);
      const match = fresh[0]?.text.match(/https?:\/\/\S+\/app\/login#token=[A-Za-z0-9_-]{43}/);
      return match ? match[0] : null;
    },
    { timeoutMs: 20_000 },
  );
}

const axe = expectNoAxeViolations;

/** Opens a dashboard path, waits for its heading and for loading to end, checks axe, takes a screenshot. */
async function visit(p: Page, path: string, heading: string | RegExp, shot: string): Promise<void> {
  await p.goto(`${runtime.url}/app/${path}`);
  await p.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 15_000 });
  await p.waitForFunction(
    () =>
      (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll(
        '[aria-busy="true"]',
      ).length === 0,
    undefined,
    { timeout: 15_000 },
  );
  await axe(p, shot);
  await p.screenshot({ path: join(SHOTS, `${shot}.png`), fullPage: true });
}

let lastLink = '';

/** `sameTab`: the link pasted into the login page's own tab (only the fragment changes: no page load). */
async function logIn(context: BrowserContext, email: string, opts: { sameTab?: boolean } = {}): Promise<Page> {
  const p = await context.newPage();
  const since = Date.now();
  await p.goto(`${runtime.url}/app/login`);
  await p.getByRole('heading', { level: 1 }).waitFor();
  await axe(p, 'login');
  await p.screenshot({ path: join(SHOTS, 'login.png') });
  await p.getByLabel(/email/i).fill(email);
  await p.getByRole('button', { name: /login link/i }).click();
  await p.getByText(/inbox/i).first().waitFor({ timeout: 10_000 });
  const link = await loginLinkFor(email, since);
  lastLink = link;
  // As from a mail client, the link opens in a fresh page load; or it is pasted into the same tab.
  if (!opts.sameTab) await p.goto('about:blank');
  await p.goto(link);
  await p
    .getByRole('heading', { level: 1, name: 'Overview' })
    .waitFor({ timeout: 15_000 })
    .catch(async (err: unknown) => {
      throw new Error(`${String(err)}\nat ${p.url()} (link ${link}):\n${(await p.locator('body').innerText()).slice(0, 800)}`);
    });
  // The token left the address bar (history.replaceState) once used.
  expect(p.url()).not.toContain('token=');
  return p;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  runtime = await startTestRuntime(dataDir, 'refloop-dashboard');
  browser = await launchChromium();
  // axe-core is evaluated through the DevTools protocol, which the page's CSP does not govern.
  owner = await browser.newContext({ viewport: { width: 1400, height: 900 }, timezoneId: 'Europe/Berlin' });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('operator dashboard', () => {
  let referralId: string;

  it('logs the owner in with the emailed link; a used link cannot log in again', async () => {
    page = await logIn(owner, runtime.demo.ownerEmail);
    await expect(page.getByText(runtime.demo.ownerEmail).first().isVisible()).resolves.toBe(true);
    // The session cookie is HttpOnly and SameSite=Strict (no Secure on loopback http).
    const cookie = (await owner.cookies()).find((c) => c.name === 'refloop_session');
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', secure: false });

    // The same link again, in another browser: refused, and no session.
    const other = await browser.newContext();
    const replay = await other.newPage();
    await replay.goto(lastLink);
    await replay
      .getByRole('alert')
      .getByText(/invalid, expired or already used/i)
      .waitFor({ timeout: 10_000 });
    expect((await other.cookies()).some((c) => c.name === 'refloop_session')).toBe(false);
    await other.close();
  }, 60_000);

  it('creates a campaign, a member and an app referral through the pages', async () => {
    await visit(page, 'campaigns', 'Campaigns', 'campaigns-empty');
    await page.goto(`${runtime.url}/app/campaigns/new`);
    await page.getByRole('heading', { level: 1, name: 'New campaign' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Partners');
    await page.getByLabel('The referrer earns').selectOption('commission');
    await page.getByLabel('Commission type').selectOption('percentage');
    await page.getByLabel('Percent', { exact: true }).fill('20');
    await page.getByLabel('Hold (days)').fill('0');
    await page.getByLabel('Approval').selectOption('manual');
    await page.getByLabel('Minimum payout').fill('0.00');
    await page.getByRole('button', { name: /create campaign/i }).click();
    const campaign = await pollUntil(
      async () => (await api('GET', '/v1/campaigns/')).body.results.find((c: any) => c.name === 'Partners') ?? null,
      { timeoutMs: 10_000 },
    );
    expect(campaign).toMatchObject({ commission_type: 'percentage', approval: 'manual', hold_days: 0 });

    await visit(page, 'members', 'Members', 'members-empty');
    await page.getByLabel('Identifier').fill('alice');
    await page.getByLabel('Email', { exact: true }).fill('alice@example.com');
    await page.getByLabel('Referral code').fill('ALICE');
    await page.getByLabel('Campaign').selectOption(campaign.id);
    await page.getByLabel('Payout email').fill('alice-pay@example.com');
    await page.getByRole('button', { name: /add member|create member/i }).click();
    await pollUntil(async () => ((await api('GET', '/v1/members/')).body.results.some((m: any) => m.code === 'ALICE') ? true : null), {
      timeoutMs: 10_000,
    });

    // Field errors land next to their field: a second ALICE is refused on `code`.
    await page.getByLabel('Identifier').fill('alice2');
    await page.getByLabel('Email', { exact: true }).fill('alice2@example.com');
    await page.getByLabel('Referral code').fill('ALICE');
    await page.getByRole('button', { name: /add member|create member/i }).click();
    await page.locator('#new-member input[name="code"][aria-invalid="true"]').waitFor({ timeout: 10_000 });
    const describedBy = (await page.locator('#new-member input[name="code"]').getAttribute('aria-describedby')) ?? '';
    const described = await Promise.all(
      describedBy
        .split(/\s+/)
        .filter(Boolean)
        .map((id) => page.locator(`[id="${id}"]`).innerText()),
    );
    expect(described.join(' ')).toMatch(/already|exists|taken|in use/i);

    await visit(page, 'referrals', 'Referrals', 'referrals-empty');
    await page.getByLabel('Referred user').fill('bob');
    await page.getByLabel("Member's referral code").fill('ALICE');
    await page.getByRole('button', { name: /record referral|create referral/i }).click();
    const referral = await pollUntil(
      async () => (await api('GET', '/v1/referrals/')).body.results.find((r: any) => r.user_identifier === 'bob') ?? null,
      { timeoutMs: 10_000 },
    );
    expect(referral.source).toBe('app');
    referralId = referral.id;
  }, 90_000);

  it('shows the conversion: the overview figures equal the API report', async () => {
    // The referred user subscribes on the Paddle emulator; the app's backend converts the referral.
    const checkout = await runtime.paddle.checkout({ plan_id: 9001, email: 'bob@example.com' });
    const subscriptionId = checkout.subscription.subscription_id;
    await pollUntil(async () => ((await api('GET', `/v1/subscriptions/${subscriptionId}/`)).status === 200 ? true : null), {
      timeoutMs: 20_000,
    });
    expect((await api('POST', `/v1/referrals/${referralId}/conversion/`, { checkout_id: checkout.checkout_id })).status).toBe(200);
    await pollUntil(async () => ((await api('GET', '/v1/rewards/?status=pending')).body.count === 1 ? true : null), { timeoutMs: 20_000 });

    await visit(page, '?days=30', 'Overview', 'overview');
    const range = await page
      .locator('ul.kpis')
      .first()
      .evaluate((ul) => ({ from: ul.getAttribute('data-from'), to: ul.getAttribute('data-to') }));
    const report = await api('GET', `/v1/reports/overview/?from=${range.from}&to=${range.to}`);
    expect(report.status).toBe(200);
    const tiles = await page
      .locator('[data-kpi]')
      .evaluateAll((els) => els.map((e) => ({ kpi: e.getAttribute('data-kpi') as string, value: e.getAttribute('data-value') as string })));
    expect(tiles.length).toBeGreaterThanOrEqual(5);
    for (const { kpi, value } of tiles) {
      const expected = report.body.current[kpi];
      const shown = typeof expected === 'number' ? Number(value) : value;
      const want = typeof expected === 'number' ? expected : (Object.values(expected as Record<string, string>)[0] ?? '0.00');
      expect({ kpi, shown }).toEqual({ kpi, shown: want });
    }
    expect(report.body.current).toMatchObject({ referrals: 1, conversions: 1 });
  }, 90_000);

  it('approves the commission and marks its payout batch paid', async () => {
    await visit(page, 'rewards?status=pending', 'Rewards', 'rewards');
    await page
      .getByRole('button', { name: /^approve/i })
      .first()
      .click();
    await pollUntil(async () => ((await api('GET', '/v1/rewards/?status=approved')).body.count === 1 ? true : null), { timeoutMs: 15_000 });

    await visit(page, 'payouts', 'Payouts', 'payouts');
    await page.getByRole('button', { name: /create batch/i }).click();
    await page.waitForURL(/\/app\/payouts\/batches\/pb_/, { timeout: 15_000 });
    await page.getByRole('heading', { level: 1, name: /batch/i }).waitFor();
    await axe(page, 'payout-batch');
    await page.screenshot({ path: join(SHOTS, 'payout-batch.png'), fullPage: true });
    // The file downloads with the session cookie (same origin).
    const href = await page.getByRole('link', { name: /download file/i }).getAttribute('href');
    const file = await page.request.get(new URL(href as string, runtime.url).toString());
    expect(file.status()).toBe(200);
    expect(await file.text()).toContain('alice-pay@example.com');

    await page.getByRole('button', { name: /mark batch paid/i }).click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: /mark batch paid/i })
      .click();
    await pollUntil(async () => ((await api('GET', '/v1/payouts/?status=paid')).body.count === 1 ? true : null), { timeoutMs: 15_000 });
    const rewards = await api('GET', '/v1/rewards/?status=paid');
    expect(rewards.body.count).toBe(1);
  }, 90_000);

  it('renders every other page without a serious accessibility violation', async () => {
    await visit(page, 'subscriptions', 'Subscriptions', 'subscriptions');
    await visit(page, 'webhooks', 'Webhooks', 'webhooks');
    await visit(page, 'settings', 'Settings', 'settings');
    await visit(page, 'members', 'Members', 'members');
    await visit(page, 'referrals', 'Referrals', 'referrals');
    // The detail and form pages too.
    const campaign = (await api('GET', '/v1/campaigns/')).body.results[0];
    const member = (await api('GET', '/v1/members/')).body.results.find((m: any) => m.code === 'ALICE');
    const endpoint = await api('POST', '/v1/webhook-endpoints/', {
      url: 'http://127.0.0.1:9/refloop-hooks',
      description: 'Billing service',
    });
    expect(endpoint.status).toBe(201);
    await visit(page, 'campaigns/new', 'New campaign', 'campaign-new');
    await visit(page, `campaigns/${campaign.id}`, campaign.name, 'campaign');
    await visit(page, `members/${member.id}`, 'alice', 'member');
    // Support: the member page makes a single-use portal link of this member (shown with its expiry).
    await page.getByRole('button', { name: 'Make a portal link' }).click();
    const portalLink = page.getByRole('textbox', { name: 'Portal link (works once, for 10 minutes)' });
    await portalLink.waitFor({ timeout: 10_000 });
    expect(await portalLink.inputValue()).toMatch(new RegExp(`/portal/${runtime.demo.accountId}/#token=rpl_[A-Za-z0-9_-]{43}$`));
    await axe(page, 'member with a portal link');
    await page.locator('#member-portal').screenshot({ path: join(SHOTS, 'member-portal-link.png') });
    await visit(page, `referrals/${referralId}`, 'Referral of bob', 'referral');
    await visit(page, `webhooks/${endpoint.body.id}`, 'Webhook endpoint', 'webhook-endpoint');
    await visit(page, 'payouts?status=paid', 'Payouts', 'payouts-paid');
    await visit(page, 'campaigns', 'Campaigns', 'campaigns');
    // Back and forward move between pages (each page has its URL).
    await page.goBack();
    await page.getByRole('heading', { level: 1, name: 'Payouts' }).waitFor();
    await page.goForward();
    await page.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
  }, 90_000);

  it('draws the provider form from the API: providers open to new sellers first, each with its own fields, server errors on them', async () => {
    await visit(page, 'settings', 'Settings', 'settings-provider');
    const section = page.locator('section', { has: page.getByRole('heading', { level: 2, name: 'Payment provider' }) });
    const select = section.getByLabel('Provider', { exact: true });
    // Every provider of the registry, those open to new sellers first (shared/billing/options.ts).
    expect(await select.locator('option').allTextContents()).toEqual([
      ...PROVIDER_DEFINITIONS.filter((d) => d.openToNewSellers).map((d) => d.name),
      ...PROVIDER_DEFINITIONS.filter((d) => !d.openToNewSellers).map((d) => d.name),
    ]);
    expect(await select.locator('option').allTextContents()).toEqual(
      expect.arrayContaining(['Paddle Billing', 'Stripe', 'Chargebee', 'Paddle Classic']),
    );
    // The demo account is connected to Paddle Classic: the form starts on it, with its fields.
    expect(await select.inputValue()).toBe('paddle-classic');
    await section.getByLabel('Vendor id').waitFor();
    await section.getByLabel('Public key').waitFor();
    // Another provider: its own fields replace them (Chargebee's site, key and webhook Basic-auth pair).
    await select.selectOption({ label: 'Chargebee' });
    await section.getByLabel('Site', { exact: true }).waitFor();
    await section.getByLabel('Webhook password').waitFor();
    expect(await section.getByLabel('Vendor id').count()).toBe(0);
    await select.selectOption({ label: 'Stripe' });
    await section.getByLabel('Secret key').waitFor();
    await section.getByLabel('Webhook signing secret').waitFor();
    expect(await section.getByLabel('Vendor id').count()).toBe(0);
    // Empty fields: the API answers 400 with every field's error, shown beside each; nothing changes.
    await section.getByRole('button', { name: 'Save connection' }).click();
    await section.getByText('This field may not be blank.').first().waitFor({ timeout: 15_000 });
    expect(await section.getByText('This field may not be blank.').count()).toBe(2);
    expect(await section.getByText('Connected: Paddle Classic').count()).toBe(1);
    await axe(page, 'settings-provider-errors');
  }, 60_000);

  it('refuses a viewer every write, in the page and at the API', async () => {
    // The owner invites a viewer from Settings -> Team.
    await visit(page, 'settings', 'Settings', 'settings');
    const team = page.locator('section', { has: page.getByRole('heading', { level: 2, name: 'Team' }) });
    await team.getByLabel(/email/i).fill('vera@example.com');
    await team.getByLabel(/role/i).first().selectOption('viewer');
    await team.getByRole('button', { name: /send invitation/i }).click();
    await team.getByText('vera@example.com').waitFor({ timeout: 10_000 });

    const viewerContext = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    const viewer = await logIn(viewerContext, 'vera@example.com', { sameTab: true });
    // Every unsafe method of every route a session may call, sent from the dashboard's own origin.
    const writes = routes.filter(
      (r) => r.method !== 'GET' && r.method !== 'OPTIONS' && ((r.auth ?? 'api-key') === 'api-key' || r.auth === 'session'),
    );
    expect(writes.length).toBeGreaterThan(20);
    const answers = await viewer.evaluate(
      async (list) => {
        const out: { route: string; status: number; detail: string }[] = [];
        for (const r of list) {
          const path = r.path.replace(/\{[^}]+\}/g, 'x1');
          const res = await fetch(path, {
            method: r.method,
            headers: { 'content-type': 'application/json' },
            body: r.method === 'DELETE' ? undefined : '{}',
          });
          const body = (await res.json().catch(() => ({}))) as { detail?: string };
          out.push({ route: `${r.method} ${r.path}`, status: res.status, detail: body.detail ?? '' });
        }
        return out;
      },
      writes.map((r) => ({ method: r.method, path: r.path })),
    );
    for (const a of answers) expect(a).toEqual({ route: a.route, status: 403, detail: PERMISSION_DENIED });
    // Nothing changed: still one campaign, one member with code ALICE... and the viewer sees no write controls.
    expect((await api('GET', '/v1/campaigns/')).body.count).toBe(1);
    await viewer.goto(`${runtime.url}/app/campaigns`);
    await viewer.getByRole('heading', { level: 1, name: 'Campaigns' }).waitFor();
    await expect(viewer.getByRole('link', { name: /new campaign/i }).count()).resolves.toBe(0);
    await viewerContext.close();
  }, 90_000);

  it('refuses a cross-site write carrying the session cookie', async () => {
    const cookie = (await owner.cookies()).find((c) => c.name === 'refloop_session');
    expect(cookie).toBeDefined();
    const attempt = await fetch(`${runtime.url}/v1/campaigns/`, {
      method: 'POST',
      headers: { cookie: `refloop_session=${cookie?.value}`, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Evil' }),
    });
    expect(attempt.status).toBe(403);
    expect(await attempt.json()).toEqual({ detail: CROSS_SITE_REFUSED });

    // In the browser: a page on another site posts to the API with credentials; SameSite=Strict keeps the
    // cookie off the request, so nothing is created either way.
    const site: Server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>Evil</title><h1>Evil</h1>');
    });
    await new Promise<void>((ok) => site.listen(0, '127.0.0.1', ok));
    try {
      const evil = await owner.newPage();
      await evil.goto(`http://localhost:${(site.address() as AddressInfo).port}/`);
      const status = await evil.evaluate(async (url) => {
        try {
          const res = await fetch(`${url}/v1/campaigns/`, {
            method: 'POST',
            credentials: 'include',
            headers: { 'content-type': 'text/plain' },
            body: '{"name":"Evil"}',
          });
          return res.status;
        } catch {
          return 0; // no CORS: the browser hides the answer
        }
      }, runtime.url);
      expect([0, 401, 403, 415]).toContain(status);
    } finally {
      await new Promise<void>((ok) => site.close(() => ok()));
    }
    expect((await api('GET', '/v1/campaigns/')).body.results.map((c: any) => c.name)).toEqual(['Partners']);
  }, 60_000);
});
