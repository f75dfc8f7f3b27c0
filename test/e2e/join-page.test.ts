// The public join page in Chromium (docs/affiliates.md "The sign-up page"), over the local gateway on the
// suite's DynamoDB Local and a local SQS (no email worker: the confirmation link is issued as the worker
// issues it). With JavaScript: errors beside their fields and in a summary that takes focus, then the
// success in place. Without JavaScript: the form's post lands on "Check your email". The confirmation
// link's page confirms with its button, and automatic approval says so. axe-core finds no serious or
// critical violation on any of these pages.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { startGateway, type Gateway } from '../../infra/local/gateway';
import { issueJoinConfirmation } from '../../shared/flows/applications';
import { expectNoAxeViolations, launchChromium } from '../support/browser';
import { newAccount, pollUntil } from '../support/fixtures';
import { startTestQueues, type TestQueues } from '../support/queues';

/** Screenshots for a person to look at (not committed). */
const SHOTS = join(__dirname, '..', '..', 'test-results', 'join');
let gateway: Gateway;
let queues: TestQueues;
let browser: Browser;
let account: { accountId: string; apiKey: string };
let slug: string;
let auto: { id: string; slug: string };

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

const seen: Record<string, unknown>[] = [];
/** The member-emails message for an address (read off the queue). */
function messageFor(address: string): Promise<Record<string, unknown>> {
  return pollUntil(async () => {
    for (const m of await queues.receiveAll('member-emails')) seen.push(m.json as Record<string, unknown>);
    return seen.find((m) => m.email === address) ?? null;
  });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  queues = await startTestQueues();
  gateway = await startGateway({ port: 0 });
  account = await newAccount();
  await call('PATCH', '/v1/account/', { theme: { accent: '#0b5cad' } });
  slug = (await call('GET', '/v1/account/')).slug;
  auto = await call('POST', '/v1/campaigns/', {
    name: 'Creators',
    allows_commission: true,
    commission_type: 'percentage',
    commission_percent: '25',
    signup: {
      enabled: true,
      approval: 'auto',
      terms_url: 'https://acme.example/terms',
      questions: [
        { id: 'audience', label: 'Where is your audience?', type: 'choice', required: true, options: ['YouTube', 'Blog'] },
        { id: 'site', label: 'Your website', type: 'url', required: false },
        { id: 'pitch', label: 'Tell us about you', type: 'text', required: false },
      ],
    },
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
  await queues?.stop();
});

const pageUrl = () => `${gateway.url}/join/${slug}/${auto.slug}/`;

async function fill(page: Page, address: string, site: string): Promise<void> {
  await page.getByLabel('Email', { exact: true }).fill(address);
  await page.getByLabel('Full name').fill('Casey Van Jones');
  await page.getByLabel('Country').selectOption('GB');
  await page.getByLabel('Where is your audience?').selectOption('YouTube');
  await page.getByLabel('Your website').fill(site);
  await page.getByLabel("I accept the programme's terms").check();
}

describe('the join page', () => {
  it('with JavaScript: shows the errors beside their fields, then the success in place; axe-clean', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(pageUrl());
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Join the Creators programme');
      expect(await page.textContent('body')).toContain('Earn 25% of what they pay');
      await expectNoAxeViolations(page, 'join page');
      await page.screenshot({ path: join(SHOTS, 'join.png'), fullPage: true });

      const address = `js-${Date.now()}@creator.example`;
      // A web address the browser accepts but the programme refuses (not http/https).
      await fill(page, address, 'ftp://casey.example');
      await page.getByRole('button', { name: 'Apply' }).click();
      const error = page.locator('#f-q-site-error');
      await error.waitFor({ state: 'visible' });
      expect(await error.textContent()).toBe('Enter a web address (https://…).');
      expect(await page.getAttribute('#f-q-site', 'aria-invalid')).toBe('true');
      expect(await page.getAttribute('#f-q-site', 'aria-describedby')).toBe('f-q-site-hint f-q-site-error');
      expect(
        await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { id: string } } }).document.activeElement.id),
      ).toBe('form-errors');
      await expectNoAxeViolations(page, 'join page with errors');
      await page.screenshot({ path: join(SHOTS, 'join-errors.png'), fullPage: true });

      await page.getByLabel('Your website').fill('https://casey.example');
      await page.getByRole('button', { name: 'Apply' }).click();
      const done = page.getByRole('status');
      await done.waitFor();
      expect(await done.textContent()).toContain('Check your email');
      expect(
        await page.evaluate(() =>
          (
            globalThis as unknown as { document: { activeElement: { getAttribute(n: string): string } } }
          ).document.activeElement.getAttribute('role'),
        ),
      ).toBe('status');
      await expectNoAxeViolations(page, 'join page sent');
      expect(await messageFor(address)).toMatchObject({ template: 'application-confirm' });
    } finally {
      await page.close();
    }
  }, 60_000);

  it('without JavaScript: the form posts and lands on "Check your email"; the link confirms with its button; auto-approval says so', async () => {
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    // axe runs in a page with JavaScript (it is a script): the same addresses, opened again (a GET changes nothing).
    const checker = await browser.newPage();
    try {
      await page.goto(pageUrl());
      const address = `nojs-${Date.now()}@creator.example`;
      await fill(page, address, '');
      await page.getByRole('button', { name: 'Apply' }).click();
      await page.waitForURL(/\?sent=1$/);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Check your email');
      await checker.goto(page.url());
      await expectNoAxeViolations(checker, 'sent page');

      const message = await messageFor(address);
      const confirmUrl =
        gateway.url + new URL((await issueJoinConfirmation(account.accountId, String(message.join_request_id))) as string).pathname;
      await page.goto(confirmUrl);
      expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Confirm your application');
      await checker.goto(confirmUrl);
      await expectNoAxeViolations(checker, 'confirmation page');
      await page.getByRole('button', { name: 'Confirm my email' }).click();
      await page.getByRole('heading', { name: 'You are approved' }).waitFor();
      await checker.goto(confirmUrl);
      expect(await checker.getByRole('heading', { level: 1 }).textContent()).toBe('You are approved');
      await expectNoAxeViolations(checker, 'approved page');
      await checker.screenshot({ path: join(SHOTS, 'join-approved.png'), fullPage: true });
      const list = await call('GET', '/v1/applications/?status=approved');
      expect(list.results.map((a: { email: string }) => a.email)).toContain(address);
    } finally {
      await checker.close();
      await context.close();
    }
  }, 60_000);
});
