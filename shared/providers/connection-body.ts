// The provider connection a dashboard body describes (POST /v1/account/provider/): the fields each kind
// needs, every error at once, the API URL rules, and the same per-provider checks as the operator CLI's
// `account set-*` commands (their messages reworded for a form).
import { config } from '../config';
import { ValidationError, type FieldErrors } from '../domain/errors';
import type { ProviderBody } from '../schemas/team';
import { DEFAULT_CHECKOUT_API_URL, DEFAULT_VENDORS_API_URL, type ProviderConnection } from '../store/provider';
import { DEFAULT_API_URL as PADDLE_API_URL, SANDBOX_API_URL } from './paddle-billing/client';
import { paddleBillingSettings } from './paddle-billing/settings';
import { parsePaddlePublicKey } from './paddle-classic/public-key';
import { DEFAULT_API_URL as STRIPE_API_URL } from './stripe/client';
import { stripeSettings } from './stripe/settings';

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
  return checked.settings;
}
