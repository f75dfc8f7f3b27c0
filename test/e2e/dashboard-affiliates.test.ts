// The dashboard's affiliate programme pages in real Chromium (Debian's, through playwright-core) against
// npm start's stack (startLocal): Settings > Affiliate programme saves the account's slug, attribution,
// tax details, affiliate emails and theme (the preview follows the colours); the campaign form's Sign-up
// page section saves (questions added, reordered and removed) and shows the public page's address; an
// outsider applies on the public endpoint and confirms from the outbox, the application waits on the
// Applications page (the navigation's count, the overview's tile), the owner approves it there and the
// member exists; a rejection keeps its internal reason, and a decision taken meanwhile elsewhere shows the
// API's 409; the email previews render (subject, sandboxed HTML, text); a member's Links card creates a
// named link, leads to the referrals made through it (their sub-id shown) and deletes it; a viewer reads
// these pages without their write controls. axe-core on each page; screenshots under test-results/dashboard/.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { demoLoginLink, type LocalRuntime } from '../../infra/local/start';
import { startTestRuntime } from '../support/runtime';
import { REJECT_APPROVED } from '../../shared/domain/applications';
import { expectNoAxeViolations, launchChromium } from '../support/browser';
import { pollUntil } from '../support/fixtures';

const SHOTS = join(__dirname, '..', '..', 'test-results', 'dashboard');
const dataDir = mkdtempSync(join(tmpdir(), 'refloop-dashboard-affiliates-'));
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

/** The first link matching `pattern` in the newest .eml to `to` written after `since` (ms); quoted-printable undone. */
function linkMailed(to: string, since: number, pattern: RegExp): Promise<string> {
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
      for (const m of fresh) {
        const text = m.text.replace(/=\r?\n/g, '').replace(/=3D/gi, '=');
        const match = text.match(pattern);
        if (match) return match[0];
      }
      return null;
    },
    { timeoutMs: 30_000 },
  );
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

async function open(path: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${runtime.url}${path}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 20_000 });
  await idle(page);
}

async function toast(text: string | RegExp): Promise<void> {
  await page.getByRole('status').filter({ hasText: text }).first().waitFor({ timeout: 15_000 });
}

/** The account's slug, set once through the API when no earlier test set one. */
async function accountSlug(): Promise<string> {
  const account = await api('GET', '/v1/account/');
  if (account.body.slug) return account.body.slug as string;
  const patched = await api('PATCH', '/v1/account/', { slug: `acme-${tag}` });
  expect(patched.status).toBe(200);
  return patched.body.slug as string;
}

/** A campaign open to applications, made through the API. */
async function openCampaign(name: string, approval: 'auto' | 'manual'): Promise<{ id: string; slug: string }> {
  const created = await api('POST', '/v1/campaigns/', {
    name,
    slug: `${approval}-${tag}`,
    allows_commission: true,
    commission_amount: '5.00',
    commission_currency: 'USD',
    signup: {
      enabled: true,
      approval,
      terms_url: null,
      questions: [{ id: 'channel', label: 'Where do you publish?', type: 'url', required: true, options: null }],
    },
  });
  expect(created.status).toBe(201);
  return { id: created.body.id as string, slug: created.body.slug as string };
}

/**
 * An outsider applies on the public endpoint, opens the confirmation link from the outbox in their own
 * browser and presses its button; answers the application once it exists.
 */
async function applyAndConfirm(
  campaign: { id: string; slug: string },
  email: string,
  name: string,
): Promise<{ id: string; status: string }> {
  const slug = await accountSlug();
  const since = Date.now();
  const res = await fetch(`${runtime.url}/join/v1/${slug}/${campaign.slug}/applications/`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, name, country: 'DE', answers: { channel: 'https://video.example/@casey' }, accepted_terms: true }),
  });
  expect(res.status).toBe(202);
  const link = await linkMailed(email, since, /https?:\/\/[^\s"<>]+\/join\/confirm\/[A-Za-z0-9_-]+\/?/);
  const applicant = await browser.newContext();
  try {
    const p = await applicant.newPage();
    await p.goto(link);
    await p.locator('form button').first().click();
    await p.waitForLoadState('load');
  } finally {
    await applicant.close();
  }
  return pollUntil(
    async () => {
      const list = await api('GET', `/v1/applications/?campaign=${encodeURIComponent(campaign.id)}&page_size=50`);
      const found = (list.body?.results ?? []).find((a: { email: string }) => a.email === email);
      return found ? { id: found.id as string, status: found.status as string } : null;
    },
    { timeoutMs: 30_000 },
  );
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  runtime = await startTestRuntime(dataDir, 'refloop-dashboard-affiliates');
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: runtime.url });
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

describe('affiliate programmes in the dashboard', () => {
  it('Settings > Affiliate programme saves the slug, attribution, tax details, emails and theme; the preview follows the colours', async () => {
    await open('/app/settings', 'Settings');
    const section = page.getByRole('region', { name: 'Affiliate programme' });
    await section.getByLabel('Account slug').waitFor({ timeout: 15_000 });
    await section.getByLabel('Account slug').fill(`acme-${tag}`);
    await section.getByLabel('Model').selectOption('last_click');
    await section.getByLabel('Window (days)').fill('30');
    await section.getByRole('switch', { name: 'Require tax details before payouts' }).check();
    await section.getByRole('switch', { name: 'Email affiliates about each new referral' }).check();
    await section.getByLabel('Accent (buttons, links)').fill('#0f766e');
    await section.getByLabel('Corner radius (px)').fill('12');
    // The preview takes the colour as it is chosen, before anything is saved.
    const background = await section
      .locator('.theme-preview-button')
      .evaluate(
        (el) =>
          (globalThis as unknown as { getComputedStyle(e: unknown): { backgroundColor: string } }).getComputedStyle(el).backgroundColor,
      );
    expect(background).toBe('rgb(15, 118, 110)');
    await expectNoAxeViolations(page, 'settings-programme');
    await section.getByRole('button', { name: 'Save programme settings' }).click();
    await toast('Affiliate programme settings saved.');
    await page.screenshot({ path: join(SHOTS, 'settings-programme.png'), fullPage: true });

    const account = (await api('GET', '/v1/account/')).body;
    expect({
      slug: account.slug,
      attribution_model: account.attribution_model,
      attribution_days: account.attribution_days,
      tax_details_required: account.tax_details_required,
      affiliate_emails: account.affiliate_emails,
      accent: account.theme?.accent,
      radius: account.theme?.radius,
    }).toEqual({
      slug: `acme-${tag}`,
      attribution_model: 'last_click',
      attribution_days: 30,
      tax_details_required: true,
      affiliate_emails: { new_referral: true, monthly_summary: false },
      accent: '#0f766e',
      radius: '12px',
    });

    // A wrong slug comes back as the API's error beside the field, and nothing changes.
    await section.getByLabel('Account slug').fill('Not A Slug!');
    await section.getByRole('button', { name: 'Save programme settings' }).click();
    await section.locator('[aria-invalid="true"]').first().waitFor({ timeout: 15_000 });
    expect((await api('GET', '/v1/account/')).body.slug).toBe(`acme-${tag}`);
  }, 90_000);

  it("the campaign form's Sign-up page section saves: opened, approval, terms, slug and questions added, reordered and removed", async () => {
    const created = await api('POST', '/v1/campaigns/', { name: `Creators ${tag}`, allows_commission: true, commission_amount: '5.00' });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await open(`/app/campaigns/${id}`, `Creators ${tag}`);
    const signup = page.getByRole('group', { name: 'Sign-up page' });
    await signup.waitFor({ timeout: 15_000 });
    await signup.getByLabel('Open the sign-up page').check();
    await signup.getByLabel('Applicants are approved').selectOption('auto');
    await signup.getByLabel(/Terms address/).fill('https://example.com/affiliate-terms');
    await signup.getByLabel(/Page address \(slug\)/).fill(`creators-${tag}`);

    await signup.getByRole('button', { name: 'Add a question' }).click();
    await signup.getByLabel('Question 1: label').fill('Where do you publish?');
    await signup.getByLabel('Question 1 is required').check();
    await signup.getByRole('button', { name: 'Add a question' }).click();
    await signup.getByLabel('Question 2: label').fill('Audience size');
    await signup.getByLabel('Question 2: type').selectOption('choice');
    await signup.getByLabel('Question 2: options, one per line').fill('Under 1,000\n1,000 to 10,000\nOver 10,000');
    await signup.getByRole('button', { name: 'Add a question' }).click();
    await signup.getByLabel('Question 3: label').fill('Remove me');
    await signup.getByRole('button', { name: 'Remove question 3' }).click();
    await signup.getByRole('button', { name: 'Move question 2 up' }).click();
    expect(await signup.getByLabel('Question 1: label').inputValue()).toBe('Audience size');
    await expectNoAxeViolations(page, 'campaign-signup');

    await page.getByRole('button', { name: 'Save changes' }).click();
    await toast(`Campaign Creators ${tag} saved.`);
    const saved = (await api('GET', `/v1/campaigns/${id}/`)).body;
    expect({ slug: saved.slug, signup: saved.signup }).toEqual({
      slug: `creators-${tag}`,
      signup: {
        enabled: true,
        approval: 'auto',
        terms_url: 'https://example.com/affiliate-terms',
        questions: [
          {
            id: 'audience_size',
            label: 'Audience size',
            type: 'choice',
            required: false,
            options: ['Under 1,000', '1,000 to 10,000', 'Over 10,000'],
          },
          { id: 'where_do_you_publish', label: 'Where do you publish?', type: 'text', required: true, options: null },
        ],
      },
    });
    // Once open, the page's public address is there to copy and open.
    const address = `${runtime.url}/join/${await accountSlug()}/creators-${tag}/`;
    await signup.getByLabel('Public sign-up page').waitFor({ timeout: 15_000 });
    expect(await signup.getByLabel('Public sign-up page').inputValue()).toBe(address);
    expect(await signup.getByRole('link', { name: 'Open' }).getAttribute('href')).toBe(address);
    // The open campaign's page leads to its applications.
    expect(await page.locator('.page-actions').getByRole('link', { name: 'Applications' }).getAttribute('href')).toBe(
      `/app/applications?campaign=${id}`,
    );
    await page.screenshot({ path: join(SHOTS, 'campaign-signup.png'), fullPage: true });
  }, 90_000);

  let approvedMember: string;
  let manual: { id: string; slug: string };

  it('manual approval: a confirmed application waits on the Applications page (navigation count, overview tile), is approved there, and its member exists', async () => {
    const campaign = await openCampaign(`Manual ${tag}`, 'manual');
    manual = campaign;
    const email = `casey-${tag}@creators.example`;
    const application = await applyAndConfirm(campaign, email, 'Casey Creator');
    expect(application.status).toBe('pending');

    await open('/app/', 'Overview');
    const tile = page.locator('li[data-pending-applications]');
    await tile.waitFor({ timeout: 15_000 });
    expect(await tile.getAttribute('data-pending-applications')).toBe('1');
    await idle(page);
    await expectNoAxeViolations(page, 'overview-pending-applications');
    await page.screenshot({ path: join(SHOTS, 'overview-pending-applications.png') });
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.locator('.nav-count').getAttribute('data-pending-applications')).toBe('1');
    await nav.getByRole('link', { name: /^Applications\W*1 pending\)?$/ }).waitFor({ timeout: 5_000 });
    await tile.getByRole('link', { name: 'Review applications' }).click();
    await page.getByRole('heading', { level: 1, name: 'Applications' }).waitFor({ timeout: 15_000 });
    await idle(page);
    expect(await page.getByRole('navigation', { name: 'Application status' }).locator('[aria-current="true"]').innerText()).toBe('Pending');
    expect(await page.locator('.pager-count').innerText()).toBe('1 application');
    await expectNoAxeViolations(page, 'applications');
    await page.screenshot({ path: join(SHOTS, 'applications.png'), fullPage: true });

    await page.getByRole('link', { name: 'Casey Creator' }).click();
    await page.getByRole('heading', { level: 1, name: 'Casey Creator' }).waitFor({ timeout: 15_000 });
    await idle(page);
    const answers = page.getByRole('region', { name: 'Answers' });
    await answers.getByText('Where do you publish?').waitFor({ timeout: 15_000 });
    expect(await answers.getByRole('link', { name: 'https://video.example/@casey' }).getAttribute('rel')).toContain('noopener');
    const applicant = await page.getByRole('region', { name: 'Applicant' }).innerText();
    expect(applicant).toContain(email);
    expect(applicant).toContain('(DE)');
    await expectNoAxeViolations(page, 'application');

    await page.getByRole('button', { name: 'Approve', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByRole('button', { name: 'Approve' }).click();
    await toast(/Casey Creator approved/);
    await page.getByRole('link', { name: 'Open member' }).waitFor({ timeout: 15_000 });
    await page.screenshot({ path: join(SHOTS, 'application-approved.png'), fullPage: true });

    const decided = (await api('GET', `/v1/applications/${application.id}/`)).body;
    expect(decided.status).toBe('approved');
    expect(typeof decided.member_id).toBe('string');
    const member = await api('GET', `/v1/members/${decided.member_id}/`);
    expect(member.status).toBe(200);
    expect({ email: member.body.email, source: member.body.source, first_name: member.body.first_name }).toEqual({
      email,
      source: 'signup',
      first_name: 'Casey',
    });
    approvedMember = decided.member_id as string;

    await page.getByRole('link', { name: 'Open member' }).click();
    await page.getByRole('region', { name: 'Details' }).getByText('Sign-up page (approved application)').waitFor({ timeout: 15_000 });
    // Nothing is pending any more: the navigation's count is gone.
    await pollUntil(async () => ((await page.locator('.nav-count').count()) === 0 ? true : null), { timeoutMs: 15_000 });
  }, 120_000);

  it('a rejection keeps its internal reason; a decision taken meanwhile elsewhere shows the API answer (409)', async () => {
    const dana = await applyAndConfirm(manual, `dana-${tag}@creators.example`, 'Dana Doe');
    const eli = await applyAndConfirm(manual, `eli-${tag}@creators.example`, 'Eli Example');

    await open(`/app/applications/${dana.id}`, 'Dana Doe');
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel(/Internal reason/).fill('Not a fit for this programme');
    await dialog.getByRole('button', { name: 'Reject' }).click();
    await toast(/application rejected/);
    await page.getByRole('region', { name: 'Decision' }).getByText('Not a fit for this programme').waitFor({ timeout: 15_000 });
    const rejected = (await api('GET', `/v1/applications/${dana.id}/`)).body;
    expect({ status: rejected.status, reason: rejected.reason, member_id: rejected.member_id }).toEqual({
      status: 'rejected',
      reason: 'Not a fit for this programme',
      member_id: null,
    });

    // Someone approves Eli through the API while the page still offers Reject: the API's 409 is shown, and
    // the page shows the application as it now is.
    await open(`/app/applications/${eli.id}`, 'Eli Example');
    expect((await api('POST', `/v1/applications/${eli.id}/approve/`, {})).status).toBe(200);
    await page.getByRole('button', { name: 'Reject', exact: true }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Reject' }).click();
    await toast(REJECT_APPROVED);
    await page.getByRole('link', { name: 'Open member' }).waitFor({ timeout: 15_000 });

    // The tabs: the rejected one is under Rejected.
    await open('/app/applications?status=rejected', 'Applications');
    await page.getByRole('link', { name: 'Dana Doe' }).waitFor({ timeout: 15_000 });
    expect(await page.locator('.pager-count').innerText()).toBe('1 application');
  }, 120_000);

  it('Email previews: each template shows its subject, its HTML in a sandboxed frame, and its text', async () => {
    const templates = (await api('GET', '/v1/email-templates/')).body.results as { name: string; label: string; subject: string }[];
    expect(templates.length).toBeGreaterThan(1);
    await open('/app/settings/emails', 'Email previews');
    const first = templates[0] as { name: string; label: string; subject: string };
    expect(await page.locator('[data-email-subject]').innerText()).toBe(first.subject);
    const frame = page.locator('iframe.email-frame');
    expect(await frame.getAttribute('sandbox')).toBe('');
    const frameText = await page.frameLocator('iframe.email-frame').locator('body').innerText();
    expect(frameText.trim().length).toBeGreaterThan(10);
    await expectNoAxeViolations(page, 'email-previews');
    await page.screenshot({ path: join(SHOTS, 'email-previews.png'), fullPage: true });

    const second = templates[1] as { name: string; label: string; subject: string };
    await page.getByLabel('Email', { exact: true }).selectOption(second.name);
    await page.getByRole('heading', { level: 2, name: second.label }).waitFor({ timeout: 15_000 });
    expect(await page.locator('[data-email-subject]').innerText()).toBe(second.subject);
    await page.locator('label.segment', { hasText: 'Text' }).click();
    expect((await page.locator('[data-email-text]').innerText()).trim().length).toBeGreaterThan(10);
  }, 60_000);

  it("a member's Links card creates a named link with a deep path, lists the referrals made through it, and deletes it", async () => {
    expect((await api('PATCH', '/v1/account/', { referral_url: 'https://app.example.com/' })).status).toBe(200);
    const member = (await api('GET', `/v1/members/${approvedMember}/`)).body;
    await open(`/app/members/${approvedMember}`, member.identifier as string);
    const links = page.getByRole('region', { name: 'Links' });
    await links.getByLabel(/Sub-id/).waitFor({ timeout: 15_000 });
    await links.getByLabel(/Sub-id/).fill('youtube');
    await links.getByLabel(/Page/).fill('/pricing');
    await links.getByRole('button', { name: 'Create link' }).click();
    await toast('Link youtube created.');
    const row = links.getByRole('row', { name: /youtube/ });
    expect(await row.innerText()).toContain(`https://app.example.com/pricing?via=${member.code}&sub=youtube`);
    await expectNoAxeViolations(page, 'member-links');
    const listed = (await api('GET', `/v1/members/${approvedMember}/links/`)).body;
    expect(listed.results.map((l: { slug: string }) => l.slug)).toEqual(['youtube']);

    // A referral through the link (and one without): the link's Referrals shows only its own, with its sub-id.
    for (const [user, sub] of [
      [`via-youtube-${tag}`, 'youtube'],
      [`direct-${tag}`, undefined],
    ] as const) {
      const made = await api('POST', '/v1/referrals/', { user_identifier: user, member_code: member.code, ...(sub ? { sub } : {}) });
      expect(made.status).toBe(200);
    }
    await links.getByRole('link', { name: 'Referrals through link youtube' }).click();
    await page.getByRole('heading', { level: 1, name: 'Referrals' }).waitFor({ timeout: 15_000 });
    await idle(page);
    const referrals = page.getByRole('region', { name: 'Referrals by one member' });
    await referrals.getByRole('link', { name: `via-youtube-${tag}` }).waitFor({ timeout: 15_000 });
    expect(await referrals.locator('.pager-count').innerText()).toBe('1 referral');
    expect(await referrals.getByRole('row', { name: new RegExp(`via-youtube-${tag}`) }).innerText()).toContain('Sub-id youtube');
    expect(await referrals.getByRole('link', { name: 'Export CSV of Referrals' }).getAttribute('href')).toContain('sub=youtube');
    await page.goBack();
    await links.getByRole('button', { name: 'Delete link youtube' }).waitFor({ timeout: 15_000 });

    await links.getByRole('button', { name: 'Delete link youtube' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete link' }).click();
    await toast('Link youtube deleted.');
    expect((await api('GET', `/v1/members/${approvedMember}/links/`)).body.results).toEqual([]);
  }, 60_000);
  it('a viewer reads the programme pages without their write controls', async () => {
    const pending = await applyAndConfirm(manual, `gil-${tag}@creators.example`, 'Gil Pending');
    // The owner invites a viewer (the team API with the owner's session); the viewer logs in from the outbox.
    const cookie = (await page.context().cookies()).find((c) => c.name === 'refloop_session');
    const email = `vera-${tag}@team.example`;
    const since = Date.now();
    const invited = await fetch(`${runtime.url}/v1/team/`, {
      method: 'POST',
      headers: { cookie: `refloop_session=${cookie?.value}`, origin: runtime.url, 'content-type': 'application/json' },
      body: JSON.stringify({ email, role: 'viewer' }),
    });
    expect(invited.status).toBe(201);
    const link = await linkMailed(email, since, /https?:\/\/\S+\/app\/login#token=[A-Za-z0-9_-]{43}/);
    const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
    try {
      const viewer = await context.newPage();
      await viewer.goto(link);
      await viewer.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: 20_000 });

      await viewer.goto(`${runtime.url}/app/applications/${pending.id}`);
      await viewer.getByRole('heading', { level: 1, name: 'Gil Pending' }).waitFor({ timeout: 15_000 });
      await viewer.getByText('An owner or admin decides on applications.').waitFor({ timeout: 15_000 });
      expect(await viewer.getByRole('button', { name: /^(Approve|Reject)$/ }).count()).toBe(0);

      await viewer.goto(`${runtime.url}/app/members/${approvedMember}`);
      await viewer
        .getByRole('region', { name: 'Links' })
        .getByText(/No named links yet/)
        .waitFor({ timeout: 15_000 });
      expect(await viewer.getByRole('button', { name: 'Create link' }).count()).toBe(0);

      await viewer.goto(`${runtime.url}/app/settings`);
      const programme = viewer.getByRole('region', { name: 'Affiliate programme' });
      await programme.getByText(`acme-${tag}`).waitFor({ timeout: 15_000 });
      expect(await programme.getByRole('button', { name: 'Save programme settings' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  }, 90_000);
});
