// The fraud rules in the dashboard, in real Chromium (Debian's, through playwright-core) against npm start's
// stack (startLocal: the outbox, the fan-out and fraud-screen workers, the Paddle emulator): Settings > Fraud
// rules previews a change (the preview's figures shown before Save is offered) and saves it (Disposable
// email set to Hold); a referral whose user signs up with a disposable address is flagged by the screening,
// its commission is created held, the review queue shows it (the rule in words, the subject, what it
// holds, the navigation's count, the overview's alert), a viewer reads it without action buttons, the
// owner releases it from the queue and the reward reaches the next payout, marked paid; a preview then
// counts that referral among what the rule would have flagged, linked. axe-core on the new pages;
// screenshots under test-results/dashboard/.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { demoLoginLink, type LocalRuntime } from '../../infra/local/start';
import { expectNoAxeViolations, launchChromium } from '../support/browser';
import { pollUntil } from '../support/fixtures';
import { startTestRuntime } from '../support/runtime';

const SHOTS = join(__dirname, '..', '..', 'test-results', 'dashboard');
const dataDir = mkdtempSync(join(tmpdir(), 'refloop-dashboard-fraud-'));
const tag = Date.now().toString(36);
let runtime: LocalRuntime;
let browser: Browser;
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

const idle = (p: Page) =>
  p.waitForFunction(
    () =>
      (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document.querySelectorAll(
        '[aria-busy="true"]',
      ).length === 0,
    undefined,
    { timeout: 15_000 },
  );

async function open(p: Page, path: string, heading: string | RegExp): Promise<void> {
  await p.goto(`${runtime.url}${path}`);
  await p.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 20_000 });
  await idle(p);
}

async function toast(text: string | RegExp): Promise<void> {
  await page.getByRole('status').filter({ hasText: text }).first().waitFor({ timeout: 15_000 });
}

/** The newest login link mailed to `to` after `since` (ms), from the outbox. */
function loginLinkFor(to: string, since: number): Promise<string> {
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
        .map((f) => ({ t: statSync(join(outbox, f)).mtimeMs, text: readFileSync(join(outbox, f), 'utf8') }))
        .filter((m) => m.t >= since - 5 && m.text.includes(`To: ${to}`))
        .sort((a, b) => b.t - a.t);
      const match = fresh[0]?.text.replace(/=\r?\n/g, '').match(/https?:\/\/\S+\/app\/login#token=[A-Za-z0-9_-]{43}/);
      return match ? match[0] : null;
    },
    { timeoutMs: 20_000 },
  );
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  runtime = await startTestRuntime(dataDir, 'refloop-dashboard-fraud');
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  const { url } = await demoLoginLink(runtime);
  await page.goto(url);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: 20_000 });
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('fraud rules in the dashboard', () => {
  let referralId: string;
  let memberId: string;
  let flagId: string;
  let rewardId: string;

  it('Settings > Fraud rules previews a change with its figures before saving it', async () => {
    await open(page, '/app/settings/fraud', 'Fraud rules');
    const rule = page.getByRole('region', { name: 'Disposable email' });
    await rule.getByRole('radio', { name: 'Hold' }).check();
    // Save waits for the preview of the values on screen.
    const save = rule.getByRole('button', { name: 'Save Disposable email' });
    expect(await save.isDisabled()).toBe(true);
    await rule.getByRole('button', { name: 'Preview Disposable email' }).click();
    const preview = rule.locator('.rule-preview');
    await preview.waitFor({ timeout: 15_000 });
    expect(await preview.getAttribute('data-would-flag')).toMatch(/^\d+$/);
    expect(await preview.innerText()).toMatch(/Over the last 90 days this would have flagged \d+ and held \d+ rewards?\./);
    await expectNoAxeViolations(page, 'settings-fraud-rules');
    await page.screenshot({ path: join(SHOTS, 'settings-fraud-rules.png'), fullPage: true });

    // A threshold out of its range: the API's words beside the field, nothing saved.
    const network = page.getByRole('region', { name: 'One network' });
    await network.getByLabel(/^More than/).fill('0');
    await network.getByRole('button', { name: 'Preview One network' }).click();
    await network.getByRole('alert').waitFor({ timeout: 15_000 });
    await network.getByRole('button', { name: 'Undo changes' }).click();

    expect(await save.isDisabled()).toBe(false);
    await save.click();
    await toast('Disposable email: saved.');
    const rules = await api('GET', '/v1/fraud-rules/');
    expect(rules.body.disposable_email).toEqual({ action: 'hold' });
    expect(rules.body.duplicate_ip.max_referrals).toBe(3);
  }, 60_000);

  it('a referral with a disposable address is flagged, its commission held, and the queue shows it', async () => {
    const campaign = await api('POST', '/v1/campaigns/', {
      name: `Partners ${tag}`,
      allows_commission: true,
      commission_amount: '25.00',
      commission_currency: 'USD',
      hold_days: 0,
      approval: 'auto',
      min_payout: '0.00',
    });
    expect(campaign.status).toBe(201);
    const member = await api('POST', '/v1/members/', {
      identifier: `nadia-${tag}`,
      email: `nadia-${tag}@creators.example`,
      code: `NADIA${tag}`.toUpperCase().slice(0, 20),
      campaign: { id: campaign.body.id },
      payout_email: `nadia-pay-${tag}@creators.example`,
    });
    expect(member.status).toBe(201);
    memberId = member.body.id;
    const email = `mallory-${tag}@mailinator.com`;
    const referral = await api('POST', '/v1/referrals/', { user_identifier: email, member_code: member.body.code });
    expect([200, 201]).toContain(referral.status);
    referralId = referral.body.id;

    // The screening runs off the request path (fan-out -> fraud-screen worker).
    const flag = await pollUntil(
      async () => {
        const list = await api('GET', `/v1/fraud-flags/?status=open&member=${memberId}`);
        return (list.body?.results ?? []).find((f: { subject_id: string }) => f.subject_id === referralId) ?? null;
      },
      { timeoutMs: 20_000 },
    );
    expect(flag).toMatchObject({ rule: 'disposable_email', action: 'hold', subject_type: 'referral', status: 'open' });
    flagId = flag.id;

    // The referred user pays; the conversion's commission is created held by the flag.
    const checkout = await runtime.paddle.checkout({ plan_id: 9001, email });
    await pollUntil(
      async () => ((await api('GET', `/v1/subscriptions/${checkout.subscription.subscription_id}/`)).status === 200 ? true : null),
      {
        timeoutMs: 20_000,
      },
    );
    expect((await api('POST', `/v1/referrals/${referralId}/conversion/`, { checkout_id: checkout.checkout_id })).status).toBe(200);
    const held = await pollUntil(
      async () => {
        const list = await api('GET', `/v1/rewards/?status=held&member=${memberId}`);
        return list.body?.count === 1 ? list.body.results[0] : null;
      },
      { timeoutMs: 20_000 },
    );
    rewardId = held.id;
    expect((await api('GET', `/v1/fraud-flags/${flagId}/`)).body).toMatchObject({ held_reward_ids: [rewardId], held_count: 1 });

    // The overview says flags wait, and the navigation counts them.
    await open(page, '/app/', 'Overview');
    await page.locator('.overview-alert[data-open-flags]').waitFor({ timeout: 15_000 });
    expect(Number(await page.locator('[data-open-flags]').first().getAttribute('data-open-flags'))).toBeGreaterThanOrEqual(1);

    await open(page, '/app/review', 'Review queue');
    const item = page.locator(`[data-flag="${flagId}"]`);
    await item.waitFor({ timeout: 15_000 });
    expect(await item.getByRole('heading', { level: 3 }).innerText()).toBe('Disposable email');
    const text = await item.innerText();
    expect(text).toContain('mailinator.com');
    expect(text).toContain(referralId);
    await item.locator('[data-held-count="1"]').waitFor({ timeout: 15_000 });
    await item.getByText('$25.00').waitFor({ timeout: 15_000 });
    // Still holding a reward: "Mark reviewed" says why it waits.
    const review = item.getByRole('button', { name: 'Mark reviewed' });
    expect(await review.isDisabled()).toBe(true);
    await expectNoAxeViolations(page, 'review-queue');
    await page.screenshot({ path: join(SHOTS, 'review-queue.png'), fullPage: true });

    // The referral and the member say so too.
    await open(page, `/app/referrals/${referralId}`, /^Referral of/);
    await page.getByRole('region', { name: 'Fraud flags' }).getByText('Disposable email').waitFor({ timeout: 15_000 });
    await open(page, `/app/members/${memberId}`, `nadia-${tag}`);
    await page.getByText('Commission held').waitFor({ timeout: 15_000 });
    await expectNoAxeViolations(page, 'member-with-flags');
  }, 90_000);

  it('a viewer reads the queue without its actions', async () => {
    const cookie = (await page.context().cookies()).find((c) => c.name === 'refloop_session');
    const email = `vera-${tag}@team.example`;
    const since = Date.now();
    const invited = await fetch(`${runtime.url}/v1/team/`, {
      method: 'POST',
      headers: { cookie: `refloop_session=${cookie?.value}`, origin: runtime.url, 'content-type': 'application/json' },
      body: JSON.stringify({ email, role: 'viewer' }),
    });
    expect(invited.status).toBe(201);
    const link = await loginLinkFor(email, since);
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    try {
      const viewer = await context.newPage();
      await viewer.goto(link);
      await viewer.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: 20_000 });
      await open(viewer, '/app/review', 'Review queue');
      await viewer.locator(`[data-flag="${flagId}"]`).waitFor({ timeout: 15_000 });
      expect(await viewer.getByRole('button', { name: /^(Release|Void|Mark reviewed|Reject application)$/ }).count()).toBe(0);
      await open(viewer, '/app/settings/fraud', 'Fraud rules');
      expect(await viewer.getByRole('button', { name: /^(Preview|Save) / }).count()).toBe(0);
      expect(await viewer.getByRole('radio', { name: 'Hold' }).first().isDisabled()).toBe(true);
    } finally {
      await context.close();
    }
  }, 60_000);

  it('the owner releases it from the queue and the reward reaches the next payout', async () => {
    await open(page, '/app/review', 'Review queue');
    const item = page.locator(`[data-flag="${flagId}"]`);
    await item.getByRole('button', { name: 'Release' }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('heading', { name: 'Release 1 held reward?' }).waitFor();
    await dialog.getByLabel('Note (optional)').fill('Checked with the member: a real customer.');
    await dialog.getByRole('button', { name: 'Release' }).click();
    await toast('Released 1 reward.');
    const flag = (await api('GET', `/v1/fraud-flags/${flagId}/`)).body;
    expect(flag).toMatchObject({ status: 'released', held_count: 0, note: 'Checked with the member: a real customer.' });
    // The hold period (0 days) has passed: approved at once, into the member's collecting payout.
    const reward = await pollUntil(
      async () => {
        const r = (await api('GET', `/v1/rewards/${rewardId}/`)).body;
        return r?.status === 'approved' ? r : null;
      },
      { timeoutMs: 15_000 },
    );
    expect(reward.payout_id).toMatch(/\S/);

    await open(page, '/app/payouts', 'Payouts');
    await page
      .getByRole('button', { name: /create batch/i })
      .first()
      .click();
    await page.waitForURL(/\/app\/payouts\/batches\/pb_/, { timeout: 15_000 });
    await page.getByRole('heading', { level: 1, name: /batch/i }).waitFor();
    await page.getByRole('button', { name: /mark batch paid/i }).click();
    await page
      .getByRole('dialog')
      .getByRole('button', { name: /mark batch paid/i })
      .click();
    const paid = await pollUntil(
      async () => {
        const r = (await api('GET', `/v1/rewards/${rewardId}/`)).body;
        return r?.status === 'paid' ? r : null;
      },
      { timeoutMs: 15_000 },
    );
    expect(paid).toMatchObject({ amount: '25.00', currency: 'USD' });
  }, 60_000);

  it('the preview counts what a rule would have found, with its examples linked', async () => {
    await open(page, '/app/settings/fraud', 'Fraud rules');
    const rule = page.getByRole('region', { name: 'Disposable email' });
    await rule.getByRole('radio', { name: 'Flag' }).check();
    await rule.getByRole('button', { name: 'Preview Disposable email' }).click();
    const preview = rule.locator('.rule-preview');
    await preview.waitFor({ timeout: 15_000 });
    expect(Number(await preview.getAttribute('data-would-flag'))).toBeGreaterThanOrEqual(1);
    await preview.getByRole('link', { name: referralId }).waitFor({ timeout: 15_000 });
    await expectNoAxeViolations(page, 'settings-fraud-rules-preview');
    // Undone: nothing is saved.
    await rule.getByRole('button', { name: 'Undo changes' }).click();
    expect((await api('GET', '/v1/fraud-rules/')).body.disposable_email).toEqual({ action: 'hold' });
  }, 30_000);
});
