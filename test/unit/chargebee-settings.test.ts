// Chargebee's connection: `chargebeeSettings` (shared/providers/chargebee/settings.ts), the dashboard form and
// the `account set-chargebee` CLI spec (shared/providers/chargebee/connect.ts), and how it is stored.
import { chargebee } from '../../shared/providers/chargebee';
import { cli, form, toStored } from '../../shared/providers/chargebee/connect';
import { chargebeeSettings, DEFAULT_WEBHOOK_USERNAME, MIN_WEBHOOK_PASSWORD, siteApiUrl } from '../../shared/providers/chargebee/settings';

const apiKey = 'test_cdAbCdEfGhIjKlMnOpQrStUvWxYz0123';
const webhookPassword = '0123456789abcdef0123456789abcdef';

describe('chargebeeSettings', () => {
  it('a site gets its own host; the username defaults to refloop', () => {
    expect(chargebeeSettings({ site: 'acme-test', apiKey, webhookPassword })).toEqual({
      ok: true,
      settings: {
        kind: 'chargebee',
        site: 'acme-test',
        apiKey,
        webhookUsername: DEFAULT_WEBHOOK_USERNAME,
        webhookPassword,
        apiUrl: 'https://acme-test.chargebee.com',
      },
    });
    expect(siteApiUrl('acme')).toBe('https://acme.chargebee.com');
  });

  it('the site may be typed as its host, in any case; a chosen username is kept; a local emulator over http on loopback', () => {
    expect(
      chargebeeSettings({
        site: ' Acme.chargebee.com ',
        apiKey,
        webhookPassword,
        webhookUsername: 'hooks',
        apiUrl: 'http://127.0.0.1:12141/',
      }),
    ).toMatchObject({ ok: true, settings: { site: 'acme', webhookUsername: 'hooks', apiUrl: 'http://127.0.0.1:12141' } });
    expect(chargebeeSettings({ site: 'acme', apiKey, webhookPassword, webhookUsername: '' })).toMatchObject({
      ok: true,
      settings: { webhookUsername: 'refloop' },
    });
  });

  it.each([
    ['an empty site', { site: '' }, 'site'],
    ['a site with a dot', { site: 'acme.eu' }, 'site'],
    ['a site starting with -', { site: '-acme' }, 'site'],
    ['a site of 64 characters', { site: 'a'.repeat(64) }, 'site'],
    ['an empty key', { apiKey: '' }, 'api_key'],
    ['a short key', { apiKey: 'test_1' }, 'api_key'],
    ['a key with spaces', { apiKey: 'test_abc defghij' }, 'api_key'],
    ['a username with ":"', { webhookUsername: 'ref:loop' }, 'webhook_username'],
    ['a username with a space', { webhookUsername: 'ref loop' }, 'webhook_username'],
    ['a username of 65 characters', { webhookUsername: 'u'.repeat(65) }, 'webhook_username'],
    ['a short password', { webhookPassword: 'x'.repeat(MIN_WEBHOOK_PASSWORD - 1) }, 'webhook_password'],
    ['a password of 201 characters', { webhookPassword: 'x'.repeat(201) }, 'webhook_password'],
    ['a password with a newline', { webhookPassword: `${'x'.repeat(30)}\n` }, 'webhook_password'],
    ['plain http to a remote host', { apiUrl: 'http://acme.chargebee.com' }, 'api_url'],
    ['a URL with a path', { apiUrl: 'https://acme.chargebee.com/api/v2' }, 'api_url'],
    ['a URL with a query', { apiUrl: 'https://acme.chargebee.com/?x=1' }, 'api_url'],
    ['not a URL', { apiUrl: 'acme.chargebee.com' }, 'api_url'],
  ])('%s is refused (%s)', (_label, over, field) => {
    expect(chargebeeSettings({ site: 'acme', apiKey, webhookPassword, ...over })).toMatchObject({ ok: false, field });
  });

  it('non-string input is refused, never thrown', () => {
    expect(chargebeeSettings({ site: 42, apiKey, webhookPassword } as never)).toMatchObject({ ok: false, field: 'site' });
    expect(chargebeeSettings({ site: 'acme', apiKey: null, webhookPassword } as never)).toMatchObject({ ok: false, field: 'api_key' });
    expect(chargebeeSettings({ site: 'acme', apiKey, webhookPassword: 7 } as never)).toMatchObject({
      ok: false,
      field: 'webhook_password',
    });
  });
});

describe('the connection form', () => {
  it('fields site, api_key, webhook_username (optional), webhook_password; secrets are password fields', () => {
    expect(form.fields.map((f) => [f.name, f.type, f.required])).toEqual([
      ['site', 'text', true],
      ['api_key', 'password', true],
      ['webhook_username', 'text', false],
      ['webhook_password', 'password', true],
    ]);
    expect(chargebee.fields).toEqual(form.fields);
    expect(form.apiHosts).toEqual([]);
  });

  it('a body becomes the connection; an error names the field in a sentence', () => {
    expect(form.connectionFromBody({ site: 'acme', api_key: apiKey, webhook_password: webhookPassword }, undefined)).toMatchObject({
      ok: true,
      value: { kind: 'chargebee', site: 'acme', apiUrl: 'https://acme.chargebee.com', webhookUsername: 'refloop' },
    });
    const bad = form.connectionFromBody({ site: 'acme', api_key: apiKey, webhook_password: 'short' }, undefined);
    expect(bad).toMatchObject({ ok: false, field: 'webhook_password' });
    if (!bad.ok) expect(bad.message).toMatch(/^Must be 24 to 200 characters.*\.$/);
    expect(form.connectionFromBody({ site: ['acme'], api_key: apiKey, webhook_password: webhookPassword }, undefined)).toMatchObject({
      ok: false,
      field: 'site',
    });
  });

  it('stored: the key apart, the webhook secret is the pair <username>:<password>', () => {
    const r = chargebeeSettings({ site: 'acme', apiKey, webhookPassword, webhookUsername: 'hooks' });
    if (!r.ok) throw new Error('expected settings');
    expect(toStored(r.settings)).toEqual({
      settings: { site: 'acme', api_url: 'https://acme.chargebee.com', webhook_username: 'hooks' },
      apiSecret: apiKey,
      webhookSecret: `hooks:${webhookPassword}`,
    });
    expect(chargebee.fromStored({ site: 'acme', api_url: 'https://acme.chargebee.com', webhook_username: 'hooks' }, apiKey)).toEqual({
      kind: 'chargebee',
      site: 'acme',
      apiUrl: 'https://acme.chargebee.com',
      apiKey,
      webhookUsername: 'hooks',
    });
  });
});

describe('account set-chargebee', () => {
  const flags = { site: 'acme-test', 'api-key': apiKey, 'webhook-password': webhookPassword };
  const readFile = (path: string): string => {
    throw new Error(`no file is read (${path})`);
  };

  it('the command, its flags and the required ones', () => {
    expect(cli.command).toBe('set-chargebee');
    expect(cli.flags).toEqual(['site', 'api-key', 'webhook-username', 'webhook-password', 'api-url']);
    expect(cli.required).toEqual(['site', 'api-key', 'webhook-password']);
    expect(cli.args).toContain('--webhook-password');
  });

  it('valid flags check out and make the connection; the output shows no secret', () => {
    expect(cli.check(flags)).toBeNull();
    const r = cli.connection({ ...flags, 'webhook-username': 'hooks', 'api-url': 'http://localhost:12141' }, readFile);
    expect(r).toMatchObject({ ok: true, connection: { site: 'acme-test', apiUrl: 'http://localhost:12141', webhookUsername: 'hooks' } });
    if (!r.ok) throw new Error('expected a connection');
    const out = JSON.stringify(cli.output(r.connection));
    expect(JSON.parse(out)).toEqual({ provider: 'chargebee', site: 'acme-test', webhook_username: 'hooks' });
    expect(out).not.toContain(apiKey);
    expect(out).not.toContain(webhookPassword);
  });

  it('a bad flag is named as the flag', () => {
    expect(cli.check({ ...flags, site: 'bad site' })).toMatch(/^--site must be/);
    expect(cli.check({ ...flags, 'api-key': 'x' })).toMatch(/^--api-key must be/);
    expect(cli.check({ ...flags, 'webhook-password': 'short' })).toMatch(/^--webhook-password must be/);
    expect(cli.check({ ...flags, 'webhook-username': 'a:b' })).toMatch(/^--webhook-username must be/);
    expect(cli.check({ ...flags, 'api-url': 'http://example.com' })).toMatch(/^--api-url must be/);
    expect(cli.connection({ ...flags, site: '' }, readFile)).toMatchObject({ ok: false });
  });
});
