// docs/attribution.md "The server-side way": its ```js block runs as pasted. The block is written to a file
// of its own and started with node against the local gateway: the landing request sets the first-party
// HttpOnly cookie with `via` and `sub` (the first click kept), and the sign-up creates the referral with the
// secret key, `sub` included.
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startGateway, type Gateway } from '../../infra/local/gateway';
import { api } from '../support/api';
import { newAccount, pollUntil } from '../support/fixtures';

const DOC = join(__dirname, '..', '..', 'docs', 'attribution.md');

/** The first ```js block of the page's "## The server-side way" section, as written. */
function snippet(): string {
  const text = readFileSync(DOC, 'utf8');
  const start = text.indexOf('\n## The server-side way\n');
  if (start < 0) throw new Error('docs/attribution.md has no "## The server-side way" section');
  const end = text.indexOf('\n## ', start + 4);
  const section = text.slice(start, end < 0 ? undefined : end);
  const block = /\n```js\n([\s\S]*?)\n```\n/.exec(section);
  if (!block?.[1]) throw new Error('the section has no ```js block');
  return block[1];
}

let gateway: Gateway;
let dir: string;
let child: ChildProcess | undefined;

beforeAll(async () => {
  gateway = await startGateway({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'refloop-snippet-'));
});

afterAll(async () => {
  // Wait until the server has exited and its pipes are closed: until then the child is an open handle of
  // Jest's worker, which then moves on to its next file with it (and could not exit at the run's end).
  const running = child;
  if (running && running.exitCode === null && running.signalCode === null) {
    const exited = new Promise((ok) => running.once('close', ok));
    running.kill();
    await Promise.race([exited, new Promise((ok) => setTimeout(ok, 5_000).unref())]);
    if (running.exitCode === null && running.signalCode === null) running.kill('SIGKILL');
  }
  await gateway?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('keeps via and sub in its own HttpOnly cookie and creates the referral with sub at sign-up', async () => {
  const t = await newAccount();
  const code = `SNIP${Date.now().toString(36).toUpperCase()}`;
  const created = await api('POST', '/v1/members/', { key: t.apiKey, body: { identifier: code, email: `${code}@example.com`, code } });
  expect(created.status).toBe(201);
  const other = await api('POST', '/v1/members/', { key: t.apiKey, body: { identifier: `${code}b`, email: `${code}b@example.com` } });
  expect(other.status).toBe(201);

  const file = join(dir, 'server.js');
  writeFileSync(file, snippet());
  let output = '';
  child = spawn(process.execPath, [file], {
    cwd: dir,
    env: { ...process.env, REFLOOP_API: gateway.url, REFLOOP_API_KEY: t.apiKey, PORT: '0' },
  });
  child.stdout?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on('data', (d: Buffer) => {
    output += d.toString();
  });
  const port = await pollUntil(() => /listening on (\d+)/.exec(output)?.[1], { timeoutMs: 15_000 });
  const site = `http://127.0.0.1:${port}`;

  // The landing request: the cookie, HttpOnly, the default window of 60 days.
  const landing = await fetch(`${site}/pricing?via=${code}&sub=youtube`);
  expect(landing.status).toBe(200);
  const setCookie = landing.headers.get('set-cookie') ?? '';
  expect(setCookie).toMatch(/^ref=[^;]+; Max-Age=5184000; Path=\/; HttpOnly; SameSite=Lax$/);
  const cookie = setCookie.split(';')[0] as string;
  expect(JSON.parse(decodeURIComponent(cookie.slice('ref='.length)))).toEqual({ via: code, sub: 'youtube' });

  // Another member's link later: the first click is kept (no new cookie).
  const later = await fetch(`${site}/?via=${other.body.code}`, { headers: { cookie } });
  expect(later.headers.get('set-cookie')).toBeNull();

  // Sign-up: the backend creates the referral with its secret key, sub included.
  const signup = await fetch(`${site}/signup`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'user=server-side-user-1',
  });
  const answer = (await signup.json()) as { user: string; referral: { status: number; body: Record<string, unknown> } };
  expect(answer.user).toBe('server-side-user-1');
  expect(answer.referral.status).toBe(200);
  expect(answer.referral.body).toMatchObject({
    user_identifier: 'server-side-user-1',
    member_id: created.body.id,
    sub: 'youtube',
    source: 'api',
  });
  const listed = await api('GET', `/v1/referrals/?member=${created.body.id}&sub=youtube`, { key: t.apiKey });
  expect(listed.body.count).toBe(1);

  // Without the cookie, no referral.
  const none = await fetch(`${site}/signup`, { method: 'POST', body: 'user=server-side-user-2' });
  expect(await none.json()).toEqual({ user: 'server-side-user-2', referral: null });
}, 60_000);
