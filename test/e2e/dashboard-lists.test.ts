// The dashboard's lists in real Chromium (Debian's, through playwright-core) against npm start's stack
// (startLocal), issue 23 #7, #11, #13, #14:
// - "Add a member" starts on "No campaign" (it pre-selected the newest campaign), and is back on it after a send;
// - the members and referrals pages search (exact email, identifier or code; referred user's identifier);
// - the payout batches page lists batches, a paid one with its date and reference; a due payout shows the
//   address it will pay;
// - lists name members and campaigns instead of showing raw ids; rewards filter by member and type together;
// - every list page with an export has an "Export CSV" link that downloads the list with its filters.
// axe-core checks the pages it opens (no serious or critical violation).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium, expectNoAxeViolations } from '../support/browser';
import { demoLoginLink, type LocalRuntime } from '../../infra/local/start';
import { startTestRuntime } from '../support/runtime';
import { approveReward } from '../../shared/flows/lifecycle';
import { createBatch, markBatchPaid } from '../../shared/flows/payouts';
import { getItem } from '../../shared/store/ops';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { keys } from '../../shared/store/table';

const dataDir = mkdtempSync(join(tmpdir(), 'refloop-dashboard-lists-'));
let runtime: LocalRuntime;
let browser: Browser;
let page: Page;

async function api(method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(runtime.url + path, {
    method,
    headers: { authorization: `Bearer ${runtime.demo.apiKey}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

const axe = expectNoAxeViolations;

/** Opens a dashboard path and waits for its heading and for every list to have loaded. */
async function visit(path: string, heading: string | RegExp): Promise<void> {
  await page.goto(`${runtime.url}/app/${path}`);
  await page.getByRole('heading', { level: 1, name: heading }).waitFor({ timeout: 15_000 });
  await settled();
}

async function settled(): Promise<void> {
  await page.waitForFunction(
    () => {
      const d = (globalThis as unknown as { document: { querySelectorAll(s: string): { length: number } } }).document;
      return d.querySelectorAll('[aria-busy="true"]').length === 0 && d.querySelectorAll('.spinner').length === 0;
    },
    undefined,
    { timeout: 15_000 },
  );
}

/** The rows of the page's first table, as text per cell. */
async function rows(caption: string): Promise<string[][]> {
  const table = page.locator('table', { has: page.locator('caption', { hasText: caption }) });
  await table.waitFor({ timeout: 15_000 });
  return table
    .locator('tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [...(tr as unknown as { cells: { textContent: string }[] }).cells].map((c) => c.textContent.trim())),
    );
}

/** The "Export CSV" link's target fetched with the page's session: status, type and first line. */
async function exported(label: string): Promise<{ href: string; status: number; type: string; header: string }> {
  const link = page.getByRole('link', { name: `Export CSV of ${label}` });
  await link.waitFor({ timeout: 15_000 });
  const href = (await link.getAttribute('href')) ?? '';
  const got = await page.evaluate(async (url) => {
    const res = await fetch(url, { credentials: 'same-origin' });
    return { status: res.status, type: res.headers.get('content-type') ?? '', text: await res.text() };
  }, href);
  return { href, status: got.status, type: got.type, header: got.text.split('\r\n')[0] ?? '' };
}

let campaignA: { id: string; name: string };
let campaignB: { id: string; name: string };
let payer: { id: string; identifier: string; code: string };

beforeAll(async () => {
  runtime = await startTestRuntime(dataDir, 'refloop-dashboard-lists');
  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 }, acceptDownloads: true });
  page = await context.newPage();
  const { url } = await demoLoginLink(runtime);
  await page.goto(url);
  await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor({ timeout: 20_000 });

  // Two campaigns (the newer is the one the form used to pre-select), a member with a payout email and an
  // approved commission in campaign A (a due payout), credits too, and one paid batch.
  campaignA = await api('POST', '/v1/campaigns/', {
    name: 'Spring Friends',
    allows_commission: true,
    commission_amount: '3.00',
    allows_credit: true,
    credit_amount: '1.00',
    credit_currency: 'USD',
    hold_days: 0,
  });
  campaignB = await api('POST', '/v1/campaigns/', { name: 'Newest Campaign' });
  payer = await api('POST', '/v1/members/', {
    identifier: 'payer-1',
    email: 'payer@example.com',
    first_name: 'Paula',
    last_name: 'Payer',
    campaign: { id: campaignA.id },
    payout_email: 'paula@pay.example.com',
  });
  const due = await api('POST', '/v1/referrals/', { user_identifier: 'Referred-User-1', member_code: payer.code });
  const stored = toReferral(await getItem(keys.referral(runtime.demo.accountId, due.id)))!;
  const recorded = await recordRewards(
    runtime.demo.accountId,
    stored,
    [
      { payment_id: 1, type: 'commission', amount: 300, currency: 'USD' },
      { payment_id: 2, type: 'credit', amount: 100, currency: 'USD' },
    ],
    false,
    true,
  );
  await approveReward(runtime.demo.accountId, recorded.rewards[0]!.id);
  // A second member whose approved commission goes into a batch, then paid with a reference.
  const paid = await api('POST', '/v1/members/', {
    identifier: 'paid-1',
    email: 'paid@example.com',
    campaign: { id: campaignA.id },
    payout_email: 'paid@pay.example.com',
  });
  const ref2 = await api('POST', '/v1/referrals/', { user_identifier: 'referred-2', member_code: paid.code });
  const stored2 = toReferral(await getItem(keys.referral(runtime.demo.accountId, ref2.id)))!;
  const rec2 = await recordRewards(
    runtime.demo.accountId,
    stored2,
    [{ payment_id: 1, type: 'commission', amount: 700, currency: 'USD' }],
    false,
    true,
  );
  const approved2 = await approveReward(runtime.demo.accountId, rec2.rewards[0]!.id);
  const batch = await createBatch(runtime.demo.accountId, { format: 'wise', currency: 'USD', payout_ids: [approved2.payout_id!] });
  await markBatchPaid(runtime.demo.accountId, batch.id, { paidAt: 1767225600, reference: 'WISE-REF-42' });
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await runtime?.stop();
  rmSync(dataDir, { recursive: true, force: true });
});

describe('Members', () => {
  it('"Add a member" starts on "No campaign" and returns to it after each send; the member is in no campaign', async () => {
    await visit('members', 'Members');
    const form = page.locator('#new-member');
    const campaign = form.getByLabel('Campaign', { exact: true });
    // The options are loaded (the newest campaign is there) and "No campaign" is chosen.
    await form.locator('option', { hasText: campaignB.name }).waitFor({ state: 'attached', timeout: 15_000 });
    expect(await campaign.inputValue()).toBe('');
    for (const name of ['nocamp-1', 'nocamp-2']) {
      await form.getByLabel('Identifier', { exact: true }).fill(name);
      await form.getByLabel('Email', { exact: true }).fill(`${name}@example.com`);
      await form.getByRole('button', { name: 'Create member' }).click();
      await page.getByText(`Member ${name} created`).first().waitFor({ timeout: 15_000 });
      expect(await campaign.inputValue()).toBe('');
    }
    const found = await api('GET', '/v1/members/?search=nocamp-2');
    expect(found.results).toEqual([expect.objectContaining({ identifier: 'nocamp-2', campaign: null })]);
    expect((await api('GET', '/v1/members/?search=nocamp-1')).results[0].campaign).toBeNull();
  }, 90_000);

  it('the search box finds a member by exact email in any case, and Clear lists everyone again', async () => {
    await visit('members', 'Members');
    const all = await rows('Members');
    expect(all.length).toBeGreaterThanOrEqual(4);
    await page.getByRole('searchbox', { name: 'Find' }).fill('PAYER@example.com');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/search=PAYER%40example.com/, { timeout: 15_000 });
    await settled();
    const found = await rows('Members');
    expect(found).toHaveLength(1);
    expect(found[0]![0]).toContain('payer-1');
    // The campaign is named, not shown as an id.
    expect(found[0]).toContain(campaignA.name);
    await expect(page.locator('.pager-count').first().textContent()).resolves.toContain('1 member');
    // A part of an address finds nothing, and says so.
    await page.getByRole('searchbox', { name: 'Find' }).fill('payer');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Search matches whole values').waitFor({ timeout: 15_000 });
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForURL((u) => !u.search.includes('search='), { timeout: 15_000 });
    await settled();
    expect((await rows('Members')).length).toBe(all.length);
    await axe(page, 'members');
    const csv = await exported('Members');
    expect(csv).toMatchObject({
      status: 200,
      type: expect.stringContaining('text/csv'),
      header: expect.stringMatching(/^id,identifier,email/),
    });
  }, 90_000);
});

describe("A member's page", () => {
  it("exports the member's referrals, rewards and payouts", async () => {
    await visit(`members/${payer.id}`, 'payer-1');
    for (const [label, header] of [
      ['Referrals by payer-1', /^id,member_id,user_identifier/],
      ['Rewards of payer-1', /^id,type,status/],
      ['Payouts of payer-1', /^id,member_id,status/],
    ] as const) {
      const csv = await exported(label);
      expect(csv.href).toContain(`member=${payer.id}`);
      expect(csv).toMatchObject({ status: 200, header: expect.stringMatching(header) });
    }
    await axe(page, 'member');
  }, 90_000);
});

describe('Referrals', () => {
  it('the search box finds the referral of one referred user; members and campaigns are named', async () => {
    await visit('referrals', 'Referrals');
    await page.getByRole('searchbox', { name: 'Find' }).fill('Referred-User-1');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.waitForURL(/search=Referred-User-1/, { timeout: 15_000 });
    await settled();
    const found = await rows('Referrals');
    expect(found).toHaveLength(1);
    expect(found[0]![0]).toBe('Referred-User-1');
    await page.locator('table').getByText('payer-1').first().waitFor({ timeout: 15_000 });
    expect((await rows('Referrals'))[0]!.join(' ')).toContain('Paula Payer');
    expect((await rows('Referrals'))[0]).toContain(campaignA.name);
    await axe(page, 'referrals');
    await page.getByRole('button', { name: 'Clear' }).click();
    await page.waitForURL((u) => !u.search.includes('search='), { timeout: 15_000 });
    await settled();
    expect((await rows('Referrals')).length).toBe(2);
    expect(await exported('Referrals')).toMatchObject({ status: 200, header: expect.stringMatching(/^id,member_id,user_identifier/) });
  }, 90_000);
});

describe('Rewards', () => {
  it('filters by member and type together, names the member and the campaign, and exports with the filters', async () => {
    await visit(`rewards?member=${payer.id}&type=commission`, 'Rewards');
    const listed = await rows('Rewards');
    expect(listed).toHaveLength(1);
    await page.locator('table').getByText('payer-1').first().waitFor({ timeout: 15_000 });
    const row = (await rows('Rewards'))[0]!;
    expect(row).toContain(campaignA.name);
    expect(row.join(' ')).not.toContain(payer.id);
    await axe(page, 'rewards');
    const csv = await exported('Rewards');
    expect(csv.href).toContain(`member=${payer.id}`);
    expect(csv.href).toContain('type=commission');
    expect(csv).toMatchObject({ status: 200, header: expect.stringMatching(/^id,type,status/) });
  }, 90_000);
});

describe('Payouts and batches', () => {
  it('a due payout shows the address it will pay', async () => {
    await visit('payouts?status=due', 'Payouts');
    const listed = await rows('Payouts');
    expect(listed).toHaveLength(1);
    await page.locator('[data-payout-email="paula@pay.example.com"]').waitFor({ timeout: 15_000 });
    expect((await rows('Payouts'))[0]!.join(' ')).toContain('Pays to paula@pay.example.com');
    expect(await exported('Payouts')).toMatchObject({ status: 200, header: expect.stringMatching(/^id,member_id,status/) });
  }, 90_000);

  it('the batches page lists the paid batch with its payment date and reference; its page shows them too', async () => {
    await visit('payouts', 'Payouts');
    await page.getByRole('link', { name: 'Payout batches' }).click();
    await page.getByRole('heading', { level: 1, name: 'Payout batches' }).waitFor({ timeout: 15_000 });
    await settled();
    const listed = await rows('Payout batches');
    expect(listed).toHaveLength(1);
    expect(listed[0]!.join(' ')).toContain('WISE-REF-42');
    expect(listed[0]!.join(' ')).toMatch(/Paid/i);
    expect(listed[0]!.join(' ')).toContain('7.00');
    await axe(page, 'payout batches');
    const csv = await exported('Payout batches');
    expect(csv).toMatchObject({ status: 200, header: 'id,status,format,currency,amount,payout_count,created_at,paid_at,reference' });
    await page.locator('table').getByRole('link').first().click();
    await page.getByRole('heading', { level: 1, name: /^Batch / }).waitFor({ timeout: 15_000 });
    await settled();
    await page.locator('.details').getByText('WISE-REF-42').waitFor({ timeout: 15_000 });
    expect(await page.locator('.details').textContent()).toContain('Reference');
  }, 90_000);

  it('subscriptions export too', async () => {
    await visit('subscriptions', 'Subscriptions');
    // No subscription yet: the empty state, no table and no export; the link appears with rows.
    expect(await page.getByRole('link', { name: 'Export CSV of Subscriptions' }).count()).toBe(0);
    const res = await page.evaluate(async () => (await fetch('/v1/exports/subscriptions.csv/', { credentials: 'same-origin' })).status);
    expect(res).toBe(200);
  }, 60_000);
});
