// POST /v1/account/provider/ - connect the account to Paddle Classic, Paddle Billing or Stripe (owner or
// admin, dashboard session only: an API key never changes provider secrets). The secrets are written to
// their own items, which IAM denies to every function that does not need them; the answer shows the
// connection's public part and the webhook URL to give the provider, never a secret.
import { config } from '../../shared/config';
import { DetailError, ValidationError, type FieldErrors } from '../../shared/domain/errors';
import { apiHandler, ok } from '../../shared/http/handler';
import { DEFAULT_API_URL as PADDLE_API_URL, SANDBOX_API_URL } from '../../shared/providers/paddle-billing/client';
import { paddleBillingSettings } from '../../shared/providers/paddle-billing/settings';
import { DEFAULT_API_URL as STRIPE_API_URL } from '../../shared/providers/stripe/client';
import { parsePaddlePublicKey } from '../../shared/providers/paddle-classic/public-key';
import { stripeSettings } from '../../shared/providers/stripe/settings';
import { providerBody, type ProviderBody } from '../../shared/schemas/team';
import { accountSettings } from '../../shared/store/account-settings';
import { DEFAULT_CHECKOUT_API_URL, DEFAULT_VENDORS_API_URL, ProviderSwitchRefusedError, saveProviderConnection, type ProviderConnection } from '../../shared/store/provider';

/** The providers' own API URLs, accepted as `api_url` everywhere (Paddle Classic takes none: it has one API). */
const PROVIDER_HOSTS: Record<ProviderBody['kind'], string[]> = { 'paddle-classic': [], 'paddle-billing': [PADDLE_API_URL, SANDBOX_API_URL], stripe: [STRIPE_API_URL] };

/** The settings check's CLI-worded message as a sentence for the dashboard. */
const sentence = (message: string) => {
  const text = message.replace(/--api-url/g, 'the API URL');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}.`;
};

const REQUIRED_BY_KIND = {
  'paddle-classic': ['vendor_id', 'auth_code', 'public_key'],
  'paddle-billing': ['api_key', 'webhook_secret'],
  stripe: ['secret_key', 'webhook_secret'],
} as const;

/** The connection a body describes, or every field error at once. */
export function connectionOf(body: ProviderBody): ProviderConnection {
  const errors: FieldErrors = {};
  for (const name of REQUIRED_BY_KIND[body.kind]) if (body[name] === undefined) errors[name] = ['This field is required.'];
  // The provider's API URL could point the service (and the secret) at any host: only the providers' own
  // hosts are accepted, and any other (an emulator) only where emulators are allowed (npm start).
  const own = PROVIDER_HOSTS[body.kind];
  if (body.api_url && !config().webhooks.allowLoopback && !own.includes(body.api_url)) {
    errors.api_url = [own.length > 0 ? `Use the provider's own API URL (${own.join(' or ')}); other URLs are for local emulators.` : 'Paddle Classic takes no API URL; other URLs are for local emulators.'];
  }
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  // A Paddle sandbox key goes with Paddle's sandbox API unless another URL was given.
  const apiUrl = body.api_url ?? (body.kind === 'paddle-billing' && body.api_key?.startsWith('pdl_sdbx_') ? SANDBOX_API_URL : undefined);
  if (body.kind === 'paddle-classic') {
    const key = parsePaddlePublicKey(body.public_key as string);
    if (!key.ok) throw ValidationError.field('public_key', key.message);
    // An emulator's base URL (local mode) serves both APIs, as the Paddle emulator does (/vendors/api, /checkout/api).
    const checkout = apiUrl ? `${apiUrl}/checkout/api` : DEFAULT_CHECKOUT_API_URL;
    return { kind: 'paddle-classic', vendorId: body.vendor_id as number, authCode: body.auth_code as string, publicKey: key.pem, vendorsApiUrl: apiUrl ? `${apiUrl}/vendors/api` : DEFAULT_VENDORS_API_URL, checkoutApiUrl: checkout };
  }
  const checked =
    body.kind === 'paddle-billing'
      ? paddleBillingSettings({ apiKey: body.api_key as string, webhookSecret: body.webhook_secret as string, ...(apiUrl ? { apiUrl } : {}) })
      : stripeSettings({ secretKey: body.secret_key as string, webhookSecret: body.webhook_secret as string, ...(apiUrl ? { apiUrl } : {}) });
  if (!checked.ok) throw ValidationError.field(checked.field, sentence(checked.message));
  return body.kind === 'paddle-billing'
    ? { kind: 'paddle-billing', ...(checked.settings as { apiKey: string; webhookSecret: string; apiUrl: string }) }
    : { kind: 'stripe', ...(checked.settings as { secretKey: string; webhookSecret: string; apiUrl: string }) };
}

export const handler = apiHandler({ body: providerBody, sessionOnly: true }, async ({ principal, body, baseUrl }) => {
  const connection = connectionOf(body);
  try {
    await saveProviderConnection(principal.accountId, connection);
  } catch (err) {
    if (err instanceof ProviderSwitchRefusedError) throw new DetailError(409, `${err.message.charAt(0).toUpperCase()}${err.message.slice(1)}.`);
    throw err;
  }
  return ok((await accountSettings(principal.accountId, baseUrl)).provider);
});
