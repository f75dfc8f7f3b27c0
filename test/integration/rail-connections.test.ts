// Connecting a payout rail (docs/payouts.md "Connecting a rail"): PUT, GET and DELETE
// /v1/account/payout-rails/ through the local gateway's dispatch, each rail's credentials checked against its
// emulator (started here: PayPal Payouts, Stripe with Connect, Wise), the store's items
// (shared/store/rail-connections.ts) read back: the secrets encrypted, never in an answer.
import { adminInProcess } from '../support/admin-cli';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPaypalEmulator, type PaypalEmulator } from '../../infra/local/emulators/paypal-payouts';
import { startStripeEmulator, type StripeEmulator } from '../../infra/local/emulators/stripe';
import { startWiseEmulator, type WiseEmulator } from '../../infra/local/emulators/wise';
import { resetConfig } from '../../shared/config';
import { SESSION_ONLY } from '../../shared/domain/team';
import { LOCAL_PREFIX } from '../../shared/secrets';
import { getItem } from '../../shared/store/ops';
import { railConnection, railKeys } from '../../shared/store/rail-connections';
import { api } from '../support/api';
import { loginAs, type DashboardLogin } from '../support/dashboard';
import { newAccount } from '../support/fixtures';

let paypal: PaypalEmulator;
let stripe: StripeEmulator;
let wise: WiseEmulator;
let accountId: string;
let apiKey: string;
let owner: DashboardLogin;
const loopback = process.env.WEBHOOK_ALLOW_LOOPBACK;

const bodies = () => ({
  paypal: { api_url: paypal.url, client_id: paypal.clientId, client_secret: paypal.clientSecret, webhook_id: paypal.webhookId },
  stripe: {
    api_url: stripe.url,
    secret_key: stripe.secretKey,
    webhook_secret: stripe.connect.webhookSecret,
    connect_webhook_secret: stripe.connect.connectWebhookSecret,
  },
  wise: { api_url: wise.url, api_token: wise.apiToken, profile_id: wise.profileId, webhook_public_key: wise.publicKeyPem },
});
const SECRETS = {
  paypal: ['client_secret'],
  stripe: ['secret_key', 'webhook_secret', 'connect_webhook_secret'],
  wise: ['api_token'],
} as const;

const put = (kind: string, body: unknown, login: DashboardLogin | null = owner, key?: string) =>
  api('PUT', `/v1/account/payout-rails/${kind}/`, { body, ...(login ? { headers: login.headers } : {}), ...(key ? { key } : {}) });

beforeAll(async () => {
  process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
  resetConfig();
  [paypal, stripe, wise] = await Promise.all([startPaypalEmulator({ settleAfterMs: null }), startStripeEmulator(), startWiseEmulator()]);
  ({ accountId, apiKey } = await newAccount());
  owner = await loginAs(accountId, 'owner');
});

afterAll(async () => {
  await Promise.all([paypal?.stop(), stripe?.stop(), wise?.stop()]);
  if (loopback === undefined) delete process.env.WEBHOOK_ALLOW_LOOPBACK;
  else process.env.WEBHOOK_ALLOW_LOOPBACK = loopback;
  resetConfig();
});

describe('PUT /v1/account/payout-rails/{kind}/', () => {
  it.each(['paypal', 'stripe', 'wise'] as const)(
    'connects %s after its emulator accepted the credentials; the secrets are stored encrypted, never shown',
    async (kind) => {
      const body = bodies()[kind];
      const res = await put(kind, body);
      expect(res.status).toBe(200);
      const path = `/webhooks/${kind === 'stripe' ? 'stripe-connect' : kind}/${accountId}/`;
      expect(res.body).toMatchObject({ kind, api_url: body.api_url, webhook_path: path });
      if (kind === 'stripe') expect(res.body.connect_webhook_path).toBe(path);
      else expect(res.body).not.toHaveProperty('connect_webhook_path');
      for (const name of SECRETS[kind]) {
        const plain = (body as Record<string, string>)[name] as string;
        expect(res.text).not.toContain(plain);
        const item = await getItem(railKeys.secret(accountId, kind));
        const stored = (item?.secrets as Record<string, string>)[name] as string;
        expect(stored.startsWith(LOCAL_PREFIX)).toBe(true);
        expect(JSON.stringify(item)).not.toContain(plain);
        expect(JSON.stringify(await getItem(railKeys.settings(accountId, kind)))).not.toContain(plain);
      }
      // The send flow's read: every field back, decrypted.
      const conn = await railConnection(accountId, kind);
      expect(conn).toEqual({
        apiUrl: body.api_url,
        credentials: Object.fromEntries(
          Object.entries(body)
            .filter(([k]) => k !== 'api_url')
            .map(([k, v]) => [k, String(v).trim()]),
        ),
      });
    },
  );

  it('refuses credentials the rail refuses, and stores nothing', async () => {
    const other = await newAccount();
    const admin = await loginAs(other.accountId, 'admin');
    const paypalBad = await put('paypal', { ...bodies().paypal, client_secret: 'wrong-secret' }, admin);
    expect(paypalBad.status).toBe(400);
    expect(paypalBad.body.client_secret[0]).toMatch(/PayPal Payouts refused these credentials/);
    const stripeBad = await put('stripe', { ...bodies().stripe, secret_key: 'sk_test_wrong' }, admin);
    expect(stripeBad.status).toBe(400);
    expect(Object.keys(stripeBad.body)).toEqual(['secret_key']);
    const wiseBad = await put('wise', { ...bodies().wise, api_token: 'wrong-token' }, admin);
    expect([wiseBad.status, Object.keys(wiseBad.body)]).toEqual([400, ['api_token']]);
    const wiseProfile = await put('wise', { ...bodies().wise, profile_id: 999999 }, admin);
    expect([wiseProfile.status, Object.keys(wiseProfile.body)]).toEqual([400, ['profile_id']]);
    // Nothing listening there: a 400 on api_url.
    const unreachable = await put('paypal', { ...bodies().paypal, api_url: 'http://127.0.0.1:9' }, admin);
    expect([unreachable.status, Object.keys(unreachable.body)]).toEqual([400, ['api_url']]);
    for (const kind of ['paypal', 'stripe', 'wise'] as const) {
      expect(await getItem(railKeys.settings(other.accountId, kind))).toBeUndefined();
      expect(await getItem(railKeys.secret(other.accountId, kind))).toBeUndefined();
    }
    const list = await api('GET', '/v1/account/payout-rails/', { headers: admin.headers });
    expect(list.body.connected).toEqual([]);
  });

  it('reports every missing field at once, and refuses an emulator URL where emulators are not allowed', async () => {
    const missing = await put('wise', {});
    expect([missing.status, Object.keys(missing.body).sort()]).toEqual([400, ['api_token', 'profile_id', 'webhook_public_key']]);
    delete process.env.WEBHOOK_ALLOW_LOOPBACK;
    resetConfig();
    try {
      const res = await put('paypal', bodies().paypal);
      expect([res.status, Object.keys(res.body)]).toEqual([400, ['api_url']]);
    } finally {
      process.env.WEBHOOK_ALLOW_LOOPBACK = '1';
      resetConfig();
    }
  });

  it('an unknown kind is a 404', async () => {
    expect((await put('file', { api_url: paypal.url })).status).toBe(404);
    expect((await api('DELETE', '/v1/account/payout-rails/venmo/', { headers: owner.headers })).status).toBe(404);
  });

  it('an API key gets 403, a viewer 403, a finance member 403; nothing changes', async () => {
    const before = await getItem(railKeys.settings(accountId, 'paypal'));
    const byKey = await put('paypal', bodies().paypal, null, apiKey);
    expect([byKey.status, byKey.body]).toEqual([403, { detail: SESSION_ONLY }]);
    expect((await api('GET', '/v1/account/payout-rails/', { key: apiKey })).status).toBe(403);
    expect((await api('DELETE', '/v1/account/payout-rails/paypal/', { key: apiKey })).status).toBe(403);
    for (const role of ['viewer', 'finance'] as const) {
      const login = await loginAs(accountId, role);
      expect((await put('paypal', bodies().paypal, login)).status).toBe(403);
      expect((await api('GET', '/v1/account/payout-rails/', { headers: login.headers })).status).toBe(403);
      expect((await api('DELETE', '/v1/account/payout-rails/paypal/', { headers: login.headers })).status).toBe(403);
    }
    expect(await getItem(railKeys.settings(accountId, 'paypal'))).toEqual(before);
  });
});

describe('GET and DELETE /v1/account/payout-rails/', () => {
  it('lists the public parts (no secret) and the forms; DELETE removes one rail and leaves the others and other accounts alone', async () => {
    for (const kind of ['paypal', 'stripe', 'wise'] as const)
      if (!(await railConnection(accountId, kind))) expect((await put(kind, bodies()[kind])).status).toBe(200);
    const other = await newAccount();
    const otherOwner = await loginAs(other.accountId, 'owner');
    expect((await put('paypal', bodies().paypal, otherOwner)).status).toBe(200);

    const list = await api('GET', '/v1/account/payout-rails/', { headers: owner.headers });
    expect(list.status).toBe(200);
    expect(list.body.connected.map((c: { kind: string }) => c.kind)).toEqual(['paypal', 'stripe', 'wise']);
    expect(list.body.connected[0].settings).toEqual({ client_id: paypal.clientId, webhook_id: paypal.webhookId });
    expect(list.body.connected[2].settings).toEqual({ profile_id: String(wise.profileId), webhook_public_key: wise.publicKeyPem.trim() });
    expect(list.body.connected[1].settings).toEqual({});
    for (const [kind, names] of Object.entries(SECRETS))
      for (const name of names)
        expect(list.text).not.toContain((bodies() as unknown as Record<string, Record<string, string>>)[kind]?.[name]);
    expect(list.body.rail_options.map((o: { kind: string }) => o.kind)).toEqual(['paypal', 'stripe', 'wise']);
    expect(list.body.rail_options[0].fields.find((f: { name: string }) => f.name === 'client_secret')).toMatchObject({
      secret: true,
      type: 'password',
    });

    const del = await api('DELETE', '/v1/account/payout-rails/paypal/', { headers: owner.headers });
    expect([del.status, del.text]).toEqual([204, '']);
    expect(await getItem(railKeys.settings(accountId, 'paypal'))).toBeUndefined();
    expect(await getItem(railKeys.secret(accountId, 'paypal'))).toBeUndefined();
    expect((await api('DELETE', '/v1/account/payout-rails/paypal/', { headers: owner.headers })).status).toBe(204);
    const after = await api('GET', '/v1/account/payout-rails/', { headers: owner.headers });
    expect(after.body.connected.map((c: { kind: string }) => c.kind)).toEqual(['stripe', 'wise']);
    // The other account's PayPal connection is untouched.
    expect(await railConnection(other.accountId, 'paypal')).toMatchObject({ credentials: { client_secret: paypal.clientSecret } });
  });
});

describe('admin CLI: account set-wise, set-paypal, account show', () => {
  /** The admin CLI's `main` in this process (test/support/admin-cli.ts), as `npm run admin` runs it. */
  const cli = (args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> => adminInProcess(args);

  it('connects a rail after checking it at the emulator, refuses a bad token with nothing stored, and shows the public parts', async () => {
    const { accountId: id } = await newAccount();
    const dir = mkdtempSync(join(tmpdir(), 'refloop-rails-'));
    try {
      const pem = join(dir, 'wise.pem');
      writeFileSync(pem, wise.publicKeyPem);
      const base = [
        'account',
        'set-wise',
        '--account',
        id,
        '--api-url',
        wise.url,
        '--profile-id',
        String(wise.profileId),
        '--webhook-public-key-file',
        pem,
      ];
      const [bad, paypalBad] = await Promise.all([
        cli([...base, '--api-token', 'wrong-token']),
        cli([
          'account',
          'set-paypal',
          '--account',
          id,
          '--api-url',
          paypal.url,
          '--client-id',
          paypal.clientId,
          '--client-secret',
          'nope',
          '--webhook-id',
          paypal.webhookId,
        ]),
      ]);
      expect([bad.code, bad.stderr]).toEqual([1, expect.stringContaining('--api-token: Wise refused these credentials')]);
      expect(paypalBad.code).toBe(1);
      expect(await railConnection(id, 'wise')).toBeNull();
      const good = await cli([...base, '--api-token', wise.apiToken]);
      expect(good.code).toBe(0);
      expect(good.stdout).not.toContain(wise.apiToken);
      expect(JSON.parse(good.stdout)).toMatchObject({ account_id: id, kind: 'wise', webhook_path: `/webhooks/wise/${id}/` });
      const show = await cli(['account', 'show', '--account', id, '--api-url', 'http://127.0.0.1:3000']);
      expect(show.code).toBe(0);
      expect(show.stdout).not.toContain(wise.apiToken);
      expect(JSON.parse(show.stdout).payout_rails).toEqual([
        expect.objectContaining({
          kind: 'wise',
          api_url: wise.url,
          settings: { profile_id: String(wise.profileId), webhook_public_key: wise.publicKeyPem.trim() },
        }),
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
