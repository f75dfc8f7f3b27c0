// `account set-paddle-billing` input (shared/providers/paddle-billing/settings.ts).
import { paddleBillingSettings } from '../../shared/providers/paddle-billing/settings';

const key = 'pdl_live_apikey_01hv8x2k3m4n5p6q7r8s9t0v1w_abcdef';
const secret = 'pdl_ntfset_01hsdn8d43dt7mezr1ef2jtbaw_hKkRiCGyyRhbFwIUuqiTBgI7gnWoV0Gr';

describe('paddleBillingSettings', () => {
  it('defaults to the live API', () => {
    expect(paddleBillingSettings({ apiKey: key, webhookSecret: secret })).toEqual({
      ok: true,
      settings: { kind: 'paddle-billing', apiKey: key, webhookSecret: secret, apiUrl: 'https://api.paddle.com' },
    });
  });

  it('a sandbox key with the sandbox URL; a local emulator over http on loopback', () => {
    const sandbox = key.replace('pdl_live_', 'pdl_sdbx_');
    expect(paddleBillingSettings({ apiKey: sandbox, webhookSecret: secret, apiUrl: 'https://sandbox-api.paddle.com/' })).toMatchObject({
      ok: true,
      settings: { apiUrl: 'https://sandbox-api.paddle.com' },
    });
    expect(paddleBillingSettings({ apiKey: sandbox, webhookSecret: secret, apiUrl: 'http://127.0.0.1:8026' })).toMatchObject({ ok: true });
  });

  it.each([
    ['a sandbox key against live', { apiKey: key.replace('pdl_live_', 'pdl_sdbx_'), webhookSecret: secret }, 'api_url'],
    ['a live key against the sandbox', { apiKey: key, webhookSecret: secret, apiUrl: 'https://sandbox-api.paddle.com' }, 'api_url'],
    ['plain http to a remote host', { apiKey: key, webhookSecret: secret, apiUrl: 'http://api.paddle.com' }, 'api_url'],
    ['not a URL', { apiKey: key, webhookSecret: secret, apiUrl: 'api.paddle.com' }, 'api_url'],
    ['an empty key', { apiKey: '', webhookSecret: secret }, 'api_key'],
    ['a key with spaces', { apiKey: 'pdl live key', webhookSecret: secret }, 'api_key'],
    ['a short secret', { apiKey: key, webhookSecret: 'x' }, 'webhook_secret'],
  ])('%s is refused (%s)', (_label, input, field) => {
    expect(paddleBillingSettings(input)).toMatchObject({ ok: false, field });
  });
});
