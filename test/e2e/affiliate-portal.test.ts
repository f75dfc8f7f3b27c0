// The affiliate's hosted portal in real Chromium (Debian's, through playwright-core) against the local
// gateway over HTTP (docs/portal.md "Affiliate login"): the login view at /portal/<slug>/login/ asks for
// the email (the same answer whoever it is); the emailed link (issued here with affiliateLoginUrl, as the
// email worker does) shows one button, and loading it logs nobody in; the button sets the portal cookie
// and opens the portal, which survives a reload; the affiliate makes a named link and cuts the chart by
// it, and gives the tax details the account requires; log out ends the session, and the portal's address
// then shows the login view. axe-core checks the
// login view (both states) and the portal; screenshots go to test-results/affiliate-portal/ (gitignored).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Browser } from 'playwright-core';
import { startGateway, type Gateway } from '../../infra/local/gateway';
import { tokenHash } from '../../shared/domain/team';
import { affiliateLoginUrl } from '../../shared/flows/affiliate-login';
import { db, tableName } from '../../shared/store/client';
import { getItem } from '../../shared/store/ops';
import { portalKeys } from '../../shared/store/portal';
import { keys, programmeKeys } from '../../shared/store/table';
import { expectNoAxeViolations, launchChromium, portalSettled } from '../support/browser';
import { newAccount } from '../support/fixtures';

const SHOTS = join(__dirname, '..', '..', 'test-results', 'affiliate-portal');

let gateway: Gateway;
let browser: Browser;
let account: { accountId: string; apiKey: string };
let slug: string;
let ada: { id: string; code: string; email: string };

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

/** A fresh login link, on the gateway's origin (what the email carries). */
async function loginLink(): Promise<string> {
  const url = await affiliateLoginUrl(account.accountId, ada.id);
  if (!url) throw new Error('no login link');
  const parsed = new URL(url);
  return `${gateway.url}${parsed.pathname}${parsed.hash}`;
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  gateway = await startGateway({ port: 0 });
  account = await newAccount();
  slug = `studio-${Math.random().toString(36).slice(2, 8)}`;
  // The account's slug (its item and the global lookup) and theme, as PATCH /v1/account/ stores them.
  await db().send(
    new UpdateCommand({
      TableName: tableName(),
      Key: keys.account(account.accountId),
      UpdateExpression: 'SET slug = :s, theme = :t, tax_details_required = :tax',
      ExpressionAttributeValues: { ':s': slug, ':t': { accent: '#0b6e4f', radius: '12px' }, ':tax': true },
    }),
  );
  await db().send(
    new PutCommand({
      TableName: tableName(),
      Item: { ...programmeKeys.accountSlug(slug), type: 'AccountSlug', account_id: account.accountId },
    }),
  );
  await call('PATCH', '/v1/account/', { referral_url: 'https://studio.example/' });
  const campaign = await call('POST', '/v1/campaigns/', {
    name: 'Partners',
    allows_commission: true,
    commission_type: 'percentage',
    commission_percent: '30.00',
    hold_days: 30,
  });
  ada = await call('POST', '/v1/members/', {
    identifier: 'ada',
    email: 'ada@creators.example',
    first_name: 'Ada',
    campaign: { id: campaign.id },
  });
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await gateway?.close();
});

describe('an affiliate logs in by email link, makes a link and logs out', () => {
  it('the login view asks for the email and answers the same whoever it is (axe clean)', async () => {
    const page = await (await browser.newContext({ viewport: { width: 900, height: 800 } })).newPage();
    await page.goto(`${gateway.url}/portal/${slug}/login/`);
    await page.getByRole('heading', { name: /Log in to the .* partner portal/ }).waitFor({ timeout: 15_000 });
    await expectNoAxeViolations(page, 'login view');
    await page.screenshot({ path: join(SHOTS, 'login.png'), fullPage: true });
    // The account's theme reaches the page (its accent on the primary button).
    const accent = await page.evaluate(() =>
      (globalThis as unknown as { getComputedStyle(e: unknown): { getPropertyValue(n: string): string } })
        .getComputedStyle((globalThis as unknown as { document: { documentElement: unknown } }).document.documentElement)
        .getPropertyValue('--accent')
        .trim(),
    );
    expect(accent.toLowerCase()).toBe('#0b6e4f');

    for (const email of ['ada@creators.example', 'stranger@example.com']) {
      await page.getByRole('textbox', { name: 'Email' }).fill(email);
      await page.getByRole('button', { name: 'Email me a login link' }).click();
      await page.getByTestId('login-sent').waitFor({ timeout: 15_000 });
      expect(await page.getByTestId('login-sent').innerText()).toContain('If this address belongs to a member of the programme');
      await page.getByRole('button', { name: 'Use another address' }).click();
    }
    // An empty address is the form's own error, under the field.
    await page.getByRole('button', { name: 'Email me a login link' }).click();
    await page.getByText('Enter your email address.').waitFor({ timeout: 15_000 });
    await page.context().close();
  });

  it('opening the emailed link logs nobody in until the button; then the portal, a link of their own, and log out', async () => {
    // A scanner (another browser) loads the link: the token stays unused.
    const link = await loginLink();
    const token = new URL(link).hash.replace('#token=', '');
    const scanner = await (await browser.newContext()).newPage();
    await scanner.goto(link);
    await scanner.getByTestId('login-continue').waitFor({ timeout: 15_000 });
    expect(scanner.url()).not.toContain('token=');
    await expectNoAxeViolations(scanner, 'login view with a link');
    await scanner.context().close();
    expect(await getItem(portalKeys.link(tokenHash(token)))).toMatchObject({ type: 'PortalLink', mode: 'cookie' });

    const context = await browser.newContext({ viewport: { width: 1000, height: 900 } });
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole('button', { name: 'Continue to your portal' }).click();
    await page.getByTestId('portal-greeting').waitFor({ timeout: 15_000 });
    expect(new URL(page.url()).pathname).toBe(`/portal/${slug}/`);
    expect(await page.getByTestId('portal-greeting').innerText()).toContain('Ada');
    // The cookie: HttpOnly (the page cannot read it), scoped to /portal/.
    const cookies = await context.cookies(`${gateway.url}/portal/`);
    const portalCookie = cookies.find((c) => c.name === 'refloop_portal');
    expect(portalCookie).toMatchObject({ httpOnly: true, sameSite: 'Strict', path: '/portal/' });
    expect(await page.evaluate(() => (globalThis as unknown as { document: { cookie: string } }).document.cookie)).not.toContain(
      'refloop_portal',
    );
    // The link was used: the same link again is refused.
    expect(await getItem(portalKeys.link(tokenHash(token)))).toBeUndefined();
    await portalSettled(page);

    // A named link to a deep page.
    await page.getByLabel('Name (optional)').fill('youtube');
    await page.getByLabel('Page of the site (optional)').fill('/pricing');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByText('The link “youtube” is ready to share.').waitFor({ timeout: 15_000 });
    const url = await page.getByTestId('link-youtube').inputValue();
    expect(url).toBe(`https://studio.example/pricing?via=${ada.code}&sub=youtube`);
    await page.getByRole('button', { name: 'See its results (youtube)' }).click();
    await page.getByTestId('stats-sub').waitFor({ timeout: 15_000 });
    await portalSettled(page);
    await expectNoAxeViolations(page, 'affiliate portal');
    await page.screenshot({ path: join(SHOTS, 'portal.png'), fullPage: true });

    // Tax details (the account requires them): a wrong date is shown under its field, then saved and shown masked.
    const tax = page.locator('#tax-details');
    await tax.getByLabel('Legal name').fill('Ada Lovelace');
    await tax.getByLabel('Country of residence').selectOption('GB');
    await tax.getByLabel('Address', { exact: true }).fill('12 St James Square, London');
    await tax.getByLabel('Name of the beneficial owner').fill('Ada Lovelace');
    await tax.getByLabel('Country of citizenship').selectOption('GB');
    await tax.getByLabel('Permanent residence address').fill('12 St James Square, London');
    await tax.getByLabel('Foreign tax identification number (optional)').fill('AB123456C');
    await tax.getByLabel('Date of birth').fill('1815-13-10');
    await tax.getByLabel(/I certify that I am the beneficial owner/).check();
    await tax.getByRole('button', { name: 'Save tax details' }).click();
    await tax.getByText('Enter a date as YYYY-MM-DD.').waitFor({ timeout: 15_000 });
    await expectNoAxeViolations(page, 'tax details form with an error');
    await tax.getByLabel('Date of birth').fill('1990-12-10');
    await tax.getByRole('button', { name: 'Save tax details' }).click();
    await page.getByTestId('tax-summary').waitFor({ timeout: 15_000 });
    const summary = await page.getByTestId('tax-summary').innerText();
    expect(summary).toContain('•••••456C');
    expect(summary).not.toContain('AB123456C');

    // A reload keeps the session (the cookie), and the link is listed.
    await page.reload();
    await page.getByTestId('portal-greeting').waitFor({ timeout: 15_000 });
    await page.getByTestId('link-youtube').waitFor({ timeout: 15_000 });

    await page.getByRole('button', { name: 'Log out' }).click();
    await page.getByTestId('portal-login').waitFor({ timeout: 15_000 });
    expect((await context.cookies(`${gateway.url}/portal/`)).find((c) => c.name === 'refloop_portal')).toBeUndefined();
    // The portal's address without a session shows the login view, nothing of Ada's.
    await page.goto(`${gateway.url}/portal/${slug}/`);
    await page.getByTestId('portal-login').waitFor({ timeout: 15_000 });
    expect(new URL(page.url()).pathname).toBe(`/portal/${slug}/login/`);
    expect(await page.locator('body').innerText()).not.toContain(ada.code);
    await expectNoAxeViolations(page, 'login view after log out');
    await context.close();
  });
});
