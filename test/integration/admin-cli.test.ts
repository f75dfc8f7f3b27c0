// The operator CLI as a child process against the test DynamoDB Local: output shapes, exit codes, revocation.
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { api } from '../support/api';
import { freePort } from '../../infra/local/dynamodb';
import { getAccount } from '../../shared/store/accounts';

const ROOT = join(__dirname, '..', '..');

interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `infra/admin.ts` the way `npm run admin` does (tsx), without npm's own output. */
function cli(args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'infra/admin.ts', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    child.on('error', fail);
    child.on('close', (code) => ok({ code, stdout, stderr }));
  });
}

function oneLine(text: string): string {
  const lines = text.split('\n').filter((l) => l !== '');
  expect(lines).toHaveLength(1);
  return lines[0] as string;
}

describe('admin CLI', () => {
  it('creates an account with the requested plan and prints one JSON line', async () => {
    const res = await cli(['account', 'create', '--name', 'Acme', '--plan', 'small']);
    expect(res).toMatchObject({ code: 0, stderr: '' });
    const out = JSON.parse(oneLine(res.stdout));
    expect(Object.keys(out).sort()).toEqual(['account_id', 'api_key']);
    expect(out.api_key).toMatch(/^rfl_live_[A-Za-z0-9_-]+$/);
    expect((await getAccount(out.account_id))?.plan).toBe('small');
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

  it.each([
    ['no arguments', []],
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
