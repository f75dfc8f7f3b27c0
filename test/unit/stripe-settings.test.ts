// `account set-stripe` input (shared/providers/stripe/settings.ts) and the README setup text.
import { stripeSettings } from '../../shared/providers/stripe/settings';
import { stripeSetupMarkdown } from '../../shared/providers/stripe/setup';
import { STRIPE_API_VERSION } from '../../shared/providers/stripe/wire';

const key = 'rk_live_51PzAbCdEfGhIjKlMnOpQrStUv';
const secret = 'whsec_5f3b1c0d9e8a7b6c5d4e3f2a1b0c9d8e';

describe('stripeSettings', () => {
  it('a restricted key defaults to the live API host', () => {
    expect(stripeSettings({ secretKey: key, webhookSecret: secret })).toEqual({
      ok: true,
      settings: { kind: 'stripe', secretKey: key, webhookSecret: secret, apiUrl: 'https://api.stripe.com' },
    });
  });

  it('secret keys in test mode, and a local emulator over http on loopback', () => {
    expect(stripeSettings({ secretKey: 'sk_test_51PzAbCdEfGh', webhookSecret: secret, apiUrl: 'http://127.0.0.1:12111/' })).toMatchObject({
      ok: true,
      settings: { apiUrl: 'http://127.0.0.1:12111' },
    });
  });

  it.each([
    ['a publishable key', { secretKey: 'pk_live_51PzAbCdEfGh', webhookSecret: secret }, 'secret_key'],
    ['a key of another provider', { secretKey: 'pdl_live_apikey_01hv8x2k3m', webhookSecret: secret }, 'secret_key'],
    ['a key with spaces', { secretKey: 'sk_live_ abc defgh', webhookSecret: secret }, 'secret_key'],
    ['an empty key', { secretKey: '', webhookSecret: secret }, 'secret_key'],
    ['a secret without whsec_', { secretKey: key, webhookSecret: 'pdl_ntfset_01hsdn8d43dt7' }, 'webhook_secret'],
    ['a short whsec_', { secretKey: key, webhookSecret: 'whsec_x' }, 'webhook_secret'],
    ['plain http to a remote host', { secretKey: key, webhookSecret: secret, apiUrl: 'http://api.stripe.com' }, 'api_url'],
    ['a URL with a path', { secretKey: key, webhookSecret: secret, apiUrl: 'https://api.stripe.com/v1' }, 'api_url'],
    ['not a URL', { secretKey: key, webhookSecret: secret, apiUrl: 'api.stripe.com' }, 'api_url'],
  ])('%s is refused (%s)', (_label, input, field) => {
    expect(stripeSettings(input)).toMatchObject({ ok: false, field });
  });

  it('the README text lists the permissions, the pinned API version and the events to select', () => {
    const md = stripeSetupMarkdown();
    expect(md).toContain(STRIPE_API_VERSION);
    for (const word of [
      'Customers | Write',
      'Subscriptions | Read',
      'Coupons | Write',
      'Promotion Codes | Write',
      'invoice.paid',
      'charge.refunded',
      'checkout.session.completed',
      'charge.dispute.created',
    ]) {
      expect(md).toContain(word);
    }
  });
});
