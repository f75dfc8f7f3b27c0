// e2e: an outsider's whole way into an affiliate programme on a fresh `npm start` (its gateway, workers and
// email outbox), in Chromium: the operator opens a campaign with automatic approval; the applicant fills in
// the public page, confirms from the email the worker wrote to the outbox, is approved at once, logs in with
// the link of the welcome email and lands in the portal with their code. Then a second campaign with
// manual approval: the applicant waits as pending until the operator approves through the API.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { LocalRuntime } from '../../infra/local/start';
import { startTestRuntime } from '../support/runtime';
import { expectNoAxeViolations, launchChromium } from '../support/browser';
import { pollUntil } from '../support/fixtures';

const TABLE = 'refloop-affiliate-journey';
const dataDir = mkdtempSync(join(tmpdir(), 'refloop-affiliate-journey-'));
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

/** The first link matching `pattern` in the newest outbox email whose file name starts with `prefix` and that is to `to`. */
function linkFromOutbox(prefix: string, to: string, pattern: RegExp): string | null {
  const outbox = join(dataDir, 'outbox');
  let files: string[];
  try {
    files = readdirSync(outbox).filter((f) => f.startsWith(prefix) && f.endsWith('.eml'));
  } catch {
    return null;
  }
  for (const file of files.sort().reverse()) {
    const eml = readFileSync(join(outbox, file), 'utf8');
    if (!eml.includes(`To: ${to}`)) continue;
    const found = pattern.exec(eml);
    if (found) return found[0];
  }
  return null;
}

async function apply(page: Page, path: string, email: string, name: string): Promise<void> {
  await page.goto(runtime.url + path);
  await page.getByLabel('Email', { exact: true }).fill(email);
  await page.getByLabel('Full name').fill(name);
  await page.getByLabel('Country').selectOption('GB');
  await page.getByLabel('Your website').fill('https://creator.example');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page
    .getByRole('status')
    .getByText(/check your email/i)
    .waitFor({ timeout: 20_000 });
}

async function confirm(page: Page, email: string): Promise<void> {
  const link = await pollUntil(() => linkFromOutbox('application-confirm', email, /https?:\/\/[^\s"<>]+\/join\/confirm\/[^\s"<>/]+\//), {
    timeoutMs: 30_000,
  });
  await page.goto(link);
  await Promise.all([page.waitForLoadState('load'), page.getByRole('button', { name: 'Confirm my email' }).click()]);
}

beforeAll(async () => {
  runtime = await startTestRuntime(dataDir, TABLE);
  browser = await launchChromium();
  await call('PATCH', '/v1/account/', { referral_url: 'https://app.example.com/' });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

const question = { id: 'site', label: 'Your website', type: 'url', required: true };

describe('an affiliate programme on npm start, in Chromium', () => {
  it('apply on the public page, confirm from the outbox, auto-approval, log in from the welcome email, reach the portal', async () => {
    const account = await call('GET', '/v1/account/');
    const campaign = await call('POST', '/v1/campaigns/', {
      name: 'Creators',
      allows_commission: true,
      commission_type: 'percentage',
      commission_percent: '25',
      signup: { enabled: true, approval: 'auto', questions: [question] },
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const email = 'nadia@creator.example';
    await apply(page, `/join/${account.slug}/${campaign.slug}/`, email, 'Nadia Okafor');
    await expectNoAxeViolations(page, 'join page after applying');
    await confirm(page, email);
    await page.getByRole('heading', { name: 'You are approved' }).waitFor({ timeout: 20_000 });

    // The member exists, created by the sign-up.
    const listed = await call('GET', `/v1/applications/?campaign=${campaign.id}`);
    expect(listed.count).toBe(1);
    expect(listed.results[0]).toMatchObject({ email, status: 'approved', member_id: expect.any(String) });
    const member = await call('GET', `/v1/members/${listed.results[0].member_id}/`);
    expect(member).toMatchObject({ email, first_name: 'Nadia', last_name: 'Okafor', source: 'signup', campaign: { id: campaign.id } });

    // The welcome email's login link opens the portal.
    const login = await pollUntil(
      () => linkFromOutbox('approved-', email, /https?:\/\/[^\s"<>]+\/portal\/[^\s"<>]+\/login\/#token=rpl_[A-Za-z0-9_-]+/),
      {
        timeoutMs: 30_000,
      },
    );
    await page.goto(login);
    await page.getByRole('button', { name: 'Continue to your portal' }).click();
    await page.getByTestId('portal-greeting').waitFor({ timeout: 20_000 });
    expect(new URL(page.url()).pathname).toBe(`/portal/${account.slug}/`);
    expect(await page.locator('body').innerText()).toContain(member.code);
    await context.close();
  }, 180_000);

  it('manual approval: the applicant waits as pending until the operator approves', async () => {
    const account = await call('GET', '/v1/account/');
    const campaign = await call('POST', '/v1/campaigns/', {
      name: 'Agencies',
      allows_commission: true,
      commission_amount: '10.00',
      signup: { enabled: true, approval: 'manual', questions: [question] },
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    const email = 'omar@agency.example';
    await apply(page, `/join/${account.slug}/${campaign.slug}/`, email, 'Omar Haddad');
    await confirm(page, email);
    await page.getByRole('heading', { level: 1 }).waitFor({ timeout: 20_000 });
    expect(await page.getByRole('heading', { level: 1 }).textContent()).not.toBe('You are approved');

    const pending = await call('GET', `/v1/applications/?status=pending&campaign=${campaign.id}`);
    expect(pending.count).toBe(1);
    expect(pending.results[0]).toMatchObject({ email, status: 'pending', member_id: null, answers: { site: 'https://creator.example' } });
    const approved = await call('POST', `/v1/applications/${pending.results[0].id}/approve/`);
    expect(approved).toMatchObject({ status: 'approved', member_id: expect.any(String) });
    const login = await pollUntil(
      () => linkFromOutbox('approved-', email, /https?:\/\/[^\s"<>]+\/portal\/[^\s"<>]+\/login\/#token=rpl_[A-Za-z0-9_-]+/),
      {
        timeoutMs: 30_000,
      },
    );
    expect(login).toContain(`/portal/${account.slug}/login/`);
    await context.close();
  }, 180_000);
});
