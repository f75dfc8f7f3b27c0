// Settings -> Team in real Chromium (Debian's, through playwright-core) against npm start's stack
// (startLocal). Two invitations sent in a row, the second without touching the Role field, both make
// viewers: the form returns to its safe default after every send (the field once came back as "Owner").
// And a login link asked for with a forged Host header still points at the configured site.
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../support/browser';
import { demoLoginLink, type LocalRuntime } from '../../infra/local/start';
import { startTestRuntime } from '../support/runtime';
import { pollUntil } from '../support/fixtures';

const dataDir = mkdtempSync(join(tmpdir(), 'refloop-dashboard-team-'));
let runtime: LocalRuntime;
let browser: Browser;
let page: Page;

/** The team as the API lists it, fetched with the page's own session cookie. */
async function teamFromApi(p: Page): Promise<{ email: string; role: string }[]> {
  return p.evaluate(async () => {
    const res = await fetch('/v1/team/', { credentials: 'same-origin' });
    const body = (await res.json()) as { results: { email: string; role: string }[] };
    return body.results.map((m) => ({ email: m.email, role: m.role }));
  });
}

/** The newest .eml in the outbox addressed to `to` written after `since` (ms). */
function mailTo(to: string, since: number): Promise<string> {
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
      return fresh[0]?.text ?? null;
    },
    { timeoutMs: 20_000 },
  );
}

/** A raw HTTP request whose Host header says what the caller wants (fetch would not let a test forge it). */
function rawPost(path: string, host: string, body: unknown): Promise<number> {
  const url = new URL(runtime.url);
  const data = JSON.stringify(body);
  return new Promise((ok, fail) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        path,
        method: 'POST',
        headers: { host, 'x-forwarded-proto': 'https', 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) },
      },
      (res) => {
        res.resume();
        res.once('end', () => ok(res.statusCode ?? 0));
      },
    );
    req.once('error', fail);
    req.end(data);
  });
}

beforeAll(async () => {
  runtime = await startTestRuntime(dataDir, 'refloop-dashboard-team');
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

describe('Settings -> Team', () => {
  it('two invitations in a row, the Role field untouched: both people are viewers (UI and API)', async () => {
    await page.goto(`${runtime.url}/app/settings`);
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor({ timeout: 15_000 });
    const invite = page.locator('form', { has: page.getByRole('heading', { name: 'Invite someone' }) });
    await invite.waitFor({ timeout: 15_000 });
    const role = invite.getByLabel('Role', { exact: true });
    expect(await role.inputValue()).toBe('viewer');

    const first = `first-${Date.now()}@team.example`;
    const second = `second-${Date.now()}@team.example`;
    for (const email of [first, second]) {
      await invite.getByLabel('Email', { exact: true }).fill(email);
      await invite.getByRole('button', { name: 'Send invitation' }).click();
      await page.getByText(`Invitation sent to ${email}`).first().waitFor({ timeout: 15_000 });
      await page.getByRole('combobox', { name: `Role of ${email}` }).waitFor({ timeout: 15_000 });
      // After each send the form is back to its safe default, and the email field is empty.
      expect(await role.inputValue()).toBe('viewer');
      expect(await invite.getByLabel('Email', { exact: true }).inputValue()).toBe('');
    }

    for (const email of [first, second]) expect(await page.getByRole('combobox', { name: `Role of ${email}` }).inputValue()).toBe('viewer');
    const team = await teamFromApi(page);
    expect(team.filter((m) => m.email === first || m.email === second).sort((a, b) => a.email.localeCompare(b.email))).toEqual([
      { email: first, role: 'viewer' },
      { email: second, role: 'viewer' },
    ]);
    expect(team.filter((m) => m.role === 'owner').map((m) => m.email)).toEqual([runtime.demo.ownerEmail]);
  }, 90_000);

  it('a login link asked for with a forged Host header points at the configured site, not the forged one', async () => {
    const since = Date.now();
    expect(await rawPost('/auth/login-links/', 'evil.example', { email: runtime.demo.ownerEmail })).toBe(202);
    const mail = await mailTo(runtime.demo.ownerEmail, since);
    const link = mail.match(/https?:\/\/[^\s"<>]+\/app\/login#token=[A-Za-z0-9_-]{43}/)?.[0];
    expect(link?.startsWith(`${runtime.url}/app/login#token=`)).toBe(true);
    expect(mail).not.toContain('evil.example');
  }, 60_000);
});
