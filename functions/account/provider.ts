// POST /v1/account/provider/ - connect the account to Paddle Classic, Paddle Billing or Stripe (owner or
// admin, dashboard session only: an API key never changes provider secrets). The secrets are written to
// their own items, which IAM denies to every function that does not need them; the answer shows the
// connection's public part and the webhook URL to give the provider, never a secret.
import { config } from '../../shared/config';
import { DetailError, ValidationError, type FieldErrors } from '../../shared/domain/errors';
import { apiHandler, ok } from '../../shared/http/handler';
import { paddleBillingSettings } from '../../shared/providers/paddle-billing/settings';
import { parsePaddlePublicKey } from '../../shared/providers/paddle-classic/public-key';
import { stripeSettings } from '../../shared/providers/stripe/settings';
import { providerBody, type ProviderBody } from '../../shared/schemas/team';
import { accountSettings } from '../../shared/store/account-settings';
import { DEFAULT_CHECKOUT_API_URL, DEFAULT_VENDORS_API_URL, ProviderSwitchRefusedError, saveProviderConnection, type ProviderConnection } from '../../shared/store/provider';

const REQUIRED_BY_KIND = {
  'paddle-classic': ['vendor_id', 'auth_code', 'public_key'],
  'paddle-billing': ['api_key', 'webhook_secret'],
  stripe: ['secret_key', 'webhook_secret'],
} as const;

/** The connection a body describes, or every field error at once. */
export function connectionOf(body: ProviderBody): ProviderConnection {
  const errors: FieldErrors = {};
  for (const name of REQUIRED_BY_KIND[body.kind]) if (body[name] === undefined) errors[name] = ['This field is required.'];
  // The provider's API URL can point the service at any host: only where emulators are allowed (npm start).
  if (body.api_url && !config().webhooks.allowLoopback) errors.api_url = ['The API URL can only be changed by the operator (admin CLI).'];
  if (Object.keys(errors).length > 0) throw new ValidationError(errors);
  const apiUrl = body.api_url ?? undefined;
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
  if (!checked.ok) throw ValidationError.field(checked.field, `This ${checked.message}.`);
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
