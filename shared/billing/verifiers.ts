// Which signature scheme verifies a provider's webhooks. Only the signature modules are imported here (no
// client, no adapter), so a webhook intake's bundle stays small.
import type { ProviderKind, WebhookVerifier } from './port';
import { paddleBillingVerifier, SIGNATURE_HEADER as PADDLE_BILLING_HEADER } from '../providers/paddle-billing/signature';
import { stripeVerifier, SIGNATURE_HEADER as STRIPE_HEADER } from '../providers/stripe/signature';

/** The JSON providers' verifiers, with the header each signs in (lower case). Classic has its own intake. */
export const WEBHOOK_VERIFIERS: Readonly<Record<Exclude<ProviderKind, 'paddle-classic'>, { verifier: WebhookVerifier; header: string }>> = {
  'paddle-billing': { verifier: paddleBillingVerifier, header: PADDLE_BILLING_HEADER },
  stripe: { verifier: stripeVerifier, header: STRIPE_HEADER },
};
