// The operator CLI as a child process against the test DynamoDB Local: output shapes, exit codes, revocation.
import { spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { api } from '../support/api';
import { newAccount } from '../support/fixtures';
import { freePort } from '../../infra/local/dynamodb';
import { getAccount } from '../../shared/store/accounts';
import { senderOf, suppressedAddress } from '../../shared/store/emails';
import { getItem } from '../../shared/store/ops';
import { keys, providerSecretKey, providerWebhookSecretKey } from '../../shared/store/table';
import {
  clearProviderCache,
  getProviderConnection,
  getProviderCredentials,
  getProviderSettings,
  getWebhookSettings,
} from '../../shared/store/provider';
import { DEFAULT_CHECKOUT_API_URL, DEFAULT_VENDORS_API_URL } from '../../shared/providers/paddle-classic/settings';
import { saveSubscription } from '../../shared/store/subscriptions';
import { decryptSecret } from '../../shared/secrets';
import { approveReward } from '../../shared/flows/lifecycle';
import { toReferral } from '../../shared/store/referrals';
import { recordRewards } from '../../shared/store/rewards';
import { LINK_REFUSED, openSession } from '../../shared/store/team';
import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { QUEUE_NAMES, QUEUES } from '../../shared/queue/queues';
import { startTestQueues } from '../support/queues';
import { adminInProcess, type CliResult } from '../support/admin-cli';
import { cliInProcess, cliProcess } from '../support/cli-in-process';
import { main as paddleBillingMain } from '../../infra/paddle-billing';
import { cli as paypalCli } from '../../infra/paypal';
import { runRailCli } from '../../infra/rail-emulator-cli';
import { main as stripeMain } from '../../infra/stripe';
import { cli as wiseCli } from '../../infra/wise';

const ROOT = join(__dirname, '..', '..');
// Every test here starts CLI processes (tsx), a few seconds each on a busy 2-core machine: a test's budget
// is its processes', not the default 30 s.
jest.setTimeout(120_000);

/**
 * Runs the admin CLI. Its `main` runs in this process (a child process costs a second or more of tsx
 * start-up, and this file runs dozens of commands), one command at a time, with the command's environment
 * laid over this process's and the clients reset around it: the same code from parsing to the JSON line.
 * `account list` and the other files (infra/paddle.ts, ...) run as `npm run admin` does: tsx in a child
 * process, without npm's own output.
 */
async function cli(args: string[], env: NodeJS.ProcessEnv = {}, file = 'infra/admin.ts'): Promise<CliResult> {
  // `account list` Scans (an operator's command, not a request path): this file's guard (test/support/no-scan.ts)
  // forbids a Scan in its own process, so it runs in a child.
  const scans = args[0] === 'account' && args[1] === 'list';
  if (file === 'infra/admin.ts' && !scans) return adminInProcess(args, env);
  return cliProcess(file, args, env);
}

function oneLine(text: string): string {
  const lines = text.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return lines[0] as string;
}

describe('admin CLI', () => {
  it('queues status shows every queue and its DLQ depth; queues redrive moves the dead letters back, once', async () => {
    const queues = await startTestQueues();
    try {
      // The CLI finds the queues through the variables npm start and the functions use (SQS_ENDPOINT, *_QUEUE_URL).
      const env = { SQS_ENDPOINT: queues.endpoint, ...Object.fromEntries(QUEUE_NAMES.map((q) => [QUEUES[q].envVar, queues.queueUrls[q]])) };
      for (const n of [1, 2, 3])
        await queues.client.send(
          new SendMessageCommand({ QueueUrl: queues.urlOf('webhook-events-dlq'), MessageBody: JSON.stringify({ n }) }),
        );
      const status = await cli(['queues', 'status'], env);
      expect(status).toMatchObject({ code: 0, stderr: '' });
      const before = JSON.parse(oneLine(status.stdout));
      expect(before.queues.map((q: { queue: string }) => q.queue)).toEqual(QUEUE_NAMES);
      expect(before.queues.find((q: { queue: string }) => q.queue === 'webhook-events')).toEqual({
        queue: 'webhook-events',
        messages: 0,
        in_flight: 0,
        dlq_messages: 3,
      });
      expect(before.dead_letters).toBe(3);

      const moved = await cli(['queues', 'redrive', 'webhook-events'], env);
      expect(moved).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(oneLine(moved.stdout))).toEqual({ queue: 'webhook-events', moved: 3 });
      const back = await queues.receiveAll('webhook-events');
      expect(back.map((m) => JSON.parse(m.body).n).sort()).toEqual([1, 2, 3]);
      expect(await queues.count('webhook-events-dlq')).toBe(0);
      // Nothing left: a second redrive moves nothing.
      expect(JSON.parse(oneLine((await cli(['queues', 'redrive', '--queue', 'webhook-events'], env)).stdout))).toEqual({
        queue: 'webhook-events',
        moved: 0,
      });
      expect((await cli(['queues', 'redrive', 'nope'], env)).code).toBe(2);
    } finally {
      await queues.stop();
    }
  }, 60_000);

  it('account list lists the accounts; account show adds the provider connection and the email sender', async () => {
    const t = await newAccount();
    const list = await cli(['account', 'list']);
    expect(list).toMatchObject({ code: 0, stderr: '' });
    const out = JSON.parse(oneLine(list.stdout));
    expect(out.count).toBe(out.accounts.length);
    expect(out.accounts).toContainEqual({
      account_id: t.accountId,
      name: expect.any(String),
      plan: 'regular',
      created_at: expect.any(Number),
    });
    const shown = JSON.parse(
      oneLine((await cli(['account', 'show', '--account', t.accountId, '--api-url', 'https://refloop.example.com'])).stdout),
    );
    expect(shown).toMatchObject({
      account_id: t.accountId,
      provider: { kind: null, connected: false },
      email: { sender: null, service_default: true },
    });
  }, 60_000);

  it('members portal-link prints a single-use portal URL of that member (support), 1 for an unknown member, 2 without --member', async () => {
    const t = await newAccount();
    const member = await api('POST', '/v1/members/', {
      key: t.apiKey,
      body: { identifier: 'support-me', email: 'support-me@example.com' },
    });
    expect(member.status).toBe(201);
    const res = await cli([
      'members',
      'portal-link',
      '--account',
      t.accountId,
      '--member',
      member.body.id,
      '--api-url',
      'https://refloop.example.com',
    ]);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const out = JSON.parse(oneLine(res.stdout));
    expect(Object.keys(out).sort()).toEqual(['expires_at', 'portal_session_id', 'url']);
    expect(out.url).toMatch(new RegExp(`^https://refloop\\.example\\.com/portal/${t.accountId}/#token=rpl_[A-Za-z0-9_-]{43}$`));
    // The link opens that member's portal, once.
    const token = String(out.url).split('#token=')[1];
    const opened = await api('POST', '/portal/v1/sessions/', { body: { token } });
    expect(opened.status).toBe(201);
    const me = await api('GET', '/portal/v1/me/', { key: opened.body.token });
    expect(me.body.member.email).toBe('support-me@example.com');
    expect((await api('POST', '/portal/v1/sessions/', { body: { token } })).status).toBe(401);
    const unknown = await cli([
      'members',
      'portal-link',
      '--account',
      t.accountId,
      '--member',
      'f'.repeat(32),
      '--api-url',
      'https://refloop.example.com',
    ]);
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toContain(`has no member ${'f'.repeat(32)}`);
    expect((await cli(['members', 'portal-link', '--account', t.accountId])).code).toBe(2);
  });

  it("members links lists, adds (a slug or a generated one) and removes a member's named links; 1 for field errors and unknowns", async () => {
    const t = await newAccount();
    const member = await api('POST', '/v1/members/', { key: t.apiKey, body: { identifier: 'linker', email: 'linker@example.com' } });
    expect(member.status).toBe(201);
    const base = ['members', 'links', '--account', t.accountId, '--member', member.body.id];
    const added = await cli([...base, '--add', 'youtube', '--path', '/pricing']);
    expect(added).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(oneLine(added.stdout))).toMatchObject({ slug: 'youtube', destination_path: '/pricing' });
    const generated = JSON.parse(oneLine((await cli([...base, '--add', '*'])).stdout));
    expect(generated.slug).toMatch(/^[a-z0-9]{8}$/);
    const listed = JSON.parse(oneLine((await cli(base)).stdout));
    expect(listed.count).toBe(2);
    expect(listed.results.map((l: { slug: string }) => l.slug).sort()).toEqual([generated.slug, 'youtube'].sort());
    const dup = await cli([...base, '--add', 'youtube']);
    expect(dup.code).toBe(1);
    expect(oneLine(dup.stderr)).toContain('slug');
    expect((await cli([...base, '--remove', 'youtube'])).code).toBe(0);
    expect((await cli([...base, '--remove', 'youtube'])).code).toBe(1);
    expect((await cli(['members', 'links', '--account', t.accountId, '--member', 'f'.repeat(32)])).code).toBe(1);
    expect((await cli([...base, '--path', '/x'])).code).toBe(2);
  }, 60_000);

  it('creates an account with the requested plan and prints one JSON line', async () => {
    const res = await cli(['account', 'create', '--name', 'Acme', '--plan', 'small']);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const out = JSON.parse(oneLine(res.stdout));
    expect(Object.keys(out).sort()).toEqual(['account_id', 'api_key']);
    expect(out.api_key).toMatch(/^rfl_live_[A-Za-z0-9_-]+$/);
    expect((await getAccount(out.account_id))?.plan).toBe('small');
  });

  it('account create --owner-email adds the first owner and hands over a login link that opens a session once', async () => {
    const outbox = mkdtempSync(join(tmpdir(), 'refloop-cli-outbox-'));
    try {
      const res = await cli(
        ['account', 'create', '--name', 'Owned', '--owner-email', 'Dana@Owned.example', '--api-url', 'https://refloop.example.com'],
        { EMAIL_OUTBOX_DIR: outbox },
      );
      expect(res).toMatchObject({ code: 0, stderr: '' });
      const out = JSON.parse(oneLine(res.stdout));
      expect(Object.keys(out).sort()).toEqual(['account_id', 'api_key', 'login_email', 'login_url', 'login_url_expires_at', 'owner_email']);
      expect(out.owner_email).toBe('dana@owned.example');
      expect(out.login_url).toMatch(/^https:\/\/refloop\.example\.com\/app\/login#token=[A-Za-z0-9_-]{43}$/);
      expect(readFileSync(out.login_email, 'utf8')).toContain(out.login_url);
      const token = String(out.login_url).split('#token=')[1] as string;
      const { session } = await openSession(token);
      expect(session).toMatchObject({ accountId: out.account_id, email: 'dana@owned.example', role: 'owner' });
      await expect(openSession(token)).rejects.toThrow(LINK_REFUSED);
      // A bad address is a usage error: exit 2, nothing created.
      expect((await cli(['account', 'create', '--name', 'Nope', '--owner-email', 'not-an-address'])).code).toBe(2);
    } finally {
      rmSync(outbox, { recursive: true, force: true });
    }
  });

  it('account show prints the publishable key and the script tag; revoking it issues a new one', async () => {
    const { accountId, publishableKey } = await newAccount('small');
    // On DynamoDB Local the API is the gateway `npm start` runs.
    const shown = await cli(['account', 'show', '--account', accountId], { PORT: '', API_URL: '', PUBLIC_BASE_URL: '' });
    expect(shown).toMatchObject({ code: 0, stderr: '' });
    const out = JSON.parse(oneLine(shown.stdout));
    expect(out).toMatchObject({ account_id: accountId, plan: 'small', publishable_key: publishableKey, api_url: 'http://127.0.0.1:3000' });
    expect(out.script_tag).toBe(`<script src="http://127.0.0.1:3000/js/refloop.js" data-key="${publishableKey}" async></script>`);
    // The secret key is never shown again.
    expect(shown.stdout).not.toContain('rfl_live_');

    expect(await cli(['key', 'revoke', '--key', publishableKey])).toMatchObject({ code: 0, stdout: '{"revoked":true}\n' });
    expect((await api('POST', '/js/v1/clicks/', { key: publishableKey, body: { code: 'X' } })).status).toBe(401);
    const renewed = JSON.parse(oneLine((await cli(['account', 'show', '--account', accountId])).stdout));
    expect(renewed.publishable_key).toMatch(/^rfl_pub_/);
    expect(renewed.publishable_key).not.toBe(publishableKey);
    expect((await api('POST', '/js/v1/clicks/', { key: renewed.publishable_key, body: { code: 'X' } })).status).toBe(200);

    const unknown = await cli(['account', 'show', '--account', '0123456789abcdef']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('admin: Account 0123456789abcdef does not exist\n');
  });

  it('account set-js-referrals sets what the publishable key may do; a bad mode exits 2, an unknown account 1', async () => {
    const { accountId, publishableKey } = await newAccount();
    const set = await cli(['account', 'set-js-referrals', '--account', accountId, '--mode', 'off']);
    expect(set).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(oneLine(set.stdout))).toEqual({ account_id: accountId, js_referrals: 'off' });
    expect((await getAccount(accountId))?.jsReferrals).toBe('off');
    expect((await api('POST', '/js/v1/referrals/', { key: publishableKey, body: { member_code: 'X', user_identifier: 'u' } })).status).toBe(
      403,
    );
    expect((await cli(['account', 'set-js-referrals', '--account', accountId, '--mode', 'confirm'])).code).toBe(0);
    expect((await api('POST', '/js/v1/referrals/', { key: publishableKey, body: { member_code: 'X', user_identifier: 'u' } })).status).toBe(
      200,
    );

    const bad = await cli(['account', 'set-js-referrals', '--account', accountId, '--mode', 'maybe']);
    expect([bad.code, bad.stderr]).toEqual([2, 'admin: --mode must be one of open, confirm, off, got "maybe"\n']);
    expect((await getAccount(accountId))?.jsReferrals).toBe('confirm');
    const unknown = await cli(['account', 'set-js-referrals', '--account', '0123456789abcdef', '--mode', 'off']);
    expect([unknown.code, unknown.stderr]).toEqual([1, 'admin: Account 0123456789abcdef does not exist\n']);
  });

  it('account show puts the real API URL in the script tag: --api-url, API_URL, PUBLIC_BASE_URL, the local PORT', async () => {
    const { accountId, publishableKey } = await newAccount();
    const tag = (url: string) => `<script src="${url}/js/refloop.js" data-key="${publishableKey}" async></script>`;
    const show = async (extra: string[], env: NodeJS.ProcessEnv) => {
      const res = await cli(['account', 'show', '--account', accountId, ...extra], { PORT: '', API_URL: '', PUBLIC_BASE_URL: '', ...env });
      expect(res).toMatchObject({ code: 0, stderr: '' });
      return JSON.parse(oneLine(res.stdout)).script_tag as string;
    };
    const [flag, apiUrl, publicBase, port] = await Promise.all([
      show(['--api-url', 'https://abc123.execute-api.eu-west-1.amazonaws.com/'], { API_URL: 'https://ignored.example' }),
      show([], { API_URL: 'https://api.acme.example', PUBLIC_BASE_URL: 'https://ignored.example' }),
      show([], { PUBLIC_BASE_URL: 'https://refloop.acme.example' }),
      show([], { PORT: '3100' }),
    ]);
    expect(flag).toBe(tag('https://abc123.execute-api.eu-west-1.amazonaws.com'));
    expect(apiUrl).toBe(tag('https://api.acme.example'));
    expect(publicBase).toBe(tag('https://refloop.acme.example'));
    expect(port).toBe(tag('http://127.0.0.1:3100'));
    for (const out of [flag, apiUrl, publicBase, port]) expect(out).not.toContain('<API_URL>');

    const bad = await cli(['account', 'show', '--account', accountId, '--api-url', 'abc123.execute-api.eu-west-1.amazonaws.com']);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(oneLine(bad.stderr)).toContain('--api-url must be an http(s) URL');
  });

  it('account show against AWS without an API URL exits 2 and names --api-url (no placeholder, nothing contacted)', async () => {
    // AWS mode (no DYNAMODB_ENDPOINT, a region): the URL is resolved before any AWS call, so no credentials are needed.
    const res = await cli(['account', 'show', '--account', '0123456789abcdef'], {
      DYNAMODB_ENDPOINT: '',
      AWS_REGION: 'eu-west-1',
      API_URL: '',
      PUBLIC_BASE_URL: '',
      AWS_ACCESS_KEY_ID: '',
      AWS_SECRET_ACCESS_KEY: '',
    });
    expect(res).toMatchObject({ code: 2, stdout: '' });
    expect(oneLine(res.stderr)).toBe(
      'admin: this command needs the API URL in AWS: pass --api-url <url> (the RefloopApi stack output ApiUrl) or set API_URL',
    );
  });

  it('defaults the plan to regular', async () => {
    const res = await cli(['account', 'create', '--name', 'Default Plan']);
    expect(res.code).toBe(0);
    const out = JSON.parse(oneLine(res.stdout));
    expect((await getAccount(out.account_id))?.plan).toBe('regular');
  });

  it('creates and revokes keys; a revoked key is refused at once, the others keep working', async () => {
    const account = JSON.parse(oneLine((await cli(['account', 'create', '--name', 'Keys'])).stdout));
    const created = await cli(['key', 'create', '--account', account.account_id]);
    expect(created).toMatchObject({ code: 0, stderr: '' });
    const second = JSON.parse(oneLine(created.stdout));
    expect(Object.keys(second)).toEqual(['api_key']);
    expect(second.api_key).toMatch(/^rfl_live_/);
    expect((await api('GET', '/v1/campaigns/', { key: second.api_key })).status).toBe(200);

    const revoked = await cli(['key', 'revoke', '--key', second.api_key]);
    expect(revoked).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(oneLine(revoked.stdout))).toEqual({ revoked: true });

    const refused = await api('GET', '/v1/campaigns/', { key: second.api_key });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ detail: 'Invalid token.' });
    expect((await api('GET', '/v1/campaigns/', { key: account.api_key })).status).toBe(200);
  });

  it.each([['help'], ['--help'], ['-h']])('`%s` prints the help on stdout, one command per line, and exits 0', async (arg) => {
    const res = await cli([arg]);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const lines = res.stdout.split('\n');
    for (const name of [
      'account create',
      'account show',
      'account set-paddle',
      'account set-email',
      'key create',
      'key revoke',
      'member bounce',
    ]) {
      // Once with its description, once with its flags.
      expect({ name, described: lines.filter((l) => new RegExp(`^  ${name} +[A-Z]`).test(l)).length }).toEqual({ name, described: 1 });
      expect({ name, flags: lines.filter((l) => l.startsWith(`  admin ${name} `)).length }).toEqual({ name, flags: 1 });
    }
    expect(res.stdout).toContain('admin account show --account <account_id> [--api-url <url>]');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(200);
  });

  it('without arguments prints the same help on stderr and exits 2; `<command> --help` prints its usage', async () => {
    const [none, help, one] = await Promise.all([cli([]), cli(['help']), cli(['account', 'set-paddle', '--help'])]);
    expect(none).toMatchObject({ code: 2, stdout: '', stderr: help.stdout });
    expect(none.stderr).not.toContain('unknown command');
    expect(one).toMatchObject({ code: 0, stderr: '' });
    expect(one.stdout.split('\n')[0]).toBe(
      'usage: admin account set-paddle --account <account_id> --vendor-id <int> --auth-code <secret> --public-key-file <pem-path> [--vendors-api-url <url>] [--checkout-api-url <url>]',
    );
  });

  it.each([
    ['an unknown command', ['account', 'delete', '--name', 'x']],
    ['a missing required flag', ['account', 'create']],
    ['a flag without its value', ['key', 'create', '--account']],
    ['an unknown flag', ['key', 'revoke', '--key', 'rfl_live_x', '--force']],
    ['a flag of another command', ['key', 'create', '--name', 'x']],
    ['an unknown plan', ['account', 'create', '--name', 'x', '--plan', 'gold']],
    ['a stray positional argument', ['account', 'create', '--name', 'x', 'extra']],
  ])('exits 2 with one line on stderr for %s', async (_why, args) => {
    const res = await cli(args);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    oneLine(res.stderr);
  });

  it.each([
    ['an unknown account', ['key', 'create', '--account', '0000000000000000']],
    ['an unknown key', ['key', 'revoke', '--key', 'rfl_live_does-not-exist']],
  ])('exits 1 with one line on stderr for %s', async (_why, args) => {
    const res = await cli(args);
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    oneLine(res.stderr);
  });

  it('exits 1 with one line on stderr when DynamoDB is unreachable', async () => {
    const res = await cli(['account', 'create', '--name', 'x'], { DYNAMODB_ENDPOINT: `http://127.0.0.1:${await freePort()}` });
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(oneLine(res.stderr)).toMatch(/cannot reach DynamoDB/);
  });
});

describe('admin CLI: account set-paddle', () => {
  // The fixtures' public key: a published Paddle test key (RSA, PEM without a trailing newline).
  const FIXTURE_KEY = (
    JSON.parse(readFileSync(join(ROOT, 'test', 'fixtures', 'paddle', 'signed-alerts.json'), 'utf8')) as { public_key: string }
  ).public_key;
  /** The key as the CLI stores it: SPKI PEM as node:crypto exports it. */
  const NORMALISED_KEY = createPublicKey(FIXTURE_KEY).export({ type: 'spki', format: 'pem' }).toString();
  // Distinctive, so that any echo of it on stdout or stderr is caught.
  const AUTH_CODE = `authcode${randomBytes(16).toString('hex')}`;

  let dir: string;
  let keyFile: string;
  let notPem: string;
  let ecKey: string;
  let emptyPem: string;
  let privateKeys: Record<string, string>;

  /** Runs the CLI and checks that the auth code appears on neither stream, whatever the outcome. */
  async function setPaddle(args: string[]): Promise<CliResult> {
    const res = await cli(['account', 'set-paddle', ...args]);
    expect(res.stdout).not.toContain(AUTH_CODE);
    expect(res.stderr).not.toContain(AUTH_CODE);
    return res;
  }

  /** Every required flag, for `account`; `overrides` replace or (with undefined) drop flags. */
  function flags(account: string, overrides: Record<string, string | undefined> = {}): string[] {
    const all: Record<string, string | undefined> = {
      account,
      'vendor-id': '123456',
      'auth-code': AUTH_CODE,
      'public-key-file': keyFile,
      ...overrides,
    };
    return Object.entries(all).flatMap(([flag, value]) => (value === undefined ? [] : [`--${flag}`, value]));
  }

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'refloop-admin-'));
    keyFile = join(dir, 'paddle-public.pem');
    writeFileSync(keyFile, FIXTURE_KEY);
    notPem = join(dir, 'not-a-key.pem');
    writeFileSync(notPem, 'this is not a PEM key\n');
    emptyPem = join(dir, 'empty.pem');
    writeFileSync(emptyPem, '');
    // Private keys in every PEM form: createPublicKey derives a public key from each of them.
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });
    privateKeys = {};
    const forms: Record<string, string> = {
      'PKCS#8': rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
      'PKCS#1 (RSA PRIVATE KEY)': rsa.privateKey.export({ type: 'pkcs1', format: 'pem' }).toString(),
      'public and private key in one file': `${rsa.publicKey.export({ type: 'spki', format: 'pem' }).toString()}${rsa.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()}`,
    };
    for (const [form, pem] of Object.entries(forms)) {
      const file = join(dir, `private-${Object.keys(privateKeys).length}.pem`);
      writeFileSync(file, pem);
      privateKeys[form] = file;
    }
    ecKey = join(dir, 'ec-public.pem');
    writeFileSync(
      ecKey,
      generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).publicKey.export({ type: 'spki', format: 'pem' }).toString(),
    );
  });

  afterAll(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  beforeEach(() => clearProviderCache());

  it('stores the settings with the default Paddle URLs and prints one JSON line without the auth code', async () => {
    const { accountId } = await newAccount();
    const res = await setPaddle(flags(accountId));
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const out = JSON.parse(oneLine(res.stdout));
    expect(out).toMatchObject({ account_id: accountId, vendor_id: 123456, webhook_path: `/webhooks/paddle/${accountId}/` });
    expect(Object.values(out)).not.toContain(AUTH_CODE);

    const expected = {
      vendorId: 123456,
      publicKey: NORMALISED_KEY,
      vendorsApiUrl: DEFAULT_VENDORS_API_URL,
      checkoutApiUrl: DEFAULT_CHECKOUT_API_URL,
    };
    expect(DEFAULT_VENDORS_API_URL).toBe('https://vendors.paddle.com/api');
    expect(DEFAULT_CHECKOUT_API_URL).toBe('https://checkout.paddle.com/api');
    expect(await getProviderSettings(accountId)).toEqual(expected);
    expect(await getProviderCredentials(accountId)).toEqual({ ...expected, authCode: AUTH_CODE });
  });

  it('stores the given API URLs (without a trailing slash) and replaces earlier settings', async () => {
    const { accountId } = await newAccount();
    expect((await setPaddle(flags(accountId))).code).toBe(0);
    const res = await setPaddle([
      ...flags(accountId, { 'vendor-id': '42' }),
      '--vendors-api-url',
      'http://127.0.0.1:9999/vendors/api/',
      '--checkout-api-url',
      'https://checkout.example.test/api',
    ]);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(oneLine(res.stdout))).toMatchObject({ account_id: accountId, vendor_id: 42 });
    clearProviderCache();
    expect(await getProviderCredentials(accountId)).toEqual({
      vendorId: 42,
      publicKey: NORMALISED_KEY,
      vendorsApiUrl: 'http://127.0.0.1:9999/vendors/api',
      checkoutApiUrl: 'https://checkout.example.test/api',
      authCode: AUTH_CODE,
    });
  });

  it.each([
    ['--account missing', { account: undefined }],
    ['--vendor-id missing', { 'vendor-id': undefined }],
    ['--auth-code missing', { 'auth-code': undefined }],
    ['--public-key-file missing', { 'public-key-file': undefined }],
    ['a non-numeric vendor id', { 'vendor-id': 'acme' }],
    ['a vendor id with trailing letters', { 'vendor-id': '123abc' }],
    ['a decimal vendor id', { 'vendor-id': '12.5' }],
    ['a zero vendor id', { 'vendor-id': '0' }],
    ['an empty auth code', { 'auth-code': '' }],
  ])('exits 2 with one line on stderr for %s, and writes nothing', async (_why, overrides: Record<string, string | undefined>) => {
    const { accountId } = await newAccount();
    const res = await setPaddle(flags(accountId, overrides));
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    oneLine(res.stderr);
    expect(await getProviderCredentials(accountId)).toBeNull();
  });

  it('exits 2 for an API URL that is not an http(s) URL', async () => {
    const { accountId } = await newAccount();
    const res = await setPaddle([...flags(accountId), '--vendors-api-url', 'vendors.paddle.com/api']);
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    oneLine(res.stderr);
    expect(await getProviderCredentials(accountId)).toBeNull();
  });

  it.each([
    ['an unreadable (missing) key file', () => join(dir, 'does-not-exist.pem')],
    ['a directory as key file', () => dir],
    ['a file that is not a PEM key', () => notPem],
    ['an empty key file', () => emptyPem],
    ['a PEM key that is not RSA', () => ecKey],
  ])('exits 2 for %s and leaves earlier settings unchanged', async (_why, path) => {
    const { accountId } = await newAccount();
    expect((await setPaddle(flags(accountId))).code).toBe(0);
    const res = await setPaddle(flags(accountId, { 'vendor-id': '777', 'public-key-file': path() }));
    expect(res.code).toBe(2);
    expect(res.stdout).toBe('');
    expect(oneLine(res.stderr)).toContain('--public-key-file');
    clearProviderCache();
    expect(await getProviderCredentials(accountId)).toMatchObject({ vendorId: 123456, publicKey: NORMALISED_KEY, authCode: AUTH_CODE });
  });

  it.each(['PKCS#8', 'PKCS#1 (RSA PRIVATE KEY)', 'public and private key in one file'])(
    'refuses an RSA private key file (%s): exit 2, a clear message, earlier settings unchanged',
    async (form) => {
      const { accountId } = await newAccount();
      expect((await setPaddle(flags(accountId))).code).toBe(0);
      const res = await setPaddle(flags(accountId, { 'vendor-id': '778', 'public-key-file': privateKeys[form] }));
      expect(res).toMatchObject({ code: 2, stdout: '' });
      expect(oneLine(res.stderr)).toMatch(/^admin: --public-key-file \S+ holds a PRIVATE key; give Paddle's public key/);
      clearProviderCache();
      expect(await getProviderCredentials(accountId)).toMatchObject({ vendorId: 123456, publicKey: NORMALISED_KEY });
    },
  );

  it('exits 1 for an unknown account and stores nothing', async () => {
    const unknown = randomBytes(8).toString('hex');
    const res = await setPaddle(flags(unknown));
    expect(res.code).toBe(1);
    expect(res.stdout).toBe('');
    expect(oneLine(res.stderr)).toContain(`Account ${unknown} does not exist`);
    expect(await getProviderCredentials(unknown)).toBeNull();
    expect(await getProviderSettings(unknown)).toBeNull();
  });
});

describe('admin CLI: account set-paddle-billing and set-stripe (one provider per account)', () => {
  const API_KEY = `pdl_sdbx_apikey_${randomBytes(12).toString('hex')}`;
  const NTF_SECRET = `pdl_ntfset_${randomBytes(12).toString('hex')}`;
  const STRIPE_KEY = `rk_test_${randomBytes(12).toString('hex')}`;
  const WHSEC = `whsec_${randomBytes(12).toString('hex')}`;
  const CB_KEY = `test_${randomBytes(12).toString('hex')}`;
  const CB_PASSWORD = randomBytes(16).toString('hex');
  const SECRETS = [API_KEY, NTF_SECRET, STRIPE_KEY, WHSEC, CB_KEY, CB_PASSWORD];

  /** Runs the CLI and checks that no secret appears on either stream, whatever the outcome. */
  async function run(args: string[]): Promise<CliResult> {
    const res = await cli(['account', ...args]);
    for (const secret of SECRETS) {
      expect(res.stdout).not.toContain(secret);
      expect(res.stderr).not.toContain(secret);
    }
    return res;
  }
  const billing = (account: string, extra: string[] = []) =>
    run([
      'set-paddle-billing',
      '--account',
      account,
      '--api-key',
      API_KEY,
      '--webhook-secret',
      NTF_SECRET,
      '--api-url',
      'https://sandbox-api.paddle.com',
      ...extra,
    ]);
  const stripe = (account: string) => run(['set-stripe', '--account', account, '--secret-key', STRIPE_KEY, '--webhook-secret', WHSEC]);
  const chargebee = (account: string, extra: string[] = []) =>
    run(['set-chargebee', '--account', account, '--site', 'acme-test', '--api-key', CB_KEY, '--webhook-password', CB_PASSWORD, ...extra]);

  beforeEach(() => clearProviderCache());

  it('connects Paddle Billing: one JSON line, the API key and the webhook secret in separate items, neither echoed', async () => {
    const { accountId } = await newAccount();
    const res = await billing(accountId);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(oneLine(res.stdout))).toEqual({
      account_id: accountId,
      provider: 'paddle-billing',
      webhook_path: `/webhooks/paddle-billing/${accountId}/`,
    });
    const settings = await getItem(keys.providerSettings(accountId));
    expect(settings).toMatchObject({ provider: 'paddle-billing', api_url: 'https://sandbox-api.paddle.com' });
    expect(JSON.stringify(settings)).not.toContain(API_KEY);
    expect(JSON.stringify(settings)).not.toContain(NTF_SECRET);
    // Both stored encrypted (shared/secrets: the run's local key file, which the CLI child shares).
    const secretItem = await getItem(providerSecretKey(accountId));
    const webhookItem = await getItem(providerWebhookSecretKey(accountId));
    expect(secretItem).toMatchObject({ api_key: expect.stringMatching(/^local:v1:/) });
    expect(webhookItem).toMatchObject({ webhook_secret: expect.stringMatching(/^local:v1:/) });
    expect(JSON.stringify([secretItem, webhookItem])).not.toContain(API_KEY);
    expect(JSON.stringify([secretItem, webhookItem])).not.toContain(NTF_SECRET);
    expect(await decryptSecret(accountId, String(secretItem?.api_key))).toBe(API_KEY);
    expect(await decryptSecret(accountId, String(webhookItem?.webhook_secret))).toBe(NTF_SECRET);
    expect(await getProviderConnection(accountId)).toEqual({
      kind: 'paddle-billing',
      apiKey: API_KEY,
      apiUrl: 'https://sandbox-api.paddle.com',
    });
    expect(await getWebhookSettings(accountId)).toEqual({ kind: 'paddle-billing', webhookSecret: NTF_SECRET });
    // Not a Classic account: Classic's readers see nothing.
    expect(await getProviderSettings(accountId)).toBeNull();
    expect(await getProviderCredentials(accountId)).toBeNull();
  });

  it('connects Stripe the same way', async () => {
    const { accountId } = await newAccount();
    const res = await stripe(accountId);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(oneLine(res.stdout))).toEqual({
      account_id: accountId,
      provider: 'stripe',
      webhook_path: `/webhooks/stripe/${accountId}/`,
    });
    expect(await getProviderConnection(accountId)).toEqual({ kind: 'stripe', secretKey: STRIPE_KEY, apiUrl: 'https://api.stripe.com' });
    expect(await getWebhookSettings(accountId)).toEqual({ kind: 'stripe', webhookSecret: WHSEC });
  });

  it('connects Chargebee: the site in the settings, the API key and the webhook Basic-auth pair in their own items, neither echoed', async () => {
    const { accountId } = await newAccount();
    const res = await chargebee(accountId);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(oneLine(res.stdout))).toEqual({
      account_id: accountId,
      provider: 'chargebee',
      site: 'acme-test',
      webhook_username: 'refloop',
      webhook_path: `/webhooks/chargebee/${accountId}/`,
    });
    const settings = await getItem(keys.providerSettings(accountId));
    expect(settings).toMatchObject({ provider: 'chargebee', site: 'acme-test', api_url: 'https://acme-test.chargebee.com' });
    const secretItem = await getItem(providerSecretKey(accountId));
    const webhookItem = await getItem(providerWebhookSecretKey(accountId));
    expect(secretItem).toMatchObject({ api_key: expect.stringMatching(/^local:v1:/) });
    expect(webhookItem).toMatchObject({ webhook_secret: expect.stringMatching(/^local:v1:/) });
    for (const secret of [CB_KEY, CB_PASSWORD]) expect(JSON.stringify([settings, secretItem, webhookItem])).not.toContain(secret);
    expect(await getProviderConnection(accountId)).toEqual({
      kind: 'chargebee',
      site: 'acme-test',
      apiKey: CB_KEY,
      apiUrl: 'https://acme-test.chargebee.com',
      webhookUsername: 'refloop',
    });
    expect(await getWebhookSettings(accountId)).toEqual({ kind: 'chargebee', webhookSecret: `refloop:${CB_PASSWORD}` });

    // Another username and a local emulator's URL; a full host name as the site is reduced to the site.
    clearProviderCache();
    const local = await run([
      'set-chargebee',
      '--account',
      accountId,
      '--site',
      'Acme-Test.chargebee.com',
      '--api-key',
      CB_KEY,
      '--webhook-password',
      CB_PASSWORD,
      '--webhook-username',
      'hooks',
      '--api-url',
      'http://127.0.0.1:12141/',
    ]);
    expect(local).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(oneLine(local.stdout))).toMatchObject({ provider: 'chargebee', site: 'acme-test', webhook_username: 'hooks' });
    expect(await getProviderConnection(accountId)).toMatchObject({
      site: 'acme-test',
      apiUrl: 'http://127.0.0.1:12141',
      webhookUsername: 'hooks',
    });
    expect(await getWebhookSettings(accountId)).toEqual({ kind: 'chargebee', webhookSecret: `hooks:${CB_PASSWORD}` });
  });

  it('account set-chargebee refuses bad flags with exit 2, writes nothing and quotes no secret', async () => {
    const { accountId } = await newAccount();
    const base = ['set-chargebee', '--account', accountId];
    const cases: [string[], string][] = [
      [[...base, '--site', 'acme test', '--api-key', CB_KEY, '--webhook-password', CB_PASSWORD], '--site must be the site name'],
      [[...base, '--site', 'acme', '--api-key', 'short', '--webhook-password', CB_PASSWORD], '--api-key must be a Chargebee API key'],
      [
        [...base, '--site', 'acme', '--api-key', CB_KEY, '--webhook-password', 'too-short-password'],
        '--webhook-password must be 24 to 200',
      ],
      [
        [...base, '--site', 'acme', '--api-key', CB_KEY, '--webhook-password', CB_PASSWORD, '--webhook-username', 'a:b'],
        '--webhook-username must be 1 to 64 printable characters',
      ],
      [
        [...base, '--site', 'acme', '--api-key', CB_KEY, '--webhook-password', CB_PASSWORD, '--api-url', 'http://chargebee.example.com'],
        '--api-url must be https',
      ],
      [
        [
          ...base,
          '--site',
          'acme',
          '--api-key',
          CB_KEY,
          '--webhook-password',
          CB_PASSWORD,
          '--api-url',
          'https://acme.chargebee.com/api/v2',
        ],
        '--api-url must be the API host only',
      ],
      [[...base, '--site', 'acme', '--api-key', CB_KEY], '--webhook-password is required'],
      [[...base, '--api-key', CB_KEY, '--webhook-password', CB_PASSWORD], '--site is required'],
      [[...base, '--site', 'acme', '--api-key', CB_KEY, '--webhook-password', CB_PASSWORD, '--secret-key', CB_KEY], '--secret-key'],
    ];
    for (const [args, message] of cases) {
      const res = await run(args);
      expect({ args: args.slice(3), code: res.code, stdout: res.stdout }).toEqual({ args: args.slice(3), code: 2, stdout: '' });
      expect(oneLine(res.stderr)).toContain(message);
    }
    expect(await getItem(keys.providerSettings(accountId))).toBeUndefined();
    expect(await getItem(providerSecretKey(accountId))).toBeUndefined();
    expect(await getItem(providerWebhookSecretKey(accountId))).toBeUndefined();
    const unknown = await chargebee('0123456789abcdef');
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toBe('admin: Account 0123456789abcdef does not exist');
  });

  it('refuses bad arguments with exit 2 and writes nothing', async () => {
    const { accountId } = await newAccount();
    const cases: [string[], string][] = [
      [
        ['set-paddle-billing', '--account', accountId, '--api-key', 'short', '--webhook-secret', NTF_SECRET],
        '--api-key must be a Paddle API key',
      ],
      [
        ['set-paddle-billing', '--account', accountId, '--api-key', API_KEY, '--webhook-secret', NTF_SECRET],
        '--api-url a sandbox key needs --api-url https://sandbox-api.paddle.com',
      ],
      [
        [
          'set-paddle-billing',
          '--account',
          accountId,
          '--api-key',
          API_KEY,
          '--webhook-secret',
          NTF_SECRET,
          '--api-url',
          'http://paddle.example.com',
        ],
        '--api-url must be https',
      ],
      [['set-paddle-billing', '--account', accountId, '--api-key', API_KEY], '--webhook-secret is required'],
      [
        ['set-stripe', '--account', accountId, '--secret-key', 'pk_test_abcdefgh', '--webhook-secret', WHSEC],
        '--secret-key is a publishable key',
      ],
    ];
    for (const [args, message] of cases) {
      const res = await run(args);
      expect({ args: args[0], code: res.code, stdout: res.stdout }).toEqual({ args: args[0], code: 2, stdout: '' });
      expect(oneLine(res.stderr)).toContain(message);
    }
    expect(await getItem(keys.providerSettings(accountId))).toBeUndefined();
    // A secret pasted where no argument belongs is not quoted back.
    const stray = await run(['set-stripe', '--account', accountId, '--secret-key', STRIPE_KEY, '--webhook-secret', WHSEC, `${WHSEC}x`]);
    expect(stray).toMatchObject({ code: 2, stdout: '' });
    expect(oneLine(stray.stderr)).toContain("Unexpected argument '<redacted>'");
    expect(stray.stderr).not.toContain(`${WHSEC}x`);
    const unknown = await billing('0123456789abcdef');
    expect(unknown.code).toBe(1);
    expect(oneLine(unknown.stderr)).toBe('admin: Account 0123456789abcdef does not exist');
  });

  it('rotates secrets of the same kind, switches kinds while nothing is mirrored, and refuses to switch once subscriptions are', async () => {
    const { accountId } = await newAccount();
    expect((await stripe(accountId)).code).toBe(0);
    expect((await billing(accountId)).code).toBe(0); // nothing mirrored yet: allowed
    expect((await billing(accountId)).code).toBe(0); // rotation
    expect(await getItem(providerSecretKey(accountId))).toEqual(expect.not.objectContaining({ secret_key: expect.anything() }));
    await saveSubscription(accountId, {
      id: 'sub_01h04vsc0qhwtsbsxh3422wjs4',
      unit_price: '10.00',
      currency: 'USD',
      status: 'active',
      email: 'a@example.com',
      next_bill_date: null,
      last_bill_date: null,
      plan: { id: 'pri_01', name: 'Pro', amount: '10.00', currency: 'USD', interval: 'month', frequency: 1, descriptor: '$10.00 / month' },
    });
    const refused = await stripe(accountId);
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(oneLine(refused.stderr)).toBe(
      "admin: refused: the account is connected to paddle-billing and mirrors 1 subscription(s) from it; switching to stripe would mix two providers' ids (connect a new account for stripe)",
    );
    clearProviderCache();
    expect((await getProviderConnection(accountId))?.kind).toBe('paddle-billing');
    expect((await billing(accountId)).code).toBe(0); // the same kind is still fine
  });
});

describe('admin CLI: member emails', () => {
  it('account set-email stores the sender; bad addresses exit 2, unknown accounts exit 1', async () => {
    const { accountId } = await newAccount();
    const ok = await cli(['account', 'set-email', '--account', accountId, '--from', 'team@acme.example', '--name', 'Acme Team']);
    expect(ok.code).toBe(0);
    expect(JSON.parse(oneLine(ok.stdout))).toEqual({
      account_id: accountId,
      email_from: 'team@acme.example',
      email_from_name: 'Acme Team',
    });
    expect(senderOf(await getItem(keys.account(accountId)))).toEqual({ address: 'team@acme.example', name: 'Acme Team' });

    const bad = await cli(['account', 'set-email', '--account', accountId, '--from', 'not-an-address', '--name', 'X']);
    expect(bad.code).toBe(2);
    expect(oneLine(bad.stderr)).toContain('--from must be an email address');
    const unknown = randomBytes(8).toString('hex');
    const missing = await cli(['account', 'set-email', '--account', unknown, '--from', 'a@b.example', '--name', 'X']);
    expect(missing.code).toBe(1);
    expect(oneLine(missing.stderr)).toContain(`Account ${unknown} does not exist`);
  });

  it('member bounce records a bounce on the member with that email (the local stand-in for an SES event)', async () => {
    const { accountId, apiKey } = await newAccount();
    const created = await api('POST', '/v1/members/', { key: apiKey, body: { identifier: 'bouncer', email: 'Bouncer@Example.com' } });
    expect(created.status).toBe(201);
    const res = await cli(['member', 'bounce', '--account', accountId, '--email', 'bouncer@example.com']);
    expect(res.code).toBe(0);
    expect(JSON.parse(oneLine(res.stdout))).toEqual({
      account_id: accountId,
      member_id: created.body.id,
      email_suppressed: 'bouncer@example.com',
      reason: 'bounce',
    });
    expect(suppressedAddress(await getItem(keys.member(accountId, created.body.id)))).toBe('bouncer@example.com');
    const nobody = await cli(['member', 'bounce', '--account', accountId, '--email', 'nobody@example.com']);
    expect(nobody.code).toBe(1);
    expect(oneLine(nobody.stderr)).toContain('no member');
  });
});

describe('paddle CLI: help', () => {
  const paddle = (args: string[]) => cli(args, {}, 'infra/paddle.ts');

  it('`help` lists every command on its own line, with --passthrough among the checkout flags; no arguments exits 2', async () => {
    const [help, none, checkout] = await Promise.all([paddle(['help']), paddle([]), paddle(['checkout', '--help'])]);
    expect(help).toMatchObject({ code: 0, stderr: '' });
    const lines = help.stdout.split('\n');
    for (const name of ['checkout', 'renew', 'fail', 'cancel', 'refund', 'state']) {
      expect({ name, described: lines.filter((l) => new RegExp(`^  ${name} +[A-Z]`).test(l)).length }).toEqual({ name, described: 1 });
    }
    const checkoutLine = lines.find((l) => l.startsWith('  paddle checkout '));
    expect(checkoutLine).toContain('[--passthrough <string>]');
    expect(checkoutLine).toContain('[--coupon <code>]');
    expect(none).toMatchObject({ code: 2, stdout: '', stderr: help.stdout });
    expect(checkout).toMatchObject({ code: 0, stderr: '' });
    expect(checkout.stdout).toContain('--passthrough <string>');
  });

  it("a bad argument: one line on stderr with the command's usage, exit 2", async () => {
    const res = await paddle(['renew', '--subscription', 'abc']);
    expect(res).toMatchObject({ code: 2, stdout: '' });
    expect(oneLine(res.stderr)).toBe('paddle: --subscription must be an integer >= 1, got "abc"; usage: paddle renew --subscription <id>');
  });
});

describe('admin CLI: paying members', () => {
  it('payouts due, export and mark-paid walk a due payout to paid; bad arguments exit 2', async () => {
    const { accountId, apiKey } = await newAccount();
    const call = (method: string, path: string, body?: unknown) =>
      api(method, path, { key: apiKey, ...(body === undefined ? {} : { body }) });
    const campaign = await call('POST', '/v1/campaigns/', {
      name: 'CLI payouts',
      allows_commission: true,
      commission_amount: '4.00',
      hold_days: 0,
    });
    const member = await call('POST', '/v1/members/', {
      identifier: 'cli-payee',
      email: 'cli-payee@example.com',
      campaign: { id: campaign.body.id },
      payout_email: 'payee@example.com',
    });
    const ref = await call('POST', '/v1/referrals/', { user_identifier: 'cli-user', member_code: member.body.code });
    // A reward as the reward worker records it, then approved into the member's payout.
    const referral = toReferral(await getItem(keys.referral(accountId, ref.body.id)))!;
    const recorded = await recordRewards(
      accountId,
      referral,
      [{ payment_id: 7001, type: 'commission', amount: 400, currency: 'USD' }],
      false,
      true,
    );
    await approveReward(accountId, recorded.rewards[0]!.id);

    const due = await cli(['payouts', 'due', '--account', accountId]);
    expect(due).toMatchObject({ code: 0, stderr: '' });
    const shown = JSON.parse(oneLine(due.stdout));
    expect(shown).toMatchObject({
      account_id: accountId,
      due: { USD: '4.00' },
      due_count: 1,
      payouts: [{ member_id: member.body.id, amount: '4.00', currency: 'USD', reward_count: 1 }],
    });

    const dir = mkdtempSync(join(tmpdir(), 'refloop-payouts-'));
    try {
      const out = join(dir, 'batch.csv');
      const exported = await cli(['payouts', 'export', '--account', accountId, '--format', 'paypal', '--currency', 'usd', '--out', out]);
      expect(exported).toMatchObject({ code: 0, stderr: '' });
      const batch = JSON.parse(oneLine(exported.stdout));
      expect(batch).toMatchObject({
        account_id: accountId,
        batch_id: expect.stringMatching(/^pb_/),
        format: 'paypal',
        currency: 'USD',
        payouts: 1,
        amount: '4.00',
        file: out,
      });
      expect(readFileSync(out, 'utf8')).toMatch(
        new RegExp(
          `^payee@example.com,4.00,USD,${shown.payouts[0].id.slice(0, 30)},Referral commissions [A-Z][a-z]{2} \\d{4},PAYPAL\\r\\n$`,
        ),
      );
      // Nothing left to export.
      const empty = await cli([
        'payouts',
        'export',
        '--account',
        accountId,
        '--format',
        'wise',
        '--currency',
        'USD',
        '--out',
        join(dir, 'none.csv'),
      ]);
      expect([empty.code, empty.stderr]).toEqual([1, 'admin: No payout is due in USD.\n']);

      const paid = await cli(['payouts', 'mark-paid', '--account', accountId, '--batch', batch.batch_id, '--reference', 'PP-42']);
      expect(paid).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(oneLine(paid.stdout))).toEqual({
        account_id: accountId,
        batch_id: batch.batch_id,
        status: 'paid',
        payouts: 1,
        amount: '4.00',
      });
      expect((await call('GET', `/v1/payouts/${shown.payouts[0].id}/`)).body).toMatchObject({ status: 'paid', reference: 'PP-42' });
      expect((await call('GET', `/v1/members/${member.body.id}/`)).body.stats).toMatchObject({
        commission_paid: '4.00',
        commission_approved: '0.00',
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const bad = await cli(['payouts', 'export', '--account', accountId, '--format', 'venmo', '--currency', 'USD']);
    expect([bad.code, bad.stderr]).toEqual([2, 'admin: --format must be one of paypal, wise, csv, got "venmo"\n']);
    expect((await cli(['payouts', 'mark-paid', '--account', accountId, '--batch', 'x'])).code).toBe(2);
    expect((await cli(['payouts', 'due', '--account', '0123456789abcdef'])).stderr).toBe(
      'admin: Account 0123456789abcdef does not exist\n',
    );
    // Seven CLI processes one after another: each starts tsx, seconds apiece on a busy 2-core machine.
  }, 120_000);
});

// Issue 23 #17: the Paddle Billing and Stripe emulator CLIs exited 0 while the service answered their webhooks
// 404 (the demo account on another provider). Now one line names the DEMO_PROVIDER to start with, and the
// exit code is 1; their help has the structure of admin's and paddle's. #18: the CLIs use the ports npm
// start was given (PADDLE_BILLING_PORT, STRIPE_PORT, PADDLE_PORT, DYNAMODB_PORT, SQS_PORT).
describe('emulator CLIs: a webhook the service answers 404, and the help', () => {
  const { startGateway } = require('../../infra/local/gateway') as typeof import('../../infra/local/gateway');
  const { startPaddleBillingEmulator } =
    require('../../infra/local/emulators/paddle-billing') as typeof import('../../infra/local/emulators/paddle-billing');
  const { startStripeEmulator } = require('../../infra/local/emulators/stripe') as typeof import('../../infra/local/emulators/stripe');

  it.each([
    ['paddle-billing', 'infra/paddle-billing.ts', 'PADDLE_BILLING_PORT'],
    ['stripe', 'infra/stripe.ts', 'STRIPE_PORT'],
  ] as const)(
    '%s checkout: the service answers 404 (account not on that provider): JSON on stdout, one DEMO_PROVIDER hint on stderr, exit 1',
    async (kind, file, portVariable) => {
      const { accountId } = await newAccount(); // connected to no provider: both intakes answer 404
      const gateway = await startGateway({ port: 0 });
      const webhookUrl = `${gateway.url}/webhooks/${kind}/${accountId}/`;
      const emulator =
        kind === 'stripe' ? await startStripeEmulator({ port: 0, webhookUrl }) : await startPaddleBillingEmulator({ port: 0, webhookUrl });
      try {
        // Found through the port variable npm start reads, not a URL.
        const res = await cli(
          ['checkout', '--email', 'buyer@example.com'],
          { [portVariable]: new URL(emulator.url).port, PADDLE_BILLING_EMULATOR_URL: '', STRIPE_EMULATOR_URL: '' },
          file,
        );
        expect(res.code).toBe(1);
        const out = JSON.parse(oneLine(res.stdout));
        const statuses = (kind === 'stripe' ? out.events : out.notifications).map((d: { status: number }) => d.status);
        expect(statuses.length).toBeGreaterThan(0);
        expect(new Set(statuses)).toEqual(new Set([404]));
        expect(oneLine(res.stderr)).toMatch(
          new RegExp(
            `^${kind}: the service answered 404 to \\d+ (webhook)\\(s\\): the demo account is not connected to (Paddle Billing|Stripe); restart with DEMO_PROVIDER=${kind} npm start`,
          ),
        );
      } finally {
        await emulator.stop();
        await gateway.close();
      }
    },
    60_000,
  );

  it.each([
    ['paddle-billing', 'infra/paddle-billing.ts'],
    ['stripe', 'infra/stripe.ts'],
  ] as const)(
    '%s checkout delivered (2xx): exit 0, nothing on stderr',
    async (kind, file) => {
      const { createServer: httpServer } = await import('node:http');
      const receiver = httpServer((req, res) => {
        req.resume();
        req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"received":true}'));
      });
      await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
      const webhookUrl = `http://127.0.0.1:${(receiver.address() as import('node:net').AddressInfo).port}/`;
      const emulator =
        kind === 'stripe' ? await startStripeEmulator({ port: 0, webhookUrl }) : await startPaddleBillingEmulator({ port: 0, webhookUrl });
      try {
        const res = await cli(
          ['checkout', '--email', 'buyer@example.com'],
          { [kind === 'stripe' ? 'STRIPE_EMULATOR_URL' : 'PADDLE_BILLING_EMULATOR_URL']: emulator.url },
          file,
        );
        expect(res).toMatchObject({ code: 0, stderr: '' });
        oneLine(res.stdout);
      } finally {
        await emulator.stop();
        await new Promise((resolve) => receiver.close(resolve));
      }
    },
    60_000,
  );

  // The emulator CLIs: the providers' (paddle-billing, stripe with its Connect commands) and the payout
  // rails' (paypal, wise). Each row: one command's --help usage, and a bad call's one-line refusal.
  const EMULATOR_MAINS: Record<string, (argv: string[]) => Promise<number>> = {
    'infra/paddle-billing.ts': paddleBillingMain,
    'infra/stripe.ts': stripeMain,
    'infra/paypal.ts': (argv) => runRailCli(paypalCli, argv),
    'infra/wise.ts': (argv) => runRailCli(wiseCli, argv),
  };
  it.each([
    [
      'paddle-billing',
      'infra/paddle-billing.ts',
      ['checkout', 'renew', 'fail', 'cancel', 'refund', 'approve', 'chargeback', 'state', 'serve'],
      'checkout',
      'usage: paddle-billing checkout --email <email> [--price pri_…]',
      ['renew', '--subscription', 'nope'],
      /^paddle-billing: --subscription must be .*; usage: paddle-billing renew --subscription sub_…$/,
    ],
    [
      'stripe',
      'infra/stripe.ts',
      [
        'checkout',
        'renew',
        'fail',
        'cancel',
        'refund',
        'dispute',
        'connect-onboard',
        'connect-balance',
        'connect-reverse',
        'connect-state',
        'state',
        'serve',
      ],
      'checkout',
      'usage: stripe checkout --email <email> [--price price_…]',
      ['renew', '--subscription', 'nope'],
      /^stripe: --subscription must be .*; usage: stripe renew --subscription sub_…$/,
    ],
    [
      'paypal',
      'infra/paypal.ts',
      ['batches', 'settle', 'item-status', 'outcome'],
      'item-status',
      'usage: paypal item-status --item <payout_item_id> --status SUCCESS|FAILED|UNCLAIMED|',
      ['item-status', '--item', 'PI123', '--status', 'PAID'],
      /^paypal: --status must be one of .*; usage: paypal item-status --item <payout_item_id> --status .*$/,
    ],
    [
      'wise',
      'infra/wise.ts',
      ['state', 'balance', 'sca', 'simulate'],
      'simulate',
      'usage: wise simulate --transfer <transfer id> --state processing|',
      ['sca', 'maybe'],
      /^wise: sca takes on or off, got "maybe"; usage: wise sca on\|off$/,
    ],
  ] as const)(
    '%s help: usage line, one line per command, flags, environment and exit codes, like admin and paddle',
    async (program, file, names, one, oneUsage, badArgs, badMessage) => {
      // `help` as the program (tsx in a child process); the other three through its main in this process.
      const main = EMULATOR_MAINS[file];
      if (!main) throw new Error(`no main for ${file}`);
      const run = (args: string[]) => cliInProcess(program, main, args);
      const [help, none, usage, bad] = await Promise.all([cli(['help'], {}, file), run([]), run([one, '--help']), run([...badArgs])]);
      expect(help).toMatchObject({ code: 0, stderr: '' });
      const lines = help.stdout.split('\n');
      expect(lines[0]).toBe(`usage: npm run --silent ${program} -- <command> [flags]`);
      for (const heading of ['commands:', 'flags:', 'environment:']) expect(lines).toContain(heading);
      for (const name of names) {
        expect({ name, described: lines.filter((l) => new RegExp(`^  ${name} +[A-Z]`).test(l)).length }).toEqual({ name, described: 1 });
        expect({ name, flags: lines.filter((l) => l.startsWith(`  ${program} ${name}`)).length }).toEqual({ name, flags: 1 });
      }
      expect(help.stdout).toMatch(/Exit codes: 0 done/);
      expect(none).toMatchObject({ code: 2, stdout: '', stderr: help.stdout });
      expect(usage).toMatchObject({ code: 0, stderr: '' });
      expect(usage.stdout.split('\n')[0]).toContain(oneUsage);
      expect(bad).toMatchObject({ code: 2, stdout: '' });
      expect(oneLine(bad.stderr)).toMatch(badMessage);
    },
  );
});

describe('admin CLI: which dependency failed, on the configured ports', () => {
  it('queues status with DynamoDB up and SQS down names SQS, its endpoint and SQS_ENDPOINT / SQS_PORT (not DynamoDB)', async () => {
    const port = await freePort();
    const viaEndpoint = await cli(['queues', 'status'], { SQS_ENDPOINT: `http://127.0.0.1:${port}` });
    expect(viaEndpoint).toMatchObject({ code: 1, stdout: '' });
    const line = oneLine(viaEndpoint.stderr);
    expect(line).toContain(`cannot reach SQS at http://127.0.0.1:${port}`);
    expect(line).toContain('SQS_ENDPOINT (or SQS_PORT, default 9324) sets it');
    expect(line).not.toContain('DynamoDB');
    // SQS_PORT alone (what npm start reads) is the port the CLI calls.
    const other = await freePort();
    const viaPort = await cli(['queues', 'status'], { SQS_ENDPOINT: '', SQS_PORT: String(other) });
    expect(viaPort.code).toBe(1);
    expect(oneLine(viaPort.stderr)).toContain(`cannot reach SQS at http://127.0.0.1:${other}`);
  }, 60_000);

  it("DynamoDB down: names DynamoDB, its endpoint and DYNAMODB_ENDPOINT / DYNAMODB_PORT; DYNAMODB_PORT alone finds npm start's", async () => {
    const port = await freePort();
    // AWS_REGION unset too: with it and no DYNAMODB_ENDPOINT the CLI goes to AWS.
    const down = await cli(['account', 'list'], { DYNAMODB_ENDPOINT: '', AWS_REGION: '', DYNAMODB_PORT: String(port) });
    expect(down).toMatchObject({ code: 1, stdout: '' });
    expect(oneLine(down.stderr)).toContain(`cannot reach DynamoDB at http://127.0.0.1:${port}`);
    expect(down.stderr).toContain('DYNAMODB_ENDPOINT (or DYNAMODB_PORT, default 8000) sets it');
    const up = await cli(['account', 'list'], {
      DYNAMODB_ENDPOINT: '',
      AWS_REGION: '',
      DYNAMODB_PORT: new URL(process.env.DYNAMODB_ENDPOINT as string).port,
    });
    expect(up).toMatchObject({ code: 0, stderr: '' });
  }, 60_000);

  it('the paddle CLI calls the emulator on PADDLE_PORT when PADDLE_EMULATOR_URL is unset', async () => {
    const port = await freePort();
    const res = await cli(['state'], { PADDLE_EMULATOR_URL: '', PADDLE_PORT: String(port) }, 'infra/paddle.ts');
    expect(res).toMatchObject({ code: 1, stdout: '' });
    expect(oneLine(res.stderr)).toContain(`Paddle emulator not reachable at http://127.0.0.1:${port}`);
  });
});

describe('CLIs: the running npm start found through DATA_DIR/runtime.json', () => {
  it('without port variables, the admin and paddle CLIs use the ports of the npm start of DATA_DIR; a file whose process is gone is ignored', async () => {
    const { writeFileSync: write, mkdtempSync: mkdtemp } = await import('node:fs');
    const { accountId, publishableKey } = await newAccount();
    const dataDir = mkdtemp(join(tmpdir(), 'refloop-runtime-file-'));
    try {
      const [sqsPort, paddlePort] = [await freePort(), await freePort()];
      const file = (pid: number) =>
        write(
          join(dataDir, 'runtime.json'),
          JSON.stringify({
            pid,
            api_url: 'http://127.0.0.1:3999',
            dynamodb_endpoint: process.env.DYNAMODB_ENDPOINT,
            sqs_endpoint: `http://127.0.0.1:${sqsPort}`,
            paddle_url: `http://127.0.0.1:${paddlePort}`,
            paddle_billing_url: 'http://127.0.0.1:1',
            stripe_url: 'http://127.0.0.1:1',
          }),
        );
      const unset = {
        DATA_DIR: dataDir,
        PORT: '',
        API_URL: '',
        PUBLIC_BASE_URL: '',
        SQS_ENDPOINT: '',
        SQS_PORT: '',
        PADDLE_EMULATOR_URL: '',
        PADDLE_PORT: '',
      };
      file(process.pid); // a live process: this test's
      const [shown, queues, paddle] = await Promise.all([
        cli(['account', 'show', '--account', accountId], unset),
        cli(['queues', 'status'], unset),
        cli(['state'], unset, 'infra/paddle.ts'),
      ]);
      expect(shown).toMatchObject({ code: 0, stderr: '' });
      expect(JSON.parse(oneLine(shown.stdout)).script_tag).toBe(
        `<script src="http://127.0.0.1:3999/js/refloop.js" data-key="${publishableKey}" async></script>`,
      );
      expect(oneLine(queues.stderr)).toContain(`cannot reach SQS at http://127.0.0.1:${sqsPort}`);
      expect(oneLine(paddle.stderr)).toContain(`Paddle emulator not reachable at http://127.0.0.1:${paddlePort}`);

      // The same file left by a process that is gone: the defaults again.
      const dead = spawn(process.execPath, ['-e', '']);
      await new Promise((resolve) => dead.on('close', resolve));
      file(dead.pid as number);
      const stale = await cli(['account', 'show', '--account', accountId], unset);
      expect(JSON.parse(oneLine(stale.stdout)).script_tag).toContain('http://127.0.0.1:3000/js/refloop.js');
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
